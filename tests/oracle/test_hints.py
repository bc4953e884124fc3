"""Class ``hints``: fastsched's queueing hints against upstream's recorded answers.

``tests/oracle/recorded_named/hints.jsonl.gz`` holds the 60 scenarios of the named-only class
``hints`` from seed 7100 on (``fastsched differential --class hints --scenarios 60 --seed 7100
--record DIR``), and ``hints-gangs.jsonl.gz`` the 20 of the class ``hints-gangs`` from seed 7200
on (pod groups' clusters, GenericWorkload on both sides), on which kube-scheduler v1.37.2 (the oracle's ``hints.go``, at v1.37's default
gates) and fastsched agreed: per scenario the first profile's registrations (each plugin's
``EventsToRegister``: resource, action bits, with or without a QueueingHintFn) and 10 or so cases
(a cluster change: kind, add/update/delete, old and new object, and the rejected pod), each
answered with the cluster events the change is and, for every registration matching one, its
QueueingHintFn's answer for the pod. Each replays through fastsched without Go
(:func:`fastsched.testing.oracle_hints.run_fastsched_hints`); the tests below plant bugs on
fastsched's side (a hint inverted, an event dropped, an update misclassified) and on the
recorded side (an answer changed, a registration dropped) and see the comparison catch them.
"""
from __future__ import annotations

import collections
import copy
import json
import shutil
from pathlib import Path

import pytest

from fastsched.api import load_objects
from fastsched.framework import events as fw_events
from fastsched.framework.interface import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from fastsched.plugins.dynamicresources import DynamicResources
from fastsched.plugins.gangscheduling import GangScheduling
from fastsched.plugins.nodeaffinity.node_affinity import NodeAffinity
from fastsched.plugins.tainttoleration.taint_toleration import TaintToleration
from fastsched.testing import oracle
from fastsched.testing.oracle_hints import (HINTS_CLASSES, HINTS_GANGS_CLASS, KNOWN_REGISTRATIONS,
                                            compare_hints, generate_hints, run_fastsched_hints, shrink_case)
from fastsched.testing.oracle_scenarios import CLASSES, NAMED_CLASSES

RECORDS = oracle.read_recorded(Path(__file__).parent / "recorded_named" / "hints.jsonl.gz")
GANG_RECORDS = oracle.read_recorded(Path(__file__).parent / "recorded_named" / "hints-gangs.jsonl.gz")


def _differences(rec: dict, **kw) -> list:
    sc = rec["scenario"]
    return compare_hints(sc, run_fastsched_hints(sc, HINTS_CLASSES[sc["class"]] or None), rec["answer"], **kw)


def _answers(records: list = RECORDS) -> collections.Counter:
    c: collections.Counter = collections.Counter()
    for r in records:
        for a in r["answer"]["hints"]:
            for h in a["hints"]:
                c[(h["plugin"], h["hint"])] += 1
    return c


def test_fastsched_agrees_with_the_recorded_oracle_on_queueing_hints():
    assert not set(HINTS_CLASSES) & (set(CLASSES) | set(NAMED_CLASSES))  # its own driver, only when named
    # the set reaches what it is for: every plugin of the default profile registered, hints that
    # queue and hints that skip for the plugins whose answer depends on the change, changes of
    # every kind
    plugins = {r["plugin"] for r in RECORDS[0]["answer"]["registered"]}
    assert {"SchedulingGates", "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
            "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone",
            "PodTopologySpread", "InterPodAffinity", "DynamicResources", "DefaultPreemption"} <= plugins
    answers = _answers()
    for plugin in ("TaintToleration", "NodeAffinity", "NodeResourcesFit", "NodeUnschedulable", "PodTopologySpread",
                   "InterPodAffinity", "DynamicResources", "VolumeBinding", "VolumeZone", "VolumeRestrictions",
                   "NodeVolumeLimits", "NodePorts"):
        assert answers[(plugin, "Queue")] >= 3 and answers[(plugin, "QueueSkip")] >= 3, plugin
    events = {e.rsplit("/", 1)[0] for r in RECORDS for a in r["answer"]["hints"] for e in a["events"]}
    assert {"Node", "AssignedPod", "TargetPod", "UnscheduledPod", "PersistentVolume", "PersistentVolumeClaim",
            "storage.k8s.io/StorageClass", "storage.k8s.io/CSINode", "resource.k8s.io/ResourceClaim",
            "resource.k8s.io/ResourceSlice", "resource.k8s.io/DeviceClass"} <= events
    ops = collections.Counter((c["kind"], c["op"]) for r in RECORDS for c in r["scenario"]["hints"])
    assert all(ops[("Node", op)] for op in ("add", "update", "delete"))
    assert all(ops[("Pod", op)] for op in ("add", "update", "delete"))
    assert sum(c.get("target", False) for r in RECORDS for c in r["scenario"]["hints"]) > 20
    assert any(e == "Node/32" for r in RECORDS for a in r["answer"]["hints"] for e in a["events"])  # conditions
    failures = [f"{r['scenario']['id']}: {json.dumps(d[:2])[:800]}" for r in RECORDS if (d := _differences(r))]
    assert not failures, f"{len(failures)} of {len(RECORDS)} scenarios differ:\n" + "\n".join(failures[:10])


def test_fastsched_agrees_with_the_recorded_oracle_on_pod_groups():
    """GangScheduling (GenericWorkload): its registrations, and hints that queue and skip on
    PodGroups added and changed and members added."""
    assert all(r["scenario"]["class"] == HINTS_GANGS_CLASS for r in GANG_RECORDS)
    assert "GangScheduling" in {r["plugin"] for r in GANG_RECORDS[0]["answer"]["registered"]}
    answers = _answers(GANG_RECORDS)
    assert answers[("GangScheduling", "Queue")] >= 20 and answers[("GangScheduling", "QueueSkip")] >= 20
    failures = [f"{r['scenario']['id']}: {json.dumps(d[:2])[:800]}" for r in GANG_RECORDS if (d := _differences(r))]
    assert not failures, f"{len(failures)} of {len(GANG_RECORDS)} scenarios differ:\n" + "\n".join(failures[:10])


def test_a_gang_hint_missing_a_decrease_is_caught(monkeypatch):
    """GangScheduling's PodGroup update hint not queueing a lowered minCount."""
    monkeypatch.setattr(GangScheduling, "is_schedulable_after_pod_group_updated",
                        lambda self, pod, old, new: (QueueingHint.QUEUE_SKIP, None))
    assert sum(bool(_differences(r)) for r in GANG_RECORDS) >= 3


def test_the_generator_is_the_recorded_one():
    changed = [r["scenario"]["id"] for r in RECORDS + GANG_RECORDS
               if generate_hints(r["scenario"]["seed"], r["scenario"]["class"]) != r["scenario"]]
    assert not changed, f"the generator no longer makes the recorded scenarios: {changed[:5]}"


def test_the_known_registration_is_the_only_raw_difference():
    """Compared raw, the recorded answers differ in the VolumeAttachment registration alone
    (:data:`KNOWN_REGISTRATIONS`): upstream's has a hint function, fastsched's none."""
    diffs = _differences(RECORDS[0], known=False)
    assert [d["field"] for d in diffs] == ["registered:NodeVolumeLimits"]
    assert ("NodeVolumeLimits", "storage.k8s.io/VolumeAttachment") in KNOWN_REGISTRATIONS


# -- bugs planted in fastsched ---------------------------------------------------------------------
def test_an_inverted_hint_is_caught(monkeypatch):
    """TaintToleration's node hint answering the opposite: the node changes it answers differ."""
    original = TaintToleration.is_schedulable_after_node_change

    def inverted(pod, old, new):
        hint, err = original(pod, old, new)
        return (QueueingHint.QUEUE_SKIP if hint == QueueingHint.QUEUE else QueueingHint.QUEUE), err

    monkeypatch.setattr(TaintToleration, "is_schedulable_after_node_change", staticmethod(inverted))
    caught = [d for r in RECORDS for d in _differences(r)]
    assert len(caught) >= 10 and {d["field"] for d in caught} == {"hints"}
    assert all(row[1] == "TaintToleration" for d in caught for row in d["fastsched"] + d["oracle"])


def test_a_dropped_event_is_caught(monkeypatch):
    """NodeAffinity not registering UpdateNodeLabel: its registrations differ in every scenario,
    and label changes go unanswered."""
    def only_add(self):
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD), self.is_schedulable_after_node_change)]

    monkeypatch.setattr(NodeAffinity, "events_to_register", only_add)
    diffs = [_differences(r) for r in RECORDS]
    assert all(any(d["field"] == "registered:NodeAffinity" for d in ds) for ds in diffs)
    assert sum(any(d["field"] == "hints" for d in ds) for ds in diffs) >= 5


def test_a_misclassified_update_is_caught(monkeypatch):
    """A node's label change not seen as UpdateNodeLabel (node_scheduling_properties_change): the
    events of such cases differ."""
    original = fw_events.node_scheduling_properties_change

    def no_labels(new, old):
        return [e for e in original(new, old) if e.action_type != ActionType.UPDATE_NODE_LABEL]

    monkeypatch.setattr(fw_events, "node_scheduling_properties_change", no_labels)
    assert sum(any(d["field"] == "events" for d in _differences(r)) for r in RECORDS) >= 5


def test_a_deallocation_not_queued_is_caught(monkeypatch):
    """DynamicResources skipping a claim's deallocation (upstream queues: devices may be free)."""
    original = DynamicResources.is_schedulable_after_claim_change

    def no_dealloc(self, pod, old, new):
        if old is not None and new is not None and old.allocation is not None and new.allocation is None:
            return QueueingHint.QUEUE_SKIP, None
        return original(self, pod, old, new)

    monkeypatch.setattr(DynamicResources, "is_schedulable_after_claim_change", no_dealloc)
    assert sum(bool(_differences(r)) for r in RECORDS) >= 2


# -- bugs planted on the oracle's side (its recorded answers changed) --------------------------------
def test_a_changed_upstream_answer_is_caught():
    rec = next(r for r in RECORDS if any(h["hint"] == "QueueSkip" for a in r["answer"]["hints"] for h in a["hints"]))
    changed = copy.deepcopy(rec["answer"])
    i, j = next((i, j) for i, a in enumerate(changed["hints"]) for j, h in enumerate(a["hints"])
                if h["hint"] == "QueueSkip")
    changed["hints"][i]["hints"][j]["hint"] = "Queue"
    mine = run_fastsched_hints(rec["scenario"])
    diffs = compare_hints(rec["scenario"], mine, changed)
    assert [(d["case"], d["field"]) for d in diffs] == [(i, "hints")]
    # an error is compared as an error (its text is Go's), whatever the hint beside it
    changed = copy.deepcopy(rec["answer"])
    changed["hints"][i]["hints"][j]["error"] = "unexpected objects"
    assert [d["field"] for d in compare_hints(rec["scenario"], mine, changed)] == ["hints"]


def test_a_registration_upstream_drops_is_caught():
    rec = RECORDS[0]
    changed = copy.deepcopy(rec["answer"])
    changed["registered"] = [r for r in changed["registered"]
                             if not (r["plugin"] == "PodTopologySpread" and r["resource"] == "Node")]
    diffs = compare_hints(rec["scenario"], run_fastsched_hints(rec["scenario"]), changed)
    assert [d["field"] for d in diffs] == ["registered:PodTopologySpread"]


def test_shrink_case_keeps_the_case_alone():
    """A difference is written with its case alone and the cluster shrunk while it still differs
    (here: a planted predicate that needs the case's node only)."""
    rec = next(r for r in RECORDS if any(c["kind"] == "Node" and c["op"] == "update" for c in r["scenario"]["hints"]))
    sc = rec["scenario"]
    i = next(i for i, c in enumerate(sc["hints"]) if c["kind"] == "Node" and c["op"] == "update")
    name = sc["hints"][i]["new"]["metadata"]["name"]
    small = shrink_case(sc, i, lambda cand: any(n["metadata"]["name"] == name for n in cand["nodes"]))
    assert small["hints"] == [sc["hints"][i]]
    assert [n["metadata"]["name"] for n in small["nodes"]] == [name]
    assert not small["pods"] and not small["objects"]


# -- live, where Go is: fresh seeds of both classes against the oracle built from oracle/ -------------
@pytest.mark.skipif(shutil.which("go") is None, reason="the oracle needs Go (`go` not on PATH); the recorded "
                                                         "sets above check the same without it")
@pytest.mark.parametrize("cls", sorted(HINTS_CLASSES))
def test_live_hints_agree(cls, monkeypatch):
    from fastsched.testing.oracle_hints import HINTS_ORACLE_GATES, check_hints

    monkeypatch.setattr(oracle, "ORACLE_DIR", Path(__file__).resolve().parents[2] / "oracle")
    try:
        binary = oracle.build_oracle()
    except RuntimeError as exc:  # e.g. no network for a cold module cache
        pytest.skip(f"the oracle did not build: {str(exc)[:500]}")
    gates = HINTS_CLASSES[cls]
    with oracle.Oracle(binary, feature_gates=",".join(g for g in (HINTS_ORACLE_GATES, gates) if g)) as live:
        if (live.version or {}).get("protocol", 0) < 4:
            pytest.skip("the oracle predates protocol 4 (hints)")
        for seed in range(910_000, 910_004):
            diffs, _, theirs = check_hints(generate_hints(seed, cls), live, gates or None)
            assert not diffs, f"{cls}-{seed}: {json.dumps(diffs)[:2000]}"
            assert theirs.get("registered")


def test_objects_reach_fastsched_in_the_informers_order(monkeypatch):
    """The oracle's informers list each kind sorted by namespace and name; fastsched is fed the
    scenario's objects in that order (``oracle.informer_order``). A differential (hints, seed
    344432739, shrunk) found why it matters: classes ``gpu`` and ``big-gpu`` both claim
    ``example.com/gpu`` with equal creation times; ``big-gpu`` arrives first, wins the name, and
    upstream's extended-resource cache returns before mapping ``gpu``'s implicit name
    ``deviceclass.resource.kubernetes.io/gpu`` -- so NodeResourcesFit's node hint finds the pod does
    not fit (QueueSkip). Fed in the scenario's order (``gpu`` first), the implicit name is mapped
    and the hint says Queue."""
    rec = json.loads((Path(__file__).parent / "recorded_named" / "hints-informer-order.json").read_text())
    sc = rec["scenario"]
    assert [o["metadata"]["name"] for o in sc["objects"] if o["kind"] == "DeviceClass"] == ["gpu", "big-gpu"]
    assert [o["metadata"]["name"] for o in oracle.informer_order(sc["objects"])] == ["big-gpu", "gpu"]
    assert not compare_hints(sc, run_fastsched_hints(sc), rec["answer"])
    monkeypatch.setattr(oracle, "informer_order", list)  # the scenario's own order
    mine = run_fastsched_hints(sc)
    assert [h["hint"] for h in mine["hints"][0]["hints"] if h["plugin"] == "NodeResourcesFit"] == ["Queue"]
    assert compare_hints(sc, mine, rec["answer"])


@pytest.mark.parametrize("seed", [1806314889, *range(40)])
def test_pod_changes_drawn_are_pods_the_api_server_accepts(seed):
    """Every Pod a hint case adds or updates passes validation: the oracle's fake clientset takes
    any object, so an update the API server refuses would only show as fastsched's error. Seed
    1806314889 drew a resize removing the memory request of a container with hugepages and no cpu
    ("HugePages require cpu or memory")."""
    for case in generate_hints(seed)["hints"]:
        if case["kind"] != "Pod":
            continue
        for manifest in (case.get("old"), case.get("new")):
            if manifest is not None:
                load_objects([copy.deepcopy(manifest)])  # raises ValidationError for a refused pod
