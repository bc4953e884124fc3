"""``explain`` of a pod the API server refuses to create says so, as ``add()``/``run()`` do: the
admission error (upstream's Priority admission plugin: ``no PriorityClass with name x was
found``), no plugin verdict, no feasible node. A pod already added that was refused is explained
the same way (its Error result's message).

Found: explain admitted a not-yet-created pod but, when admission refused it, evaluated it as
written and named the nodes it "fits", where ``add()`` gave the pod an Error result and no
attempt ever ran.
"""
from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastsched import Scheduler
from fastsched.scheduler.result import ERROR, SCHEDULED

CLASSES = {"low": 10, "high": 1000}
MISSING = ("gold", "nope")


def _node(j: int) -> dict:
    alloc = {"cpu": "2", "memory": "8Gi", "pods": "20"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{j}", "labels": {"kubernetes.io/hostname": f"n{j}"}},
            "status": {"allocatable": dict(alloc), "capacity": dict(alloc)}}


def _pod(name: str, cpu: str = "100m", pc: str | None = None) -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}]}
    if pc is not None:
        spec["priorityClassName"] = pc
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def _scheduler(seed: int = 0, nodes: int = 4) -> Scheduler:
    s = Scheduler(seed=seed)
    s.add([{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n}, "value": v}
           for n, v in CLASSES.items()])
    s.add([_node(j) for j in range(nodes)])
    return s


def _kind(ex) -> str:
    if ex.admission_error:
        return "refused"
    return "feasible" if ex.best_nodes else "unschedulable"


@pytest.mark.parametrize("pc", MISSING)
def test_explain_of_a_refused_pod_is_its_admission_error(pc):
    s = _scheduler()
    manifest = _pod("p", pc=pc)
    ex = s.explain(manifest)
    assert ex.admission_error == f"no PriorityClass with name {pc} was found"
    assert ex.feasible == [] and ex.best_nodes == [] and ex.filter == {} and ex.prefilter == {} and ex.scores == {}
    assert ex.preemption is None
    s.add(manifest)
    s.run()
    r = s.results[s.get_pod("default", "p").uid]
    assert (r.status, r.message) == (ERROR, ex.admission_error)
    # the pod added (and refused) is explained alike
    again = s.explain(s.get_pod("default", "p"))
    assert again.admission_error == r.message and again.feasible == [] and again.filter == {}


def test_a_pod_with_a_class_that_exists_is_explained():
    s = _scheduler()
    for name in ("a", "b"):
        ex = s.explain(_pod(name, pc="high"))
        assert ex.admission_error == "" and ex.best_nodes, ex
    assert s.explain(_pod("c")).admission_error == ""


def test_a_refused_pod_deleted_and_made_again_with_a_class_that_exists():
    s = _scheduler()
    s.add(_pod("p", pc="gold"))
    assert s.explain(s.get_pod("default", "p")).admission_error
    s.delete_pod(s.get_pod("default", "p").uid)
    s.add({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "gold"}, "value": 5})
    ex = s.explain(_pod("p", pc="gold"))
    assert ex.admission_error == "" and ex.best_nodes and ex.pod.priority == 5


@settings(max_examples=3, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000))
def test_explain_verdict_kind_matches_run(seed):
    """Pods with no class, a class that exists, or one that does not, on 3 small nodes that fill
    up: explain's kind of verdict (refused / feasible / unschedulable) is run()'s outcome
    (Error / Scheduled / not)."""
    rng = random.Random(seed)
    s = _scheduler(seed, nodes=3)
    kinds = set()
    for i in range(24):
        pc = rng.choice([None, *CLASSES, *MISSING])
        manifest = _pod(f"p{i}", cpu=rng.choice(["300m", "700m"]), pc=pc)
        ex = s.explain(manifest)
        s.add(manifest)
        s.run(max_attempts=1)
        r = s.results[s.get_pod("default", f"p{i}").uid]
        kind = _kind(ex)
        kinds.add(kind)
        if r.status == ERROR:
            assert (kind, ex.admission_error) == ("refused", r.message), (i, pc, kind, r.message)
        elif r.status == SCHEDULED:
            assert kind == "feasible" and r.node_name in ex.best_nodes, (i, pc, kind, r.node_name)
        else:
            assert kind == "unschedulable", (i, pc, kind, r.status, r.message)
            s.delete_pod(r.pod.uid)  # (else it may stay nominated)
    assert {"refused", "feasible"} <= kinds


def test_cli_explain_reports_the_refusal(tmp_path, capsys):
    from fastsched.cli import main

    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [_node(0), _node(1)]}))
    pod = tmp_path / "pod.yaml"
    pod.write_text(json.dumps(_pod("p", pc="gold")))
    assert main(["explain", "--cluster", str(cluster), "--pod", str(pod), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["admission_error"] == "no PriorityClass with name gold was found"
    assert out["feasible"] == [] and out["best_nodes"] == [] and out.get("preemption") is None
    assert all(not n["feasible"] and not any(k.startswith("filter:") for k in n) for n in out["nodes"])
    assert main(["explain", "--cluster", str(cluster), "--pod", str(pod)]) == 0
    text = capsys.readouterr().out
    assert "refused at admission" in text and "no PriorityClass with name gold was found" in text
    assert "feasible" not in text
