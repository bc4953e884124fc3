"""Capacity questions (what cluster-capacity and open-simulator users ask), answered on a copy.

* :func:`max_replicas` — how many more copies of a pod fit, where they go, and the FitError that
  stopped the next one.
* :func:`fits_together` — whether a set of workloads with replica counts fits all together.
* :func:`nodes_needed` — given a node template, how many such nodes must be added for them to fit.

Each builds its own Scheduler from the cluster's objects, so the caller's cluster is never changed.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..api import PREEMPT_NEVER, Node, Pod, objects_of
from ..scheduler import Scheduler

#: Cap for "as many copies as fit" (a pod requesting nothing would otherwise fit forever).
DEFAULT_MAX_COPIES = 100_000


@dataclass
class ReplicaResult:
    """Outcome for one workload: how many replicas were placed and where."""

    pod: str
    requested: int | None
    placed: int
    per_node: dict[str, int] = field(default_factory=dict)
    #: why the first copy that did not fit failed ("" when every requested copy fit)
    stop_reason: str = ""

    @property
    def all_fit(self) -> bool:
        return self.requested is not None and self.placed >= self.requested


@dataclass
class CapacityReport:
    workloads: list[ReplicaResult]
    nodes_added: int = 0

    @property
    def all_fit(self) -> bool:
        return all(w.all_fit for w in self.workloads)

    def as_dict(self) -> dict:
        return {"all_fit": self.all_fit, "nodes_added": self.nodes_added,
                "workloads": [{"pod": w.pod, "requested": w.requested, "placed": w.placed,
                               "per_node": w.per_node, "stop_reason": w.stop_reason} for w in self.workloads]}


def cluster_scheduler(cluster_objects: Sequence, config: Any = None, extra_nodes: Sequence[Node] = (),
                      seed: int = 0) -> Scheduler:
    """A Scheduler holding the cluster as it runs: every object but the pods still pending, and
    the pods that the cluster's workload controllers create (Deployments, DaemonSets, ... whose
    pods are not in the dump) placed by a first ``run()``."""
    s = Scheduler(config, seed=seed)
    s.add([o for o in cluster_objects if not (isinstance(o, Pod) and not o.node_name)])
    s.add_nodes(list(extra_nodes))
    s.run(results=False)
    return s


def _copy(template: Pod, i: int) -> Pod:
    # preemption_policy Never: a copy "fits" only in free space; with the template's own policy a
    # higher-priority copy would preempt the running pods (or earlier copies) and count as placed.
    copy = template.replace(name=f"{template.name}-{i}", uid=f"{template.uid}-copy-{i}", node_name="",
                            nominated_node_name="", preemption_policy=PREEMPT_NEVER, manifest={})
    copy.admitted = template.admitted  # only the name differs from the (validated) template
    return copy


def _place(s: Scheduler, template: Pod, count: int | None, max_copies: int) -> ReplicaResult:
    """Add copies one at a time (as the scheduler would meet them) until one fails or ``count`` fit."""
    limit = count if count is not None else max_copies
    if not template.name:  # a template with generateName only: name the copies after it
        template = template.replace(name=(template.generate_name or "pod").rstrip("-"))
    per_node: Counter = Counter()
    stop = ""
    placed = 0
    for i in range(limit):
        s.add_pod(_copy(template, i))
        results = s.run()
        r = results[-1]
        if not r.scheduled:
            stop = r.message
            s.delete_pod(r.pod)
            break
        per_node[r.node_name] += 1
        placed += 1
    return ReplicaResult(template.key, count, placed, dict(sorted(per_node.items())), stop)


def max_replicas(cluster: Any, pod: Any, *, config: Any = None, max_copies: int = DEFAULT_MAX_COPIES,
                 seed: int = 0) -> ReplicaResult:
    """How many more copies of ``pod`` fit on ``cluster`` (nodes and running pods), and where."""
    template = pod if isinstance(pod, Pod) else Pod.from_manifest(pod)
    s = cluster_scheduler(objects_of(cluster), config, seed=seed)
    return _place(s, template, None, max_copies)


def fits_together(cluster: Any, workloads: Sequence[tuple[Any, int]], *, config: Any = None,
                  extra_nodes: Sequence[Node] = (), seed: int = 0) -> CapacityReport:
    """Place ``replicas`` copies of each workload pod, in order; report what fit."""
    s = cluster_scheduler(objects_of(cluster), config, extra_nodes, seed=seed)
    out = []
    for pod, replicas in workloads:
        template = pod if isinstance(pod, Pod) else Pod.from_manifest(pod)
        out.append(_place(s, template, int(replicas), int(replicas)))
    return CapacityReport(out, nodes_added=len(extra_nodes))


def nodes_needed(cluster: Any, workloads: Sequence[tuple[Any, int]], node_template: Any, *,
                 config: Any = None, max_nodes: int = 1000, seed: int = 0) -> CapacityReport:
    """The fewest copies of ``node_template`` to add so that every workload fits (binary search).

    Raises ValueError when even ``max_nodes`` added nodes are not enough.
    """
    template = node_template if isinstance(node_template, Node) else Node.from_manifest(node_template)
    objects = objects_of(cluster)

    def attempt(k: int) -> CapacityReport:
        extra = [template.replace(name=f"{template.name}-{i}", uid=f"{template.uid}-{i}",
                                  labels={**template.labels, "kubernetes.io/hostname": f"{template.name}-{i}"},
                                  manifest={}) for i in range(k)]
        return fits_together(objects, workloads, config=config, extra_nodes=extra, seed=seed)

    report = attempt(0)
    if report.all_fit:
        return report
    hi = 1
    while True:
        report = attempt(hi)
        if report.all_fit:
            break
        if hi >= max_nodes:
            raise ValueError(f"the workloads do not fit even with {max_nodes} more {template.name} nodes")
        hi = min(hi * 2, max_nodes)
    lo = hi // 2  # known not to fit (or 0)
    best = report
    while hi - lo > 1:
        mid = (lo + hi) // 2
        r = attempt(mid)
        if r.all_fit:
            hi, best = mid, r
        else:
            lo = mid
    return best
