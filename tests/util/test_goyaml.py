"""YAML read as sigs.k8s.io/yaml v1.6.0 (go-yaml v2.4.4) reads it: fastsched.util.goyaml.

Every expectation below is what ``sigs.k8s.io/yaml.YAMLToJSON`` (``YAMLToJSONStrict`` for the
strict rows) answered at v1.37.2's module versions, read back with ``json.loads``; the manifest and
configuration rows are what the API types' decoding (legacyscheme's UniversalDeserializer, and the
scheduler's strict config codec) answered for the same documents.
"""
from __future__ import annotations

import math

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.api.load import load_objects
from fastsched.config import ConfigError, load_config
from fastsched.api.errors import ManifestError
from fastsched.util.goyaml import GoYAMLLoader, GoYAMLStrictLoader, go_resolve, json_number

# (value as written after "a: ", the value sigs.k8s.io/yaml's JSON holds)
SCALARS = [
    # booleans: YAML 1.1's words, and go-yaml's y/n, which PyYAML leaves as strings
    ("yes", True), ("Yes", True), ("on", True), ("ON", True), ("y", True), ("Y", True), ("true", True),
    ("no", False), ("off", False), ("n", False), ("N", False), ("False", False),
    ("yEs", "yEs"), ("oN", "oN"),
    # null
    ("~", None), ("null", None), ("Null", None), ("", None), ("nULL", "nULL"),
    # ints: strconv.ParseInt base 0 after removing underscores
    ("12", 12), ("+12", 12), ("-12", -12), ("017", 15), ("0o17", 15), ("0O17", 15), ("0x1F", 31),
    ("-0x1F", -31), ("0b101", 5), ("-0b101", -5), ("1_000", 1000), ("0x_1F", 31), ("00", 0),
    ("9223372036854775807", 9223372036854775807), ("18446744073709551615", 18446744073709551615),
    ("0x", "0x"), ("0b2", "0b2"),
    # floats, as encoding/json writes them (integral ones lose their fraction and exponent)
    ("08", 8), ("1.0", 1), ("1e3", 1000), ("1E3", 1000), ("1.5", 1.5), (".5", 0.5), ("1e-7", 1e-7),
    ("+1.5e+2", 150), ("1_0.5", 10.5), (".10_99", 0.1099), ("1e21", 1e21), ("99999999999999999999", 100000000000000000000),
    ("+9223372036854775808", 9223372036854776000), ("92233720368547758081", 92233720368547760000),
    ("1e999", "1e999"), (".5e999", ".5e999"), ("1e-999", 0), ("._5", "._5"),
    # no sexagesimal numbers, timestamps stay text
    ("1:20", "1:20"), ("190:20:30", "190:20:30"), ("2001-12-14", "2001-12-14"),
    ("2001-12-14t21:59:43.10-05:00", "2001-12-14t21:59:43.10-05:00"), ("2001-13-14", "2001-13-14"),
    # tags
    ("!!str yes", "yes"), ("!!str 12", "12"), ('"12"', "12"), ("'on'", "on"), ("!!float 1", 1),
    ("!!int 0x10", 16), ("!foo bar", "bar"), ("!foo 12", "12"), ("!!binary aGVsbG8=", "hello"),
    ("!!timestamp 2001-12-14", "2001-12-14"), ("<<", "<<"),
]


@pytest.mark.parametrize(("text", "expected"), SCALARS, ids=[t for t, _ in SCALARS])
def test_scalar(text, expected):
    value = yaml.load(f"a: {text}\n", Loader=GoYAMLLoader)["a"]
    assert value == expected and type(value) is type(expected)


ERRORS = [
    ("a: .inf", "json: unsupported value: +Inf"),
    ("a: -.Inf", "json: unsupported value: -Inf"),
    ("a: .nan", "json: unsupported value: NaN"),
    ("a: !!int abc", "yaml: cannot decode !!str `abc` as a !!int"),
    ("a: !!bool 1", "yaml: cannot decode !!int `1` as a !!bool"),
    ("a: !!float 18446744073709551615", "yaml: cannot decode !!int `18446744073709551615` as a !!float"),
    ("a: {<<: x}", "yaml: map merge requires map or sequence of maps as the value"),
    ("~: x", 'unsupported map key of type: %!s(<nil>), key: <nil>, value: "x"'),
    ("9223372036854775808: b", 'unsupported map key of type: uint64, key: 0x8000000000000000, value: "b"'),
    ("? [1, 2]\n: b", "yaml: invalid map key: []interface {}{1, 2}"),
]


@pytest.mark.parametrize(("text", "message"), ERRORS, ids=[t for t, _ in ERRORS])
def test_error(text, message):
    with pytest.raises(yaml.YAMLError) as info:
        yaml.load(text, Loader=GoYAMLLoader)
    assert info.value.problem == message


DOCUMENTS = [
    # keys are written as text: bools as true/false, floats as float32 'g'
    ("{1.5: x, 1e3: q, 123456789.0: z, 0x10: w, yes: v, .inf: u, 1e6: t, 7: s}",
     {"1.5": "x", "1000": "q", "1.2345679e+08": "z", "16": "w", "true": "v", ".inf": "u", "1e+06": "t", "7": "s"}),
    # a merge sets its keys where it stands: the keys before it are overwritten, later ones win
    ("{a: x, <<: {a: z}}", {"a": "z"}),
    ("{<<: {a: z}, a: x}", {"a": "x"}),
    ("{a: x, <<: [{a: z, b: 1}, {a: w, c: 2}]}", {"a": "z", "b": 1, "c": 2}),
    ("base: &b {p: 3}\nobj: {<<: *b, q: 4}", {"base": {"p": 3}, "obj": {"p": 3, "q": 4}}),
    ("m: {p: 3}\nn: {q: 4}", {"m": {"p": 3}, "false": {"q": 4}}),  # n is a bool key
    # not strict: a duplicate key's last value
    ("a: 1\na: 2", {"a": 2}),
    ("a: !!set {x, y}", {"a": {"x": None, "true": None}}),
    ("a: !foo {b: c}", {"a": {"b": "c"}}),
]


@pytest.mark.parametrize(("text", "expected"), DOCUMENTS, ids=[t for t, _ in DOCUMENTS])
def test_document(text, expected):
    assert yaml.load(text, Loader=GoYAMLLoader) == expected


STRICT = [
    ("p: 1\np: 2", 'key "p" already set in map', 2),
    ("p:\n  1\np:\n  2", 'key "p" already set in map', 4),  # the second value's line
    ("x: &a {p: 3}\n<<: *a\np: 4", 'key "p" already set in map', 3),
    ("yes: 1\ntrue: 2", "key true already set in map", 2),
    ("1: 1\n0x1: 2", "key 1 already set in map", 2),
]


@pytest.mark.parametrize(("text", "message", "line"), STRICT, ids=[t for t, _, _ in STRICT])
def test_strict_duplicates(text, message, line):
    with pytest.raises(yaml.YAMLError) as info:
        yaml.load(text, Loader=GoYAMLStrictLoader)
    assert info.value.problem == message and info.value.problem_mark.line + 1 == line


def test_strict_keys_of_different_types_are_no_duplicates():
    # go-yaml's map holds the key 1 and the key "1" apart; sigs.k8s.io/yaml writes both as "1"
    assert yaml.load("1: a\n'1': b\n", Loader=GoYAMLStrictLoader) == {"1": "b"}


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1),
       st.sampled_from(["{:d}", "{:+d}", "0x{:x}", "0X{:X}", "0o{:o}", "0{:o}", "0b{:b}", "under"]))
def test_ints_in_every_go_notation(value, form):
    if form == "under":
        text = f"{value:_d}"
    elif form.startswith("{"):
        text = form.format(value)
    else:  # a prefix after the sign
        text = ("-" if value < 0 else "") + form.format(abs(value))
    assert go_resolve(text) == ("tag:yaml.org,2002:int", value), text
    assert yaml.load(f"a: {text}", Loader=GoYAMLLoader) == {"a": value}


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_floats_as_json_numbers(value):
    # a float, written with repr (a YAML float go-yaml reads), loads as its JSON number: the
    # integral ones below 1e21 as ints, the same number
    loaded = yaml.load(f"a: {value!r}", Loader=GoYAMLLoader)["a"]
    assert loaded == json_number(value)
    assert float(loaded) == value or (value == 0 and loaded == 0)
    assert isinstance(loaded, int) == (value.is_integer() and abs(value) < 1e21)
    assert not math.isnan(loaded)


# -- where it matters: manifests and configurations ---------------------------------------------
POD = """apiVersion: v1
kind: Pod
metadata:
  name: p
  labels: {labels}
spec:
  containers: [{{name: c, image: i}}]
  priority: {priority}
"""


@pytest.mark.parametrize(("labels", "priority", "expected"), [
    ("{a: y}", "0", "metadata.labels.a: json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels "
                    "of type string"),
    ("{a: 0o17}", "0", "metadata.labels.a: json: cannot unmarshal number into Go struct field "
                       "ObjectMeta.metadata.labels of type string"),
    ("{a: 1e-7}", "0", "metadata.labels.a: json: cannot unmarshal number into Go struct field "
                       "ObjectMeta.metadata.labels of type string"),
    ("{a: x}", "1.5", "spec.priority: json: cannot unmarshal number 1.5 into Go struct field PodSpec.spec.priority "
                      "of type int32"),
    ("{a: x}", "1e21", "spec.priority: json: cannot unmarshal number 1e+21 into Go struct field "
                       "PodSpec.spec.priority of type int32"),
    ("{a: x}", "!!str 5", "spec.priority: json: cannot unmarshal string into Go struct field PodSpec.spec.priority "
                          "of type int32"),
])
def test_manifest_errors(labels, priority, expected):
    with pytest.raises(ManifestError) as info:
        load_objects(POD.format(labels=labels, priority=priority))
    assert str(info.value) == f"Pod default/p: {expected}"


@pytest.mark.parametrize(("labels", "priority", "want_labels", "want_priority"), [
    ("{a: 1:20, b: 2001-12-14, c: ~, d: !!str yes}", "0", {"a": "1:20", "b": "2001-12-14", "c": "", "d": "yes"}, 0),
    ("{a: x, <<: {a: z}}", "1e3", {"a": "z"}, 1000),
    ("{a: x}", "0x1F", {"a": "x"}, 31),
    ("{a: x}", "1.0", {"a": "x"}, 1),
    ("{a: x}", "08", {"a": "x"}, 8),
])
def test_manifest_values(labels, priority, want_labels, want_priority):
    # not validated: the decoding's answer (1:20 is no valid label value)
    (pod,) = load_objects(POD.format(labels=labels, priority=priority), validate=False)
    assert dict(pod.labels) == want_labels and pod.priority == want_priority


def test_manifest_infinity_is_refused_with_its_place():
    with pytest.raises(ManifestError, match=r'^invalid YAML: json: unsupported value: NaN\n  in "<unicode string>", '
                                            r"line 8, column 13$"):
        load_objects(POD.format(labels="{}", priority=".nan"))


CONFIG = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def test_config_values():
    cfg = load_config(CONFIG + "parallelism: 1e1\npercentageOfNodesToScore: 0x10\n")
    assert cfg.parallelism == 10 and cfg.percentage_of_nodes_to_score == 16


@pytest.mark.parametrize(("body", "message"), [
    ("percentageOfNodesToScore: 1:20\n", "percentageOfNodesToScore: json: cannot unmarshal string into Go struct "
                                         "field KubeSchedulerConfiguration.percentageOfNodesToScore of type int32"),
    ("profiles: [{schedulerName: yes}]\n", "profiles[0].schedulerName: json: cannot unmarshal bool into Go struct "
                                           "field KubeSchedulerProfile.profiles.schedulerName of type string"),
    ("parallelism: .inf\n", "invalid YAML: line 3, column 14: json: unsupported value: +Inf"),
    ("parallelism: !!int x\n", "invalid YAML: line 3, column 14: yaml: cannot decode !!str `x` as a !!int"),
    ("x: &a {parallelism: 3}\n<<: *a\nparallelism: 4\n",
     'invalid YAML: line 5, column 14: key "parallelism" already set in map'),
    ("yes: 1\ntrue: 2\n", "invalid YAML: line 4, column 7: key true already set in map"),
])
def test_config_errors(body, message):
    with pytest.raises(ConfigError) as info:
        load_config(CONFIG + body)
    assert str(info.value) == message


# -- aliases: go-yaml's limits, so that no decoder walks an alias bomb --------------------------
def _bomb(levels: int, width: int = 9) -> str:
    lines = ["x0: &a0 [" + ", ".join(["a"] * width) + "]"]
    lines += [f"x{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(("text", "message"), [
    (_bomb(9), "yaml: document contains excessive aliasing"),
    ("a: &a [1, *a]", "yaml: anchor value contains itself"),
    ("a: &a {b: *a}", "yaml: anchor value contains itself"),
    ("a: &a {b: [x, {c: *a}]}", "yaml: anchor value contains itself"),
])
def test_alias_limits(text, message):
    with pytest.raises(yaml.YAMLError) as info:
        yaml.load(text, Loader=GoYAMLLoader)
    assert info.value.problem == message


# (levels, width) of _bomb and whether YAMLToJSON refuses it: the boundaries of go-yaml's ratio
@pytest.mark.parametrize(("levels", "width", "refused"), [
    (3, 9, False), (4, 5, False), (4, 9, True), (5, 4, False), (5, 5, True), (6, 3, False), (6, 4, True),
    (7, 3, True), (9, 2, False), (10, 2, True), (30, 2, True),
])
def test_alias_ratio_boundaries(levels, width, refused):
    if refused:
        with pytest.raises(yaml.YAMLError, match="document contains excessive aliasing"):
            yaml.load(_bomb(levels, width), Loader=GoYAMLLoader)
    else:
        data = yaml.load(_bomb(levels, width), Loader=GoYAMLLoader)
        assert len(data[f"x{levels - 1}"]) == width


def test_aliases_within_the_limits_load():
    assert yaml.load("a: &a [1]\nb: *a\nc: {<<: &m {p: 1}, q: *m}", Loader=GoYAMLLoader) == \
        {"a": [1], "b": [1], "c": {"p": 1, "q": {"p": 1}}}


def test_a_manifest_alias_bomb_is_refused_not_walked():
    # 9**9 strings under one annotation: the decoders walked them for ever (a hang)
    bomb = "".join(f"    {line}\n" for line in _bomb(9).splitlines())
    text = f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n{bomb}spec:\n  containers: []\n"
    with pytest.raises(ManifestError, match="^invalid YAML: yaml: document contains excessive aliasing"):
        load_objects(text)
