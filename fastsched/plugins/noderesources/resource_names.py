"""Resource-name classes (upstream ``pkg/apis/core/v1/helper`` and ``schedutil.IsScalarResourceName``).

NodeInfo and the PreFilter state keep only *scalar* resources beside cpu, memory and
ephemeral-storage: a name that is neither of those nor scalar (``pods``, an unprefixed unknown name)
is dropped upstream, so the plugins here ignore it too.
"""
from __future__ import annotations

from functools import lru_cache

from ...config._names import is_qualified_name

_DEFAULT_NAMESPACE_PREFIX = "kubernetes.io/"
_REQUESTS_PREFIX = "requests."
_HUGEPAGES_PREFIX = "hugepages-"
_ATTACHABLE_VOLUMES_PREFIX = "attachable-volumes-"


def is_prefixed_native_resource(name: str) -> bool:
    """A name in the ``*kubernetes.io/`` namespace."""
    return _DEFAULT_NAMESPACE_PREFIX in name


def is_native_resource(name: str) -> bool:
    """An unprefixed name, or one in the ``*kubernetes.io/`` namespace."""
    return "/" not in name or is_prefixed_native_resource(name)


@lru_cache(maxsize=1024)
def is_extended_resource_name(name: str) -> bool:
    """Not native, not ``requests.``-prefixed, and ``requests.<name>`` is a qualified name."""
    if is_native_resource(name) or name.startswith(_REQUESTS_PREFIX):
        return False
    return not is_qualified_name(_REQUESTS_PREFIX + name)


@lru_cache(maxsize=1024)
def is_scalar_resource_name(name: str) -> bool:
    """Extended, ``hugepages-*``, ``*kubernetes.io/*`` or ``attachable-volumes-*`` resources."""
    return (is_extended_resource_name(name) or name.startswith(_HUGEPAGES_PREFIX)
            or is_prefixed_native_resource(name) or name.startswith(_ATTACHABLE_VOLUMES_PREFIX))
