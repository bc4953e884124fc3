"""Pods stamped from one template: decoded and validated once per distinct template.

Users' pods come one manifest each: a cluster dump, a workload file, upstream's scheduler_perf
templates rendered per pod. Most of them are the same manifest but for the name, the uid, the
creation time and, for a bound pod, ``spec.nodeName``. Decoding, building and validating such a pod
costs about 40 µs; this module makes it the cost of one serialization of the manifest and one copy.

:class:`PodTemplates` maps the *template key* of a manifest (everything but those per-pod fields,
as ``marshal`` bytes: they tell ``1`` from ``"1"``, ``1.0`` and ``True``, and two manifests have the
same key only when they hold equal values of the same exact types in the same order; marshal writes
them in 2 µs where ``repr`` took 5) to the first Pod decoded and validated from it. A
later manifest with the same key is that Pod with its own name, uid, creation time and node name:
the decoder would build the same fields from the same values, and validation depends on the
per-pod fields only through the name and node name, which are checked here by the validation's
own check (``dns1123_subdomain_errors``). Whatever falls outside that argument takes the full path:
a template whose manifest the decoder had to rewrite (unknown or client-style field names: their
warnings are given per pod), a manifest without a name (``generateName``), with fields at the top
level besides apiVersion, kind, metadata, spec and status, a pod with ``spec.resourceClaims``
(their generated claims' names are checked with the pod's name) or ``spec.schedulingGroup`` (kept or
dropped by the load's feature gates), a per-pod field of another type
or a malformed timestamp (so the full path reports it with its usual error).

The cache is bounded (:data:`MAX_TEMPLATES` keys, cleared when full) and holds Pods only (immutable
values: a hit shares every spec field object with the template's first pod, which is also what
makes the scheduler's per-spec caches hit at once).
"""
from __future__ import annotations

import marshal
from typing import Any, Mapping

from ._manifest import as_timestamp
from .errors import ManifestError
from .objects import Pod
from .util_validation import dns1123_subdomain_errors

__all__ = ["MAX_TEMPLATES", "PodTemplates"]

#: distinct templates kept (a dump of many Deployments has a few hundred)
MAX_TEMPLATES = 1024
#: the manifest fields that differ between pods stamped from one template
_PER_POD_METADATA = frozenset({"name", "uid", "creationTimestamp"})
_TOP_LEVEL = frozenset({"apiVersion", "kind", "metadata", "spec", "status"})
#: marshal's format 2: no back-references (version 3 writes a second occurrence of the same object
#: as a reference, so equal manifests with different sharing would get different keys)
_MARSHAL_VERSION = 2


class PodTemplates:
    """The template cache of the loader (see the module docstring)."""

    __slots__ = ("_templates",)

    def __init__(self) -> None:
        self._templates: dict[tuple, Pod] = {}

    def key(self, document: Mapping[str, Any]) -> tuple | None:
        """The template key of a Pod manifest, or None when it must take the full path."""
        if type(document) is not dict or not _TOP_LEVEL.issuperset(document):
            return None
        meta, spec = document.get("metadata"), document.get("spec")
        if type(meta) is not dict or type(spec) is not dict:
            return None
        name = meta.get("name")
        if (type(name) is not str or not name or "resourceClaims" in spec or "resource_claims" in spec
                or "schedulingGroup" in spec or "scheduling_group" in spec):
            return None
        node_name = spec.get("nodeName")
        if node_name is not None and type(node_name) is not str:
            return None
        rest = {k: v for k, v in meta.items() if k not in _PER_POD_METADATA}
        if node_name is not None:
            spec = {k: v for k, v in spec.items() if k != "nodeName"}
        try:
            text = marshal.dumps((document.get("apiVersion"), document.get("kind"), rest, spec,
                                  document.get("status")), _MARSHAL_VERSION)
        except ValueError:  # a value marshal cannot write (a dict subclass, a datetime): full path
            return None
        return (bool(node_name), text)

    def stamp(self, key: tuple, document: Mapping[str, Any]) -> Pod | None:
        """The Pod of ``document`` from its template, if one was seen and the per-pod fields need
        no message; else None (the caller takes the full path)."""
        template = self._templates.get(key)
        if template is None:
            return None
        meta, spec = document["metadata"], document["spec"]
        name = meta["name"]
        uid = meta.get("uid")
        node_name = spec.get("nodeName") or ""
        if uid is not None and type(uid) is not str:
            return None
        # a name the validation would refuse takes the full path, for the API server's message
        if dns1123_subdomain_errors(name) or (node_name and dns1123_subdomain_errors(node_name)):
            return None
        created = meta.get("creationTimestamp")
        if created is not None:
            try:
                created = as_timestamp(created, "metadata.creationTimestamp")
            except ManifestError:
                return None
        # the request totals depend on the spec alone: those the template computed already are the
        # pod's (stamped shares them)
        pod = template.stamped(name=name, uid=uid or "", node_name=node_name, creation_timestamp=created,
                               manifest=document)
        pod.admitted = True
        return pod

    def remember(self, key: tuple, pod: Pod) -> None:
        """``pod`` (decoded from a clean manifest of ``key``, written with the API's own field
        names, and validated) as its template's first pod."""
        templates = self._templates
        if len(templates) >= MAX_TEMPLATES:
            templates.clear()
        # its request totals computed once, here, for every pod stamped from it (the queue and the
        # cycle read them for each pod)
        pod.requests, pod.non_zero_requests, pod.scoring_requests  # noqa: B018 - computed and cached
        templates[key] = pod
