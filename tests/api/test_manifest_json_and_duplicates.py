"""JSON manifests as Go's decoders read them, and keys set twice (brief item 3).

Expected messages are what k8s.io/apimachinery v0.37.2's json serializer (the API server's
decoder; ``Strict: true`` for strict field validation) and its YAMLOrJSONDecoder (kubectl's reader)
print for the same input (a Go program over the module cache, 2026-12-03)."""
from __future__ import annotations

import warnings

import pytest

from fastsched.api import ManifestError, Pod, load_objects

POD = '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"%s},"spec":{%s}}'


def _pods(text, strict=False):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_objects(text, strict=strict, validate=False)


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_no_json(literal):
    """Python's json reads NaN and Infinity; Go's does not, and YAMLOrJSONDecoder reads the text
    as YAML, where they are strings: the int32 field refuses a string."""
    with pytest.raises(ManifestError) as info:
        _pods(POD % ("", f'"priority":{literal}'))
    assert str(info.value).endswith(
        "spec.priority: json: cannot unmarshal string into Go struct field PodSpec.spec.priority of type int32")


@pytest.mark.parametrize("literal", ["1e3", "1e400", "1.0", "1.50"])
def test_a_float_in_an_int_field_is_quoted_as_written(literal):
    with pytest.raises(ManifestError) as info:
        _pods(POD % ("", f'"priority":{literal}'))
    assert str(info.value).endswith(
        f"json: cannot unmarshal number {literal} into Go struct field PodSpec.spec.priority of type int32")


def test_repeated_json_keys_merge_objects_as_go_decodes_into_a_struct():
    """encoding/json decodes a repeated object key into the value already there: maps and structs
    merge (later keys winning), anything else is replaced. Python's json kept the last object only
    (the first spec's nodeName was lost)."""
    text = ('{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"a.b/c":"x","a.b/c":"y","k":"v"},'
            '"labels":{"z":"1"}},"spec":{"nodeName":"n"},"spec":{"priority":5},"spec":{"containers":[{"name":"a"}]}}')
    (pod,) = _pods(text)
    assert (pod.node_name, pod.priority, dict(pod.labels)) == ("n", 5, {"a.b/c": "y", "k": "v", "z": "1"})
    assert [c.name for c in pod.containers] == ["a"]
    with pytest.raises(ManifestError) as info:
        _pods(text, strict=True)
    assert str(info.value) == ('Pod default/p: strict decoding error: duplicate field "metadata.labels.a.b/c", '
                               'duplicate field "metadata.labels", duplicate field "spec"')


def test_strict_json_lists_repeated_and_unknown_fields_in_document_order():
    text = ('{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"a":"x","a":"y"},"foo":1},'
            '"spec":{"containers":[{"name":"a","name":"b","bogus":2}]},"spec":{"nodeName":"n"}}')
    with pytest.raises(ManifestError) as info:
        _pods(text, strict=True)
    assert str(info.value).endswith(
        'strict decoding error: duplicate field "metadata.labels.a", unknown field "metadata.foo", '
        'duplicate field "spec.containers[0].name", unknown field "spec.containers[0].bogus", '
        'duplicate field "spec"')
    (pod,) = _pods(text)  # not strict: the unknown fields dropped, the keys merged
    assert pod.node_name == "n" and pod.labels == {"a": "y"}


def test_strict_yaml_names_the_repeated_keys_lines_within_their_document():
    """go-yaml's UnmarshalStrict error (the API server's YAMLToJSONStrict), its lines counted from
    the document's start as the API server gets it, then the unknown fields."""
    text = ("---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i}]}\n"
            "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  name: q\n  labels: {a: b, a: c}\n"
            "spec: {containers: [{name: c, image: i}], foo: 1}\n")
    with pytest.raises(ManifestError) as info:
        _pods(text, strict=True)
    assert str(info.value) == ('document 2: Pod default/q: strict decoding error: yaml: unmarshal errors:\n'
                               '  line 5: key "name" already set in map\n'
                               '  line 6: key "a" already set in map, unknown field "spec.foo"')
    assert [(p.name, dict(p.labels)) for p in _pods(text)] == [("p", {}), ("q", {"a": "c"})]
    with pytest.raises(ManifestError, match='line 5: key "name" already set in map'):
        Pod.from_manifest("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  name: q\n", strict=True)


def test_strict_refuses_repeated_keys_in_pods_stamped_from_a_template():
    """Pods of one template are stamped from the first one decoded (fastsched.api.templates):
    the second pod's repeated key is still found."""
    pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p{i}\n{extra}spec: {{containers: [{{name: c, image: i}}]}}\n"
    text = "---\n".join([pod.format(i=0, extra=""), pod.format(i=1, extra=""),
                         pod.format(i=2, extra="  namespace: a\n  namespace: b\n")])
    assert len(load_objects(text)) == 3
    with pytest.raises(ManifestError, match='(?s)document 3: .*line 6: key "namespace" already set in map'):
        load_objects(text, strict=True)  # (validated: the first pod is remembered as the template)
