"""NodeAffinity: upstream's node_affinity_test.go cases, and batch == per-node."""
from __future__ import annotations

import random

import numpy as np
import pytest

from fastsched.api import Node, Pod
from fastsched.config.args import NodeAffinityArgs
from fastsched.framework import (ActionType, Code, CycleState, EventResource, NodeInfo, NodeScore, PreFilterResult,
                                 QueueingHint)
from fastsched.plugins.helper.tests.support import random_affinity_pod, single_plugin_framework
from fastsched.plugins.nodeaffinity import (ERR_REASON_CONFLICT, ERR_REASON_ENFORCED, ERR_REASON_POD, NAME,
                                            NodeAffinity, new)
from fastsched.snapshot import build_snapshot
from fastsched.testing import assert_paths_equivalent, random_pod, random_snapshot

REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def expr(key, operator, *values):
    e = {"key": key, "operator": operator}
    if values:
        e["values"] = list(values)
    return e


def name_field(operator, *values):
    return {"key": "metadata.name", "operator": operator, "values": list(values)}


def make_pod(node_selector=None, required_terms=None, preferred=None, affinity=None) -> Pod:
    """A pod from a manifest; ``required_terms`` are nodeSelectorTerms, ``preferred`` (weight, term) pairs."""
    spec: dict = {"containers": [{"name": "c", "image": "i"}]}
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    node_affinity: dict = {}
    if required_terms is not None:
        node_affinity[REQUIRED] = {"nodeSelectorTerms": required_terms}
    if preferred is not None:
        node_affinity[PREFERRED] = [{"weight": w, "preference": term} for w, term in preferred]
    if node_affinity:
        spec["affinity"] = {"nodeAffinity": node_affinity}
    if affinity is not None:
        spec["affinity"] = affinity
    return Pod.from_manifest({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}, validate=False)


def make_node(name="", labels=None) -> Node:
    return Node(name=name, labels=labels or {})


def added_args(required_terms=None, preferred=None) -> NodeAffinityArgs:
    added: dict = {}
    if required_terms is not None:
        added[REQUIRED] = {"nodeSelectorTerms": required_terms}
    if preferred is not None:
        added[PREFERRED] = [{"weight": w, "preference": term} for w, term in preferred]
    return NodeAffinityArgs.from_dict({"addedAffinity": added})


POD_FAIL = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_REASON_POD])
ENFORCED_FAIL = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_REASON_ENFORCED])
SKIP: tuple[Code, list[str]] = (Code.SKIP, [])
CONFLICT = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [ERR_REASON_CONFLICT])


def _verdict(status):
    return None if status is None else (status.code(), status.reasons())


# (name, pod, node labels, node name, args, want filter, want prefilter status, want prefilter names,
#  run prefilter): upstream's TestNodeAffinity table
FILTER_CASES = [
    ("missing labels", make_pod({"foo": "bar"}), {}, "", None, POD_FAIL, None, None, True),
    ("same labels", make_pod({"foo": "bar"}), {"foo": "bar"}, "", None, None, None, None, True),
    ("node labels are superset", make_pod({"foo": "bar"}), {"foo": "bar", "baz": "blah"}, "", None, None, None,
     None, True),
    ("node labels are subset", make_pod({"foo": "bar", "baz": "blah"}), {"foo": "bar"}, "", None, POD_FAIL, None,
     None, True),
    ("In matches", make_pod(required_terms=[{"matchExpressions": [expr("foo", "In", "bar", "value2")]}]),
     {"foo": "bar"}, "", None, None, None, None, True),
    ("Gt matches", make_pod(required_terms=[{"matchExpressions": [expr("kernel-version", "Gt", "0204")]}]),
     {"kernel-version": "0206"}, "", None, None, None, None, True),
    ("NotIn matches", make_pod(required_terms=[{"matchExpressions": [expr("mem-type", "NotIn", "DDR", "DDR2")]}]),
     {"mem-type": "DDR3"}, "", None, None, None, None, True),
    ("Exists matches", make_pod(required_terms=[{"matchExpressions": [expr("GPU", "Exists")]}]),
     {"GPU": "NVIDIA-GRID-K1"}, "", None, None, None, None, True),
    ("In does not match", make_pod(required_terms=[{"matchExpressions": [expr("foo", "In", "value1", "value2")]}]),
     {"foo": "bar"}, "", None, POD_FAIL, None, None, True),
    ("empty MatchExpressions match nothing", make_pod(required_terms=[{"matchExpressions": []}]),
     {"foo": "bar"}, "", None, POD_FAIL, None, None, True),
    ("no affinity: Skip", make_pod(), {"foo": "bar"}, "", None, None, SKIP, None, True),
    ("affinity without required selector: Skip", make_pod(affinity={"nodeAffinity": {}}), {"foo": "bar"}, "", None,
     None, SKIP, None, True),
    ("empty nodeSelector map is not nil: no Skip", make_pod({}), {"foo": "bar"}, "", None, None, None, None, True),
    ("multiple expressions ANDed, match",
     make_pod(required_terms=[{"matchExpressions": [expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")]}]),
     {"GPU": "NVIDIA-GRID-K1"}, "", None, None, None, None, True),
    ("multiple expressions ANDed, no match",
     make_pod(required_terms=[{"matchExpressions": [expr("GPU", "Exists"), expr("GPU", "In", "AMD", "INTER")]}]),
     {"GPU": "NVIDIA-GRID-K1"}, "", None, POD_FAIL, None, None, True),
    ("terms ORed", make_pod(required_terms=[{"matchExpressions": [expr("foo", "In", "bar", "value2")]},
                                            {"matchExpressions": [expr("diffkey", "In", "wrong", "value2")]}]),
     {"foo": "bar"}, "", None, None, None, None, True),
    ("affinity and nodeSelector both satisfied",
     make_pod({"foo": "bar"}, required_terms=[{"matchExpressions": [expr("foo", "Exists")]}]),
     {"foo": "bar"}, "", None, None, None, None, True),
    ("affinity satisfied but not nodeSelector",
     make_pod({"foo": "bar"}, required_terms=[{"matchExpressions": [expr("foo", "Exists")]}]),
     {"foo": "barrrrrr"}, "", None, POD_FAIL, None, None, True),
    ("invalid value in a term", make_pod(required_terms=[
        {"matchExpressions": [expr("foo", "NotIn", "invalid value: ___@#$%^")]}]),
     {"foo": "bar"}, "", None, POD_FAIL, None, None, True),
    ("matchFields In matches", make_pod(required_terms=[{"matchFields": [name_field("In", "node1")]}]),
     {}, "node1", None, None, None, {"node1"}, True),
    ("matchFields In does not match", make_pod(required_terms=[{"matchFields": [name_field("In", "node1")]}]),
     {}, "node2", None, POD_FAIL, None, {"node1"}, True),
    ("two terms: fields do not match, expressions do",
     make_pod(required_terms=[{"matchFields": [name_field("In", "node1"), name_field("In", "node2")]},
                              {"matchExpressions": [expr("foo", "In", "bar")]}]),
     {"foo": "bar"}, "node2", None, None, None, None, True),
    ("one term: fields do not match, expressions do",
     make_pod(required_terms=[{"matchFields": [name_field("In", "node1")],
                               "matchExpressions": [expr("foo", "In", "bar")]}]),
     {"foo": "bar"}, "node2", None, POD_FAIL, None, {"node1"}, True),
    ("one term: both match",
     make_pod(required_terms=[{"matchFields": [name_field("In", "node1")],
                               "matchExpressions": [expr("foo", "In", "bar")]}]),
     {"foo": "bar"}, "node1", None, None, None, {"node1"}, True),
    ("two terms: neither matches",
     make_pod(required_terms=[{"matchFields": [name_field("In", "node1")]},
                              {"matchExpressions": [expr("foo", "In", "not-match-to-bar")]}]),
     {"foo": "bar"}, "node2", None, POD_FAIL, None, None, True),
    ("two terms of node.Name affinity",
     make_pod(required_terms=[{"matchFields": [name_field("In", "node1")]},
                              {"matchFields": [name_field("In", "node2")]}]),
     {}, "node2", None, None, None, {"node1", "node2"}, True),
    ("two conflicting matchFields requirements",
     make_pod(required_terms=[{"matchFields": [name_field("In", "node1"), name_field("In", "node2")]}]),
     {"foo": "bar"}, "node2", None, POD_FAIL, CONFLICT, None, True),
    ("NotIn on metadata.name does not narrow", make_pod(required_terms=[{"matchFields": [name_field("NotIn", "x")]}]),
     {}, "node1", None, None, None, None, True),
    ("matches added affinity and the pod's",
     make_pod(required_terms=[{"matchExpressions": [expr("zone", "In", "foo")]}]), {"zone": "foo"}, "node2",
     added_args([{"matchFields": [name_field("In", "node2")]}]), None, None, None, True),
    ("matches added affinity but not the pod's",
     make_pod(required_terms=[{"matchExpressions": [expr("zone", "In", "bar")]}]), {"zone": "foo"}, "node2",
     added_args([{"matchFields": [name_field("In", "node2")]}]), POD_FAIL, None, None, True),
    ("doesn't match added affinity", make_pod(), {"zone": "foo"}, "node2",
     added_args([{"matchExpressions": [expr("zone", "In", "bar")]}]), ENFORCED_FAIL, None, None, True),
    ("added affinity checked before the pod's", make_pod({"zone": "nope"}), {"zone": "foo"}, "node2",
     added_args([{"matchExpressions": [expr("zone", "In", "bar")]}]), ENFORCED_FAIL, None, None, True),
    ("nodeSelector without PreFilter", make_pod({"foo": "bar"}), {"foo": "bar", "baz": "blah"}, "", None, None,
     None, None, False),
    ("affinity without PreFilter",
     make_pod(required_terms=[{"matchExpressions": [expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")]}]),
     {"GPU": "NVIDIA-GRID-K1"}, "", None, None, None, None, False),
    ("nodeSelector fails without PreFilter", make_pod({"foo": "bar"}), {"foo": "baz"}, "", None, POD_FAIL,
     None, None, False),
]


@pytest.mark.parametrize("name, pod, labels, node_name, args, want, want_pre_status, want_names, run_pre_filter",
                         FILTER_CASES, ids=[c[0] for c in FILTER_CASES])
def test_filter(name, pod, labels, node_name, args, want, want_pre_status, want_names, run_pre_filter):
    node = make_node(node_name, labels)
    plugin = new(args, None)
    state = CycleState()
    if run_pre_filter:
        result, status = plugin.pre_filter(state, pod, [])
        assert _verdict(status) == want_pre_status
        assert result == (None if want_names is None else PreFilterResult(want_names))
    assert _verdict(plugin.filter(state, pod, NodeInfo(node))) == want
    if node_name:  # the table keys rows by node name
        snapshot = build_snapshot([node, make_node("other", {"zone": "x"})])
        batch = snapshot.batch()
        result = plugin.filter_vectorized(state, pod, batch)
        assert _verdict(result.status(batch.names.index(node_name))) == want
        other = plugin.filter(state, pod, NodeInfo(snapshot.get("other").node()))
        assert _verdict(result.status(batch.names.index("other"))) == _verdict(other)


PREFERRED_1 = [(2, {"matchExpressions": [expr("foo", "In", "bar")]})]
PREFERRED_2 = [(2, {"matchExpressions": [expr("foo", "In", "bar")]}),
               (4, {"matchExpressions": [expr("key", "In", "value")]}),
               (5, {"matchExpressions": [expr("foo", "In", "bar"), expr("key", "In", "value"),
                                         expr("az", "In", "az1")]})]
LABEL1, LABEL2, LABEL3 = {"foo": "bar"}, {"key": "value"}, {"az": "az1"}
LABEL4, LABEL5 = {"abc": "az11", "def": "az22"}, {"foo": "bar", "key": "value", "az": "az1"}

# (name, pod, nodes as (name, labels), args, want normalized scores, run PreScore): TestNodeAffinityPriority
SCORE_CASES = [
    ("no node affinity: all equal", make_pod(), [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)], None,
     [0, 0, 0], True),
    ("no node matches", make_pod(preferred=PREFERRED_1), [("node1", LABEL4), ("node2", LABEL2), ("node3", LABEL3)],
     None, [0, 0, 0], True),
    ("only node1 matches", make_pod(preferred=PREFERRED_1), [("node1", LABEL1), ("node2", LABEL2),
                                                            ("node3", LABEL3)], None, [100, 0, 0], True),
    ("different priorities", make_pod(preferred=PREFERRED_2), [("node1", LABEL1), ("node5", LABEL5),
                                                              ("node2", LABEL2)], None, [18, 100, 36], True),
    ("added affinity", make_pod(), [("node1", LABEL1), ("node2", LABEL2)], added_args(preferred=PREFERRED_1),
     [100, 0], True),
    ("added affinity and the pod's",
     make_pod(preferred=PREFERRED_1), [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL5)],
     added_args(preferred=[(3, {"matchExpressions": [expr("key", "In", "value")]})]), [40, 60, 100], True),
    ("without PreScore", make_pod(preferred=PREFERRED_2), [("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)],
     None, [18, 100, 36], False),
    ("weight-0 and empty terms dropped",
     make_pod(preferred=[(0, {"matchExpressions": [expr("foo", "Exists")]}), (9, {}),
                         (3, {"matchFields": [name_field("In", "node2")]})]),
     [("node1", LABEL1), ("node2", LABEL2)], None, [0, 100], True),
]


@pytest.mark.parametrize("name, pod, nodes, args, want, run_pre_score", SCORE_CASES, ids=[c[0] for c in SCORE_CASES])
def test_score(name, pod, nodes, args, want, run_pre_score):
    nodes = [make_node(n, labels) for n, labels in nodes]
    plugin = new(args, None)
    state = CycleState()
    if run_pre_score:
        status = plugin.pre_score(state, pod, nodes)
        if name.startswith("no node affinity"):
            assert _verdict(status) == SKIP
            return
        assert status is None
    scores = []
    for node in nodes:
        score, status = plugin.score(state, pod, NodeInfo(node))
        assert status is None
        scores.append(NodeScore(node.name, score))
    plugin.score_extensions().normalize_score(state, pod, scores)
    assert [s.score for s in scores] == want

    batch = build_snapshot(nodes).batch()
    raw, status = plugin.score_vectorized(state, pod, batch)
    assert status is None
    plugin.normalize_score_vectorized(state, pod, raw, batch)
    assert dict(zip(batch.names, raw.tolist())) == {node.name: s for node, s in zip(nodes, want)}


def test_pre_score_skip_rules():
    plugin = NodeAffinity()
    assert _verdict(plugin.pre_score(CycleState(), make_pod(), [])) == SKIP
    assert _verdict(plugin.pre_score(CycleState(), make_pod(required_terms=[{"matchExpressions": [
        expr("a", "Exists")]}]), [])) == SKIP
    assert plugin.pre_score(CycleState(), make_pod(preferred=PREFERRED_1), []) is None
    # added preferred terms that are all dropped (weight 0) still mean "score": no Skip
    plugin = new(added_args(preferred=[(0, {"matchExpressions": [expr("a", "Exists")]})]), None)
    assert plugin.pre_score(CycleState(), make_pod(), []) is None


def test_invalid_preferred_term_is_an_error():
    pod = make_pod(preferred=[(1, {"matchExpressions": [expr("a", "Gt", "x")]})])
    plugin = NodeAffinity()
    status = plugin.pre_score(CycleState(), pod, [])
    # upstream's words and path (component-helpers nodeaffinity via labels.NewRequirement)
    assert status.code() == Code.ERROR and status.message() == (
        '[0].matchExpressions[0].values[0]: Invalid value: "x": for \'Gt\', \'Lt\' operators, the value must be an integer')
    score, score_status = plugin.score(CycleState(), pod, NodeInfo(make_node("n")))
    assert score == 0 and score_status.reasons() == status.reasons()
    _, batch_status = plugin.score_vectorized(CycleState(), pod, build_snapshot([make_node("n")]).batch())
    assert batch_status.reasons() == status.reasons()
    # a weight-0 term is not parsed at all (and a non-empty list, even of dropped terms, means no Skip)
    assert plugin.pre_score(CycleState(), make_pod(preferred=[
        (0, {"matchExpressions": [expr("a", "Gt", "x")]})]), []) is None


def test_invalid_preferred_terms_error_as_upstream_words_it():
    """Found by the differential oracle: the PreScore error carries upstream's text, the term's
    index in the pod's list and the label key of a bad value (checked against v1.34.4 live)."""
    pod = make_pod(preferred=[(1, {"matchExpressions": [expr("a", "Exists")]}),
                              (3, {"matchExpressions": [expr("tier", "Gt", "-1")]}),
                              (2, {"matchExpressions": [expr("b", "Lt", "x")]})])
    status = NodeAffinity().pre_score(CycleState(), pod, [])
    assert status.code() == Code.ERROR
    assert status.message() == (
        '[[1].matchExpressions[0].values[0][tier]: Invalid value: "-1": a valid label must be an empty string or '
        "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
        "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?'), [2].matchExpressions[0].values[0]: Invalid value: "
        "\"x\": for 'Gt', 'Lt' operators, the value must be an integer]")


def test_args_validation_and_type():
    with pytest.raises(ValueError) as err:
        new(added_args([{"matchExpressions": [expr("a", "Gt", "x")]}]), None)
    assert str(err.value) == ('addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]'
                              '.matchExpressions[0].values[0]: Invalid value: "x": '
                              "for 'Gt', 'Lt' operators, the value must be an integer")
    with pytest.raises(ValueError, match="args are not of type NodeAffinityArgs"):
        new({"addedAffinity": {}}, None)
    assert new(None, None).added_node_selector is None
    # empty terms are skipped by validation and match nothing
    plugin = new(added_args([{}]), None)
    assert _verdict(plugin.filter(CycleState(), make_pod(), NodeInfo(make_node("n")))) == ENFORCED_FAIL


def test_framework_reports_invalid_args():
    with pytest.raises(ValueError, match='initializing plugin "NodeAffinity": addedAffinity'):
        single_plugin_framework(NAME, args=added_args(preferred=[(5, {"matchFields": [name_field("Gt", "x")]})]))


def test_events_to_register():
    # v1.37.2: Node Add|UpdateNodeLabel with isSchedulableAfterNodeChange
    assert [(e.event.resource, e.event.action_type, e.queueing_hint_fn is not None)
            for e in NodeAffinity().events_to_register()] == [
        (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL, True)]
    assert [e.event.action_type for e in NodeAffinity(enable_scheduling_queue_hint=False).events_to_register()] == [
        ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT]


_FOO_IN_BAR = [{"matchExpressions": [expr("foo", "In", "bar")]}]
_POD_WITH_NODE_AFFINITY = make_pod(required_terms=_FOO_IN_BAR)
# Upstream Test_isSchedulableAfterNodeChange (v1.37.2): (name, args, old, new, hint, error); the pod
# has the required affinity foo In [bar]. st.MakeNode().Capacity(nil) leaves the node as it was: the
# two "unrelated" rows compare nodes that differ in nothing the hint reads.
NODE_CHANGE_ROWS = [
    ("backoff-wrong-new-object", None, None, "not-a-node", QueueingHint.QUEUE, True),
    ("backoff-wrong-old-object", None, "not-a-node", make_node(), QueueingHint.QUEUE, True),
    ("skip-queue-on-add", None, None, make_node(), QueueingHint.QUEUE_SKIP, False),
    ("queue-on-add", None, None, make_node(labels={"foo": "bar"}), QueueingHint.QUEUE, False),
    ("skip-unrelated-changes", None, make_node(), make_node(), QueueingHint.QUEUE_SKIP, False),
    ("skip-unrelated-changes-on-labels", None, make_node(), make_node(labels={"k": "v"}), QueueingHint.QUEUE_SKIP,
     False),
    ("skip-labels-changes-on-node-from-suitable-to-unsuitable", None, make_node(labels={"foo": "bar"}),
     make_node(labels={"k": "v"}), QueueingHint.QUEUE_SKIP, False),
    ("queue-on-labels-change-makes-pod-schedulable", None, make_node(), make_node(labels={"foo": "bar"}),
     QueueingHint.QUEUE, False),
    ("skip-unrelated-change-that-keeps-pod-schedulable", None, make_node(labels={"foo": "bar"}),
     make_node(labels={"foo": "bar"}), QueueingHint.QUEUE_SKIP, False),
    ("skip-queue-on-add-scheduler-enforced-node-affinity", _FOO_IN_BAR, None, make_node(), QueueingHint.QUEUE_SKIP,
     False),
    ("queue-on-add-scheduler-enforced-node-affinity", _FOO_IN_BAR, None, make_node(labels={"foo": "bar"}),
     QueueingHint.QUEUE, False),
]


@pytest.mark.parametrize("name,added,old,new_obj,want,err", NODE_CHANGE_ROWS, ids=[r[0] for r in NODE_CHANGE_ROWS])
def test_is_schedulable_after_node_change(name, added, old, new_obj, want, err):
    plugin = new(added_args(added) if added is not None else NodeAffinityArgs(), None)
    hint, error = plugin.is_schedulable_after_node_change(_POD_WITH_NODE_AFFINITY, old, new_obj)
    assert hint == want and (error is not None) == err


@pytest.mark.parametrize("terms,want,err", [
    ([{"matchExpressions": [expr("foo", "Gt", "x")]}], QueueingHint.QUEUE, True),
    ([{"matchExpressions": [expr("foo", "Gt", "x")]}, {"matchExpressions": [expr("foo", "In", "bar")]}],
     QueueingHint.QUEUE, False),
    ([{"matchExpressions": [expr("foo", "Gt", "x")]}, {"matchExpressions": [expr("foo", "In", "baz")]}],
     QueueingHint.QUEUE, True),
], ids=["only-invalid-term", "valid-term-matches", "valid-term-does-not-match"])
def test_is_schedulable_after_node_change_with_a_term_that_does_not_parse(terms, want, err):
    """Not upstream's table: RequiredNodeAffinity.Match passes over a term that does not parse and
    answers its error when no other term matches; the hint queues with it."""
    hint, error = new(None, None).is_schedulable_after_node_change(
        make_pod(required_terms=terms), None, make_node(labels={"foo": "bar"}))
    assert hint == want and (error is not None) == err


def test_is_schedulable_after_node_change_checks_the_enforced_affinity_first():
    """Not upstream's table (its enforced rows would skip for the pod's affinity alone): a node
    the pod matches but the scheduler-enforced affinity does not is QueueSkip."""
    plugin = new(added_args(_FOO_IN_BAR), None)
    the_pod = make_pod(required_terms=[{"matchExpressions": [expr("k", "In", "v")]}])
    assert plugin.is_schedulable_after_node_change(the_pod, None, make_node(labels={"k": "v"})) == (
        QueueingHint.QUEUE_SKIP, None)
    assert plugin.is_schedulable_after_node_change(the_pod, None, make_node(labels={"k": "v", "foo": "bar"})) == (
        QueueingHint.QUEUE, None)


RANDOM_ARGS = [
    None,
    added_args([{"matchExpressions": [expr("topology.kubernetes.io/zone", "In", "zone-a", "zone-b")]},
                {"matchExpressions": [expr("gpu", "Exists")]}],
               [(7, {"matchExpressions": [expr("tier", "Gt", "2")]}), (0, {"matchExpressions": [expr("a", "Exists")]}),
                (30, {"matchExpressions": [expr("disktype", "In", "ssd")]})]),
]


@pytest.mark.parametrize("seed", range(10))
def test_batch_equals_per_node(seed):
    args = RANDOM_ARGS[seed % 2]
    fw = single_plugin_framework(NAME, args=args, weight=2)
    snapshot = random_snapshot(seed, 250, 0)
    rng = random.Random(seed)
    rejected = both_reasons = scored_unevenly = errors = 0
    for i in range(16):
        pod = random_pod(rng, i) if i % 4 == 0 else random_affinity_pod(rng, i, valid_preferred=i % 3 > 0)
        summary = assert_paths_equivalent(fw, snapshot, pod)
        rejected += len(snapshot) - summary["feasible"]
        state = CycleState()
        _, pre_status, _ = fw.run_pre_filter_plugins(state, pod, snapshot.batch())
        if pre_status is not None:
            continue
        result = fw.run_filter_plugins_vectorized(state, pod, snapshot.batch())
        reasons = {tuple(result.status(j).reasons()) for j in np.flatnonzero(~result.feasible())}
        both_reasons += len(reasons) == 2
        feasible = snapshot.batch().select(np.flatnonzero(result.feasible()))
        if len(feasible):
            if fw.run_pre_score_plugins(state, pod, feasible) is not None:
                errors += 1
                continue
            matrix, _ = fw.run_score_plugins_matrix(state, pod, feasible)
            if matrix.normalized.shape[0]:
                scored_unevenly += len(set(matrix.normalized[0].tolist())) > 1
    assert rejected >= 200 and scored_unevenly >= 1
    if args is not None:  # the enforced and the pod's reasons both show up
        assert both_reasons >= 3 and scored_unevenly >= 3
