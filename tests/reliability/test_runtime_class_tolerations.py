"""RuntimeClass tolerations: ``pkg/util/tolerations`` (``isSuperset``, ``MergeTolerations``) with
an empty operator, and ``validateTolerations``' duplicates.

Upstream keeps an empty operator as it was written (no defaulting): ``isSuperset`` reads an
empty operator of the *covering* toleration as ``Equal`` but asks the covered one for ``Equal``
itself, and the duplicate check's list key holds the operator as written (``""`` and ``Equal``
are different keys). The loader turned ``""`` into ``Equal``, so a RuntimeClass with both was
refused as a duplicate, and the merged tolerations were not upstream's; a duplicate was printed
as a Python repr, not as ``field.Duplicate`` prints an internal struct (``json.Marshal``).
"""
from __future__ import annotations

import pytest

from fastsched import Scheduler
from fastsched.api import Toleration
from fastsched.api.runtimeclass import _is_superset, merge_tolerations
from fastsched.api.validation import ValidationError
from fastsched.testing import make_node

# pkg/util/tolerations/tolerations_test.go: the tolerations and TestIsSuperset's table
_T = {
    "all": Toleration(operator="Exists"),
    "all-nosched": Toleration(operator="Exists", effect="NoSchedule"),
    "all-noexec": Toleration(operator="Exists", effect="NoExecute"),
    "foo": Toleration(key="foo", operator="Exists"),
    "foo-bar": Toleration(key="foo", operator="Equal", value="bar"),
    "foo-nosched": Toleration(key="foo", operator="Exists", effect="NoSchedule"),
    "foo-bar-nosched": Toleration(key="foo", operator="Equal", value="bar", effect="NoSchedule"),
    "foo-baz-nosched": Toleration(key="foo", operator="Equal", value="baz", effect="NoSchedule"),
    "faz-nosched": Toleration(key="faz", operator="Exists", effect="NoSchedule"),
    "faz-baz-nosched": Toleration(key="faz", operator="Equal", value="baz", effect="NoSchedule"),
    "foo-prefnosched": Toleration(key="foo", operator="Exists", effect="PreferNoSchedule"),
    "foo-noexec": Toleration(key="foo", operator="Exists", effect="NoExecute"),
    "foo-bar-noexec": Toleration(key="foo", operator="Equal", value="bar", effect="NoExecute"),
    "foo-noexec-10": Toleration(key="foo", operator="Exists", effect="NoExecute", toleration_seconds=10),
    "foo-noexec-0": Toleration(key="foo", operator="Exists", effect="NoExecute", toleration_seconds=0),
    "foo-bar-noexec-10": Toleration(key="foo", operator="Equal", value="bar", effect="NoExecute", toleration_seconds=10),
}

_SUPERSET_OF = [
    ("all", ["all-nosched", "all-noexec", "foo", "foo-bar", "foo-nosched", "foo-bar-nosched", "foo-baz-nosched",
             "faz-nosched", "faz-baz-nosched", "foo-prefnosched", "foo-noexec", "foo-bar-noexec", "foo-noexec-10",
             "foo-noexec-0", "foo-bar-noexec-10"]),
    ("all-nosched", ["foo-nosched", "foo-bar-nosched", "foo-baz-nosched", "faz-nosched", "faz-baz-nosched"]),
    ("all-noexec", ["foo-noexec", "foo-bar-noexec", "foo-noexec-10", "foo-noexec-0", "foo-bar-noexec-10"]),
    ("foo", ["foo-bar", "foo-nosched", "foo-bar-nosched", "foo-baz-nosched", "foo-prefnosched", "foo-noexec",
             "foo-bar-noexec", "foo-noexec-10", "foo-noexec-0", "foo-bar-noexec-10"]),
    ("foo-bar", ["foo-bar-nosched", "foo-bar-noexec", "foo-bar-noexec-10"]),
    ("foo-nosched", ["foo-bar-nosched", "foo-baz-nosched"]),
    ("foo-bar-nosched", []),
    ("faz-nosched", ["faz-baz-nosched"]),
    ("faz-baz-nosched", []),
    ("foo-prenosched", []),  # (sic: not in the map, so Go's zero Toleration, an empty operator)
    ("foo-noexec", ["foo-noexec", "foo-bar-noexec", "foo-noexec-10", "foo-noexec-0", "foo-bar-noexec-10"]),
    ("foo-bar-noexec", ["foo-bar-noexec-10"]),
    ("foo-noexec-10", ["foo-noexec-0", "foo-bar-noexec-10"]),
    ("foo-noexec-0", []),
    ("foo-bar-noexec-10", []),
]


@pytest.mark.parametrize("name,subsets", _SUPERSET_OF, ids=[row[0] for row in _SUPERSET_OF])
def test_is_superset(name, subsets):
    ss = _T.get(name, Toleration(operator=""))
    for other, t in _T.items():
        assert _is_superset(ss, t) == (other == name or other in subsets), (name, other)


_EMPTY = Toleration(key="foo", operator="", value="bar", effect="NoSchedule")
_EQUAL = Toleration(key="foo", operator="Equal", value="bar", effect="NoSchedule")


def test_an_empty_operator_covers_equal_but_is_not_covered_by_it():
    # `case api.TolerationOpEqual, "": return t.Operator == api.TolerationOpEqual && ...`
    assert _is_superset(_EMPTY, _EQUAL)
    assert not _is_superset(_EQUAL, _EMPTY)
    assert _is_superset(_EMPTY, _EMPTY)  # (equal: DeepEqual)
    assert not _is_superset(Toleration(key="foo", operator="", value="baz"), _EQUAL)


@pytest.mark.parametrize("first,second,merged", [
    ((_EQUAL,), (_EMPTY,), (_EMPTY,)),  # the Equal one is covered by the later empty one: dropped
    ((_EMPTY,), (_EQUAL,), (_EMPTY,)),  # the later Equal one is covered by the kept empty one
    ((_EMPTY, _EMPTY), (), (_EMPTY,)),
    ((_EQUAL, _EMPTY, _EQUAL), (), (_EMPTY,)),
])
def test_merge_with_an_empty_operator(first, second, merged):
    result = merge_tolerations(first, second)
    assert result == merged
    assert [t.operator for t in result] == [t.operator for t in merged]


def _rc(tolerations: list[dict]) -> dict:
    return {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "rc"}, "handler": "h",
            "scheduling": {"tolerations": tolerations}}


def _pod(tolerations: list[dict]) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"runtimeClassName": "rc", "tolerations": tolerations,
                     "containers": [{"name": "c", "image": "busybox"}]}}


_RAW_EMPTY = {"key": "foo", "value": "bar", "effect": "NoSchedule"}
_RAW_EQUAL = {"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"}


def test_a_runtime_class_with_an_empty_and_an_equal_operator_is_valid_and_merges_as_upstream():
    s = Scheduler()
    s.add_nodes([make_node("n0")])
    s.add(_rc([_RAW_EMPTY, _RAW_EQUAL]))  # two list keys (the operators differ as written): no duplicate
    s.add(_pod([]))
    pod = s.get_pod("default", "p")
    assert [(t.key, t.operator, t.value) for t in pod.tolerations if t.key == "foo"] == [("foo", "", "bar")]


def test_a_pod_toleration_with_an_empty_operator_keeps_it_through_the_merge():
    s = Scheduler()
    s.add_nodes([make_node("n0")])
    s.add(_rc([_RAW_EQUAL]))
    s.add(_pod([_RAW_EMPTY]))
    pod = s.get_pod("default", "p")
    assert [(t.key, t.operator, t.value) for t in pod.tolerations if t.key == "foo"] == [("foo", "", "bar")]
    s.run()
    assert s.results[pod.uid].status == "Scheduled"


@pytest.mark.parametrize("extra,rendered", [
    ({}, '{"Key":"foo","Operator":"Equal","Value":"bar","Effect":"NoSchedule","TolerationSeconds":null}'),
    ({"effect": "NoExecute", "tolerationSeconds": 10},
     '{"Key":"foo","Operator":"Equal","Value":"bar","Effect":"NoExecute","TolerationSeconds":10}'),
])
def test_a_duplicate_toleration_is_printed_as_go_prints_it(extra, rendered):
    t = {**_RAW_EQUAL, **extra}
    with pytest.raises(ValidationError) as raised:
        Scheduler().add(_rc([t, dict(t)]))
    assert f"scheduling.tolerations[1]: Duplicate value: {rendered}" in str(raised.value)
