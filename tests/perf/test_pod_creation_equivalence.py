"""The runner's pods against the path it replaced: the Go template interpreter for every pod,
``PodFactory._copy`` as a full field copy with its fields set after, and ``uuid.uuid5`` uids.
The pods of a few upstream workloads must be equal field by field (uids included), in order."""
from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from fastsched.api.objects import EMPTY_MAP, _UID_NAMESPACE_BYTES, Pod, _field_copier, _read_only, _stored_fields
from fastsched.perf import load_perf_config, run_workload
from fastsched.perf import gotemplate
from fastsched.perf.ops import WorkloadOps
from fastsched.sim import generators

V137 = Path(__file__).parent / "data" / "upstream-v1.37.2"
_UID_NS = uuid.UUID(bytes=_UID_NAMESPACE_BYTES)

CASES = [  # (topic, test case, workload): generateName, .Index names, DivideInt, two templates
    ("misc", "SchedulingBasic", "5Nodes"),
    ("podgroup/gangscheduling", "GangScheduling", "10Nodes_3Gangs"),
    ("affinity", "SchedulingPodMatchingAntiAffinity", "5Nodes"),
]


def _reference_copy(self, name, namespace, labels, node_name):
    # PodFactory._copy before the fused stamper, with the uid as uuid5 builds it
    t = self.template
    pod = _field_copier(Pod)(t)
    pod.name = name
    ns = pod.namespace = namespace or t.namespace
    pod.uid = str(uuid.uuid5(_UID_NS, f"Pod/{ns}/{name}")) if name else ""
    pod.labels = t.labels if labels is None else _read_only(labels)
    pod.node_name = node_name
    pod.manifest = EMPTY_MAP
    pod.admitted = t.admitted
    pod.decoded_under = None
    pod._requests, pod._non_zero_requests, pod._scoring_requests = \
        t.requests, t.non_zero_requests, t.scoring_requests
    return pod


def _made_pods(monkeypatch, topic, case, workload, reference):
    made: list[Pod] = []
    original = WorkloadOps._make_pods

    def record(self, *args, **kwargs):
        pods, fins = original(self, *args, **kwargs)
        made.extend(pods)
        return pods, fins

    with monkeypatch.context() as m:
        m.setattr(WorkloadOps, "_make_pods", record)
        if reference:
            m.setattr(gotemplate.Template, "_flatten", lambda self, nodes: None)  # the interpreter
            m.setattr(generators.PodFactory, "_copy", _reference_copy)
        config = load_perf_config(V137 / topic / "performance-config.yaml")
        r = run_workload(config, case, workload, topic=config.base_dir.name)
    assert r.status == "passed", r.reason
    return made


@pytest.mark.parametrize("topic, case, workload", CASES)
def test_runner_pods_equal_the_reference_path(monkeypatch, topic, case, workload):
    fast = _made_pods(monkeypatch, topic, case, workload, reference=False)
    slow = _made_pods(monkeypatch, topic, case, workload, reference=True)
    assert fast and len(fast) == len(slow)
    for got, want in zip(fast, slow):
        for name in _stored_fields(Pod):
            g, w = getattr(got, name), getattr(want, name)
            assert g == w and type(g) is type(w), (got.name, name, g, w)
        assert (got.requests, got.non_zero_requests, got.scoring_requests) == \
            (want.requests, want.non_zero_requests, want.scoring_requests)
