"""Capacity questions (what cluster-capacity and open-simulator users ask), answered on forks.

* :func:`max_replicas` — how many more copies of a pod fit, where they go, and the FitError that
  stopped the next one.
* :func:`fits_together` — whether a set of workloads with replica counts fits all together.
* :func:`nodes_needed` — given a node template, how many such nodes must be added for them to fit.
* :func:`max_gangs` — how many more whole gangs of a pod fit (all-or-nothing: a gang counts when
  at least its ``minCount`` members are bound), each tried as a PodGroup through the group cycle.

``cluster`` is what :meth:`Scheduler.add <fastsched.Scheduler.add>` takes (objects, files, a dump)
or a :class:`~fastsched.Scheduler`; a Scheduler is answered on a :meth:`~fastsched.Scheduler.fork`,
so the caller's cluster is never changed.

How copies are placed. The answer is what adding the copies one at a time, each scheduled before
the next arrives, would give (``tests/sim/test_capacity.py`` checks it against that loop): the
copies are identical, so once one fails every later one fails on the same cluster, and the first
failure ends the count. The copies are added in batches that grow geometrically (capped by an
upper bound on what the free resources can hold), each copy is given its scheduling attempt in
turn, and the copies of the batch not yet attempted when one fails are deleted unattempted (an
unattempted pending pod changes nothing that later placements read). :func:`nodes_needed` searches
the number of added nodes (doubling, then bisection) on forks of one Scheduler that holds the
cluster, instead of rebuilding the cluster for each count.
"""
from __future__ import annotations

import gc
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ..api import PREEMPT_NEVER, Node, Pod, objects_of
from ..api.objects import PodSchedulingGroup
from ..api.scheduling import PodGroup
from ..scheduler import Scheduler
from ..scheduler.fork import release
from ..snapshot.lazy import _copier

#: Cap for "as many copies as fit" (a pod requesting nothing would otherwise fit forever).
DEFAULT_MAX_COPIES = 100_000
#: Copies added in the first batch; each later batch doubles, up to the free-resource bound.
FIRST_BATCH = 64
#: Nodes listed by :meth:`ReplicaResult.top_nodes` by default (``--per-node`` lists them all).
TOP_NODES = 10

#: ``progress(done, total)``: copies placed so far (or attempts made, for nodes_needed) out of
#: ``total`` (None when unbounded).
Progress = Callable[[int, "int | None"], None]


@dataclass
class ReplicaResult:
    """Outcome for one workload: how many replicas were placed and where."""

    pod: str
    requested: int | None
    placed: int
    per_node: dict[str, int] = field(default_factory=dict)
    #: why the first copy that did not fit failed (upstream's FitError text; "" when every
    #: requested copy fit)
    stop_reason: str = ""

    @property
    def all_fit(self) -> bool:
        return self.requested is not None and self.placed >= self.requested

    def top_nodes(self, n: int = TOP_NODES) -> list[tuple[str, int]]:
        """The ``n`` nodes with the most copies, most first (ties by name)."""
        return sorted(self.per_node.items(), key=lambda kv: (-kv[1], kv[0]))[:n]

    def histogram(self) -> dict[int, int]:
        """Copies per node -> how many nodes got that many (nodes with none are not counted)."""
        return dict(sorted(Counter(self.per_node.values()).items()))


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


def _cluster_loaded(cluster_objects: Sequence, config: Any = None, seed: int = 0,
                    feature_gates: Any = None) -> Scheduler:
    """A Scheduler holding every object of the cluster but the pods still pending, not yet run."""
    s = Scheduler(config, seed=seed, feature_gates=feature_gates)
    s.add([o for o in cluster_objects if not (isinstance(o, Pod) and not o.node_name)])
    return s


def cluster_scheduler(cluster_objects: Sequence, config: Any = None, extra_nodes: Sequence[Node] = (),
                      seed: int = 0, feature_gates: Any = None) -> Scheduler:
    """A Scheduler holding the cluster as it runs: every object but the pods still pending, and
    the pods that the cluster's workload controllers create (Deployments, DaemonSets, ... whose
    pods are not in the dump) placed by a first ``run()``."""
    s = _cluster_loaded(cluster_objects, config, seed, feature_gates)
    return _started(s, extra_nodes)


def _started(s: Scheduler, extra_nodes: Sequence[Node] = ()) -> Scheduler:
    if extra_nodes:
        s.add_nodes(list(extra_nodes))
    s.run(results=False)
    return s


def _scheduler_for(cluster: Any, config: Any, seed: int) -> Scheduler:
    """A Scheduler to work on: a fork of ``cluster`` when it is one, else one built from it."""
    if isinstance(cluster, Scheduler):
        if config is not None:
            raise ValueError("config applies to a cluster given as objects; a Scheduler has its own")
        return cluster.fork()
    return cluster_scheduler(objects_of(cluster), config, seed=seed)


def _copy(template: Pod, i: int) -> Pod:
    """Copy ``i`` of ``template``, as the copies are defined (:class:`_Copies` makes equal ones
    faster)."""
    # preemption_policy Never: a copy "fits" only in free space; with the template's own policy a
    # higher-priority copy would preempt the running pods (or earlier copies) and count as placed.
    copy = template.replace(name=f"{template.name}-{i}", uid=f"{template.uid}-copy-{i}", node_name="",
                            nominated_node_name="", preemption_policy=PREEMPT_NEVER, manifest={})
    copy.admitted = template.admitted  # only the name differs from the (validated) template
    return copy


class _Copies:
    """Makes ``_copy(template, i)`` for many ``i``: one prototype with its request totals computed,
    then a field copy per copy with its own name and uid (the copies share the prototype's spec
    objects, which also lets the node table recognise them as one pod shape at once)."""

    def __init__(self, template: Pod):
        self.template = template
        self.prototype = _copy(template, 0)
        # computed once here, shared by every copy (the spec they derive from is shared)
        self.prototype.requests, self.prototype.non_zero_requests, self.prototype.scoring_requests  # noqa: B018
        # the node table's field-for-field copier (straight-line code, no __init__ or reduce)
        self._field_copy = _copier(type(self.prototype))

    def __call__(self, i: int) -> Pod:
        clone = self._field_copy(self.prototype)
        clone.name = f"{self.template.name}-{i}"
        clone.uid = f"{self.template.uid}-copy-{i}"
        return clone


def free_space_bound(s: Scheduler, pod: Pod) -> int:
    """An upper bound on how many copies of ``pod`` the free resources and pod slots of all nodes
    hold (NodeResourcesFit's arithmetic on the node table; a pod requesting nothing is bounded by
    the pod slots). Used to size batches only."""
    table = s.snapshot.table
    live = table.live
    fits = table.allowed_pods[live] - table.pod_count[live]
    for name, amount in pod.requests.items():
        if amount <= 0:
            continue
        col = table.resource_index.get(name)
        if col is None:
            return 0
        free = table.alloc[live, col] - table.requested[live, col]
        fits = np.minimum(fits, free // int(amount))
    return int(np.clip(fits, 0, None).sum())


def _sequential_only(s: Scheduler) -> bool:
    """Whether copies must be placed one ``run()`` each, as the one-at-a-time loop places them: a
    Permit plugin may hold a copy (its binding waits on the clock), or pods of the cluster are
    still queued (a bind may wake them, and they take their turns between the copies)."""
    return any(fw.permit_plugins for fw in s.profiles.values()) or len(s.queue) > 0


def _place(s: Scheduler, template: Pod, count: int | None, max_copies: int,
           progress: Progress | None = None) -> ReplicaResult:
    """Place copies of ``template`` until one fails or ``count`` fit (see the module docstring)."""
    # the cyclic collector paused (as the Scheduler's bulk adds pause it): placing 100,000 copies
    # makes no garbage cycles, but the collector's passes over the growing heap add to the time
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _place_copies(s, template, count, max_copies, progress)
    finally:
        if enabled:
            gc.enable()


def _place_copies(s: Scheduler, template: Pod, count: int | None, max_copies: int,
                  progress: Progress | None) -> ReplicaResult:
    from ..scheduler.scheduler import PENDING, SCHEDULED

    limit = count if count is not None else max_copies
    if not template.name:  # a template with generateName only: name the copies after it
        template = template.replace(name=(template.generate_name or "pod").rstrip("-"))
    make_copy = _Copies(template)
    per_node: Counter = Counter()
    stop = ""
    placed = 0
    batch = FIRST_BATCH
    one_at_a_time = _sequential_only(s)
    results = s.results
    while placed < limit and not stop:
        n = min(batch, limit - placed)
        if one_at_a_time:
            n = 1
        else:
            bound = free_space_bound(s, template)
            n = min(n, max(bound + 1, 8))  # one copy past the bound: the failure (and its reason)
        copies = [make_copy(placed + k) for k in range(n)]
        s.add_pods(copies)
        attempted = 0
        for c in copies:
            if one_at_a_time:
                s.run(results=False)
            else:
                # the copy is at the head of activeQ (the queue was empty, copies are FIFO)
                while results[c.uid].status == PENDING:
                    before = sum(s.metrics.attempts.values())
                    s.run(max_attempts=1, results=False)
                    if sum(s.metrics.attempts.values()) == before:  # nothing to attempt now: let
                        s.run(results=False)                        # time run its course
                        break
            attempted += 1
            r = results[c.uid]
            if r.status != SCHEDULED:
                stop = r.message or r.status
                break
            per_node[r.node_name] += 1
            placed += 1
        for c in copies[attempted - 1 if stop else attempted:]:
            s.delete_pod(c)  # the failed copy, and the copies never attempted
        batch *= 2
        if progress is not None:
            progress(placed, count)
    return ReplicaResult(template.key, count, placed, dict(sorted(per_node.items())), stop)


def _template(pod: Any) -> Pod:
    return pod if isinstance(pod, Pod) else Pod.from_manifest(pod)


def max_replicas(cluster: Any, pod: Any, *, config: Any = None, max_copies: int = DEFAULT_MAX_COPIES,
                 seed: int = 0, progress: Progress | None = None) -> ReplicaResult:
    """How many more copies of ``pod`` fit on ``cluster`` (nodes and running pods), and where."""
    s = _scheduler_for(cluster, config, seed)
    try:
        return _place(s, _template(pod), None, max_copies, progress)
    finally:
        _done_with(s, cluster)


def fits_together(cluster: Any, workloads: Sequence[tuple[Any, int]], *, config: Any = None,
                  extra_nodes: Sequence[Node] = (), seed: int = 0, progress: Progress | None = None) -> CapacityReport:
    """Place ``replicas`` copies of each workload pod, in order; report what fit."""
    if isinstance(cluster, Scheduler):
        s = _scheduler_for(cluster, config, seed)
        if extra_nodes:
            s.add_nodes(list(extra_nodes))
            s.run(results=False)
    else:
        s = cluster_scheduler(objects_of(cluster), config, extra_nodes, seed=seed)
    try:
        return _fit_all(s, workloads, len(extra_nodes), progress)
    finally:
        _done_with(s, cluster)


def _done_with(s: Scheduler, cluster: Any) -> None:
    """A fork of the caller's Scheduler is dropped: the caller's scheduler need not copy the pod
    records it shares with it any more (see fastsched.scheduler.fork.release)."""
    if isinstance(cluster, Scheduler) and s is not cluster:
        release(s.__dict__)


def _fit_all(s: Scheduler, workloads: Sequence[tuple[Any, int]], nodes_added: int,
             progress: Progress | None = None) -> CapacityReport:
    out = [_place(s, _template(pod), int(replicas), int(replicas), progress) for pod, replicas in workloads]
    return CapacityReport(out, nodes_added=nodes_added)


def _node_copies(template: Node, k: int) -> list[Node]:
    return [template.replace(name=f"{template.name}-{i}", uid=f"{template.uid}-{i}",
                             labels={**template.labels, "kubernetes.io/hostname": f"{template.name}-{i}"},
                             manifest={}) for i in range(k)]


def nodes_needed(cluster: Any, workloads: Sequence[tuple[Any, int]], node_template: Any, *,
                 config: Any = None, max_nodes: int = 1000, seed: int = 0,
                 progress: Progress | None = None) -> CapacityReport:
    """The fewest copies of ``node_template`` to add so that every workload fits (doubling, then
    bisection, each count tried on a fork of one Scheduler holding the cluster).

    Raises ValueError when even ``max_nodes`` added nodes are not enough; the message names the
    first workload that still does not fit and the FitError that stopped it.
    """
    template = node_template if isinstance(node_template, Node) else Node.from_manifest(node_template)
    if isinstance(cluster, Scheduler):
        if config is not None:
            raise ValueError("config applies to a cluster given as objects; a Scheduler has its own")
        base = cluster
    else:
        base = _cluster_loaded(objects_of(cluster), config, seed)
    tries = 0

    def attempt(k: int) -> CapacityReport:
        nonlocal tries
        s = base.fork()
        if isinstance(cluster, Scheduler):
            if k:
                s.add_nodes(_node_copies(template, k))
                s.run(results=False)
        else:
            _started(s, _node_copies(template, k))  # the added nodes are there when the cluster starts
        try:
            report = _fit_all(s, workloads, k)
        finally:
            release(s.__dict__)  # a fork of base, dropped
        tries += 1
        if progress is not None:
            progress(tries, None)
        return report

    report = attempt(0)
    if report.all_fit:
        return report
    hi = 1
    while True:
        report = attempt(hi)
        if report.all_fit:
            break
        if hi >= max_nodes:
            short = next(w for w in report.workloads if not w.all_fit)
            raise ValueError(f"the workloads do not fit even with {max_nodes} more {template.name} nodes: "
                             f"{short.pod}: {short.placed:,} of {short.requested:,} replicas placed; the next "
                             f"one: {short.stop_reason}")
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


# ------------------------------------------------------------------------------------------------
# gangs
# ------------------------------------------------------------------------------------------------
#: Cap for "as many gangs as fit".
DEFAULT_MAX_GANGS = 10_000


@dataclass
class GangCapacityResult:
    """How many whole gangs of ``pods_per_gang`` copies of ``pod`` fit (:func:`max_gangs`)."""

    pod: str
    pods_per_gang: int
    min_count: int
    #: gangs placed (each with at least min_count members bound)
    gangs: int
    #: members bound per node
    per_node: dict[str, int] = field(default_factory=dict)
    #: why the next gang did not fit: its PodGroupInitiallyScheduled condition message ("" when
    #: max_gangs were placed)
    stop_reason: str = ""

    @property
    def members(self) -> int:
        return sum(self.per_node.values())

    def top_nodes(self, n: int = TOP_NODES) -> list[tuple[str, int]]:
        return sorted(self.per_node.items(), key=lambda kv: (-kv[1], kv[0]))[:n]

    def histogram(self) -> dict[int, int]:
        return dict(sorted(Counter(self.per_node.values()).items()))

    def as_dict(self) -> dict:
        return {"pod": self.pod, "pods_per_gang": self.pods_per_gang, "min_count": self.min_count,
                "gangs": self.gangs, "members": self.members, "per_node": self.per_node,
                "stop_reason": self.stop_reason}


def max_gangs(cluster: Any, pod: Any, pods_per_gang: int, *, min_count: int | None = None, config: Any = None,
              max_gangs: int = DEFAULT_MAX_GANGS, seed: int = 0, progress: Progress | None = None) -> GangCapacityResult:
    """How many more whole gangs fit on ``cluster``: each gang is a PodGroup (gang policy,
    ``minCount`` = ``min_count``, default ``pods_per_gang``; the pod's priority class) and
    ``pods_per_gang`` copies of ``pod`` naming it in ``spec.schedulingGroup``, added once the
    previous gang is placed and scheduled by the group cycle (all or nothing). A gang counts when
    at least ``min_count`` members are bound; its members left unbound (``min_count`` below
    ``pods_per_gang``) are deleted before the next gang. The first gang that does not start ends
    the count (the gangs are identical: the next one would not start either), and its members
    and PodGroup are deleted. Copies never preempt (``preemptionPolicy: Never``, which makes the
    group ineligible for workload-aware preemption), as in :func:`max_replicas`. With
    PodGroupPreemptionPolicy on, the PodGroup's own policy decides and must equal its members':
    the fork gets a PriorityClass of the template's priority with ``preemptionPolicy: Never``
    (``fastsched-capacity-never-<priority>``), which the PodGroups name.

    The scheduler runs with GenericWorkload on (:func:`fastsched.sim.gangs.workload_gates`); a
    ``cluster`` given as a Scheduler must have it on. ``config`` is loaded with those gates
    (GangScheduling among the default plugins)."""
    from ..scheduler.scheduler import SCHEDULED
    from .gangs import pod_group_manifest, workload_gates

    if pods_per_gang < 1:
        raise ValueError(f"pods_per_gang must be >= 1, got {pods_per_gang}")
    min_count = pods_per_gang if min_count is None else int(min_count)
    if not 1 <= min_count <= pods_per_gang:
        raise ValueError(f"min_count must be between 1 and pods_per_gang ({pods_per_gang}), got {min_count}")
    if isinstance(cluster, Scheduler):
        if config is not None:
            raise ValueError("config applies to a cluster given as objects; a Scheduler has its own")
        if not cluster.feature_gates.enabled("GenericWorkload"):
            raise ValueError("the Scheduler runs without GenericWorkload: it cannot schedule gangs (create it with "
                             "feature_gates={\"GenericWorkload\": True})")
        s = cluster.fork()
    else:
        gates = workload_gates()
        if config is not None and not hasattr(config, "profiles"):
            from ..scheduler.config_check import check_config

            config = check_config(config, feature_gates=gates)
        s = cluster_scheduler(objects_of(cluster), config, seed=seed, feature_gates=gates)
    template = _template(pod)
    if not template.name:
        template = template.replace(name=(template.generate_name or "pod").rstrip("-"))
    fw = s.profiles.get(template.scheduler_name or "default-scheduler")
    if fw is not None and "GangScheduling" not in fw.plugins_map:
        _done_with(s, cluster)
        raise ValueError(f"profile {fw.profile_name()!r} has no GangScheduling plugin: gangs would not be placed "
                         f"all or nothing (load the configuration with GenericWorkload on, see "
                         f"fastsched.sim.gangs.workload_gates)")
    group_class, group_policy = template.priority_class_name, None
    if s.feature_gates.enabled("PodGroupPreemptionPolicy"):
        # the group's own policy decides (validatePodGroup wants the members' equal to it): Never, as
        # the copies'; Priority admission takes it only from a class that says Never, so the fork
        # gets one of the template's priority
        priority = template.priority or 0
        group_class, group_policy = f"fastsched-capacity-never-{priority}", "Never"
        if group_class not in s.cluster.priority_classes:
            s.add({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": group_class},
                   "value": priority, "preemptionPolicy": "Never"})
    try:
        per_node: Counter = Counter()
        gangs, stop, i = 0, "", 0
        while gangs < max_gangs:
            name = f"{template.name}-gang-{gangs}"
            group = pod_group_manifest(name, template.namespace, min_count, group_class)
            if group_policy is not None:
                group["spec"]["preemptionPolicy"] = group_policy
            s.add(group)
            members = []
            for _ in range(pods_per_gang):
                members.append(_copy(template, i).replace(scheduling_group=PodSchedulingGroup(name)))
                members[-1].admitted = template.admitted
                i += 1
            s.add_pods(members)
            s.run(results=False)
            bound = [s.results[m.uid] for m in members if s.results[m.uid].status == SCHEDULED]
            if len(bound) < min_count:
                pod_group = s.get_object("PodGroup", name, template.namespace)
                conditions = [c for c in (pod_group.conditions if isinstance(pod_group, PodGroup) else ())
                              if c.get("type") == "PodGroupInitiallyScheduled"]
                stop = (conditions[0].get("message") if conditions else "") or next(
                    (s.results[m.uid].message for m in members if s.results[m.uid].message), "did not start")
                for m in members:
                    s.delete_pod(m)
                s.delete_object("PodGroup", name, template.namespace)
                break
            for m in members:
                if s.results[m.uid].status != SCHEDULED:
                    s.delete_pod(m)
            per_node.update(r.node_name for r in bound)
            gangs += 1
            if progress is not None:
                progress(gangs, None)
        return GangCapacityResult(template.key, pods_per_gang, min_count, gangs, dict(sorted(per_node.items())), stop)
    finally:
        _done_with(s, cluster)
