"""The spec toolkit: reading cluster specs and scenarios with errors that name the field path.

:class:`SpecError` (``arrivals[1].rate: must be > 0, got 0``), :class:`Fields` (a mapping read
with snake_case, camelCase or kebab-case keys and unknown-field errors), and the checks the readers
share (:func:`check_number`, :func:`check_string_map`, :func:`amount`, :func:`yaml_number`,
:func:`child`, :func:`type_name`). They were in :mod:`fastsched.sim.generators`; they live apart
because the scenario, its streams and the storage specs read their documents with them too, and
none of those need the cluster generators. ``fastsched.sim.generators`` re-exports
:class:`SpecError`, which is public there.
"""
from __future__ import annotations

import re
from typing import Any, Iterable, Mapping, Sequence

from ..api import ManifestError
from ..api.quantity import resource_amount
from ..api.util_validation import label_value_errors, qualified_name_errors
from ..util.field import go_quote
from ..errors import LocatedError

__all__ = ["SpecError", "Fields", "child", "norm_key", "type_name", "yaml_number", "check_number",
           "check_string_map", "check_label_map", "check_label_key", "check_label_value", "amount", "MAX_GENERATED"]


class SpecError(LocatedError, ValueError):
    """A problem in a cluster spec or scenario; ``path`` names the field (``arrivals[1].rate``) and
    ``problem`` (also ``reason``) says what is wrong; ``str()`` is ``<path>: <problem>``
    (:func:`fastsched.errors.located`, with a ``source`` when one is given)."""

    def __init__(self, path: str, problem: str, source: str | None = None):
        super().__init__(problem, path, source)
        self.path = path  # kept as given ("" for the document as a whole)

    @property
    def problem(self) -> str:
        return self.reason

    def __reduce__(self):
        return (_rebuild_spec_error, (type(self), self.path, self.reason, self.source))


def _rebuild_spec_error(cls, path, problem, source):
    return cls(path, problem, source)


_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")
_CAMEL_RE = re.compile(r"(?<=[a-z0-9])([A-Z])")


def child(path: str, key: Any) -> str:
    """``path.key``, or ``path[key]`` for list indexes and keys such as ``nvidia.com/gpu``."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _IDENT_RE.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{key}]"


def norm_key(key: str) -> str:
    """``zoneAssignment`` / ``zone-assignment`` -> ``zone_assignment``."""
    return _CAMEL_RE.sub(r"_\1", key).lower().replace("-", "_")


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    return type(value).__name__


class Fields:
    """A structural mapping read with field-path errors.

    Keys are normalized with :func:`norm_key`; a key outside ``allowed`` is an error unless
    ``extra`` accepts it (``extra`` keys are kept under their original spelling in :attr:`extras`).
    """

    def __init__(self, raw: Any, path: str, allowed: Iterable[str], extra=None):
        if not isinstance(raw, Mapping):
            raise SpecError(path, f"must be a mapping, got {type_name(raw)}")
        self.path = path
        self.items: dict[str, tuple[str, Any]] = {}
        self.extras: dict[str, Any] = {}
        allowed = frozenset(allowed)
        for key, value in raw.items():
            if not isinstance(key, str):
                raise SpecError(path, f"keys must be strings, got {key!r}")
            name = norm_key(key)
            if name in allowed:
                if name in self.items:
                    raise SpecError(child(path, key), f"given twice (also as {self.items[name][0]!r})")
                self.items[name] = (key, value)
            elif extra is not None and extra(key):
                self.extras[key] = value
            else:
                raise SpecError(child(path, key),
                                f"unknown field (expected one of: {', '.join(sorted(allowed))})")

    def __contains__(self, name: str) -> bool:
        return name in self.items and self.items[name][1] is not None

    def at(self, name: str) -> str:
        return child(self.path, self.items[name][0] if name in self.items else name)

    def get(self, name: str, default: Any = None) -> Any:
        return self.items[name][1] if name in self else default

    def number(self, name: str, default: Any = None, *, minimum: float | None = None,
               above: float | None = None, maximum: float | None = None, integer: bool = False) -> Any:
        if name not in self:
            return default
        return check_number(self.get(name), self.at(name), minimum=minimum, above=above,
                            maximum=maximum, integer=integer)

    def string(self, name: str, default: Any = None, choices: Sequence[str] | None = None) -> Any:
        if name not in self:
            return default
        value = self.get(name)
        if not isinstance(value, str):
            raise SpecError(self.at(name), f"must be a string, got {type_name(value)}")
        if choices is not None and value not in choices:
            raise SpecError(self.at(name), f"must be one of {', '.join(choices)}; got {value!r}")
        return value

    def boolean(self, name: str, default: bool = False) -> bool:
        if name not in self:
            return default
        value = self.get(name)
        if not isinstance(value, bool):
            raise SpecError(self.at(name), f"must be true or false, got {type_name(value)}")
        return value

    def list(self, name: str) -> list:
        if name not in self:
            return []
        value = self.get(name)
        if not isinstance(value, (list, tuple)):
            raise SpecError(self.at(name), f"must be a list, got {type_name(value)}")
        return list(value)

    def string_map(self, name: str) -> dict[str, str]:
        if name not in self:
            return {}
        return check_string_map(self.get(name), self.at(name))

    def label_map(self, name: str) -> dict[str, str]:
        """A map of label keys to label values (labels, selectors), each checked as the API server
        checks labels, at this document's path (not the generated object's)."""
        if name not in self:
            return {}
        return check_label_map(self.get(name), self.at(name))


# A number as YAML 1.1 or 1.2 writes one: 900, -3, 1_000, 2.5, .5, 1e12, 1.0e+9, 1E-3.
_YAML_NUMBER_RE = re.compile(r"[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)?\Z")


def yaml_number(value: Any) -> Any:
    """``value``, or the number it spells when it is a string in YAML number notation (``"1e12"``,
    ``"1_000"``): PyYAML (YAML 1.1) leaves ``1e12`` and ``1.0e9`` as strings."""
    if isinstance(value, str):
        text = value.strip()
        if _YAML_NUMBER_RE.match(text) and "__" not in text and not text.lstrip("+-").startswith("_"):
            digits = text.replace("_", "")
            try:
                return int(digits) if not any(c in digits for c in ".eE") else float(digits)
            except ValueError:
                return value
    return value


def check_number(value: Any, path: str, *, minimum: float | None = None, above: float | None = None,
                 maximum: float | None = None, integer: bool = False) -> Any:
    """``value`` as a number within the limits (a string in YAML number notation counts as the
    number it spells); SpecError naming ``path`` otherwise."""
    value = yaml_number(value)
    if isinstance(value, str):
        raise SpecError(path, f"must be a number (such as 900, 1.5e3 or 1_000), got the string {value!r}")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SpecError(path, f"must be a number, got {type_name(value)}")
    if integer and not (isinstance(value, int) or float(value).is_integer()):
        raise SpecError(path, f"must be a whole number, got {value}")
    if value != value or value in (float("inf"), float("-inf")):
        raise SpecError(path, "must be a finite number")
    if minimum is not None and value < minimum:
        raise SpecError(path, f"must be >= {minimum:g}, got {value:g}")
    if above is not None and value <= above:
        raise SpecError(path, f"must be > {above:g}, got {value:g}")
    if maximum is not None and value > maximum:
        raise SpecError(path, f"must be <= {maximum:g}, got {value:g}")
    return int(value) if integer else value


def check_string_map(value: Any, path: str) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise SpecError(path, f"must be a mapping, got {type_name(value)}")
    out = {}
    for k, v in value.items():
        if not isinstance(k, str):
            raise SpecError(path, f"keys must be strings, got {k!r}")
        if isinstance(v, bool) or not isinstance(v, (str, int, float)):
            raise SpecError(child(path, k), f"must be a string, got {type_name(v)}")
        out[k] = str(v)
    return out


#: most objects of one kind a spec may ask to generate (a count such as 2**63 overflowed NumPy's
#: sizes: a traceback instead of the field's error)
MAX_GENERATED = 100_000_000


def check_label_map(value: Any, path: str) -> dict[str, str]:
    """:func:`check_string_map`, each key a valid label key and each value a valid label value
    (``validation.IsQualifiedName`` / ``IsValidLabelValue``, upstream's messages)."""
    out = check_string_map(value, path)
    for k, v in out.items():
        check_label_key(k, child(path, k))
        check_label_value(v, child(path, k))
    return out


def check_label_key(key: str, path: str) -> None:
    problems = qualified_name_errors(key)
    if problems:
        raise SpecError(path, f"Invalid value: {go_quote(key)}: {'; '.join(problems)}")


def check_label_value(value: str, path: str) -> None:
    problems = label_value_errors(value)
    if problems:
        raise SpecError(path, f"Invalid value: {go_quote(value)}: {'; '.join(problems)}")


def amount(resource: str, value: Any, path: str) -> int:
    """The scheduler's integer amount of a quantity (millicores for cpu); SpecError if malformed."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise SpecError(path, f"must be a quantity (such as 4, 500m, 32Gi), got {type_name(value)}")
    try:
        result = resource_amount(resource, value)
    except (ManifestError, ValueError) as exc:
        reason = str(getattr(exc, "reason", exc))
        raise SpecError(path, reason if reason.startswith("invalid quantity")
                        else f"invalid quantity {value!r}: {reason}") from None
    if result < 0:
        raise SpecError(path, f"must not be negative, got {value!r}")
    return result
