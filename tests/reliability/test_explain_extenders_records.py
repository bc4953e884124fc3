"""``explain`` against the attempt's decision record with one to three extenders, pod after pod.

``test_explain_extenders.py`` checks that the pod binds to one of explain's best nodes with one
extender. Here seeded random clusters (3-15 nodes of mixed sizes and zones) take 60 pods each
(node selectors, preferred affinity, tolerations), beside one to three in-process extenders, each
ignorable or not, with or without a filter and a prioritize verb, and a weight of 1-5; each
extender's answer per pod is drawn from: a proper one, raising at filter or prioritize, every node
rejected, half the nodes dropped (failed, unresolvable, both maps, or dropped without a reason),
scores for a node it was not sent, scores out of range or negative, no scores, and no interest in
the pod. Before each pod is added ``explain(manifest)`` is asked, then the pod gets one attempt
recorded with ``record="all"``; the attempt must agree with explain on:

- the outcome: bound to one of explain's best nodes; else no best node, and Error exactly when
  explain carries an error;
- the totals selectHost compared, node by node (plugins' weighted scores plus the extenders'),
  and so the feasible nodes after the extenders;
- each extender's verdicts: every node the attempt's extender failed carries that extender's
  reason in explain's Filter verdicts.

It found no difference (2,100 pods over 35 clusters when written); it guards the two paths, which
are separate code (``explain._filter_through_extenders``/``_prioritize_with_extenders`` and the
cycle's ``findNodesThatPassExtenders``/``prioritizeNodes``).
"""
from __future__ import annotations

import random
import zlib
from typing import Any

import pytest

from fastsched import Scheduler
from fastsched.extender.extender import Extender, ExtenderError
from fastsched.scheduler.result import ERROR, SCHEDULED
from fastsched.testing import make_node

N_PODS = 60
MODES = ("ok", "raise-filter", "raise-prioritize", "reject-all", "drop-half", "unresolvable-some", "unknown-nodes",
         "out-of-range", "no-scores", "silent-drop", "not-interested", "negative", "both-maps")


def _h(*parts: str) -> int:
    return zlib.crc32("/".join(parts).encode())


class _Drawn(Extender):
    """Answers as ``modes[pod name]`` says; the same question gets the same answer."""

    def __init__(self, name: str, modes: dict[str, str], ignorable: bool, weight: int, filters: bool,
                 prioritizes: bool):
        self._name, self.modes, self.ignorable, self.weight = name, modes, ignorable, weight
        self._filters, self._prioritizes = filters, prioritizes

    def name(self) -> str:
        return self._name

    def is_interested(self, pod: Any) -> bool:
        return self.modes[pod.name] != "not-interested"

    @property
    def filter_verb(self) -> str:
        return "filter" if self._filters else ""

    @property
    def prioritize_verb(self) -> str:
        return "prioritize" if self._prioritizes else ""

    def filter(self, pod: Any, nodes: Any) -> tuple[Any, dict[str, str], dict[str, str]]:
        mode, names = self.modes[pod.name], list(nodes.names)
        if mode == "raise-filter":
            raise ExtenderError(f"extender {self._name}: filter is down")
        if mode == "reject-all":
            return nodes.select([]), {n: f"{self._name} says no" for n in names}, {}
        if mode in ("drop-half", "unresolvable-some", "silent-drop", "both-maps"):
            keep = [i for i, n in enumerate(names) if _h(self._name, pod.name, n) % 2 == 0]
            dropped = {n: f"{self._name} dropped it" for i, n in enumerate(names) if i not in keep}
            if mode == "drop-half":
                return nodes.select(keep), dropped, {}
            if mode == "silent-drop":
                return nodes.select(keep), {}, {}
            if mode == "both-maps":
                return nodes.select(keep), dropped, {n: f"{self._name} never" for n in list(dropped)[::2]}
            return nodes.select(keep), {}, dropped
        return nodes, {}, {}

    def prioritize(self, pod: Any, nodes: Any) -> tuple[dict[str, int], int]:
        mode, names = self.modes[pod.name], list(nodes.names)
        if mode == "raise-prioritize":
            raise ExtenderError(f"extender {self._name}: prioritize is down")
        if mode == "no-scores":
            return {}, self.weight
        scores = {n: _h(self._name, pod.name, n, "s") % 11 for n in names}
        if mode == "unknown-nodes":
            scores["no-such-node"] = 10
        elif mode == "out-of-range":
            scores = {n: s * 10**5 - 3 for n, s in scores.items()}
        elif mode == "negative":
            scores = {n: -s for n, s in scores.items()}
        return scores, self.weight

    def bind(self, pod: Any, node_name: str) -> None:
        raise AssertionError("not a binder")

    def is_binder(self) -> bool:
        return False

    def supports_preemption(self) -> bool:
        return False

    def process_preemption(self, pod: Any, node_name_to_victims: Any, node_infos: Any) -> Any:
        return node_name_to_victims

    def is_ignorable(self) -> bool:
        return self.ignorable


def _pod(rng: random.Random, i: int) -> dict:
    requests = {"cpu": rng.choice(["250m", "500m", "1", "2"]), "memory": rng.choice(["128Mi", "1Gi", "4Gi"])}
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "busybox", "resources": {"requests": requests}}]}
    r = rng.random()
    if r < 0.2:
        spec["nodeSelector"] = {"zone": rng.choice("abc")}
    elif r < 0.35:
        term = {"key": "zone", "operator": "In", "values": ["a"]}
        spec["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 50, "preference": {"matchExpressions": [term]}}]}}
    elif r < 0.45:
        spec["tolerations"] = [{"key": "gpu", "operator": "Exists"}]
    return {"apiVersion": "v1", "kind": "Pod", "spec": spec,
            "metadata": {"name": f"p{i}", "namespace": "default", "labels": {"app": rng.choice("xy")}}}


def _disagreements(ex: Any, r: Any, record: Any) -> list[str]:
    out = []
    if r.status == SCHEDULED:
        if r.node_name not in ex.best_nodes:
            out.append(f"bound to {r.node_name}, explain's best: {ex.best_nodes}")
    else:
        if ex.best_nodes:
            out.append(f"{r.status} ({r.message}), explain's best: {ex.best_nodes}")
        if (r.status == ERROR) != (ex.error is not None):
            out.append(f"{r.status} ({r.message}), explain's error: {ex.error}")
    totals = {str(n): int(t) for n, t in zip(record.score_node_names, record.total_scores)}
    if totals:
        feasible = set(ex.feasible)
        if totals != {n: t for n, t in ex.total.items() if n in feasible}:
            out.append(f"totals: attempt {totals}, explain {ex.total} over {sorted(feasible)}")
    for verdicts in record.extender_filter:
        key = f"extender {verdicts['name']}"
        unresolvable = verdicts.get("failed_unresolvable") or {}
        for node, reason in {**(verdicts.get("failed") or {}), **unresolvable}.items():
            status = ex.filter.get(node, {}).get(key)
            if status is None or reason not in status.reasons():
                out.append(f"{key} failed {node} ({reason!r}), explain: {status}")
    return out


@pytest.mark.parametrize("seed", [3, 11])
def test_explain_agrees_with_the_recorded_attempt_whatever_the_extenders_answer(seed):
    rng = random.Random(seed)
    extenders = [_Drawn(f"e{k}", {f"p{i}": rng.choice(MODES) for i in range(N_PODS)}, rng.random() < 0.5,
                        rng.randint(1, 5), rng.random() < 0.8, rng.random() < 0.8)
                 for k in range(rng.choice([2, 3]))]
    s = Scheduler(seed=seed, extenders=extenders, record="all")
    s.add_nodes([make_node(f"n{j}", cpu=rng.choice(["2", "4", "8"]), memory=rng.choice(["4Gi", "16Gi"]),
                           labels={"zone": rng.choice("abc")}) for j in range(rng.randint(3, 15))])
    outcomes = set()
    for i in range(N_PODS):
        manifest = _pod(rng, i)
        ex = s.explain(manifest)
        s.add(manifest)
        s.run(max_attempts=1)
        r = s.results[s.get_pod("default", f"p{i}").uid]
        assert r.attempts == 1
        problems = _disagreements(ex, r, r.history[-1])
        assert not problems, (f"p{i}", [e.modes[f"p{i}"] for e in extenders], problems)
        outcomes.add(r.status)
        if r.status != SCHEDULED:
            s.delete_pod(r.pod.uid)
    assert SCHEDULED in outcomes and len(outcomes) > 1
