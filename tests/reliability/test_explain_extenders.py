"""``explain`` and ``run`` agree with a misbehaving extender, pod after pod: 70 pods on 10 nodes
that fill up, an in-process extender (filter and prioritize; ignorable or not) whose answer for
each pod is drawn by hypothesis from: a proper answer, raising at filter or at prioritize, every
node rejected, half the nodes dropped, some rejected as unresolvable, scores for nodes it was not
sent, scores out of range, no scores at all. Its answers depend on the pod and the nodes only, so
``explain`` and the attempt see the same ones.

Before each pod is added ``explain(manifest)`` is asked; the pod's one attempt must then bind it to
one of the best nodes explain named; or, when explain found none, fail: in error when explain
carries an error (a non-ignorable extender that raised), else unschedulable.
``tests/reliability/test_explain_many_pods.py`` checks the same without extenders; the faithful
branch checked these extender answers by hand, one pod each.
"""
from __future__ import annotations

import random
import zlib
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastsched import Scheduler
from fastsched.extender.extender import Extender, ExtenderError
from fastsched.scheduler.result import ERROR, SCHEDULED, UNSCHEDULABLE
from fastsched.testing import make_node

from .test_explain_many_pods import explain_then_attempt

N_PODS = 70
MODES = ("ok", "raise-filter", "raise-prioritize", "reject-all", "drop-half", "unresolvable-some",
         "unknown-nodes", "out-of-range", "no-scores")


def _h(*parts: str) -> int:
    return zlib.crc32("/".join(parts).encode())


class _Drawn(Extender):
    """Answers as ``modes[pod name]`` says; the same question gets the same answer."""

    def __init__(self, modes: dict[str, str], ignorable: bool):
        self.modes, self.ignorable = modes, ignorable

    def name(self) -> str:
        return "drawn"

    def is_interested(self, pod: Any) -> bool:
        return True

    @property
    def filter_verb(self) -> str:
        return "filter"

    @property
    def prioritize_verb(self) -> str:
        return "prioritize"

    def filter(self, pod: Any, nodes: Any) -> tuple[Any, dict[str, str], dict[str, str]]:
        mode, names = self.modes[pod.name], list(nodes.names)
        if mode == "raise-filter":
            raise ExtenderError("extender 'drawn': filter is down")
        if mode == "reject-all":
            return nodes.select([]), {n: "drawn says no" for n in names}, {}
        if mode in ("drop-half", "unresolvable-some"):
            keep = [i for i, n in enumerate(names) if _h(pod.name, n) % 2 == 0]
            dropped = {n: "drawn dropped it" for i, n in enumerate(names) if i not in keep}
            if mode == "drop-half":
                return nodes.select(keep), dropped, {}
            return nodes.select(keep), {}, dropped
        return nodes, {}, {}

    def prioritize(self, pod: Any, nodes: Any) -> tuple[dict[str, int], int]:
        mode, names = self.modes[pod.name], list(nodes.names)
        if mode == "raise-prioritize":
            raise ExtenderError("extender 'drawn': prioritize is down")
        if mode == "no-scores":
            return {}, 2
        scores = {n: _h(pod.name, n, "s") % 11 for n in names}
        if mode == "unknown-nodes":
            scores["no-such-node"] = 10
        if mode == "out-of-range":
            scores = {n: s * 10**5 - 3 for n, s in scores.items()}
        return scores, 2

    def bind(self, pod: Any, node_name: str) -> None:  # (not a binder)
        raise AssertionError("not a binder")

    def is_binder(self) -> bool:
        return False

    def supports_preemption(self) -> bool:
        return False

    def process_preemption(self, pod: Any, node_name_to_victims: Any, node_infos: Any) -> Any:
        return node_name_to_victims

    def is_ignorable(self) -> bool:
        return self.ignorable


def _pod(i: int, cpu: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}]}}


@settings(max_examples=2, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.booleans())
def test_explain_names_where_the_attempt_binds_whatever_the_extender_answers(seed, ignorable):
    rng = random.Random(seed)
    modes = [rng.choice(MODES) for _ in range(N_PODS)]
    cpus = [rng.choice(["250m", "500m", "1", "2"]) for _ in range(N_PODS)]
    ext = _Drawn({f"p{i}": m for i, m in enumerate(modes)}, ignorable)
    s = Scheduler(seed=3, extenders=[ext])
    s.add_nodes([make_node(f"n{j}", cpu="4", memory="16Gi") for j in range(10)])
    seen = set()
    for i, cpu in enumerate(cpus):
        ex, r = explain_then_attempt(s, _pod(i, cpu), modes[i])
        seen.add(r.status)
        if r.status == SCHEDULED:
            assert r.node_name in ex.best_nodes, (i, modes[i], r.node_name, ex.best_nodes, ex.error)
        else:
            assert not ex.best_nodes, (i, modes[i], r.status, r.message, ex.best_nodes)
            assert r.status == (ERROR if ex.error is not None else UNSCHEDULABLE), \
                (i, modes[i], r.status, r.message, ex.error)
            s.delete_pod(r.pod.uid)
    assert SCHEDULED in seen and len(seen) > 1
