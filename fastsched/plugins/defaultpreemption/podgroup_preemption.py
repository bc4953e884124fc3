"""Workload-aware preemption: the preemptor is a pod group, the domain the whole cluster
(upstream v1.37.2 ``pkg/scheduler/framework/preemption/podgrouppreemption.go``, the victim types of
``types.go``, ``MoreImportantVictim``/``GetPodPriority``/``FilterVictimsWithPDBViolation`` of
``util.go`` and ``actuatePodGroupPreemption`` of ``executor.go``). With CompositePodGroup the
evaluator reads the snapshot's CompositePodGroup listers too, and a victim unit is the highest
``disruptionMode: all`` group of a pod's hierarchy (every leaf's scheduled pods), its priority the
hierarchy's top's (``TraverseHierarchyUp``, here too: :mod:`.hierarchy` re-exports it).

:meth:`PodGroupEvaluator.preempt` (``Preempt``), called by DefaultPreemption's
``pod_group_post_filter`` inside a snapshot mutation session:

1. the domain: every node of the snapshot, and every pod on them as a *victim unit* — a pod alone,
   or, when its PodGroup has ``disruptionMode: all``, the group's scheduled pods all together (one
   unit, whatever nodes they are on); a unit's priority is its PodGroup's (``GetPodPriority``: a
   member of a known PodGroup counts with the group's priority, not its own);
2. the preemptor: the queued members, the group's priority and preemption policy (with
   PodGroupPreemptionPolicy the group's field, else ``Never`` when any member says so);
   ``Never`` → Unschedulable ``not eligible due to preemptionPolicy=Never.``;
3. a member nominated to a node where a lower-priority pod is terminating by preemption → Success
   ``ongoing preemption on nominated nodes``, with every member's current nomination;
4. ``selectVictimsOnDomain``: the units of lower priority than the group (none →
   UnschedulableAndUnresolvable ``No preemption victims found for incoming preemptor``) are removed
   from the snapshot, the group algorithm runs again (its failure is the answer), then each unit,
   most important first (``MoreImportantVictim``; PDB-violating units before the others), is put
   back if every proposed assignment still passes the filters on its node with the earlier ones
   assumed and reserved; the others are the victims, and every proposed assignment's node is
   nominated;
5. the victims are preempted (``SchedulerAsyncPreemption``: after PostFilter, see
   :mod:`.preemption`; else now), Success ``found a placement for podgroup, preempting N victims``.

Determinism: upstream sorts the units with ``sort.Slice``, which is not stable beyond 12 units
(pdqsort) but deterministic; :func:`~fastsched.util.gosort.go_sort_slice` is the same algorithm, so
ties (units of one priority, rank, size and start time — e.g. a gang's members bound in one cycle)
come out in upstream's order from the domain's (snapshot node order, each node's pod order): which
of them is reprieved first, and which one a PDB's budget counts as violating, follow from it.
``PodGroupState.ScheduledPods`` (a Go map upstream) lists a ``disruptionMode: all`` unit's pods in
the state's insertion order.
"""
from __future__ import annotations

import functools
import itertools
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence, TypeVar

from ...errors import NotFoundError
from ...framework.composite import (COMPOSITE_POD_GROUP_KEY_TYPE, WORKLOAD_MAX_TREE_DEPTH, composite_pod_group_key,
                                   get_pod_group_states)
from ...framework.podgroups import POD_GROUP_KEY_TYPE, POD_KEY_TYPE, EntityKey, pod_group_key, pod_group_priority
from ...framework.status import Code, Status, StatusError
from ...framework.types import NominatingInfo, NominatingMode, PodInfo
from ...util.gosort import go_sort_slice
from .util import NOT_STARTED, PDBIndex, pod_priority, pod_start_time, pod_terminating_by_preemption

if TYPE_CHECKING:  # pragma: no cover
    from ...api import Pod, PodDisruptionBudget
    from ...api.scheduling import PodGroup

__all__ = ["COMPOSITE_POD_GROUP_KEY_TYPE", "DomainVictim", "ERR_NO_VICTIMS_PREEMPTOR", "FOUND_PLACEMENT_MSG",
           "NOT_ELIGIBLE_NEVER", "ONGOING_PREEMPTION_MSG", "POD_GROUP_PREEMPTION_MSG_PREFIX", "PodGroupEvaluator",
           "PodGroupPostFilterResult", "PodGroupPreemptor", "SelectVictimsResult", "Victim", "WAITING_FOR_GROUP_PREEMPTION",
           "filter_victims_with_pdb_violation", "get_cross_nodes_victims", "get_highest_all_ancestor",
           "get_pod_priority", "more_important_victim", "new_domain_for_workload_preemption", "new_domain_victim",
           "new_pod_victim", "new_victim",
           "resolve_preemption_policy", "traverse_hierarchy_up"]

_log = logging.getLogger(__name__)

POD_GROUP_PREEMPTION_MSG_PREFIX = "pod group preemption: "
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
ERR_NO_VICTIMS_PREEMPTOR = "No preemption victims found for incoming preemptor"
ONGOING_PREEMPTION_MSG = "ongoing preemption on nominated nodes"
FOUND_PLACEMENT_MSG = "found a placement for podgroup, preempting {} victims"
#: DefaultPreemption's PreEnqueue for a member of a group whose preemption is still under way
WAITING_FOR_GROUP_PREEMPTION = "waiting for the preemption for this pod group to be finished"
COMPOSITE_POD_GROUP_KEY_TYPE = "compositepodgroup"
PREEMPT_NEVER = "Never"
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
CLUSTER_CANDIDATE = "cluster"


# ------------------------------------------------------------------------------------------------
# results
# ------------------------------------------------------------------------------------------------
@dataclass
class PodGroupPostFilterResult:
    """``fwk.PodGroupPostFilterResult``: a nomination per member, keyed ``(namespace, name)``."""

    nominating_infos: dict[tuple[str, str], NominatingInfo] = field(default_factory=dict)


@dataclass
class GroupVictims:
    """``extenderv1.Victims`` of a pod group preemption: the pods, most important unit first."""

    pods: list["Pod"] = field(default_factory=list)
    num_pdb_violations: int = 0


@dataclass
class SelectVictimsResult:
    """``selectVictimsResult``."""

    nominated_node_names: dict[tuple[str, str], NominatingInfo]
    victims: GroupVictims
    num_pod_group_disruptions: int = 0


# ------------------------------------------------------------------------------------------------
# the preemptor (types.go: podGroupPreemptor)
# ------------------------------------------------------------------------------------------------
def resolve_preemption_policy(pod_group: "PodGroup | None", pods: Iterable["Pod"],
                              enable_pod_group_preemption_policy: bool) -> str:
    """``resolvePreemptionPolicy``: with PodGroupPreemptionPolicy the group's field (unset:
    PreemptLowerPriority); without it ``Never`` as soon as one member says ``Never``."""
    if enable_pod_group_preemption_policy:
        if pod_group is not None and pod_group.preemption_policy:
            return pod_group.preemption_policy
    else:
        for pod in pods:
            if pod.preemption_policy == PREEMPT_NEVER:
                return PREEMPT_NEVER
    return PREEMPT_LOWER_PRIORITY

def composite_pod_group_priority(cpg: Any) -> int:
    """``util.CompositePodGroupPriority``: ``spec.priority``, 0 when unset."""
    return 0 if cpg.priority is None else cpg.priority


def resolve_composite_preemption_policy(cpg: Any, pods: list["Pod"],
                                        enable_pod_group_preemption_policy: bool) -> str:
    """``resolveCompositePreemptionPolicy``: with PodGroupPreemptionPolicy the CompositePodGroup's
    field (``PreemptLowerPriority`` stays, any other value is ``Never``; unset: PreemptLowerPriority);
    without it, ``Never`` if any member says Never."""
    if enable_pod_group_preemption_policy:
        if cpg.preemption_policy is not None:
            return "PreemptLowerPriority" if cpg.preemption_policy == "PreemptLowerPriority" else "Never"
    else:
        for pod in pods:
            if pod.preemption_policy == "Never":
                return "Never"
    return "PreemptLowerPriority"


class PodGroupPreemptor:
    """``podGroupPreemptor``: the group's unscheduled (queued) pods, priority and policy; for a
    CompositePodGroup entity (CompositePodGroup on) the root CompositePodGroup's."""

    __slots__ = ("pods", "pod_group", "priority", "preemption_policy", "composite_pod_group")

    def __init__(self, pod_group: "PodGroup | None", pods: Sequence["Pod"], preemption_policy: str,
                 priority: int | None = None, composite_pod_group: Any = None):
        self.pods = list(pods)
        self.pod_group = pod_group
        self.priority = pod_group_priority(pod_group) if priority is None else priority
        self.preemption_policy = preemption_policy
        self.composite_pod_group = composite_pod_group

    @classmethod
    def of(cls, pg_info: Any, enable_pod_group_preemption_policy: bool) -> "PodGroupPreemptor":
        """``newPodGroupPreemptor``: a composite entity's priority is its root CompositePodGroup's
        (``CompositePodGroupPriority``), its policy ``resolveCompositePreemptionPolicy``'s."""
        pods = pg_info.unscheduled_pods()
        cpg = getattr(pg_info, "composite_pod_group", None)
        if cpg is not None:
            return cls(None, pods, resolve_composite_preemption_policy(cpg, pods, enable_pod_group_preemption_policy),
                       composite_pod_group_priority(cpg), composite_pod_group=cpg)
        pg = pg_info.pod_group
        return cls(pg, pods, resolve_preemption_policy(pg, pods, enable_pod_group_preemption_policy))

    def type(self) -> str:
        """``getType``."""
        return COMPOSITE_POD_GROUP_KEY_TYPE if self.composite_pod_group is not None else POD_GROUP_KEY_TYPE

    def members(self) -> list["Pod"]:
        return self.pods


# ------------------------------------------------------------------------------------------------
# victims (types.go: Victim, victim, DomainVictim; util.go)
# ------------------------------------------------------------------------------------------------
class Victim:
    """``victim``: pods preempted together, their priority, earliest start time and key type."""

    __slots__ = ("_pods", "_priority", "_earliest", "_key_type", "_made")

    def __init__(self, pods: list[PodInfo], priority: int, earliest: float, key_type: str, made: int = 0):
        self._pods = pods
        self._priority = priority
        self._earliest = earliest
        self._key_type = key_type
        # when the unit was made (a counter): upstream's start time of a unit with no pod started is
        # the time.Now() of its NewVictim, so such units are ordered by creation, never tied
        self._made = made

    def pods(self) -> list[PodInfo]:
        return self._pods

    def priority(self) -> int:
        return self._priority

    def earliest_start_time(self) -> float:
        """``EarliestStartTime`` (a pod not started: :data:`~.util.NOT_STARTED`, upstream's now)."""
        return self._earliest

    def is_group(self) -> bool:
        return self._key_type in (POD_GROUP_KEY_TYPE, COMPOSITE_POD_GROUP_KEY_TYPE)

    def type(self) -> str:
        return self._key_type

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self._key_type}, priority={self._priority}, "
                f"pods={[pi.pod.name for pi in self._pods]})")


class DomainVictim(Victim):
    """``DomainVictim``: a victim and the nodes its pods are on (name -> NodeInfo)."""

    __slots__ = ("_affected_nodes",)

    def __init__(self, victim: Victim, affected_nodes: dict[str, Any]):
        super().__init__(victim.pods(), victim.priority(), victim.earliest_start_time(), victim.type(),
                         victim._made)
        self._affected_nodes = affected_nodes

    def affected_nodes(self) -> dict[str, Any]:
        return self._affected_nodes


def new_victim(pods: list[PodInfo], priority: int, key_type: str) -> Victim:
    """``NewVictim``: the earliest start time of the pods (:data:`~.util.NOT_STARTED` when none has
    started: upstream's ``time.Now()`` then, which the unit's creation counter stands for)."""
    if not pods:
        raise ValueError("no pods provided")
    if not key_type:
        raise ValueError("keyType cannot be empty")
    earliest = NOT_STARTED
    first = True
    for pi in pods:
        t = pod_start_time(pi.pod)
        if first or t < earliest:
            earliest = t
        first = False
    return Victim(pods, priority, earliest, key_type, next(_MADE))


#: NewVictim's clock for units with no pod started (``GetPodStartTime``'s ``time.Now()``: later for
#: each unit made, so :func:`more_important_victim` orders them by creation, as upstream does)
_MADE = itertools.count(1)


#: visit(key, pod_group, composite_pod_group) -> stop
Visit = Callable[[EntityKey, Any, Any], bool]


def _get(lister: Any, namespace: str, name: str | None) -> Any:
    try:
        return lister.get(namespace, name)
    except LookupError:
        return None


def traverse_hierarchy_up(namespace: str, start: EntityKey, pod_groups: Any, composite_pod_groups: Any,
                          visit: Visit) -> None:
    """``TraverseHierarchyUp``: from ``start`` up the parents, ``visit`` at each listed group until
    it returns True, a group cannot be listed, the top is reached, a key repeats or 4 levels were
    visited. Nothing without both listers; other key types are not visited.

    Listers: anything with ``get(namespace, name)`` raising ``LookupError`` (PodGroupStateError is
    one) for a missing object. Here rather than in :mod:`.hierarchy` (which re-exports it) so the
    victim functions below can take the CompositePodGroup lister without an import cycle."""
    if pod_groups is None or composite_pod_groups is None:
        return
    current = start
    visited: set[EntityKey] = set()
    for _ in range(WORKLOAD_MAX_TREE_DEPTH):
        if current in visited:
            return
        visited.add(current)
        if current.type == POD_GROUP_KEY_TYPE:
            pg = _get(pod_groups, namespace, current.name)
            if pg is None or visit(current, pg, None) or pg.parent_composite_pod_group_name is None:
                return
            current = composite_pod_group_key(namespace, pg.parent_composite_pod_group_name)
        elif current.type == COMPOSITE_POD_GROUP_KEY_TYPE:
            cpg = _get(composite_pod_groups, namespace, current.name)
            if cpg is None or visit(current, None, cpg) or cpg.parent_composite_pod_group_name is None:
                return
            current = composite_pod_group_key(namespace, cpg.parent_composite_pod_group_name)
        # upstream's switch has no default: another type visits nothing and goes round again


def get_pod_priority(pod: "Pod", pod_groups: Any, composite_pod_groups: Any = None) -> int:
    """``GetPodPriority``: without a CompositePodGroup lister (the gate off) a member of a known
    PodGroup has the group's priority; with one, the priority of the topmost group listed above the
    pod (a CompositePodGroup's or a PodGroup's); any other pod its own."""
    group = pod.scheduling_group
    if group is None or pod_groups is None:
        return pod_priority(pod)
    if composite_pod_groups is None:
        pg = _get(pod_groups, pod.namespace, group.pod_group_name)
        if pg is None:
            return pod_priority(pod)
        return pod_group_priority(pg)
    last: list[Any] = [None, None]  # the last PodGroup, the last CompositePodGroup visited

    def visit(key: EntityKey, pg: Any, cpg: Any) -> bool:
        last[0], last[1] = pg, cpg
        return False

    traverse_hierarchy_up(pod.namespace, pod_group_key(pod.namespace, group.pod_group_name or ""), pod_groups,
                          composite_pod_groups, visit)
    if last[1] is not None:
        return composite_pod_group_priority(last[1])
    if last[0] is not None:
        return pod_group_priority(last[0])
    return pod_priority(pod)


def new_pod_victim(pod_info: PodInfo, pod_groups: Any, composite_pod_groups: Any = None) -> Victim:
    """``NewPodVictim``: a unit of one pod (typed ``podgroup`` when the pod is a group member, for
    upstream's metrics; its importance rank is then a group's: see ``MoreImportantVictim``), with
    the priority of :func:`get_pod_priority` over both listers."""
    pod = pod_info.pod
    key_type = POD_GROUP_KEY_TYPE if pod.scheduling_group is not None and pod_groups is not None else POD_KEY_TYPE
    return new_victim([pod_info], get_pod_priority(pod, pod_groups, composite_pod_groups), key_type)


def get_highest_all_ancestor(pod: "Pod", pod_groups: Any, composite_pod_groups: Any = None) -> EntityKey | None:
    """``getHighestAllAncestor``: without a CompositePodGroup lister the pod's PodGroup when its
    disruption mode is ``all``; with one, the key of the highest listed group above the pod (its
    PodGroup included) with ``disruptionMode: all``; None if none."""
    group = pod.scheduling_group
    if group is None or pod_groups is None:
        return None
    if composite_pod_groups is None:
        if group.pod_group_name is None:
            return None
        pg = _get(pod_groups, pod.namespace, group.pod_group_name)
        if pg is None:
            return None
        mode = pg.disruption_mode
        if mode is not None and mode.all:
            return pod_group_key(pod.namespace, group.pod_group_name)
        return None
    highest: list[EntityKey | None] = [None]

    def visit(key: EntityKey, pg: Any, cpg: Any) -> bool:
        mode = (pg if pg is not None else cpg).disruption_mode
        if mode is not None and mode.all:
            highest[0] = key
        return False

    traverse_hierarchy_up(pod.namespace, pod_group_key(pod.namespace, group.pod_group_name or ""), pod_groups,
                          composite_pod_groups, visit)
    return highest[0]


_V = TypeVar("_V", bound="Victim")


def _victim_rank(v: Victim) -> int:
    t = v.type()
    return 3 if t == COMPOSITE_POD_GROUP_KEY_TYPE else 2 if t == POD_GROUP_KEY_TYPE else 1


def more_important_victim(v1: Victim, v2: Victim) -> bool:
    """``MoreImportantVictim``: higher priority; then CompositePodGroup > PodGroup > pod; then more
    pods; then the earlier start."""
    if v1.priority() != v2.priority():
        return v1.priority() > v2.priority()
    r1, r2 = _victim_rank(v1), _victim_rank(v2)
    if r1 != r2:
        return r1 > r2
    n1, n2 = len(v1.pods()), len(v2.pods())
    if n1 != n2:
        return n1 > n2
    e1, e2 = v1.earliest_start_time(), v2.earliest_start_time()
    if e1 == e2 == NOT_STARTED:  # two time.Now()s: the unit made first is earlier
        return v1._made < v2._made
    return e1 < e2


def sort_victims(victims: list[_V], less: Callable[[Any, Any], bool] = more_important_victim) -> list[_V]:
    """Most important first, ties left where Go's ``sort.Slice`` leaves them (see the module
    docstring): a sorted copy."""
    out = list(victims)
    go_sort_slice(out, less)
    return out


def filter_victims_with_pdb_violation(victims: Sequence[_V], pdbs: Sequence["PodDisruptionBudget"]
                                      ) -> tuple[list[tuple[_V, int]], list[_V]]:
    """``FilterVictimsWithPDBViolation``: the units with a pod whose eviction exceeds a PDB's
    ``disruptionsAllowed`` (with how many of their pods do), and the others; the budgets are spent
    pod by pod in order, across units."""
    index = PDBIndex(pdbs or ())
    allowed = [pdb.disruptions_allowed for pdb in index.pdbs]

    def violating(pod: "Pod") -> bool:
        if not pod.labels:
            return False
        for i, pdb, selector in index.by_namespace.get(pod.namespace, ()):
            if not selector.matches(pod.labels):
                continue
            if pod.name in pdb.disrupted_pods:
                continue
            allowed[i] -= 1
            if allowed[i] < 0:
                return True  # (upstream returns at the first PDB driven below zero)
        return False

    out_violating: list[tuple[_V, int]] = []
    out_other: list[_V] = []
    for v in victims:
        count = sum(1 for pi in v.pods() if violating(pi.pod))
        if count:
            out_violating.append((v, count))
        else:
            out_other.append(v)
    return out_violating, out_other


# ------------------------------------------------------------------------------------------------
# the domain (types.go: domain, newDomainForWorkloadPreemption, getCrossNodesVictims)
# ------------------------------------------------------------------------------------------------
@dataclass
class Domain:
    """``domain``: nodes by name and the possible victims on them."""

    nodes: dict[str, Any]
    all_possible_victims: list[DomainVictim]
    name: str


def _search_cross_nodes_victim_pods(key: EntityKey, pod_info: PodInfo, pod_group_states: Any, pod_groups: Any,
                                    composite_pod_groups: Any = None, composite_states: Any = None) -> Victim:
    """``searchCrossNodesVictimPods``: the scheduled pods of every leaf PodGroup under ``key`` as
    one unit (the pod alone when no state lists any). Without a CompositePodGroup lister ``key`` is
    the pod's PodGroup (an unknown state: the pod alone); with one, ``helper.GetPodGroupStates``
    walks the tree (upstream logs a failed lookup and goes on with the other leaves)."""
    pods: list = []
    if composite_pod_groups is None:
        try:
            state = pod_group_states.get(pod_info.pod.namespace, key.name)
        except LookupError:
            return new_pod_victim(pod_info, pod_groups, composite_pod_groups)
        pods.extend(state.scheduled_pods())
    else:
        for state, err in get_pod_group_states(pod_group_states, composite_states, key):
            if err is not None:
                _log.error("Failed to get pod group state during preemption victim collection: %s (rootKey %s)",
                           err, key)
                continue
            if state is not None:
                pods.extend(state.scheduled_pods())
    if not pods:
        return new_pod_victim(pod_info, pod_groups, composite_pod_groups)
    return new_victim([PodInfo(p) for p in pods],
                      get_pod_priority(pod_info.pod, pod_groups, composite_pod_groups), key.type)


def new_domain_for_workload_preemption(node_lister: Any, pod_groups: Any, pod_group_states: Any,
                                       name: str, composite_pod_groups: Any = None,
                                       composite_states: Any = None) -> Domain:
    """``newDomainForWorkloadPreemption``: every node of the snapshot, and the victim units of all
    their pods (``getCrossNodesVictims``, each unit once, in node then pod order). The
    CompositePodGroup listers (objects and states) are given with the gate on, else None."""
    nodes = list(node_lister.list())
    domain_victims = get_cross_nodes_victims(nodes, node_lister, pod_groups, pod_group_states,
                                             composite_pod_groups, composite_states)
    node_map = {}
    for node_info in nodes:
        node = node_info.node()
        if node is not None:
            node_map[node.name] = node_info
    return Domain(node_map, domain_victims, name)


def get_cross_nodes_victims(nodes: Sequence[Any], node_lister: Any, pod_groups: Any,
                            pod_group_states: Any, composite_pod_groups: Any = None,
                            composite_states: Any = None) -> list[DomainVictim]:
    """``getCrossNodesVictims``: the victim units of the pods on ``nodes`` (each unit once, in node
    then pod order; a unit is the highest ``disruptionMode: all`` group above a pod, through
    CompositePodGroups when their lister is given), each with the snapshot's NodeInfos of the nodes
    its pods are on (``createDomainVictims``: raises StatusError when one is missing)."""
    seen: set = set()
    victims: list[Victim] = []
    for node_info in nodes:
        for pi in list(node_info.pods):
            pod = pi.pod
            key = get_highest_all_ancestor(pod, pod_groups, composite_pod_groups)
            if key is None:
                item = EntityKey(POD_KEY_TYPE, pod.namespace, pod.name)
                if item not in seen:
                    seen.add(item)
                    victims.append(new_pod_victim(pi, pod_groups, composite_pod_groups))
                continue
            if key not in seen:
                seen.add(key)
                victims.append(_search_cross_nodes_victim_pods(key, pi, pod_group_states, pod_groups,
                                                               composite_pod_groups, composite_states))
    return [new_domain_victim(node_lister, v) for v in victims]  # createDomainVictims


def new_domain_victim(node_lister: Any, v: Victim) -> DomainVictim:
    """``newDomainVictim``: ``v`` with the snapshot's NodeInfos of the nodes its pods are on, each
    once (raises StatusError when one is missing from the snapshot)."""
    affected: dict[str, Any] = {}
    for pi in v.pods():
        node_name = pi.pod.node_name
        if node_name in affected:
            continue
        try:
            affected[node_name] = node_lister.get(node_name)
        except KeyError as e:
            raise StatusError(f'failed to get node info for node "{node_name}" from snapshot: '
                              f'{e.args[0] if e.args else e}') from None
    return DomainVictim(v, affected)


# ------------------------------------------------------------------------------------------------
# the evaluator
# ------------------------------------------------------------------------------------------------
def _assignment_pod(a: Any) -> "Pod":
    pinfo = getattr(a, "pinfo", None)
    return pinfo.pod if pinfo is not None else a.pod


def _assignment_node(a: Any) -> str:
    return a.node_name


def _assignment_state(a: Any) -> Any:
    return a.state


class PodGroupEvaluator:
    """``PodGroupEvaluator``: workload-aware preemption for one DefaultPreemption plugin.

    ``handle`` gives the framework's runners (Filter with nominated pods, the PreFilter extensions,
    Reserve/Unreserve) and ``mutable_snapshot`` (a
    :class:`~fastsched.scheduler.mutable_snapshot.MutableSnapshot`: the snapshot's nodes, PodGroups
    and PodGroupStates, and the pod add/remove of a mutation session); ``executor`` is the plugin's
    :class:`~.preemption.Evaluator` (its async setting, its preempting set and ``preempt_pod``).
    """

    def __init__(self, handle: Any, executor: Any, enable_pod_group_preemption_policy: bool = False,
                 plugin_name: str = "DefaultPreemption", enable_composite_pod_group: bool = False):
        self.handle = handle
        self.executor = executor
        self.enable_pod_group_preemption_policy = enable_pod_group_preemption_policy
        self.plugin_name = plugin_name
        #: CompositePodGroup (``NewPodGroupEvaluator``): the snapshot's CompositePodGroup listers
        #: are read, so victims and priorities go through the hierarchies; off, they stay None
        self.enable_composite_pod_group = enable_composite_pod_group

    # -- listers -----------------------------------------------------------------------------------
    def _mutable(self) -> Any:
        ms = getattr(self.handle, "mutable_snapshot", None)
        if ms is None:
            raise StatusError("the framework handle has no mutable snapshot")
        return ms

    def _composite_listers(self, ms: Any) -> tuple[Any, Any]:
        """The snapshot's CompositePodGroup objects and states with the gate on, else (None, None)."""
        if not self.enable_composite_pod_group:
            return None, None
        return ms.composite_pod_groups(), ms.composite_pod_group_states()

    def _pdbs(self) -> list:
        client = getattr(self.handle, "client", None)
        list_pdbs = getattr(client, "list_pdbs", None)
        return list(list_pdbs()) if callable(list_pdbs) else []

    # -- Preempt -----------------------------------------------------------------------------------
    def preempt(self, pg_info: Any, scheduling_func: Callable[[], tuple[list, Status | None]]
                ) -> tuple[PodGroupPostFilterResult | None, Status]:
        """``Preempt`` (the plugin adds the ``pod group preemption: `` prefix): :meth:`evaluate`
        then :meth:`actuate_decision`."""
        result, status, decision = self.evaluate(pg_info, scheduling_func)
        if decision is None:
            return result, status
        return self.actuate_decision(decision)

    def evaluate(self, pg_info: Any, scheduling_func: Callable[[], tuple[list, Status | None]]
                 ) -> tuple[PodGroupPostFilterResult | None, Status, "_Decision | None"]:
        """``Preempt`` up to the actuation: (result, status, None) when it ends before, else
        (None, Success, the decision to actuate).

        fastsched's snapshot is the cache's table, which a victim's deletion changes at once:
        DefaultPreemption actuates after the mutation session ended (upstream deletes through the
        API inside it; the cache hears of it later, and the session's snapshot is restored anyway)."""
        ms = self._mutable()
        pod_groups = ms.pod_groups()
        composite_pod_groups, composite_states = self._composite_listers(ms)
        try:
            domain = new_domain_for_workload_preemption(ms.node_infos(), pod_groups, ms.pod_group_states(),
                                                        "cluster-domain", composite_pod_groups, composite_states)
        except StatusError as e:
            return None, Status.from_error(StatusError(f"failed to create domain: {e}")), None
        preemptor = PodGroupPreemptor.of(pg_info, self.enable_pod_group_preemption_policy)
        if preemptor.preemption_policy == PREEMPT_NEVER:  # preemptorEligibleToPreemptOthers
            return None, Status(Code.UNSCHEDULABLE, NOT_ELIGIBLE_NEVER), None
        if self.is_ongoing_preemption(preemptor, domain.nodes, pod_groups, composite_pod_groups):
            return (PodGroupPostFilterResult(build_current_nominating_infos(preemptor)),
                    Status(Code.SUCCESS, ONGOING_PREEMPTION_MSG), None)
        res, status = self.select_victims_on_domain(preemptor, domain, self._pdbs(), scheduling_func, pod_groups)
        if res is None or not status.is_success():
            return None, status, None
        return None, Status(Code.SUCCESS), _Decision(res, pg_info, preemptor)

    def actuate_decision(self, decision: "_Decision") -> tuple[PodGroupPostFilterResult | None, Status]:
        """The end of ``Preempt``: actuate, then Success ``found a placement for podgroup,
        preempting N victims`` with the nominations (an actuation error: that error)."""
        res = decision.result
        st = self.actuate(res, decision.pg_info, decision.preemptor)
        if st is None or st.is_success():
            st = Status(Code.SUCCESS, FOUND_PLACEMENT_MSG.format(len(res.victims.pods)))
        return PodGroupPostFilterResult(res.nominated_node_names), st

    def is_ongoing_preemption(self, preemptor: PodGroupPreemptor, name_to_node: dict[str, Any],
                              pod_groups: Any, composite_pod_groups: Any = None) -> bool:
        """``isOngoingPreemption``: a member's nominated node holds a pod of lower priority (its
        group's, or its hierarchy's top with CompositePodGroup) that is terminating by preemption."""
        nominated: dict[str, None] = {}
        for pod in preemptor.members():
            if pod.nominated_node_name:
                nominated[pod.nominated_node_name] = None
        for name in nominated:
            node_info = name_to_node.get(name)
            if node_info is None:
                continue
            for pi in node_info.pods:
                p = pi.pod
                if (get_pod_priority(p, pod_groups, composite_pod_groups) < preemptor.priority
                        and pod_terminating_by_preemption(p)):
                    return True
        return False

    # -- selectVictimsOnDomain -----------------------------------------------------------------------
    def select_victims_on_domain(self, preemptor: PodGroupPreemptor, domain: Domain, pdbs: Sequence[Any],
                                 scheduling_func: Callable[[], tuple[list, Status | None]],
                                 pod_groups: Any = None) -> tuple[SelectVictimsResult | None, Status]:
        """``selectVictimsOnDomain`` (see the module docstring, step 4)."""
        handle = self.handle
        ms = self._mutable()
        name_to_node = dict(domain.nodes)

        def status_of(err: BaseException) -> Status:
            return Status.from_error(err if isinstance(err, StatusError) else StatusError(str(err)))

        def remove_pods(v: DomainVictim) -> None:
            for pi in v.pods():
                ms.remove_pod(pi.pod, pi.pod.node_name)

        def add_with_pre_filter(v: DomainVictim, assignments: list) -> None:
            for pi in v.pods():
                node_info = name_to_node.get(pi.pod.node_name)
                ms.add_pod(pi, pi.pod.node_name)
                for a in assignments:
                    st = handle.run_pre_filter_extension_add_pod(_assignment_state(a), _assignment_pod(a), pi, node_info)
                    if st is not None and not st.is_success():
                        raise _as_error(st)

        def remove_with_pre_filter(v: DomainVictim, assignments: list) -> None:
            for pi in v.pods():
                node_info = name_to_node.get(pi.pod.node_name)
                ms.remove_pod(pi.pod, pi.pod.node_name)
                for a in assignments:
                    st = handle.run_pre_filter_extension_remove_pod(_assignment_state(a), _assignment_pod(a), pi,
                                                                    node_info)
                    if st is not None and not st.is_success():
                        raise _as_error(st)

        potential = [v for v in domain.all_possible_victims if v.priority() < preemptor.priority]
        if not potential:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_NO_VICTIMS_PREEMPTOR)
        try:
            for v in potential:
                for name, node_info in v.affected_nodes().items():
                    name_to_node.setdefault(name, node_info)
                remove_pods(v)
        except Exception as e:  # noqa: BLE001 - upstream's AsStatus(err)
            return None, status_of(e)

        assignments, status = scheduling_func()
        if status is not None and not status.is_success():
            return None, status

        potential = sort_victims(potential)
        violating, non_violating = filter_victims_with_pdb_violation(potential, pdbs)
        valid = [a for a in (assignments or ()) if _assignment_node(a)]

        def reprieve(v: DomainVictim) -> bool:
            add_with_pre_filter(v, valid)
            cleanups: list[Callable[[], None]] = []
            try:
                for a in valid:
                    node_name = _assignment_node(a)
                    node_info = name_to_node.get(node_name)
                    if node_info is None:
                        node_info = ms.node_infos().get(node_name)
                        name_to_node[node_name] = node_info
                    pod, state = _assignment_pod(a), _assignment_state(a)
                    st = handle.run_filter_plugins_with_nominated_pods(state, pod, node_info)
                    if st is not None and not st.is_success():
                        remove_with_pre_filter(v, valid)
                        return False
                    # assume the preemptor pod and reserve (later assignments' states already have it)
                    assumed = pod.with_node_name(node_name)
                    ms.add_pod(PodInfo(assumed), node_name)
                    handle.run_reserve_plugins_reserve(state, assumed, node_name)
                    cleanups.append(functools.partial(_unreserve_and_remove, handle, ms, state, assumed, node_name))
                return True
            finally:
                for fn in reversed(cleanups):
                    fn()

        to_preempt: list[DomainVictim] = []
        num_violating = 0
        try:
            for v, count in violating:
                if not reprieve(v):
                    to_preempt.append(v)
                    num_violating += count
            for v in non_violating:
                if not reprieve(v):
                    to_preempt.append(v)
        except Exception as e:  # noqa: BLE001
            return None, status_of(e)

        to_preempt = sort_victims(to_preempt)
        disruptions = 0
        pods: list["Pod"] = []
        for v in to_preempt:
            if v.is_group():
                disruptions += 1
            pods.extend(pi.pod for pi in v.pods())
        nominations = {}
        for a in valid:
            pod = _assignment_pod(a)
            nominations[(pod.namespace, pod.name)] = NominatingInfo(_assignment_node(a), NominatingMode.OVERRIDE)
        return (SelectVictimsResult(nominations, GroupVictims(pods, num_violating), disruptions),
                Status(Code.SUCCESS))

    # -- actuation (executor.go: actuatePodGroupPreemption) -------------------------------------------
    def actuate(self, res: SelectVictimsResult, pg_info: Any, preemptor: PodGroupPreemptor) -> Status | None:
        """``actuatePodGroupPreemption``: with SchedulerAsyncPreemption the evictions follow
        PostFilter (``prepareCandidateAsync``), else they happen now (``prepareCandidate``)."""
        group = _GroupPreemptor(pg_info, preemptor)
        ex = self.executor
        if ex.enable_async_preemption:
            self._prepare_async(res, group)
            return None
        for victim in res.victims.pods:
            if victim.deletion_timestamp is not None:
                continue
            try:
                self._preempt_pod(group, victim)
            except Exception as e:  # noqa: BLE001 - an API error stops the preemption
                return Status.from_error(e)
        ex._clear_lower_priority_nominations(group, CLUSTER_CANDIDATE)
        return None

    def _prepare_async(self, res: SelectVictimsResult, group: "_GroupPreemptor") -> None:
        victims = [v for v in res.victims.pods if v.deletion_timestamp is None]
        if not victims:
            return
        ex = self.executor
        ex.preempting.add(group.uid)
        run = functools.partial(self._preempt_async, group, victims)
        clock = getattr(self.handle, "clock", None)
        delay = float(ex.api_delay)
        if clock is None or delay <= 0:
            run()
        else:
            clock.after_func(delay, run)

    def _preempt_async(self, group: "_GroupPreemptor", victims: list["Pod"]) -> None:
        """The goroutine of ``prepareCandidateAsync`` for a pod group (see
        :meth:`~.preemption.Evaluator._preempt_async`)."""
        ex = self.executor
        failed = ex._clear_lower_priority_nominations(group, CLUSTER_CANDIDATE)
        cancelled = False
        for victim in victims[:-1]:
            try:
                self._preempt_victim_async(group, victim)
            except Exception:  # noqa: BLE001
                failed = cancelled = True
                break
        ex.preempting.discard(group.uid)
        last_in_memory = False
        if not cancelled:
            try:
                last_in_memory = self._preempt_victim_async(group, victims[-1])
            except Exception:  # noqa: BLE001
                failed = True
        if failed or last_in_memory:
            activate = getattr(self.handle, "activate", None)
            if callable(activate):
                activate(group.pods())

    def _preempt_victim_async(self, group: "_GroupPreemptor", victim: "Pod") -> bool:
        get = getattr(getattr(self.handle, "client", None), "get_pod_by_uid", None)
        if get is not None and get(victim.uid) is None:
            return False
        return self._preempt_pod(group, victim)

    def _preempt_pod(self, group: "_GroupPreemptor", victim: "Pod") -> bool:
        """``PreemptPod`` with a pod group preemptor: a victim waiting at Permit is preempted in
        memory; any other is deleted (``Preempted by podgroup <uid> on node cluster``)."""
        get_waiting_pod = getattr(self.handle, "get_waiting_pod", None)
        waiting = get_waiting_pod(victim.uid) if get_waiting_pod is not None else None
        in_memory = bool(waiting.preempt(self.plugin_name, "preempted")) if waiting is not None else False
        if not in_memory:
            client = getattr(self.handle, "client", None)
            if client is None:
                raise StatusError("the framework handle has no client")
            try:
                client.preempt_pod(victim, group.obj, CLUSTER_CANDIDATE)
            except NotFoundError:
                return False  # already deleted: no error, no event (executor.go PreemptPod, as Evaluator.preempt_pod)
        recorder = getattr(self.handle, "event_recorder", None)
        eventf = getattr(recorder, "eventf", None)
        if callable(eventf):
            message = f"Preempted by {group.type} {group.uid} on node {CLUSTER_CANDIDATE}"
            eventf(victim, group.obj, "Normal", "Preempted", "Preempting",
                   message + " (in kube-scheduler memory)." if in_memory else message)
        return in_memory


@dataclass
class _Decision:
    """What ``Preempt`` decided: the victims and nominations, for the actuation."""

    result: SelectVictimsResult
    pg_info: Any
    preemptor: PodGroupPreemptor


class _GroupPreemptor:
    """``podGroupExecutorPreemptor`` (``compositePodGroupExecutorPreemptor`` for a composite entity:
    the root CompositePodGroup's object, UID and type): what the executor needs of a preemptor."""

    def __init__(self, pg_info: Any, preemptor: PodGroupPreemptor):
        cpg = preemptor.composite_pod_group
        self.obj = cpg if cpg is not None else pg_info.pod_group
        self.type = preemptor.type()
        self.uid = self.obj.uid if self.obj is not None else ""
        self.priority = preemptor.priority
        self._pods = list(preemptor.members())

    def pods(self) -> dict[str, "Pod"]:
        return {f"{p.namespace}/{p.name}": p for p in self._pods}


def _unreserve_and_remove(handle: Any, ms: Any, state: Any, assumed: "Pod", node_name: str) -> None:
    handle.run_reserve_plugins_unreserve(state, assumed, node_name)
    ms.remove_pod(assumed, node_name)


def _as_error(status: Status) -> StatusError:
    err = status.as_error()
    return err if isinstance(err, StatusError) else StatusError(str(err) if err is not None else status.message())


def build_current_nominating_infos(preemptor: PodGroupPreemptor) -> dict[tuple[str, str], NominatingInfo]:
    """``buildCurrentNominatingInfos``: every member's current nomination (possibly none)."""
    return {(p.namespace, p.name): NominatingInfo(p.nominated_node_name, NominatingMode.OVERRIDE)
            for p in preemptor.members()}
