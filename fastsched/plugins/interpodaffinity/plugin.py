"""The InterPodAffinity plugin (upstream ``interpodaffinity/plugin.go``, v1.34).

Each extension point has a walking path (NodeInfo by NodeInfo, upstream's algorithm) and a table
path; which one PreFilter/PreScore take depends on ``nodes``: a NodeBatch uses its node table, a
plain list of NodeInfos is walked. Both store the same state (see :mod:`.topology`), which the
per-node and the batch Filter/Score methods read alike.

The nodes a state covers follow upstream: PreFilter counts the incoming pod's matches over
``nodes`` (its ``allNodes``) and existing pods' anti-affinity over the shared lister's nodes with
required-anti-affinity pods; PreScore covers every node of the shared lister, not only the feasible
``nodes`` it is given. The lister is read from the handle at each call (the runtime sets the
snapshot after building the framework; upstream reads it once in ``New``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from ..._kernels import _table
from ...config.args import InterPodAffinityArgs
from ...framework import protocols as fwk
from ...framework.vectorized import VectorizedFilterPlugin, VectorizedScoreExtensions, VectorizedScorePlugin, FilterVerdicts
from ...framework.columns import CYCLE, EACH_CYCLE, NODES, SKIPPED, ColumnForm
from ...framework.cycle_state import CycleState
from ...framework.interface import (ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions,
                                    EventResource, PreFilterExtensions, PreFilterPlugin, PreScorePlugin,
                                    QueueingHint)
from ...framework import signers
from ...framework.status import SKIP, Code, Status, StatusError
from ...framework.types import NodeScore, PodInfo, PreFilterResult
from ..helper.args import validated_args
from . import filtering, scoring
from .shape_plan import ShapePlan, shape_key
from .signatures import parsed_signatures
from .topology import TopologyCounts
from .terms import (NamespaceView, pod_matches_all_terms, pod_term_lists, preferred_affinity_terms,
                    preferred_anti_affinity_terms, required_affinity_terms, required_anti_affinity_terms)

if TYPE_CHECKING:  # pragma: no cover
    from ...api import Pod
    from ...framework.protocols import NodeTable

NAME = filtering.NAME

#: forms with one part answering Skip once per plan (its PreFilter, or its PreScore) and the other
#: run each cycle; ``reads=()``: the form itself says which part skips (the static part reads nothing)
FILTER_EACH_CYCLE_SCORE_SKIPPED = ColumnForm(filter=CYCLE, score=NODES, reads=())
FILTER_SKIPPED_SCORE_EACH_CYCLE = ColumnForm(filter=NODES, score=CYCLE, reads=())

#: ShapePlans kept per plugin at most (cleared when full: rebuilt on demand)
_PLANS_SIZE = 256
_NO_LISTS: tuple = ((), ())


def _matches_any(terms: Sequence[Any], pod: "Pod") -> bool:
    """Upstream ``podMatchesAnyAffinityTerms`` (nil namespace labels)."""
    return any(t.matches(pod.namespace, pod.labels, None) for t in terms)


#: kinds of incoming pods :meth:`InterPodAffinity._reach` keeps at most (cleared when full)
_REACH_SIZE = 256
#: ``_REACHES[anti][score]``: :meth:`InterPodAffinity._reach`'s answers, one tuple each
_REACHES = (((False, False), (False, True)), ((True, False), (True, True)))
_NO_REACH = _REACHES[False][False]


class _Reach:
    """Whether existing pods' terms of the affinity signatures a table has seen match one kind of
    incoming pod (namespace and labels, as copies), with the namespace labels they were matched
    with (see :meth:`InterPodAffinity._reach`)."""

    __slots__ = ("uid", "namespace", "labels", "checked", "ns_labels", "anti", "score")

    def __init__(self, uid: Any, pod: "Pod") -> None:
        self.uid = uid
        self.namespace = pod.namespace
        self.labels = dict(pod.labels)
        #: the table's affinity signatures matched so far (``table.affinity_signatures[:checked]``)
        self.checked = 0
        #: a copy of the namespace labels the signatures were matched with (compared by value)
        self.ns_labels: dict | None = None
        self.anti = False   # some signature's required anti-affinity term matches
        self.score = False  # some signature's scoring term matches

    def update(self, table: NodeTable, ns_labels: Mapping[str, str] | None, hard_weight: bool) -> None:
        """Match the signatures not matched yet, all of them when the namespace labels changed
        (``hard_weight``: hardPodAffinityWeight > 0, existing pods' required affinity scores)."""
        if ns_labels != self.ns_labels:
            self.checked, self.anti, self.score = 0, False, False
            self.ns_labels = None if ns_labels is None else dict(ns_labels)
        parsed = parsed_signatures(table)
        namespace, labels = self.namespace, self.labels
        for k in range(self.checked, len(parsed)):
            p = parsed[k]
            if not self.anti:
                self.anti = any(t.matches(namespace, labels, ns_labels) for t in p.required_anti_affinity)
            if not self.score:
                self.score = (any(t.matches(namespace, labels, ns_labels) for t, _ in p.preferred_affinity)
                              or any(t.matches(namespace, labels, ns_labels) for t, _ in p.preferred_anti_affinity)
                              or (hard_weight
                                  and any(t.matches(namespace, labels, ns_labels) for t in p.required_affinity)))
        self.checked = len(parsed)


def _batch_of(nodes: Sequence[fwk.NodeInfo]) -> tuple[NodeTable, np.ndarray] | None:
    """(table, rows) when ``nodes`` is a NodeBatch, else None."""
    table = getattr(nodes, "table", None)
    rows = getattr(nodes, "rows", None)
    if table is None or rows is None:
        return None
    return table, rows


def _listed_extent(node_infos: fwk.NodeInfoLister) -> tuple[NodeTable, int] | None:
    """(table, number of rows) of ``node_infos.list()`` when that is a NodeBatch, else None:
    through the lister's ``listed_extent`` when it has one (the Snapshot), which does not build the
    NodeBatch (PreFilter and PreScore ask this every cycle only to compare the table and the count)."""
    extent = getattr(node_infos, "listed_extent", None)
    if extent is not None:
        return extent()
    listed = _batch_of(node_infos.list())
    return None if listed is None else (listed[0], len(listed[1]))


class InterPodAffinity(PreFilterPlugin, PreFilterExtensions, VectorizedFilterPlugin, PreScorePlugin,
                       VectorizedScorePlugin, VectorizedScoreExtensions, EnqueueExtensions):
    """Required and preferred inter-pod (anti-)affinity, both directions (incoming and existing pods)."""

    def __init__(self, args: InterPodAffinityArgs, handle: fwk.Handle | None = None, *,
                 enable_scheduling_queue_hint: bool = True):
        self.args = args
        self._handle = handle
        self._namespaces = NamespaceView(handle)
        self._queue_hints = enable_scheduling_queue_hint
        #: existing pods' terms that can reach incoming pods, per kind of incoming pod (see
        #: :meth:`_reach`): (table uid, namespace, labels) -> _Reach, and the last one used
        self._reach_memo: dict[tuple, _Reach] = {}
        self._reach_last: _Reach | None = None
        #: shape key -> ShapePlan, and the last plan used (see :meth:`_shape_plan`)
        self._plans: dict[tuple, ShapePlan] = {}
        self._last_plan: ShapePlan | None = None
        #: (cycle state, pod, table, namespace labels, plan) of the last planned PreFilter: its
        #: PreScore in the same cycle (the same CycleState object and pod, held here so neither
        #: identity can be reused) lists the same snapshot and reads the same namespace, so it
        #: takes them as they are instead of resolving the lister's extent, the namespace's
        #: labels and the pod's plan again (see :meth:`pre_score`)
        self._cycle_plan: tuple | None = None
        #: the CycleState of the last planned PreScore whose scored keys some have too many values
        #: for :func:`.scoring.same_score_everywhere` to compare (it answers False for that cycle at
        #: once: the preferred-affinity workloads, scored per hostname, ask it every cycle)
        self._many_values_state: CycleState | None = None
        #: topology key -> (table, its node_version, whether every live row has the key): see
        #: :meth:`_key_on_every_row`
        self._key_rows: dict[str, tuple] = {}

    def name(self) -> str:
        return NAME

    # -- opportunistic batching ---------------------------------------------------------------------
    def sign_pod(self, pod: "Pod") -> tuple[signers.Fragments | None, Status | None]:
        """Upstream ``SignPod``: the labels (none with ignorePreferredTermsOfExistingPods); refuses a
        pod with pod (anti-)affinity, even an empty one."""
        affinity = pod.affinity
        if affinity is not None and (affinity.pod_affinity is not None or affinity.pod_anti_affinity is not None):
            return None, Status(Code.UNSCHEDULABLE, "pods with InterPodAffinity are not signable")
        if self.args.ignore_preferred_terms_of_existing_pods:
            return None, None
        return ((signers.LABELS_SIGNER, signers.labels_signer(pod)),), None

    # -- the fused cycle ---------------------------------------------------------------------------
    #: the pod spec fields its column form and plan parts read (fastsched.framework.columns)
    column_reads = ("namespace", "labels", "affinity")

    def column_form(self, pod: "Pod", table: NodeTable) -> ColumnForm | None:
        """Each part answers Skip once per plan when it must, else runs each cycle (CYCLE) from the
        table's incremental counts. PreFilter answers Skip for a pod without required terms that no
        existing pod's required anti-affinity can reach; PreScore for a pod without preferred terms
        that no existing pod's scoring terms can reach, or when existing pods' preferred terms are
        ignored (:meth:`_reach`: required anti-affinity never scores, so a workload of required
        anti-affinity alone needs no PreScore each cycle, nor do pods no term selects)."""
        anti_reaches, score_reaches = self._reach(pod, table)
        filter_each_cycle = bool(anti_reaches or required_affinity_terms(pod) or required_anti_affinity_terms(pod))
        score_each_cycle = score_reaches or scoring.has_preferred_terms(pod)
        if filter_each_cycle:
            return EACH_CYCLE if score_each_cycle else FILTER_EACH_CYCLE_SCORE_SKIPPED
        return FILTER_SKIPPED_SCORE_EACH_CYCLE if score_each_cycle else SKIPPED

    def column_guard(self, pod: "Pod", table: NodeTable) -> tuple[bool, bool]:
        """What :meth:`column_form` reads beside the pod's spec fields (checked every cycle): whether
        existing pods' required anti-affinity, and their scoring terms, can reach the pod
        (:meth:`_reach`). It changes only when one of those answers does, not with every pod with
        terms added or removed, so the compiled cycle's plans of pods no term reaches (the measured
        pods of MixedSchedulingBasePod) hold across cycles with their Skips."""
        return self._reach(pod, table)

    def _reach(self, pod: "Pod", table: NodeTable) -> tuple[bool, bool]:
        """(existing pods' required anti-affinity may match ``pod``, existing pods' terms may add to
        its PreScore map), conservatively: False only when none can.

        The first is upstream's ``existingAntiAffinityCounts`` being empty for certain (its PreFilter
        then answers Skip for a pod without required terms: ``getExistingAntiAffinityCounts`` counts
        the existing pods' required anti-affinity terms that match the incoming pod, with its
        namespace's labels for their namespaceSelectors); the second its PreScore's ``topoScores``
        for a pod without preferred terms (``processExistingPod``: existing pods' required affinity
        terms with hardPodAffinityWeight > 0, their preferred affinity and anti-affinity terms,
        matched the same way; required anti-affinity never scores; nothing when
        ignorePreferredTermsOfExistingPods). Each is False while the table holds no pod of that
        kind (its O(1) running counts), else it is whether some affinity signature the table has
        seen (append-only: a signature whose pods have all gone still counts) has such a term
        matching the pod's namespace and labels with its namespace's current labels.

        Kept per kind of incoming pod (table, namespace, labels: all ``AffinityTerm.matches`` reads
        of the incoming pod besides the namespace labels, compared as copies): the usual cycle
        compares the last kind's labels and namespace labels (by value) and the signature count; new
        signatures are matched once each, and a namespace label change matches every signature
        again."""
        anti_now = table.total_pods_with_req_anti > 0
        score_now = table.total_pods_with_affinity > 0 and not self.args.ignore_preferred_terms_of_existing_pods
        if not anti_now and not score_now:
            return _NO_REACH
        ns_labels = self._namespaces.labels_of(pod.namespace)
        r = self._reach_last
        if r is None or r.uid != table.uid or r.namespace != pod.namespace or r.labels != pod.labels:
            key = (table.uid, pod.namespace, frozenset(pod.labels.items()))
            r = self._reach_memo.get(key)
            if r is None:
                if len(self._reach_memo) >= _REACH_SIZE:
                    self._reach_memo.clear()
                r = self._reach_memo[key] = _Reach(table.uid, pod)
            self._reach_last = r
        if r.checked != len(table.affinity_signatures) or ns_labels != r.ns_labels:
            r.update(table, ns_labels, int(self.args.hard_pod_affinity_weight) > 0)
        return _REACHES[anti_now and r.anti][score_now and r.score]

    def events_to_register(self) -> list[ClusterEventWithHint]:
        if not self._queue_hints:
            # Without queueing hints the preCheck may swallow Node/Add, so taint updates count too.
            node_action = ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT
            return [
                # Delete: an existing pod's anti-affinity may go; UpdatePodLabel: labels may stop (or
                # start) matching; Add: a pod matching the affinity may appear.
                ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL
                                                  | ActionType.DELETE)),
                ClusterEventWithHint(ClusterEvent(EventResource.NODE, node_action)),
            ]
        return [
            # Upstream v1.37.2: every assigned-pod event reaches every unschedulable pod (the queue's
            # MoveAll), so the hints decide which pods an added, relabelled or deleted pod may help.
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL
                                              | ActionType.DELETE), self.is_schedulable_after_assigned_pod_change),
            # the pod's own labels changed (TargetPod: that pod's update)
            ClusterEventWithHint(ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_LABEL),
                                 self.is_schedulable_after_target_pod_update_label),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                                 self.is_schedulable_after_node_change),
        ]

    def is_schedulable_after_assigned_pod_change(self, pod: "Pod", old_obj: Any, new_obj: Any
                                                 ) -> tuple[QueueingHint, Any]:
        """Upstream ``isSchedulableAfterAssignedPodChange``. The terms are the pod's own (not merged
        with the namespaces its namespace selectors pick: upstream matches with nil namespace labels)."""
        original, modified = old_obj, new_obj
        if (modified is not None and not modified.node_name and not modified.nominated_node_name) or \
                (original is not None and not original.node_name and not original.nominated_node_name):
            return QueueingHint.QUEUE_SKIP, None
        terms = required_affinity_terms(pod)
        anti_terms = required_anti_affinity_terms(pod)
        if modified is not None and original is not None:
            if not pod_matches_all_terms(terms, original.namespace, original.labels) and \
                    pod_matches_all_terms(terms, modified.namespace, modified.labels):
                return QueueingHint.QUEUE, None
            if _matches_any(anti_terms, original) and not _matches_any(anti_terms, modified):
                return QueueingHint.QUEUE, None
            return QueueingHint.QUEUE_SKIP, None
        if modified is not None:
            if pod_matches_all_terms(terms, modified.namespace, modified.labels):
                return QueueingHint.QUEUE, None
            return QueueingHint.QUEUE_SKIP, None
        if _matches_any(anti_terms, original):
            return QueueingHint.QUEUE, None
        if _matches_any(required_anti_affinity_terms(original), pod):
            return QueueingHint.QUEUE, None
        return QueueingHint.QUEUE_SKIP, None

    @staticmethod
    def is_schedulable_after_target_pod_update_label(pod: "Pod", old_obj: Any, new_obj: Any
                                                     ) -> tuple[QueueingHint, Any]:
        """Upstream ``isSchedulableAfterTargetPodUpdateLabel``: another pod's anti-affinity may have
        matched the old labels but not the new ones."""
        return QueueingHint.QUEUE, None

    @staticmethod
    def is_schedulable_after_node_change(pod: "Pod", old_obj: Any, new_obj: Any) -> tuple[QueueingHint, Any]:
        """Upstream ``isSchedulableAfterNodeChange``."""
        original, modified = old_obj, new_obj
        for term in required_affinity_terms(pod):
            key = term.topology_key
            if original is None:
                if key in modified.labels:  # a node with the affinity's topology key was added
                    return QueueingHint.QUEUE, None
                continue
            if key in modified.labels and (key not in original.labels
                                           or original.labels[key] != modified.labels[key]):
                return QueueingHint.QUEUE, None
        for term in required_anti_affinity_terms(pod):
            if original is None:  # any new node may take a pod with anti-affinity
                return QueueingHint.QUEUE, None
            key = term.topology_key
            if key in original.labels and (key not in modified.labels
                                           or original.labels[key] != modified.labels[key]):
                return QueueingHint.QUEUE, None
        return QueueingHint.QUEUE_SKIP, None

    # -- helpers -----------------------------------------------------------------------------------
    def _lister(self) -> fwk.SharedLister | None:
        get = getattr(self._handle, "snapshot_shared_lister", None)
        return get() if get is not None else None

    def _merged(self, terms: list) -> list:
        return [self._namespaces.merged(t) for t in terms]

    def _merged_weighted(self, terms: list) -> list:
        return [(self._namespaces.merged(t), w) for t, w in terms]

    def _merged_lists(self, pa: tuple | None, pn: tuple | None) -> tuple[list, list, list, list]:
        """The pod's merged required affinity, required anti-affinity, preferred affinity and
        preferred anti-affinity terms from its :func:`.pod_term_lists`."""
        pa, pn = pa or _NO_LISTS, pn or _NO_LISTS
        return (self._merged(pa[0]), self._merged(pn[0]), self._merged_weighted(pa[1]),
                self._merged_weighted(pn[1]))

    def _shape_plan(self, pod: "Pod", table: NodeTable, ns_labels: Any) -> ShapePlan:
        """``pod``'s :class:`.ShapePlan` on ``table``, current (its resolved parts reset when what
        they depend on moved): the last plan when the pod has its shape (consecutive pods of one
        workload, each parsed from its own manifest), else the plan kept for the shape, else a new
        one."""
        pa, pn = pod_term_lists(pod)
        plan = self._last_plan
        if plan is None or plan.uid != table.uid or not plan.same_shape(pod, pa, pn):
            key = shape_key(table.uid, pod, pa, pn)
            plan = self._plans.get(key)
            if plan is None or not plan.same_shape(pod, pa, pn):
                plan = ShapePlan(table.uid, pod, pa, pn)
                plan.set_merged(*self._merged_lists(pa, pn))
                if len(self._plans) >= _PLANS_SIZE:
                    self._plans.clear()
                self._plans[key] = plan
            self._last_plan = plan
        if plan.needs_merge:
            merged = self._merged_lists(pa, pn)
            if not plan.same_merged(*merged):  # the namespaces a namespaceSelector picks changed
                plan.set_merged(*merged)
                plan.reset()
        plan.current(table, ns_labels)
        return plan

    def _full_listed(self, batch: tuple[NodeTable, np.ndarray]) -> bool:
        """Whether ``batch`` is every row of its table and the lister lists that table's rows: the
        planned PreFilter's condition (its counts are read over every row)."""
        table, rows = batch
        lister = self._lister()
        if lister is None:
            return False
        n = len(table)
        if len(rows) != n:
            return False
        extent = _listed_extent(lister.node_infos())
        return extent is not None and extent[0] is table and extent[1] == n

    def _pre_filter_planned(self, state: CycleState, pod: "Pod", batch: tuple[NodeTable, np.ndarray]
                            ) -> tuple[PreFilterResult | None, Status | None] | None:
        """:meth:`pre_filter` on the table path through the pod's :class:`.ShapePlan` (the
        subscriptions its terms and its class resolve to, resolved again only when they may have
        changed), when the nodes are every row of the lister's table; None otherwise (the caller's
        path). The same counts as that path: the same subscriptions, read the same way."""
        if not self._full_listed(batch):
            return None
        table, rows = batch
        ns_labels = self._namespaces.labels_of(pod.namespace)
        plan = self._shape_plan(pod, table, ns_labels)
        self._cycle_plan = (state, pod, table, ns_labels, plan)
        affinity, anti_affinity = plan.affinity, plan.anti_affinity
        if not table.total_pods_with_req_anti:
            if not affinity and not anti_affinity:
                return None, Status(Code.SKIP)
            existing = TopologyCounts.from_nonzero_arrays(table, {})
        else:
            entries = plan.existing_entries
            if entries is None or not all(table.has_subscription(sub) for _, sub in entries):
                entries = plan.existing_entries = filtering.existing_entries(pod, ns_labels, table)
                plan.existing_distinct = filtering.distinct_keys(entries)
            existing = filtering.counts_of_entries(table, rows, entries, plan.existing_distinct)
            if not affinity and not anti_affinity and existing.is_empty():
                return None, Status(Code.SKIP)
        incoming = plan.filter_entries
        if incoming is None or not all(map(table.has_subscription, plan.filter_subs)):
            incoming = plan.filter_entries = filtering.incoming_entries(affinity, anti_affinity, table)
            plan.filter_subs = [sub for _, sub in (*incoming[0], *incoming[1])]
        s = filtering.PreFilterState(pod, affinity, anti_affinity, ns_labels, existing,
                                     filtering.counts_of_subscriptions(table, rows, incoming[0]),
                                     filtering.counts_of_subscriptions(table, rows, incoming[1]),
                                     plan.matches_own)
        if s.skips_filter():
            return None, Status(Code.SKIP)
        state.write(filtering.PRE_FILTER_STATE_KEY, s)
        return None, None

    # -- PreFilter ---------------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: "Pod", nodes: Sequence[fwk.NodeInfo]
                   ) -> tuple[PreFilterResult | None, Status | None]:
        # Upstream's "parsing pod" UnschedulableAndUnresolvable cannot happen here: label selectors
        # are validated when the pod is loaded.
        batch = _batch_of(nodes)
        if batch is not None:
            planned = self._pre_filter_planned(state, pod, batch)
            if planned is not None:
                return planned
        affinity = self._merged(required_affinity_terms(pod))
        anti_affinity = self._merged(required_anti_affinity_terms(pod))
        batch = _batch_of(nodes)
        lister = self._lister()
        node_infos = lister.node_infos() if lister is not None else None
        listed = None
        if batch is not None:
            listed = _batch_of(node_infos.list()) if node_infos is not None else batch
            if (listed is not None and not affinity and not anti_affinity
                    and not listed[0].total_pods_with_req_anti):  # O(1): the table's running count
                # No pod in the table has required anti-affinity and the pod has no terms: the
                # state would be empty, which is upstream's Skip.
                return None, Status(Code.SKIP)

        ns_labels = self._namespaces.labels_of(pod.namespace)
        if batch is not None:
            table, rows = batch
            if listed is not None:
                lister_table, lister_rows = listed
                if not lister_table.total_pods_with_req_anti:
                    # no pod of the lister's table has required anti-affinity (O(1), the table's
                    # running count): the counts are empty, without the class key and its
                    # subscriptions (the measured pods of SchedulingPodAffinity)
                    existing = TopologyCounts.from_nonzero_arrays(lister_table, {})
                else:
                    existing = filtering.existing_anti_affinity_incremental(pod, ns_labels, lister_table,
                                                                            lister_rows)
                if not affinity and not anti_affinity and existing.is_empty():
                    # upstream's Skip rule (PreFilterState.skips_filter) without building the
                    # incoming pod's (empty) counts and a state: the measured pods of workloads
                    # whose existing pods' anti-affinity cannot match them
                    return None, Status(Code.SKIP)
            else:
                assert node_infos is not None  # without a lister ``listed`` is the batch
                existing = filtering.existing_anti_affinity_walking(
                    pod, ns_labels, node_infos.have_pods_with_required_anti_affinity_list())
            aff, anti = filtering.incoming_incremental(affinity, anti_affinity, table, rows)
        else:
            anti_nodes = (node_infos.have_pods_with_required_anti_affinity_list() if node_infos is not None
                          else [ni for ni in nodes if ni.pods_with_required_anti_affinity])
            existing = filtering.existing_anti_affinity_walking(pod, ns_labels, anti_nodes)
            aff, anti = filtering.incoming_walking(affinity, anti_affinity, nodes)

        s = filtering.PreFilterState(pod, affinity, anti_affinity, ns_labels, existing, aff, anti)
        if s.skips_filter():
            return None, Status(Code.SKIP)
        state.write(filtering.PRE_FILTER_STATE_KEY, s)
        return None, None

    def pre_filter_extensions(self) -> "InterPodAffinity":
        return self

    def add_pod(self, state: CycleState, pod_to_schedule: "Pod", pod_info_to_add: PodInfo,
                node_info: fwk.NodeInfo) -> Status | None:
        s = filtering.read_state(state)
        if isinstance(s, Status):
            return s
        s.update_with_pod(pod_info_to_add.pod, node_info.node().labels, 1)
        return None

    def remove_pod(self, state: CycleState, pod_to_schedule: "Pod", pod_info_to_remove: PodInfo,
                   node_info: fwk.NodeInfo) -> Status | None:
        s = filtering.read_state(state)
        if isinstance(s, Status):
            return s
        s.update_with_pod(pod_info_to_remove.pod, node_info.node().labels, -1)
        return None

    # -- Filter ------------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: "Pod", node_info: fwk.NodeInfo) -> Status | None:
        s = filtering.read_state(state)
        if isinstance(s, Status):
            return s
        return filtering.filter_node(s, node_info.node().labels)

    def filter_vectorized(self, state: CycleState, pod: "Pod", nodes: fwk.NodeBatch) -> FilterVerdicts | Status:
        s = filtering.read_state(state)
        if isinstance(s, Status):
            return s
        return filtering.filter_vectorized(s, nodes.table, nodes.rows)

    def filter_window_mask(self, state: CycleState, pod: "Pod", nodes: fwk.NodeBatch, mask: np.ndarray,
                           first: bool) -> bool:
        """The compiled cycle's window Filter (see ``CompiledCycle._filter_windows``): whether each
        row of ``nodes`` passes, written into ``mask`` (C,) uint8 at the rows (set when ``first``,
        else ANDed), as ``filter_vectorized``'s codes == 0, without its codes and reasons. False
        (nothing written) when the state cannot be read: ``filter_vectorized`` then answers."""
        s = filtering.read_state(state)
        if isinstance(s, Status):
            return False
        checks = filtering.window_checks(s, nodes.table)
        if checks is None:  # every row fails
            mask[nodes.rows] = 0
            return True
        _table.clear_failing(checks, nodes.rows, mask, first)
        return True

    def filter_passes_everywhere(self, state: CycleState, pod: "Pod", table: NodeTable) -> bool:
        """The compiled cycle's question after PreFilter (``framework.columns.CycleFilterShortcuts``):
        True when this cycle's :meth:`filter_vectorized` passes every row of ``table``
        (:func:`.filtering.passes_everywhere`; the Filter writes no state). The windows then do not
        ask it (SchedulingPodAffinity: every node in the zone of the pods it follows)."""
        s = filtering.read_state(state)
        if isinstance(s, Status) or not s.affinity_terms:  # (no affinity term: never, see there)
            return False
        return filtering.passes_everywhere(s, table, lambda key: self._key_on_every_row(table, key))

    def _key_on_every_row(self, table: NodeTable, key: str) -> bool:
        """Whether every live row of ``table`` has label ``key``: one pass over the column, kept
        while the table's ``node_version`` (bumped by every node added, changed or removed) holds."""
        memo = self._key_rows.get(key)
        version = table.node_version
        if memo is not None and memo[0] is table and memo[1] == version:
            return memo[2]
        column = table.label_codes.get(key)
        live = table.live
        every = column is not None and len(column) == len(live) and not bool((column[live] < 0).any())
        if len(self._key_rows) >= _REACH_SIZE:
            self._key_rows.clear()
        self._key_rows[key] = (table, version, every)
        return every

    # -- PreScore ----------------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: "Pod", nodes: Sequence[fwk.NodeInfo]) -> Status | None:
        if len(nodes) == 0:
            return SKIP  # no nodes to score (upstream answers Skip before looking at the lister)
        lister = self._lister()
        if lister is None:
            return Status.from_error(StatusError(scoring.ERR_EMPTY_SHARED_LISTER))
        has_constraints = scoring.has_preferred_terms(pod)
        if self.args.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return Status(Code.SKIP)

        cycle = self._cycle_plan
        if cycle is not None and cycle[0] is state and cycle[1] is pod and _batch_of(nodes) is not None:
            # this cycle's planned PreFilter resolved the plan over every row of the lister's
            # table (its condition): the branch below with its table, namespace labels and plan
            table, ns_labels, plan = cycle[2], cycle[3], cycle[4]
            if not has_constraints and not table.total_pods_with_affinity:
                return Status(Code.SKIP)
            return self._pre_score_planned(state, pod, table, ns_labels, plan)
        node_infos = lister.node_infos()
        extent = _listed_extent(node_infos) if _batch_of(nodes) is not None else None
        if extent is not None and not has_constraints and not extent[0].total_pods_with_affinity:
            # Nothing can contribute: no preferred terms of its own and no pod with affinity terms.
            return Status(Code.SKIP)
        if extent is not None and extent[1] == len(extent[0]):
            # every row of the lister's table: through the pod's ShapePlan
            table = extent[0]
            ns_labels = self._namespaces.labels_of(pod.namespace)
            return self._pre_score_planned(state, pod, table, ns_labels, self._shape_plan(pod, table, ns_labels))
        preferred = self._merged_weighted(preferred_affinity_terms(pod))
        preferred_anti = self._merged_weighted(preferred_anti_affinity_terms(pod))
        ns_labels = self._namespaces.labels_of(pod.namespace)
        hard_weight = int(self.args.hard_pod_affinity_weight)
        listed = _batch_of(node_infos.list()) if extent is not None else None
        if listed is not None:
            table, rows = listed
            scores = scoring.scores_incremental(pod, ns_labels, preferred, preferred_anti, hard_weight, table, rows)
        else:
            # Without preferred terms of its own, only pods with affinity terms can contribute.
            walked = node_infos.list() if has_constraints else node_infos.have_pods_with_affinity_list()
            scores = scoring.scores_walking(pod, ns_labels, preferred, preferred_anti, hard_weight, walked,
                                            all_pods=has_constraints)
        if scores.is_empty():
            return Status(Code.SKIP)
        state.write(scoring.PRE_SCORE_STATE_KEY, scoring.PreScoreState(scores))
        return None

    def _pre_score_planned(self, state: CycleState, pod: "Pod", table: NodeTable, ns_labels: Any,
                           plan: ShapePlan) -> Status | None:
        """:meth:`pre_score` over every row of the lister's ``table`` through the pod's current
        ``plan``: its kept (key, subscriptions, weights), resolved again when a subscription went."""
        entries = plan.score_keys
        if entries is None or not all(map(table.has_subscription, plan.score_subs)):
            entries = plan.score_keys = scoring.score_entries(
                pod, ns_labels, plan.preferred, plan.preferred_anti, int(self.args.hard_pod_affinity_weight),
                table)
            plan.score_subs = [sub for _, subs, _ in entries for sub in subs]
            plan.score_values = None
        if not entries:
            return Status(Code.SKIP)
        if plan.score_values is None:
            # whether some scored key had too many values for same_score_everywhere (values only
            # grow: once too many, always; recomputed when the entries are)
            plan.score_values = any(len(table.label_values.get(key, ())) > scoring.SAME_SCORE_VALUES
                                    for key, _, _ in entries)
        self._many_values_state = state if plan.score_values else None
        scores = scoring.scores_of_entries(table, entries)
        if scores.is_empty():
            return Status(Code.SKIP)
        state.write(scoring.PRE_SCORE_STATE_KEY, scoring.PreScoreState(scores))
        return None

    # -- Score -------------------------------------------------------------------------------------
    def score(self, state: CycleState, pod: "Pod", node_info: fwk.NodeInfo) -> tuple[int, Status | None]:
        s = scoring.read_state(state)
        if isinstance(s, Status):
            return 0, s
        return s.topology_score.score(node_info.node().labels), None

    def score_vectorized(self, state: CycleState, pod: "Pod", nodes: fwk.NodeBatch) -> tuple[np.ndarray, Status | None]:
        s = scoring.read_state(state)
        if isinstance(s, Status):
            return np.zeros(len(nodes), dtype=np.int64), s
        return scoring.score_vectorized(s, nodes.table, nodes.rows), None

    def score_extensions(self) -> "InterPodAffinity":
        return self

    def normalize_score(self, state: CycleState, pod: "Pod", scores: list[NodeScore]) -> Status | None:
        s = scoring.read_state(state)
        if isinstance(s, Status):
            return s
        if s.topology_score.is_empty():
            return None
        scoring.normalize_list(scores)
        return None

    def normalized_score_zero_everywhere(self, state: CycleState, pod: "Pod") -> bool:
        """The compiled cycle's question after PreScore (``framework.columns.CycleFilterShortcuts``):
        True when every row of the scores' table gets the same raw score this cycle
        (:func:`.scoring.same_score_everywhere`), so NormalizeScore maps each to 0 (upstream's
        ``NormalizeScore``: max == min); the compiled cycle then calls neither Score nor
        NormalizeScore."""
        if state is self._many_values_state:
            return False  # (what same_score_everywhere answers for the keys of this cycle's PreScore)
        s = scoring.read_state(state)
        if isinstance(s, Status):
            return False
        return scoring.same_score_everywhere(s, self._key_on_every_row)

    def normalize_score_vectorized(self, state: CycleState, pod: "Pod", scores: np.ndarray, nodes: fwk.NodeBatch
                                   ) -> Status | None:
        s = scoring.read_state(state)
        if isinstance(s, Status):
            return s
        if s.topology_score.is_empty():
            return None
        scoring.normalize_array(scores)
        return None


def new(args: InterPodAffinityArgs | None, handle: fwk.Handle | None = None) -> InterPodAffinity:
    """Upstream ``New``: type-check and validate the args (hardPodAffinityWeight in [0, 100])."""
    args = validated_args(args, InterPodAffinityArgs, "want args to be of type InterPodAffinityArgs, got {got}")
    return InterPodAffinity(args, handle)
