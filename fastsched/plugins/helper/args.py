"""The preamble upstream's plugin constructors share: default, type-check and validate the args."""
from __future__ import annotations

from typing import Any, TypeVar

from ...config.args import PluginArgs
from ...config.errors import ConfigError

A = TypeVar("A", bound=PluginArgs)


def go_type_name(obj: Any) -> str:
    """Go's ``%T`` of an args object (``*config.<Type>``), for the type-mismatch errors."""
    if obj is None:
        return "<nil>"
    if isinstance(obj, PluginArgs):
        return f"*config.{type(obj).__name__}"
    return type(obj).__name__


def validated_args(args: Any, args_type: type[A], mismatch: str) -> A:
    """``args``, or ``args_type()`` when None, validated.

    A wrong type raises ValueError with ``mismatch`` (upstream's wording, ``{got}`` standing for
    :func:`go_type_name` of the args); validation errors raise :class:`ConfigError`.
    """
    if args is None:
        args = args_type()
    if not isinstance(args, args_type):
        raise ValueError(mismatch.format(got=go_type_name(args)))
    errors = args.validate()
    if errors:
        raise ConfigError(errors)
    return args
