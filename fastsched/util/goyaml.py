"""YAML read as upstream reads manifests and configurations: sigs.k8s.io/yaml over go-yaml v2.

Upstream (v1.37.2) turns YAML into JSON with sigs.k8s.io/yaml v1.6.0, which parses with
go.yaml.in/yaml/v2 v2.4.4 into Go values and marshals them with encoding/json; the JSON decoders
then fill the typed objects. PyYAML resolves plain scalars by YAML 1.1's rules, which differ from
go-yaml v2's in places that change a manifest's meaning or turn an error into a value:

========================  =====================  ===========================================
plain scalar              PyYAML (YAML 1.1)      go-yaml v2, then JSON
========================  =====================  ===========================================
``y``, ``Y``, ``n``       the string             a bool
``0o17``                  the string             the int 15 (Go's ParseInt, base 0)
``08``, ``1.0``, ``1e3``  string, 1.0, string    8, 1, 1000 (floats marshal as JSON numbers,
                                                 so an integral one decodes into an int field)
``1e-7``, ``1.5``         string, float          a float (a number: no string field takes it)
``1:20``                  the int 80             the string (no sexagesimal numbers)
``2001-12-14``            a date                 the string (timestamps into interface{})
``.inf``, ``.nan``        a float                "json: unsupported value: +Inf"/"NaN"
``{a: 1, <<: {a: 2}}``    a is 1                 a is 2 (a merge overwrites the keys before it)
``{1.5: x, yes: y}``      float and bool keys    keys "1.5" and "true" (sigs.k8s.io/yaml)
``!!int abc``             ValueError             "yaml: cannot decode !!str `abc` as a !!int"
``!foo bar``              no constructor         the string (unknown tags are ignored)
========================  =====================  ===========================================

:class:`GoYAMLLoader` is a PyYAML loader (libyaml's parser where available) whose resolver and
constructors follow go-yaml v2's ``resolve`` and sigs.k8s.io/yaml's ``convertToJSONableObject``,
so that a document loads as the Python value of the JSON upstream would decode: keys are strings,
scalars are str, int, float, bool or None. :class:`GoYAMLStrictLoader` is its
``yaml.UnmarshalStrict`` (the strict decoders' duplicate check: a key set twice in a mapping,
merges included, is an error naming the line of the second value). Both refuse what go-yaml's
decoder refuses of aliases (:func:`alias_problem`: an alias bomb, a recursive anchor), which
PyYAML builds as shared or cyclic values that a decoder walks for ever. Problems are raised as
``yaml.YAMLError`` with go-yaml's or encoding/json's wording and the place in the document.
"""
from __future__ import annotations

import base64
import binascii
import math
import re
from decimal import Decimal
from typing import Any

import numpy as np
import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from .field import go_quote

__all__ = ["GoFloat", "GoYAMLLoader", "GoYAMLStrictLoader", "GoYAMLTypedLoader", "alias_problem", "go_resolve",
           "go_float_text", "json_float", "json_number"]

_PREFIX = "tag:yaml.org,2002:"
STR_TAG = _PREFIX + "str"
INT_TAG = _PREFIX + "int"
FLOAT_TAG = _PREFIX + "float"
BOOL_TAG = _PREFIX + "bool"
NULL_TAG = _PREFIX + "null"
TIMESTAMP_TAG = _PREFIX + "timestamp"
BINARY_TAG = _PREFIX + "binary"
MERGE_TAG = _PREFIX + "merge"
MAP_TAG = _PREFIX + "map"
SEQ_TAG = _PREFIX + "seq"
_RESOLVABLE = frozenset((STR_TAG, BOOL_TAG, INT_TAG, FLOAT_TAG, NULL_TAG, TIMESTAMP_TAG))

# go-yaml v2's resolveMap
_MAP: dict[str, tuple[str, Any]] = {}
for _words, _item in (
    (("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), (BOOL_TAG, True)),
    (("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), (BOOL_TAG, False)),
    (("", "~", "null", "Null", "NULL"), (NULL_TAG, None)),
    ((".nan", ".NaN", ".NAN"), (FLOAT_TAG, math.nan)),
    ((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), (FLOAT_TAG, math.inf)),
    (("-.inf", "-.Inf", "-.INF"), (FLOAT_TAG, -math.inf)),
    (("<<",), (MERGE_TAG, "<<")),
):
    for _word in _words:
        _MAP[_word] = _item

_INT64_MIN, _INT64_MAX, _UINT64_MAX = -(1 << 63), (1 << 63) - 1, (1 << 64) - 1
# strconv.ParseInt/ParseUint with base 0 (underscores already removed): a sign (ParseInt only),
# then 0x/0o/0b, a leading 0 (octal) or decimal digits
_GO_INT_RE = re.compile(r"([+-]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)\Z")
# go-yaml's yamlStyleFloat, which strconv.ParseFloat then reads (decimal notation only)
_YAML_STYLE_FLOAT_RE = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
# what ParseFloat accepts of a scalar starting with "." (its other forms need a digit or sign first;
# go-yaml hands it the text with its underscores, which Go's syntax allows between digits)
_DOT_FLOAT_RE = re.compile(r"\.[0-9](_?[0-9])*([eE][-+]?[0-9](_?[0-9])*)?\Z")
# go-yaml's parseTimestamp: YYYY- then one of time.Parse's layouts
_TIMESTAMP_RES = (
    re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}[Tt][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(\.[0-9]+)?"
               r"(Z|[+-][0-9]{2}:[0-9]{2})\Z"),
    re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2} [0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(\.[0-9]+)?\Z"),
    re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}\Z"),
)


def _go_int(text: str) -> int | None:
    """strconv.ParseInt(text, 0, 64), else ParseUint(text, 0, 64) (no sign), else None."""
    match = _GO_INT_RE.match(text)
    if match is None:
        return None
    sign, digits = match.groups()
    if len(digits) > 1 and digits[0] == "0":
        base = {"x": 16, "o": 8, "b": 2}.get(digits[1].lower())
        value = int(digits[2:], base) if base else int(digits[1:], 8)
    else:
        value = int(digits)
    if sign == "-":
        value = -value
    if _INT64_MIN <= value <= _INT64_MAX or (not sign and value <= _UINT64_MAX):
        return value
    return None


def _is_timestamp(text: str) -> bool:
    if not any(pattern.match(text) for pattern in _TIMESTAMP_RES):
        return False
    # time.Parse also checks the fields' ranges
    date, _, clock = text.replace("t", " ").replace("T", " ").partition(" ")
    year, month, day = (int(part) for part in date.split("-"))
    if not 1 <= month <= 12 or not 1 <= day <= _days_in(year, month):
        return False
    if clock:
        hour, minute, second = (int(part) for part in re.split(r"[:.Z+-]", clock)[:3])
        if hour > 23 or minute > 59 or second > 59:
            return False
    return True


def _days_in(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def go_resolve(text: str, tag: str = "") -> tuple[str, Any]:
    """go-yaml v2's ``resolve(tag, in)`` for a plain scalar: ``(tag, value)`` with the value as Go
    holds it (int for Go's int/int64/uint64, float, bool, None, or the text itself for strings and
    timestamps). ``tag`` is an explicit tag ("" for none)."""
    if tag and tag not in _RESOLVABLE:
        return tag, text
    if tag == STR_TAG:
        return STR_TAG, text
    hint = text[:1]
    item = _MAP.get(text)
    if item is not None:
        return item
    if hint == ".":
        if _DOT_FLOAT_RE.match(text):
            value = float(text)
            if not math.isinf(value):
                return FLOAT_TAG, value
    elif hint and hint in "+-0123456789":
        if tag in ("", TIMESTAMP_TAG) and _is_timestamp(text):
            return TIMESTAMP_TAG, text
        plain = text.replace("_", "")
        value_int = _go_int(plain)
        if value_int is not None:
            return INT_TAG, value_int
        if _YAML_STYLE_FLOAT_RE.match(plain):
            value = float(plain)
            if not math.isinf(value):
                return FLOAT_TAG, value
        if plain.startswith("-0b") and re.fullmatch(r"-0b[01]+", plain):
            # go-yaml's own binary branch: ParseInt("-" + digits, 2, 64)
            value_int = -int(plain[3:], 2)
            if value_int >= _INT64_MIN:
                return INT_TAG, value_int
    return STR_TAG, text


def json_number(value: float) -> int | float:
    """A Go float64 as the JSON decoders see it after encoding/json wrote it: integral values below
    1e21 are written without a fraction or exponent (``1e3`` -> ``1000``), so they decode into int
    fields; the rest stay floats. NaN and infinities are no JSON number (the caller refuses them)."""
    if value.is_integer() and abs(value) < 1e21:
        # the shortest digits that read back as the float, zero-padded ('f' format): 2**63 is
        # written 9223372036854775808 but 2**63 + 2**11 92233720368547760000... as Go writes it
        return int(Decimal(repr(value)))
    return value


def go_float_text(value: float) -> str:
    """strconv.FormatFloat(value, 'g', -1, 32): the text sigs.k8s.io/yaml's typed decoding gives a
    float that lands in a string field (float32 digits: ``0.1`` -> "0.1", ``1e7`` -> "1e+07",
    ``123456789.0`` -> "1.2345679e+08", ``.inf`` -> "+Inf")."""
    text = _go_float32_text(value)
    return {".nan": "NaN", ".inf": "+Inf", "-.inf": "-Inf"}.get(text, text)


def _go_float32_text(value: float) -> str:
    """strconv.FormatFloat(value, 'g', -1, 32) with go-yaml's names for the infinities and NaN:
    sigs.k8s.io/yaml's text for a float map key."""
    with np.errstate(over="ignore"):
        single = np.float32(value)  # past float32's range: an infinity, as Go's conversion
    if math.isnan(single):
        return ".nan"
    if math.isinf(single):
        return ".inf" if single > 0 else "-.inf"
    text = np.format_float_scientific(single, unique=True, trim="-")
    mantissa, _, exponent = text.partition("e")
    digits = mantissa.lstrip("-").replace(".", "")
    sign = "-" if mantissa.startswith("-") else ""
    exp = int(exponent)
    if digits == "0":
        return sign + "0"
    if exp < -4 or exp >= 6:  # 'g' with the shortest digits switches to %e at these exponents
        # %e with the shortest digits and at least two exponent digits
        body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{body}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if exp < 0:
        return f"{sign}0.{'0' * (-exp - 1)}{digits}"
    if exp + 1 >= len(digits):
        return sign + digits + "0" * (exp + 1 - len(digits))
    return f"{sign}{digits[:exp + 1]}.{digits[exp + 1:]}"


def _go_verb_v(value: Any) -> str:
    """Go's %+#v of a decoded scalar or collection, as sigs.k8s.io/yaml's key error prints it."""
    if value is None:
        return "<nil>"
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "map[interface {}]interface {}{" + ", ".join(
            f"{_go_verb_v(k)}:{_go_verb_v(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[]interface {}{" + ", ".join(_go_verb_v(v) for v in value) + "}"
    return str(value)


# go-yaml v2's allowedAliasRatio: the share of decode operations that may come from expanding aliases
_ALIAS_RATIO_LOW, _ALIAS_RATIO_HIGH = 400_000, 4_000_000


def _allowed_alias_ratio(decodes: int) -> float:
    if decodes <= _ALIAS_RATIO_LOW:
        return 0.99
    if decodes >= _ALIAS_RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * ((decodes - _ALIAS_RATIO_LOW) / (_ALIAS_RATIO_HIGH - _ALIAS_RATIO_LOW))


def alias_problem(root: Node) -> tuple[str, Node] | None:
    """What go-yaml v2's decoder refuses in a composed document, as its message and the node:
    an alias inside its own anchor's value ("anchor value contains itself"), or so many decode
    operations from expanding aliases ("document contains excessive aliasing": an alias bomb,
    ``a: &a [x, x]``, ``b: &b [*a, *a]``, ... that every decoder would walk exponentially).

    It counts as go-yaml's ``unmarshal`` does, over the node graph PyYAML composed (an alias is
    its anchor's node again: the second time a node is reached in document order, it is reached
    through an alias), and stops at the first problem: the walk is as long as the decode up to
    where go-yaml would stop."""
    decodes, aliases = 1, 0  # (the document node counts once, as go-yaml's)
    defined: set[int] = set()  # the nodes decoded where they stand (not through an alias)
    # per container: which of its children (in decode order) are aliases, recorded when it is
    # decoded where it stands; an alias's expansion decodes the same positions the same way
    alias_at: dict[int, list[bool]] = {}
    expanding: set[int] = set()  # the anchors whose values are being expanded (recursion)
    # frames: [the container (None: the document), its children, the next index, depth in
    # aliases, the anchor whose expansion ends with the frame (None: none)]
    stack: list[list[Any]] = [[None, [root], 0, 0, None]]
    while stack:
        frame = stack[-1]
        parent, children, i, depth, anchor = frame
        if i == len(children):
            stack.pop()
            if anchor is not None:
                expanding.discard(id(anchor))
            continue
        frame[2] = i + 1
        node = children[i]
        flags = alias_at.setdefault(id(parent), [])
        if i < len(flags):
            is_alias = flags[i]
        else:
            is_alias = id(node) in defined
            flags.append(is_alias)
            defined.add(id(node))
        decodes += 1
        if depth:
            aliases += 1
        if aliases > 100 and decodes > 1000 and aliases / decodes > _allowed_alias_ratio(decodes):
            return "yaml: document contains excessive aliasing", node
        if is_alias:  # its anchor's value decoded again, one alias deeper
            if id(node) in expanding:
                return "yaml: anchor value contains itself", node
            expanding.add(id(node))
            decodes += 1
            aliases += 1
            stack.append([node, _node_children(node), 0, depth + 1, node])
        elif isinstance(node, (MappingNode, SequenceNode)):
            stack.append([node, _node_children(node), 0, depth, None])
    return None


def _node_children(node: Node) -> list:
    """The nodes go-yaml decodes under ``node``, in order (a merge key itself is not decoded)."""
    if isinstance(node, SequenceNode):
        return node.value
    if isinstance(node, MappingNode):
        return [child for key, value in node.value
                for child in ((value,) if isinstance(key, ScalarNode) and key.tag == MERGE_TAG else (key, value))]
    return []


class GoFloat(float):
    """A float64 go-yaml decoded, before sigs.k8s.io/yaml's typed conversion: in a string field it
    becomes float32 text (:func:`go_float_text`), elsewhere a JSON number (:func:`json_float`).
    ``mark`` is where it stands in the document (for encoding/json's NaN/Inf error)."""

    __slots__ = ("mark",)
    mark: Any


def json_float(value: float, mark: Any = None) -> int | float:
    """A go-yaml float as encoding/json writes it (:func:`json_number`); NaN and the infinities
    are json.Marshal's "unsupported value" error (a ConstructorError at ``mark``)."""
    if math.isnan(value) or math.isinf(value):
        shown = "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")
        raise ConstructorError(None, None, f"json: unsupported value: {shown}", mark)
    return json_number(value)


class GoYAMLLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """Loads YAML as sigs.k8s.io/yaml's YAMLToJSON followed by a JSON parse (see the module)."""

    #: go-yaml's strict mode (UnmarshalStrict): a key set twice in one mapping is an error
    strict = False
    #: with a list here, a key set twice is recorded instead (the later value wins, as go-yaml's
    #: Unmarshal): ``(id of the mapping's dict, go-yaml's message, 0-based line of the second value)``
    duplicates: list | None = None

    yaml_implicit_resolvers: dict = {}
    yaml_constructors: dict = {}

    def __init__(self, stream: Any):
        super().__init__(stream)
        # no alias without a '*': the alias walk is skipped for the documents that have none
        self._may_alias = not isinstance(stream, str) or "*" in stream

    def construct_document(self, node: Node) -> Any:
        if self._may_alias:
            problem = alias_problem(node)
            if problem is not None:
                raise ConstructorError(None, None, problem[0], problem[1].start_mark)
        return super().construct_document(node)

    def resolve(self, kind: type, value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is ScalarNode:
            if implicit[0]:
                return go_resolve(value)[0]
            return STR_TAG
        return MAP_TAG if kind is MappingNode else SEQ_TAG

    # -- scalars ---------------------------------------------------------------------------
    def _go_value(self, node: ScalarNode) -> Any:
        """The Go value go-yaml v2 decodes ``node`` into an interface{} as (before JSON)."""
        text = node.value
        if node.tag == BINARY_TAG:
            try:
                data = base64.b64decode(text.encode("ascii", "strict"), validate=False)
            except (binascii.Error, UnicodeEncodeError) as exc:
                raise ConstructorError(None, None, f"yaml: !!binary value contains invalid base64 data ({exc})",
                                       node.start_mark) from None
            return data.decode("utf-8", "replace")  # a Go string; JSON writes bad UTF-8 as U+FFFD
        if node.tag not in _RESOLVABLE:
            return text  # an unknown tag (or "<<" as a value): go-yaml keeps the text
        if node.tag == STR_TAG:
            return text
        # an implicit tag is go_resolve's own; an explicit one must agree (a float takes an int)
        tag = node.tag
        rtag, value = go_resolve(text, tag)
        if rtag != tag:
            # go-yaml turns Go's int and int64 into a float, not the uint64 of a value past int64
            if not (tag == FLOAT_TAG and rtag == INT_TAG and value <= _INT64_MAX):
                raise ConstructorError(None, None, f"yaml: cannot decode !!{rtag[len(_PREFIX):]} `{text}` "
                                       f"as a !!{tag[len(_PREFIX):]}", node.start_mark)
            value = float(value)
        return value

    def _scalar(self, node: ScalarNode) -> Any:
        """A scalar value as JSON has it after encoding/json wrote the Go value."""
        value = self._go_value(node)
        if isinstance(value, float):
            return json_float(value, node.start_mark)
        return value

    def construct_go_scalar(self, node: Node) -> Any:
        if isinstance(node, ScalarNode):
            return self._scalar(node)
        if isinstance(node, MappingNode):
            return self.construct_go_map(node)
        return self.construct_go_seq(node)

    # -- collections -----------------------------------------------------------------------
    def construct_go_map(self, node: MappingNode) -> Any:
        data: dict[str, Any] = {}
        yield data
        log = self.duplicates
        start = len(log) if log is not None else 0
        data.update(self.construct_mapping(node, deep=False))
        if log is not None:
            # the keys this mapping set twice (its own _fill and its merges'): recorded on it
            for i in range(start, len(log)):
                log[i] = (id(data), *log[i][1:])

    def construct_go_seq(self, node: SequenceNode) -> Any:
        data: list[Any] = []
        yield data
        data.extend(self.construct_sequence(node, deep=False))

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[str, Any]:
        if not isinstance(node, MappingNode):
            raise ConstructorError(None, None, f"expected a mapping node, but found {node.id}", node.start_mark)
        out: dict[str, Any] = {}
        self._fill(node, out, set(), deep)
        return out

    def _fill(self, node: MappingNode, out: dict[str, Any], typed: set, deep: bool) -> None:
        """go-yaml's ``mapping`` into ``out`` in document order: a merge (``<<``) sets its
        mapping's keys where it stands, overwriting the keys before it."""
        for key_node, value_node in node.value:
            if isinstance(key_node, ScalarNode) and key_node.tag == MERGE_TAG and key_node.value == "<<":
                self._merge(value_node, out, typed, deep)
                continue
            # a key keeps its Go value (1e6 is the float key "1e+06", .inf the key ".inf")
            key = (self._go_value(key_node) if isinstance(key_node, ScalarNode)
                   else self.construct_object(key_node, deep=True))
            if isinstance(key, (dict, list)):
                raise ConstructorError(None, None, f"yaml: invalid map key: {_go_verb_v(key)}", key_node.start_mark)
            value = self.construct_object(value_node, deep=deep)
            # go-yaml's map holds typed keys (true and "true" differ); sigs.k8s.io/yaml writes them as text
            typed_key = (type(key), key)
            if typed_key in typed:
                if self.strict:
                    # go-yaml names the line of the second value
                    raise ConstructorError(None, None, f"key {_go_verb_v(key)} already set in map",
                                           value_node.start_mark)
                if self.duplicates is not None:
                    self.duplicates.append((None, f"key {_go_verb_v(key)} already set in map",
                                            value_node.start_mark.line))
            typed.add(typed_key)
            out[self._key_text(key, value, key_node)] = value

    def _merge(self, node: Node, out: dict[str, Any], typed: set, deep: bool) -> None:
        if isinstance(node, MappingNode):
            self._fill(node, out, typed, deep)
            return
        if isinstance(node, SequenceNode) and all(isinstance(n, MappingNode) for n in node.value):
            for item in reversed(node.value):  # earlier mappings take precedence
                self._fill(item, out, typed, deep)
            return
        raise ConstructorError(None, None, "yaml: map merge requires map or sequence of maps as the value",
                               node.start_mark)

    def _key_text(self, key: Any, value: Any, node: Node) -> str:
        """sigs.k8s.io/yaml's text for a map key; a null key and an uint64 one (past int64) are
        its "unsupported map key" error."""
        if isinstance(key, str):
            return key
        if isinstance(key, bool):
            return "true" if key else "false"
        if isinstance(key, float):
            return _go_float32_text(key)
        if isinstance(key, int) and key <= _INT64_MAX:
            return str(key)
        shown = f"uint64, key: {hex(key)}" if isinstance(key, int) else "%!s(<nil>), key: <nil>"
        raise ConstructorError(None, None, f"unsupported map key of type: {shown}, value: {_go_verb_v(value)}",
                               node.start_mark)


class GoYAMLStrictLoader(GoYAMLLoader):
    """:class:`GoYAMLLoader` with go-yaml's UnmarshalStrict duplicate-key check."""

    strict = True


class GoYAMLTypedLoader(GoYAMLStrictLoader):
    """:class:`GoYAMLStrictLoader` for sigs.k8s.io/yaml's typed ``UnmarshalStrict`` (into a Go
    struct): floats stay :class:`GoFloat` (NaN and the infinities included), for the conversion
    along the target type (``fastsched.api.schema.typed_yaml``) to turn into float32 text in
    string fields and into JSON numbers elsewhere."""

    def _scalar(self, node: ScalarNode) -> Any:
        value = self._go_value(node)
        if isinstance(value, float):
            value = GoFloat(value)
            value.mark = node.start_mark
        return value


for _tag in (STR_TAG, INT_TAG, FLOAT_TAG, BOOL_TAG, NULL_TAG, TIMESTAMP_TAG, BINARY_TAG):
    GoYAMLLoader.add_constructor(_tag, GoYAMLLoader.construct_go_scalar)
GoYAMLLoader.add_constructor(MAP_TAG, GoYAMLLoader.construct_go_map)
GoYAMLLoader.add_constructor(SEQ_TAG, GoYAMLLoader.construct_go_seq)
# any other tag (!!set, !!omap, !foo, ...): go-yaml ignores it and decodes the node by its kind
GoYAMLLoader.add_constructor(None, GoYAMLLoader.construct_go_scalar)
