"""CEL device selectors: the Kubernetes DRA CEL environment (upstream
``staging/src/k8s.io/dynamic-resource-allocation/cel/compile.go``) on the ``cel`` module of the
``common-expression-language`` package (Rust ``cel-interpreter`` bindings).

Why that library: compiling a typical selector takes ~25 µs and evaluating it ~1 µs, against
~350 µs and ~180 µs with the pure-Python ``cel-python`` (``celpy``); ``cel-expr-python`` (Google's
C++ runtime) needs protobuf type declarations for every variable and was not pursued. Custom
functions are Python callables, and ``x.f(y)`` calls ``f(x, y)``, which is how the quantity and
semver member functions are provided.

The environment, as upstream's:

* one variable ``device`` = ``{driver: string, allowMultipleAllocations: bool, attributes:
  map<domain, map<id, value>>, capacity: map<domain, map<id, Quantity>>}``. Attribute and capacity names without a domain are
  filed under the device's driver. int/bool/string attributes are CEL values, ``version``
  attributes semver objects, capacities quantities. Looking up a domain the device does not have
  yields an empty map (upstream's lazy map); an unknown key inside a domain is a runtime error
  (``no such key``).
* quantity functions (``quantity``, ``isQuantity``, ``sign``, ``isInteger``, ``asInteger``,
  ``asApproximateFloat``, ``add``, ``sub``, ``isLessThan``, ``isGreaterThan``, ``compareTo``) and
  semver functions (``semver``, ``isSemver``, ``major``, ``minor``, ``patch``, ``isLessThan``,
  ``isGreaterThan``, ``compareTo``), plus the common string extensions ``lowerAscii``,
  ``upperAscii``, ``split``, ``join``, ``trim``, ``replace``, ``indexOf``, ``lastIndexOf`` and
  ``substring``.

Quantities and versions are passed through CEL as small tagged maps (``{"__quantity__": "<nano
value>"}``, ``{"__semver__": "<text>"}``), so ``==`` compares them by value, as upstream's
``Equal``. ``cel.bind(v, init, body)`` (ext.Bindings) runs as ``[init].map(v, body)[0]``; the
regex library's ``find`` and ``findAll`` on Python's ``re`` with Go's ``FindString`` and
``FindAllString`` semantics. The library has no static type check: the compile check adds cel-go's
(:func:`fastsched.api.celcost.type_check_error`: no matching overload, mixed literals, undefined
fields, ... in upstream's words) where that port models the expression. Differences from upstream,
from the library: the optional-types extension is not available, ``type()`` of a quantity or a
version is ``map`` (upstream: ``kubernetes.Quantity``, ``kubernetes.Semver``), an undeclared
function's message has no position (an undeclared variable's has cel-go's), an invalid regex's reason is
Python's, and there is no runtime cost limit (upstream aborts an evaluation above 1,000,000 cost
units). API validation gets the static result type and cost estimate from
:mod:`fastsched.api.celcost` (a port of cel-go's checker and estimator); the 10 Ki length limit is
checked.

Compiled programs are cached per expression (:func:`compile_expression`); results are cached per
(expression, device) by :class:`SelectorCache`, which the DynamicResources plugin keeps until the
slices change.
"""
from __future__ import annotations

import logging
import re
from fractions import Fraction
from typing import Any, Mapping

import cel as _cel

from .celcost import CostUnsupported, tokens, type_check_error
from .quantity import Quantity, parse_quantity
from .semver import Semver, parse_semver

# The library logs a warning to logger "cel" each time one of our functions raises ("Python function
# 'quantity' failed: ..."); the same text reaches us as the evaluation's error, which becomes the
# device's CEL error. Without a handler, logging's last resort printed it to stderr once per failing
# device. A NullHandler keeps the records for applications that configure logging.
logging.getLogger("cel").addHandler(logging.NullHandler())

__all__ = ["CompiledExpression", "CELError", "compile_expression", "compile_error", "device_input",
           "derived_attribute", "SelectorCache", "LIBRARY"]

#: the CEL implementation used (distribution name)
LIBRARY = "common-expression-language"

_QUANTITY_TAG = "__quantity__"
_SEMVER_TAG = "__semver__"
_NANOS = 10**9


class CELError(Exception):
    """A CEL compile or runtime error; ``str`` is upstream-style text."""


# -- quantities and versions as CEL values ------------------------------------------------------
def _q(nanos: int) -> dict:
    return {_QUANTITY_TAG: str(nanos)}


def quantity_value(q: Quantity) -> dict:
    """The CEL value of a device capacity."""
    return _q(q.nano_value())


def _nanos(value: Any, fn: str) -> int:
    if isinstance(value, Mapping) and _QUANTITY_TAG in value:
        return int(value[_QUANTITY_TAG])
    if isinstance(value, bool):
        raise CELError(f"no such overload: {fn}")
    if isinstance(value, int):
        return value * _NANOS
    raise CELError(f"no such overload: {fn}")


def _version(value: Any, fn: str) -> Semver:
    if isinstance(value, Mapping) and _SEMVER_TAG in value:
        version = parse_semver(value[_SEMVER_TAG])
        if version is not None:  # an attribute of an unvalidated slice may hold any text
            return version
    raise CELError(f"no such overload: {fn}")


def _is_quantity_value(value: Any) -> bool:
    return isinstance(value, Mapping) and _QUANTITY_TAG in value


def _fn_quantity(text: Any) -> dict:
    try:
        return _q(parse_quantity(text).nano_value())
    except Exception as e:  # QuantityError
        # resource.ParseQuantity's ErrFormatWrong, without the text (as upstream words it)
        raise CELError("quantities must match the regular expression "
                       "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'") from e


def _fn_is_quantity(text: Any) -> bool:
    try:
        parse_quantity(text)
        return True
    except Exception:
        return False


def _fn_char_at(s: Any, i: Any) -> str:
    if not isinstance(s, str) or not isinstance(i, int) or i < 0 or i > len(s):
        raise CELError(f"index out of range: {i}")
    return s[i:i + 1]


def _fn_semver(text: Any) -> dict:
    if parse_semver(text) is None:
        raise CELError(blang_parse_error(str(text)) or f"could not parse {text!s} as semver")
    return {_SEMVER_TAG: _without_build(text)}


def _without_build(text: str) -> str:
    """A version's text without build metadata: upstream's semver == (blang Equals) ignores it."""
    return text.split("+", 1)[0]


def _go_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def blang_parse_error(s: str) -> str | None:
    """The error ``github.com/blang/semver/v4``'s ``Parse`` (upstream's ``semver()``) returns for
    ``s``, or None when it parses (checked against v1.34.4 with the differential oracle)."""
    digits = set("0123456789")
    alphanum = digits | set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-")
    if not s:
        return "Version string empty"
    parts = s.split(".", 2)
    if len(parts) != 3:
        return "No Major.Minor.Patch elements found"
    patch, pre, build = parts[2], [], []
    if "+" in patch:
        i = patch.index("+")
        build, patch = patch[i + 1:].split("."), patch[:i]
    if "-" in patch:
        i = patch.index("-")
        pre, patch = patch[i + 1:].split("."), patch[:i]
    for label, part in (("major", parts[0]), ("minor", parts[1]), ("patch", patch)):
        if not set(part) <= digits:
            return f"Invalid character(s) found in {label} number {_go_quote(part)}"
        if len(part) > 1 and part[0] == "0":
            return f"{label.capitalize()} number must not contain leading zeroes {_go_quote(part)}"
        if not part:
            return f'strconv.ParseUint: parsing "": invalid syntax'
        if int(part) > 2**64 - 1:
            return f"strconv.ParseUint: parsing {_go_quote(part)}: value out of range"
    for p in pre:
        if not p:
            return "Prerelease is empty"
        if set(p) <= digits:
            if len(p) > 1 and p[0] == "0":
                return f"Numeric PreRelease version must not contain leading zeroes {_go_quote(p)}"
        elif not set(p) <= alphanum:
            return f"Invalid character(s) found in prerelease {_go_quote(p)}"
    for b in build:
        if not b:
            return "Build meta data is empty"
        if not set(b) <= alphanum:
            return f"Invalid character(s) found in build meta data {_go_quote(b)}"
    return None


def _cmp(a: Any, b: Any, fn: str) -> int:
    if _is_quantity_value(a):
        x, y = _nanos(a, fn), _nanos(b, fn)
        return (x > y) - (x < y)
    return _version(a, fn).compare(_version(b, fn))


def _fn_sign(a: Any) -> int:
    n = _nanos(a, "sign")
    return (n > 0) - (n < 0)


def _fn_is_integer(a: Any) -> bool:
    n = _nanos(a, "isInteger")
    return n % _NANOS == 0 and -(2**63) <= n // _NANOS < 2**63


def _fn_as_integer(a: Any) -> int:
    n = _nanos(a, "asInteger")
    if n % _NANOS or not -(2**63) <= n // _NANOS < 2**63:
        raise CELError("cannot convert value to integer")
    return n // _NANOS


def _fn_as_float(a: Any) -> float:
    return float(Fraction(_nanos(a, "asApproximateFloat"), _NANOS))


def _fn_add(a: Any, b: Any) -> dict:
    return _q(_nanos(a, "add") + _nanos(b, "add"))


def _fn_sub(a: Any, b: Any) -> dict:
    return _q(_nanos(a, "sub") - _nanos(b, "sub"))


def _version_part(index: int, name: str):
    def part(a: Any) -> int:
        return (lambda v: (v.major, v.minor, v.patch)[index])(_version(a, name))
    return part


def _fn_split(s: str, sep: str, n: int = -1) -> list:
    if n == 0:
        return []
    parts = s.split(sep) if sep else list(s)
    if n > 0 and len(parts) > n:
        parts = parts[:n - 1] + [sep.join(parts[n - 1:])]
    return parts


def _go_regex(pattern: Any, fn: str) -> "re.Pattern[str]":
    """``regexp.Compile`` of a regex library argument, on Python's ``re`` (RE2's syntax is close to
    a subset of it; its ``\\z``, end of text, is ``re``'s ``\\Z``, its ``(?<name>`` ``re``'s
    ``(?P<name>``). A pattern it refuses is the library's ``Illegal regex`` error, with ``re``'s
    reason (Go's words differ, and ``re`` takes a few patterns RE2 does not: lookarounds,
    backreferences)."""
    if not isinstance(pattern, str):
        raise CELError("no such overload")
    try:
        return _REGEX_CACHE[pattern]
    except KeyError:
        pass
    try:
        compiled = re.compile(_RE2_NAMED_GROUP.sub(r"\1(?P<", _RE2_END_OF_TEXT.sub(r"\1\\Z", pattern)))
    except re.error as e:
        raise CELError(f"Illegal regex: error parsing regexp: {e}") from None
    if len(_REGEX_CACHE) > 256:
        _REGEX_CACHE.clear()
    _REGEX_CACHE[pattern] = compiled
    return compiled


_REGEX_CACHE: dict[str, "re.Pattern[str]"] = {}
#: RE2's ``\\z`` (end of text) and ``(?<name>`` (a named group), outside an escape
_RE2_END_OF_TEXT = re.compile(r"(?<!\\)((?:\\\\)*)\\z")
_RE2_NAMED_GROUP = re.compile(r"(?<!\\)((?:\\\\)*)\(\?<(?=[A-Za-z_])")


def _fn_find(s: Any, pattern: Any) -> str:
    """The regex library's ``s.find(re)``: the leftmost match (``FindString``), "" when none."""
    if not isinstance(s, str):
        raise CELError("no such overload")
    m = _go_regex(pattern, "find").search(s)
    return m.group(0) if m else ""


def _fn_find_all(s: Any, pattern: Any, n: Any = -1) -> list:
    """``s.findAll(re)`` / ``s.findAll(re, n)``: ``FindAllString(s, n)`` -- successive
    non-overlapping matches, an empty match right after the previous match dropped (where Python's
    ``finditer`` keeps it, and after an empty match the search goes on at the next character), at
    most ``n`` of them (all when negative, none when 0)."""
    if not isinstance(s, str) or isinstance(n, bool) or not isinstance(n, int):
        raise CELError("no such overload")
    compiled = _go_regex(pattern, "findAll")
    out: list[str] = []
    pos, previous_end = 0, -1
    while pos <= len(s) and (n < 0 or len(out) < n):  # regexp.allMatches
        m = compiled.search(s, pos)
        if m is None:
            break
        accept = True
        if m.end() == pos:  # an empty match: not right after a previous match; on to the next rune
            accept = m.start() != previous_end
            pos += 1
        else:
            pos = m.end()
        previous_end = m.end()
        if accept:
            out.append(m.group(0))
    return out


def _cel_equal(a: Any, b: Any) -> bool:
    """cel-go's ``Equal`` of two values: bools equal only bools, numbers compare by value across
    int and double, everything else (strings, lists, tagged semvers) as Python's ``==``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_cel_equal(x, y) for x, y in zip(a, b))
    return bool(a == b)


def _fn_includes(target: Any, arg: Any) -> bool:
    """``apiserver/pkg/cel/library/lists.go`` ``includes``: a list has an element equal to
    ``arg``; any other value equals it."""
    if isinstance(target, list):
        return any(_cel_equal(item, arg) for item in target)
    return _cel_equal(target, arg)


_FUNCTIONS = {
    "quantity": _fn_quantity,
    "isQuantity": _fn_is_quantity,
    "semver": _fn_semver,
    "isSemver": lambda s: parse_semver(s) is not None,
    "sign": _fn_sign,
    "isInteger": _fn_is_integer,
    "asInteger": _fn_as_integer,
    "asApproximateFloat": _fn_as_float,
    "add": _fn_add,
    "sub": _fn_sub,
    "isLessThan": lambda a, b: _cmp(a, b, "isLessThan") < 0,
    "isGreaterThan": lambda a, b: _cmp(a, b, "isGreaterThan") > 0,
    "compareTo": lambda a, b: _cmp(a, b, "compareTo"),
    "major": _version_part(0, "major"),
    "minor": _version_part(1, "minor"),
    "patch": _version_part(2, "patch"),
    "lowerAscii": lambda s: "".join(c.lower() if c.isascii() else c for c in s),
    "upperAscii": lambda s: "".join(c.upper() if c.isascii() else c for c in s),
    "split": _fn_split,
    "join": lambda xs, sep="": sep.join(xs),
    "trim": lambda s: s.strip(),
    "replace": lambda s, old, new, n=-1: s.replace(old, new, n),
    "indexOf": lambda s, sub, start=0: s.find(sub, start),
    "lastIndexOf": lambda s, sub: s.rfind(sub),
    "substring": lambda s, start, end=None: s[start:end],
    # size() as cel-go counts: a string's code points (the library counts its UTF-8 bytes)
    "__size": lambda x: len(x),
    # the strings extension's charAt: the code point at i ("" at the end)
    "charAt": _fn_char_at,
    # library.IncludesOption (DRAListTypeAttributes only: see CompiledExpression)
    "includes": _fn_includes,
    # library.Regex (the base environment's)
    "find": _fn_find,
    "findAll": _fn_find_all,
}
#: functions declared only with DRAListTypeAttributes (upstream's environment adds
#: ``library.IncludesOption()`` then); without it they are undeclared references
_LIST_TYPE_ATTRIBUTES_ONLY = frozenset({"includes"})
#: functions and operators the library provides itself (anything else is undeclared)
_BUILTINS = frozenset({
    "size", "has", "all", "exists", "exists_one", "map", "filter", "matches", "startsWith", "endsWith",
    "contains", "int", "uint", "double", "string", "bytes", "bool", "type", "dyn", "duration", "timestamp",
    "max", "min", "getFullYear", "getMonth", "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear",
    "getHours", "getMinutes", "getSeconds", "getMilliseconds",
})
#: the standard environment's type identifiers (``type(x) == int``), which the library evaluates to
#: the names its ``type()`` returns
_TYPE_IDENTIFIERS = frozenset({"int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type"})
_CONTEXT = _cel.Context()
for _name, _fn in _FUNCTIONS.items():
    _CONTEXT.add_function(_name, _fn)
_CONTEXT.add_variable("device", {})

#: ``device.attributes["<domain>"]`` / ``device.capacity["<domain>"]`` with a literal domain: such
#: domains are added as empty maps to a device without them (upstream's lazy map)
_DOMAIN_LOOKUP = re.compile(r"""device\s*\.\s*(attributes|capacity)\s*\[\s*(?:"([^"\\]*)"|'([^'\\]*)')\s*\]""")


_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
#: macros binding a variable (``list.all(x, ...)``): their variables are not undeclared references
_COMPREHENSION = re.compile(r"\.\s*(all|exists|exists_one|map|filter)\s*\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*,")


#: upstream declares these only as global functions (``sign(q)``), those only as member functions
#: (``q.isInteger()``): the other call style does not compile there ("found no matching overload")
_GLOBAL_ONLY = frozenset({"quantity", "isQuantity", "sign", "semver", "isSemver"})
_MEMBER_ONLY = frozenset({"isGreaterThan", "isLessThan", "compareTo", "asApproximateFloat", "asInteger", "isInteger",
                          "add", "sub", "major", "minor", "patch", "lowerAscii", "upperAscii", "split", "join", "trim",
                          "replace", "indexOf", "lastIndexOf", "substring", "charAt", "find", "findAll"})
_CALL = re.compile(r"""(\.\s*)?\b([A-Za-z_][A-Za-z0-9_]*)\s*\(""")


def _call_style_error(expression: str) -> str:
    """A compile error for a library function called in the style upstream does not declare it
    in, else "". (The library calls ``x.f(y)`` as ``f(x, y)`` for any function.)"""
    cleaned = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'', lambda m: " " * len(m.group(0)), expression)
    for m in _CALL.finditer(cleaned):
        member, name = bool(m.group(1)), m.group(2)
        if (member and name in _GLOBAL_ONLY) or (not member and name in _MEMBER_ONLY):
            return (f"ERROR: <input>:1:{m.start(2) + 1}: found no matching overload for '{name}' "
                    f"({'a global function' if member else 'a member function'} upstream)")
    return ""


class CompiledExpression:
    """One compiled selector: ``program`` (None when compiling failed), ``error`` (the compile
    error text, "" when none) and the domains it looks up literally."""

    __slots__ = ("expression", "program", "error", "attribute_domains", "capacity_domains", "list_type_attributes")

    def __init__(self, expression: str, list_type_attributes: bool = False):
        self.expression = expression
        #: compiled in DRAListTypeAttributes' environment (``includes`` declared)
        self.list_type_attributes = list_type_attributes
        self.program = None
        self.error = ""
        self.attribute_domains: tuple[str, ...] = ()
        self.capacity_domains: tuple[str, ...] = ()
        try:
            program = _cel.compile(_size_in_code_points(expression))
        except Exception as e:  # ValueError from the parser
            self.error = _parse_error_text(str(e))
            return
        # ext.Bindings (the DRA environment's): cel.bind(v, init, body) run as a one-element map
        source = _rewrite_binds(expression)
        if source != expression:
            try:
                program = _cel.compile(_size_in_code_points(source))
            except Exception as e:  # (not expected: the rewrite keeps the parts' syntax)
                self.error = _parse_error_text(str(e))
                return
        refs = program.references()
        # operators ("_&&_", "!_", "@in", ...) are not identifiers
        unknown = [f for f in refs.get("functions", ())
                   if _IDENTIFIER.fullmatch(f) and (f not in _FUNCTIONS or (
                       not list_type_attributes and f in _LIST_TYPE_ATTRIBUTES_ONLY)) and f not in _BUILTINS]
        style = _call_style_error(expression)
        if style:  # cel-go's own words where its checker is modelled
            self.error = type_check_error(expression, list_type_attributes) or style
            return
        bound = {m.group(2) for m in _COMPREHENSION.finditer(source)}
        variables = [v for v in refs.get("variables", ())
                     if v != "device" and v not in bound and v not in _TYPE_IDENTIFIERS]
        if unknown or variables:
            # an undeclared variable alone: cel-go's checker's words (position, source line, and its
            # other errors) where its port models the rest of the expression
            exact = "" if unknown else type_check_error(expression, list_type_attributes, undeclared=True)
            name = (unknown + variables)[0]
            self.error = exact or f"ERROR: <input>:1:1: undeclared reference to '{name}' (in container '')"
            return
        # the library has no type checker: cel-go's (fastsched.api.celcost), where it models the
        # expression -- a call no overload takes (1.0 == 1), a literal mixing types, ...
        self.error = type_check_error(expression, list_type_attributes)
        if self.error:
            return
        self.program = program
        attrs: set[str] = set()
        caps: set[str] = set()
        for m in _DOMAIN_LOOKUP.finditer(expression):
            (attrs if m.group(1) == "attributes" else caps).add(m.group(2) if m.group(2) is not None else m.group(3))
        self.attribute_domains = tuple(sorted(attrs))
        self.capacity_domains = tuple(sorted(caps))

    def matches(self, device: Mapping[str, Any]) -> bool:
        """Evaluate against a device input (:func:`device_input`); CELError on a runtime error or a
        result that is no bool."""
        if self.attribute_domains or self.capacity_domains:
            device = _with_domains(device, self.attribute_domains, self.capacity_domains)
        try:
            return self._evaluate(device)
        except CELError as e:
            leftmost = _leftmost_error(self.expression, device)
            if leftmost is not None and str(leftmost) != str(e):
                raise leftmost from None
            raise

    def _evaluate(self, device: Mapping[str, Any]) -> bool:
        result = self._execute(device)
        if not isinstance(result, bool):
            raise CELError(f"CEL result of type {type(result).__name__} could not be converted to bool")
        return result

    def value(self, device: Mapping[str, Any]) -> Any:
        """The expression's value for a device input (a derived attribute's: see
        :func:`derived_attribute`); CELError on a runtime error."""
        if self.attribute_domains or self.capacity_domains:
            device = _with_domains(device, self.attribute_domains, self.capacity_domains)
        return self._execute(device)

    def _execute(self, device: Mapping[str, Any]) -> Any:
        _CONTEXT.add_variable("device", device)
        program = self.program
        if program is None:  # compiling failed: callers check ``error`` first
            raise CELError(self.error)
        try:
            result = program.execute(_CONTEXT)
        except KeyError as e:
            raise CELError(f"no such key: {e.args[0] if e.args else ''}") from None
        except CELError:
            raise
        except Exception as e:
            cause = e.__cause__ or e.__context__
            if isinstance(cause, CELError):
                raise CELError(str(cause)) from None
            raise CELError(_runtime_error_text(str(e))) from None
        return result


def _go_type_name(value: Any) -> str:
    """Go's ``%T`` of the native value cel-go holds for a CEL value (upstream's error texts)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "structpb.NullValue"
    if isinstance(value, Mapping) and _SEMVER_TAG in value:
        return "semver.Version"
    if isinstance(value, Mapping) and _QUANTITY_TAG in value:
        return "apiservercel.Quantity"
    return type(value).__name__


def derived_attribute(compiled: CompiledExpression, device: Mapping[str, Any]) -> tuple[str, Any]:
    """``EvaluateDerivedAttribute``: the device attribute (``(kind, value)`` as
    :class:`~fastsched.api.resource.DeviceAttribute` holds it) that ``compiled`` yields for a device
    input (``valToDeviceAttribute``: a bool, int, string or version, or a list of one kind, typed
    by its first element; an empty list is an empty ``strings``); CELError otherwise. A version is
    given without build metadata (fastsched's semver values drop it, upstream's keep it)."""
    value = compiled.value(device)
    if isinstance(value, bool):
        return "bool", value
    if isinstance(value, int):
        return "int", value
    if isinstance(value, str):
        return "string", value
    if isinstance(value, Mapping) and _SEMVER_TAG in value:
        return "version", value[_SEMVER_TAG]
    if isinstance(value, list):
        if not value:
            return "strings", ()
        first = _go_type_name(value[0])
        kinds = {"bool": ("bools", "bool"), "int64": ("ints", "int"), "string": ("strings", "string"),
                 "semver.Version": ("versions", "semver")}
        if first not in kinds:
            raise CELError(f"unsupported list element type: {first}")
        kind, word = kinds[first]
        for i, item in enumerate(value):
            if _go_type_name(item) != first:
                raise CELError(f"expected list element at index {i} to be {word}, got {_go_type_name(item)}")
        if kind == "versions":
            return kind, tuple(item[_SEMVER_TAG] for item in value)
        return kind, tuple(value)
    raise CELError(f"unsupported CEL return type: {_go_type_name(value)}")


_SIZE_CALL = re.compile(r"\bsize(\s*\()")


def _rewrite_binds(expression: str) -> str:
    """``cel.bind(v, init, body)`` (ext.Bindings: ``body`` with ``v`` bound to ``init``'s value)
    as ``[init].map(v, body)[0]``, which the library runs with the same value and errors (the
    innermost first, each once); ``expression`` itself when it has none (or one the rewrite cannot
    read: then the library's compile error stands)."""
    while True:
        try:
            toks = tokens(expression)
        except CostUnsupported:
            return expression
        for k in range(len(toks) - 4, -1, -1):
            if [t[:2] for t in toks[k:k + 4]] == [("ident", "cel"), ("op", "."), ("ident", "bind"), ("op", "(")]:
                break
        else:
            return expression
        depth, commas, end = 0, [], -1
        for kind, value, offset in toks[k + 4:]:
            if kind == "eof":
                return expression
            if kind == "op" and value in ("(", "[", "{"):
                depth += 1
            elif kind == "op" and value in (")", "]", "}"):
                if depth == 0:
                    end = offset
                    break
                depth -= 1
            elif kind == "op" and value == "," and depth == 0:
                commas.append(offset)
        start = toks[k + 3][2] + 1
        if len(commas) != 2 or not _IDENTIFIER.fullmatch(expression[start:commas[0]].strip()):
            return expression  # not cel.bind's form: upstream's error is a compile error too
        var, init, body = (expression[start:commas[0]].strip(), expression[commas[0] + 1:commas[1]],
                           expression[commas[1] + 1:end])
        expression = f"{expression[:toks[k][2]]}[{init}].map({var}, {body})[0]{expression[end + 1:]}"


def _size_in_code_points(expression: str) -> str:
    """``size(...)`` / ``x.size()`` rewritten to ``__size``, outside string literals."""
    out, last = [], 0
    for m in re.finditer(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'', expression):
        out.append(_SIZE_CALL.sub(r"__size\1", expression[last:m.start()]))
        out.append(m.group(0))
        last = m.end()
    out.append(_SIZE_CALL.sub(r"__size\1", expression[last:]))
    return "".join(out)


def _outside_literals(text: str):
    """``(index, char)`` for each character of ``text`` outside its string literals (quotes and
    escapes skipped): what both scanners below walk."""
    quote, i, n = "", 0, len(text)
    while i < n:
        c = text[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        else:
            yield i, c
        i += 1


def _split_top_level(expression: str, op: str) -> list[str]:
    """``expression`` split at ``op`` ("&&" or "||") outside parentheses, brackets and string
    literals; [expression] when it has none there (or is not plain enough to split: a ternary)."""
    parts, depth, start = [], 0, 0
    for i, c in _outside_literals(expression):
        if i < start:  # the operator's second character
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0 and c == "?":
            return [expression]
        elif depth == 0 and expression.startswith(op, i):
            parts.append(expression[start:i])
            start = i + len(op)
    parts.append(expression[start:])
    return parts


def _leftmost_error(expression: str, device: Mapping[str, Any]) -> "CELError | None":
    """The error cel-go reports for an expression that failed: its logical operators evaluate every
    operand and, when none decides the result (a false operand of ``&&``, a true one of ``||``),
    keep the *first* operand's error, where the library keeps the last one. None when the
    expression has no top-level ``||`` / ``&&`` (or an operand yields no bool)."""
    text = expression.strip()
    while text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
        text = text[1:-1].strip()
    for op in ("||", "&&"):  # || binds looser: split there first
        operands = _split_top_level(text, op)
        if len(operands) < 2:
            continue
        first: CELError | None = None
        for operand in operands:
            compiled = compile_expression(operand.strip(), True)
            if compiled.program is None:
                return None
            try:
                value = compiled._evaluate(device)
            except CELError as e:
                if first is None:
                    first = _leftmost_error(operand, device) or e
                continue
            if value is (op == "||"):  # decides the result: the errors do not matter
                return None
        return first
    return None


def _balanced(text: str) -> bool:
    """Whether the parentheses of ``text`` (outside string literals) never close below zero."""
    depth = 0
    for _, c in _outside_literals(text):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def _with_domains(device: Mapping[str, Any], attrs: tuple[str, ...], caps: tuple[str, ...]) -> dict:
    a, c = device["attributes"], device["capacity"]
    if all(d in a for d in attrs) and all(d in c for d in caps):
        return device  # type: ignore[return-value]
    a = dict(a)
    c = dict(c)
    for d in attrs:
        a.setdefault(d, {})
    for d in caps:
        c.setdefault(d, {})
    return {"driver": device["driver"], "allowMultipleAllocations": device.get("allowMultipleAllocations", False),
            "attributes": a, "capacity": c}


def _parse_error_text(text: str) -> str:
    # "Failed to parse expression '...': ERROR: <input>:1:18: Syntax error: ..." -> "ERROR: ..."
    i = text.find("ERROR:")
    return text[i:].strip() if i >= 0 else text


#: the library's runtime errors in cel-go's words (checked against v1.34.4 with the differential
#: oracle, tests/oracle)
_CEL_GO_ERRORS = (
    (re.compile(r"^division by zero\b"), "division by zero"),
    (re.compile(r"^modulo by zero\b"), "modulus by zero"),
    (re.compile(r"^Arithmetic overflow\b"), "integer overflow"),
    (re.compile(r"^Function 'int' error: string parse error"), "type conversion error from 'string' to 'int'"),
    # an operator on operands of types it has no overload for (int + string through dyn): cel-go's
    # MaybeNoSuchOverloadErr (compile_test.go TestEvaluateDerivedAttributes asserts the words)
    (re.compile(r"^No such overload\b"), "no such overload"),
)


def _runtime_error_text(text: str) -> str:
    m = re.search(r"Python function call failed: \w+: (.*?)\. Check function", text)
    if m:
        return m.group(1)
    for pattern, words in _CEL_GO_ERRORS:
        if pattern.search(text):
            return words
    return text.split(". ")[0] if text else text


_COMPILED: dict[tuple[str, bool], CompiledExpression] = {}


def compile_expression(expression: str, list_type_attributes: bool = False) -> CompiledExpression:
    """The compiled form of ``expression`` (compiled once per process and environment:
    ``list_type_attributes`` is DRAListTypeAttributes, which declares ``includes``)."""
    key = (expression, list_type_attributes)
    compiled = _COMPILED.get(key)
    if compiled is None:
        compiled = _COMPILED[key] = CompiledExpression(expression, list_type_attributes)
    return compiled


def compile_error(expression: str, list_type_attributes: bool = False) -> str:
    """The compile error of ``expression``, "" when it compiles (API validation)."""
    return compile_expression(expression, list_type_attributes).error


def device_input(driver: str, device: Any) -> dict:
    """The ``device`` variable of a :class:`~fastsched.api.resource.Device` of ``driver``."""
    attributes: dict[str, dict[str, Any]] = {}
    for name, attr in device.attributes.items():
        domain, sep, ident = name.rpartition("/")
        if not sep:
            domain = driver
        value = attr.value
        if not attr.kind:
            # getAttributeValue (what API validation refuses: no value set)
            raise CELError(f"attribute {name}: unsupported attribute value")
        if attr.kind == "version":
            value = {_SEMVER_TAG: _without_build(value)}
        elif attr.kind == "versions":  # DRAListTypeAttributes: lists are CEL lists
            value = [{_SEMVER_TAG: _without_build(v)} for v in value]
        elif attr.kind in ("ints", "bools", "strings"):
            value = list(value)
        attributes.setdefault(domain, {})[ident] = value
    capacity: dict[str, dict[str, Any]] = {}
    for name, q in device.capacity.items():
        domain, sep, ident = name.rpartition("/")
        if not sep:
            domain = driver
        capacity.setdefault(domain, {})[ident] = quantity_value(q)
    return {"driver": driver, "allowMultipleAllocations": bool(getattr(device, "allow_multiple_allocations", False)),
            "attributes": attributes, "capacity": capacity}


class SelectorCache:
    """Selector results per (expression, device) and CEL inputs per device, valid while the
    ResourceSlices they came from are unchanged: :meth:`retain` drops what belongs to slices no
    longer listed (a changed slice is a new object).

    A miss looks for the result of an equal device first: what :func:`device_input` reads of a
    device (its driver, attributes, capacities and allowMultipleAllocations) is the whole input
    of the evaluation, so devices equal in those get the same result from the same expression
    (the slices of a pool stamped from one template, node after node, repeat ~10 devices). Only
    results are shared; an evaluation that raises is evaluated again for each device, as
    before."""

    __slots__ = ("_inputs", "_results", "_slice_ids", "_by_content")

    #: content entries kept at most (cleared when more, at :meth:`retain`)
    MAX_CONTENT_ENTRIES = 100_000

    def __init__(self) -> None:
        # keyed by id(device); the entries hold the device, so its id cannot be reused meanwhile
        self._inputs: dict[int, tuple[Any, dict]] = {}        # id(device) -> (device, input)
        self._results: dict[tuple[str, int], tuple[Any, bool]] = {}  # (expression, id) -> (device, match)
        self._slice_ids: frozenset[int] | None = None
        # (expression, list types, driver, device content) -> match: no device held
        self._by_content: dict[tuple, bool] = {}

    def retain(self, slices: list) -> None:
        """Keep only the entries of devices of ``slices`` (call when listing the slices)."""
        ids = frozenset(id(s) for s in slices)
        if ids == self._slice_ids:
            return
        self._slice_ids = ids
        live = {id(d) for s in slices for d in s.devices}
        self._inputs = {k: v for k, v in self._inputs.items() if k in live}
        self._results = {k: v for k, v in self._results.items() if k[1] in live}
        if len(self._by_content) > self.MAX_CONTENT_ENTRIES:
            self._by_content = {}

    def matches(self, compiled: CompiledExpression, driver: str, device: Any) -> bool:
        """Whether ``device`` passes ``compiled`` (cached); CELError as :meth:`CompiledExpression.matches`."""
        key = (compiled.expression, id(device))
        hit = self._results.get(key)
        if hit is not None and hit[0] is device:
            return hit[1]
        content = _content_key(compiled, driver, device)
        if content is not None:
            result = self._by_content.get(content)
            if result is not None:
                self._results[key] = (device, result)
                return result
        entry = self._inputs.get(id(device))
        if entry is None or entry[0] is not device:
            entry = self._inputs[id(device)] = (device, device_input(driver, device))
        result = compiled.matches(entry[1])
        self._results[key] = (device, result)
        if content is not None:
            self._by_content[content] = result
        return result


def _content_key(compiled: CompiledExpression, driver: str, device: Any) -> tuple | None:
    """What the evaluation of ``compiled`` on ``device`` depends on, hashable: the expression
    and its environment, and what :func:`device_input` reads (attributes by name with their kind
    and value, so an int 1 and a bool true differ; capacities by name with their value, which is
    all a quantity's CEL value holds). None when some value cannot be hashed."""
    key = (compiled.expression, compiled.list_type_attributes, driver,
           bool(getattr(device, "allow_multiple_allocations", False)),
           tuple(device.attributes.items()), tuple(device.capacity.items()))
    try:
        hash(key)
    except TypeError:
        return None
    return key
