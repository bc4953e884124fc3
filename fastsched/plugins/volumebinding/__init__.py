"""VolumeBinding (upstream ``pkg/scheduler/framework/plugins/volumebinding/volume_binding.go``, v1.37).

Extension points as upstream: PreFilter, Filter, PreScore, Score (no NormalizeScore), Reserve /
Unreserve, PreBind (with PreBindPreFlight) and EnqueueExtensions. The binder is
:mod:`.binder`.

* PreFilter (``podHasPVCs``, ``GetPodVolumeClaims``): a missing claim, a Lost claim, a claim being
  deleted, an ephemeral claim the pod does not own: UnschedulableAndUnresolvable with upstream's
  text; no claim: empty state and Skip; an unbound Immediate claim: UnschedulableAndUnresolvable
  ``pod has unbound immediate PersistentVolumeClaims``. No PreFilterResult (the v1.33+ source
  read builds none).
* Filter (``FindPodVolumes``): UnschedulableAndUnresolvable with the binder's reasons; the node's
  PodVolumes kept for Reserve.
* PreScore / Score: the scorer exists only with the StorageCapacityScoring gate (beta, on since
  v1.37; without it PreScore answers Skip and Score 0). With it PreScore succeeds for every pod,
  also one without claims (then Score is 0 on every node), and a node's score is the args'
  ``shape`` (default: 10 at 0% utilization, 0 at 100%, x10) of each storage class's utilization,
  averaged over the classes and rounded: for a node where some claims bind static volumes, the
  claims' requests over those volumes' capacities, per class; else, for provisioned claims whose
  driver tracks capacity, their requests over the capacity of the CSIStorageCapacity that had
  room for them (``Score``, ``buildScorerFunction``).
* Reserve assumes the bindings, Unreserve reverts them, PreBind writes them through
  ``handle.client`` (and completes them as the PV controller and the provisioner would).

Vectorized Filter: FindPodVolumes depends on a node only through the labels its PVs' affinities,
the classes' allowedTopologies and the CSIStorageCapacity selectors name, the node's CSINode (for
migrated in-tree PVs) and, for claims with a selected node, its name. Rows are grouped by their
codes for those label keys (and migration, and name when needed), FindPodVolumes runs once per
group on the group's labels, and the verdicts are broadcast. Pods without claims keep the fused
cycle's no-op form (PreFilter answers Skip; Score a constant 0 under the gate).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..._kernels import _table
from ...api.storage import (ANN_MIGRATED_PLUGINS, ANN_SELECTED_NODE, CSIDriver, CSINode, CSIStorageCapacity, PersistentVolumeClaim,
                            StorageClass, claim_class, claim_name_of_volume, volume_is_for_pod)
from ...config.args import MAX_CUSTOM_PRIORITY_SCORE, VolumeBindingArgs
from ...framework import protocols as fwk
from ...framework.columns import CYCLE, NODES, ColumnForm
from ...framework.cycle_state import CycleState
from ...framework.interface import (FILTER_NODE_ONLY, ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions,
                                    EventResource, PreBindPlugin, PreFilterPlugin, PreScorePlugin, QueueingHint,
                                    ReservePlugin)
from ...framework import signers
from ...framework.status import MAX_NODE_SCORE, SKIP, Code, Status
from ...framework.vectorized import FilterVerdicts, VectorizedFilterPlugin, VectorizedScorePlugin
from ..helper.args import validated_args
from ..helper.typed import as_typed
from ..noderesources.scorers import MAX_UTILIZATION, BrokenLinearFunction, go_div
from .binder import (BinderError, PodVolumeClaims, PodVolumes, VolumeBinder, migration_dependent,
                     pod_claim_names, translated_node_affinity, without_affinity)
from .storage_view import StorageLister, migrated_rows, storage_version, verdicts_into_mask

if TYPE_CHECKING:  # pragma: no cover
    from ...api import Pod
    from ...framework.protocols import NodeTable

NAME = "VolumeBinding"
#: PreFilter stores the state Reserve and PreBind read, then answers Skip (pods without PVCs);
#: Score is Skip (gate off) or 0 on every node (StorageCapacityScoring on), whatever the pod's fields.
_COLUMN_FORM = ColumnForm(filter=NODES, score=NODES, keeps_state=True, reads=())
#: Pods with claims: Filter and Score read the claims, volumes and capacities, which change between
#: cycles; Reserve and PreBind read PreFilter's state.
_EACH_CYCLE = ColumnForm(filter=CYCLE, score=CYCLE, keeps_state=True)
#: CycleState key (upstream ``stateKey = Name``)
STATE_KEY = NAME
REASON_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"


class _StateData:
    """Upstream ``stateData``; ``vector_results`` holds the groups of the vectorized Filter (table,
    (n,) rows, (n,) group per row, PodVolumes per group) so a node's PodVolumes can be found
    without a dict entry per node; ``everywhere`` (table, PodVolumes) the one answer of every row
    of that table when the compiled cycle was told the Filter passes everywhere
    (:meth:`VolumeBinding.filter_passes_everywhere`)."""

    __slots__ = ("all_bound", "pod_volumes_by_node", "claims", "has_static_bindings", "vector_results",
                 "everywhere")

    def __init__(self, claims: PodVolumeClaims | None = None) -> None:
        self.all_bound = False
        self.pod_volumes_by_node: dict[str, PodVolumes] = {}
        self.claims = claims
        self.has_static_bindings = False
        self.vector_results: list[tuple[Any, np.ndarray, np.ndarray, list]] = []
        self.everywhere: tuple[Any, PodVolumes] | None = None

    def clone(self) -> "_StateData":
        return self  # upstream shares the pointer across clones

    def pod_volumes(self, node_name: str) -> PodVolumes | None:
        pv = self.pod_volumes_by_node.get(node_name)
        if pv is not None:
            return pv
        for table, rows, groups, results in self.vector_results:
            row = table.row_of.get(node_name)
            if row is None:
                continue
            at = _table.last_position(rows, row)
            if at >= 0:
                found = results[int(groups[at])]
                if found is not None:
                    found = found.copy()   # each node gets its own, as upstream's per-node values
                    self.pod_volumes_by_node[node_name] = found
                    return found
        everywhere = self.everywhere
        if everywhere is not None and everywhere[0].row_of.get(node_name) is not None:
            found = self.pod_volumes_by_node[node_name] = everywhere[1].copy()
            return found
        return None


def _state(state: CycleState) -> _StateData:
    """Upstream ``getStateData``; raises KeyError (message "not found") when absent."""
    return state.read(STATE_KEY)


def _go_quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _selector_keys(selector: Any, into: dict) -> None:
    if selector is not None:
        for t in selector.terms:
            for r in t.match_expressions:
                into[r.key] = None


class _MigratedEverywhere:
    """A CSINode stand-in listing one migrated plugin (to see what translation changes)."""

    __slots__ = ("migrated_plugins",)

    def __init__(self, plugin: str):
        self.migrated_plugins = frozenset((plugin,))


class VolumeBinding(PreFilterPlugin, VectorizedFilterPlugin, PreScorePlugin, VectorizedScorePlugin, ReservePlugin,
                    PreBindPlugin, EnqueueExtensions):
    """Binds pod volumes: static PVs and dynamic provisioning (upstream ``VolumeBinding``)."""

    def _client(self) -> Any:
        return getattr(self.handle, "client", None)

    def __init__(self, args: VolumeBindingArgs | None = None, handle: fwk.Handle | None = None,
                 enable_scheduling_queue_hint: bool = True, enable_storage_capacity_scoring: bool = False):
        self.args = args if args is not None else VolumeBindingArgs()
        self.handle = handle
        self._enable_scheduling_queue_hint = enable_scheduling_queue_hint
        self.enable_storage_capacity_scoring = enable_storage_capacity_scoring
        #: id(PV) -> (PV, label keys of its (translated) affinity, in-tree plugin whose migration matters)
        self._affinity_keys: dict[int, tuple[Any, tuple[str, ...], str | None]] = {}
        # a bound method, not a closure: a fork's copy of the plugin rebinds it (a lambda over
        # self kept reading the original Scheduler's claims and volumes)
        self.binder = VolumeBinder(self._client)
        #: ``volumeCapacityScorer`` (None without the StorageCapacityScoring gate)
        self.scorer: BrokenLinearFunction | None = None
        if enable_storage_capacity_scoring:
            scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
            shape = self.args.effective_shape(True) or ()  # (never None with the gate on)
            self.scorer = BrokenLinearFunction([(p.utilization, p.score * scale) for p in shape])

    @property
    def _idle_judgeable(self) -> bool:
        """Whether :meth:`binding_idle` may answer for this plugin's class: none of the methods
        it answers for overridden."""
        cls = type(self)
        return cls is VolumeBinding or all(getattr(cls, m) is getattr(VolumeBinding, m)
                                           for m in ("reserve", "unreserve", "pre_bind_pre_flight", "pre_bind"))

    #: a Skip from PreFilter (the pod has no claims) leaves Reserve, Unreserve, PreBindPreFlight and
    #: PreBind nothing to do (see ReservePlugin.binding_idle_on_pre_filter_skip)
    binding_idle_on_pre_filter_skip = True

    def name(self) -> str:
        return NAME

    # -- opportunistic batching ---------------------------------------------------------------------
    def sign_pod(self, pod: Pod) -> tuple[signers.Fragments | None, Status | None]:
        """Upstream ``SignPod``: the volumes' sources (ConfigMap and Secret sources left out)."""
        return ((signers.VOLUMES_SIGNER, signers.volumes_signer(pod)),), None

    #: the pod spec fields its column form and plan parts read (fastsched.framework.columns)
    #: its Filter reads the pod's claims, the PVs, classes, capacities and CSINodes and the node's
    #: labels and name, never the pods on the node: RunFilterPluginsWithNominatedPods and
    #: preemption's dry run may judge it on the table as it is (FilterPlugin.filter_pod_dependence)
    filter_pod_dependence = FILTER_NODE_ONLY

    column_reads = ("namespace", "volumes")

    def column_form(self, pod: Pod, table: NodeTable) -> ColumnForm | None:
        """The fused cycle's form for pods without claims: PreFilter stores the state Reserve and
        PreBind read, then answers Skip; PreScore answers Skip without the StorageCapacityScoring
        gate, and with it (on since v1.37) succeeds and Score gives every node 0 (no PodVolumes for
        any node: volume_binding.go ``Score``), a constant the engine folds into the totals. Pods
        with claims run each cycle."""
        for v in pod.volumes:
            if claim_name_of_volume(pod, v) is not None:
                return _EACH_CYCLE
        return _COLUMN_FORM

    @property
    def _lister(self) -> StorageLister:
        return StorageLister(getattr(self.handle, "client", None))

    # -- PreFilter ------------------------------------------------------------------------------------
    def _pod_has_pvcs(self, pod: Pod) -> tuple[bool, str | None]:
        """Upstream ``podHasPVCs``: (has a claim, the first problem)."""
        lister = None   # (made at the first claim: pods with secret or configMap volumes only need none)
        has = False
        for v in pod.volumes:
            claim = claim_name_of_volume(pod, v)
            if claim is None:
                continue
            name, ephemeral = claim
            has = True
            if lister is None:
                lister = self._lister
            pvc = lister.pvc(pod.namespace, name)
            if pvc is None:
                if ephemeral:
                    return has, ("waiting for ephemeral volume controller to create the persistentvolumeclaim "
                                 f"{_go_quote(name)}")
                return has, f"persistentvolumeclaim {_go_quote(name)} not found"
            if pvc.phase == "Lost":
                return has, (f"persistentvolumeclaim {_go_quote(pvc.name)} bound to non-existent persistentvolume "
                             f"{_go_quote(pvc.volume_name)}")
            if pvc.deletion_timestamp is not None:
                return has, f"persistentvolumeclaim {_go_quote(pvc.name)} is being deleted"
            if ephemeral:
                problem = volume_is_for_pod(pod, pvc)
                if problem is not None:
                    return has, problem
        return has, None

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[fwk.NodeInfo]) -> tuple[None, Status | None]:
        if not pod.volumes:  # (most pods, every cycle: no lister, no walk)
            state.write(STATE_KEY, _StateData())
            return None, SKIP
        has, problem = self._pod_has_pvcs(pod)
        if problem is not None:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, problem)
        if not has:
            state.write(STATE_KEY, _StateData())
            return None, Status(Code.SKIP)
        try:
            claims = self.binder.pod_volume_claims(pod)
        except BinderError as e:
            return None, Status.from_error(str(e))
        if claims.unbound_claims_immediate:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_UNBOUND_IMMEDIATE)
        state.write(STATE_KEY, _StateData(claims))
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    # -- Filter ---------------------------------------------------------------------------------------
    def _find(self, pod: Pod, s: _StateData, node_name: str, labels: Any, csi_node: Any
              ) -> tuple[PodVolumes | None, Status | None]:
        claims = s.claims if s.claims is not None else PodVolumeClaims()
        try:
            volumes, reasons = self.binder.find_pod_volumes(pod, claims, node_name, labels, csi_node)
        except BinderError as e:
            return None, Status.from_error(str(e))
        if reasons:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)
        return volumes, None

    def filter(self, state: CycleState, pod: Pod, node_info: fwk.NodeInfo) -> Status | None:
        try:
            s = _state(state)
        except KeyError as e:
            return Status.from_error(e)
        node = node_info.node()
        volumes, status = self._find(pod, s, node.name, node.labels, self._lister.csi_node(node.name))
        if volumes is None:  # (then status is not None)
            return status
        s.pod_volumes_by_node[node.name] = volumes
        s.has_static_bindings = s.has_static_bindings or bool(volumes.static_bindings)
        return None

    def _relevant(self, s: _StateData) -> tuple[list[str], set[str], bool]:
        """(label keys FindPodVolumes reads, in-tree plugins whose per-node migration matters,
        whether the node name matters)."""
        keys: dict[str, None] = {}
        plugins: set[str] = set()
        lister = self._lister
        claims = s.claims
        uses_name = False
        if claims is None:
            return [], plugins, False

        cache = self._affinity_keys

        def add_affinity(pv: Any) -> None:
            if without_affinity(pv):
                return   # no key to read and no plugin: translated or not, its affinity is None
            hit = cache.get(id(pv))
            if hit is None or hit[0] is not pv:   # PVs are replaced, never changed: id + identity
                found: dict[str, None] = {}
                plugin_needed = None
                original = pv.node_affinity
                plugin = migration_dependent(pv)
                if plugin is not None:
                    # the node's CSINode matters only when translating changes the affinity
                    translated = translated_node_affinity(pv, _MigratedEverywhere(plugin))
                    if translated is not original:
                        plugin_needed = plugin
                        _selector_keys(translated, found)
                _selector_keys(original, found)
                if len(cache) >= 1 << 16:
                    cache.clear()
                hit = cache[id(pv)] = (pv, tuple(found), plugin_needed)
            for key in hit[1]:
                keys[key] = None
            if hit[2] is not None:
                plugins.add(hit[2])

        for pvc in claims.bound_claims:
            pv = self.binder.pv_cache.get(lister, pvc.volume_name)
            if pv is not None:
                add_affinity(pv)
        for pvc in claims.unbound_claims_delay_binding:
            if ANN_SELECTED_NODE in pvc.annotations:
                uses_name = True
            for pv in claims.unbound_volumes_delay_binding.get(claim_class(pvc), ()):
                add_affinity(pv)
            sc = lister.storage_class(claim_class(pvc))
            if sc is not None:
                for term in sc.allowed_topologies:
                    for key, _ in term:
                        keys[key] = None
                for cap in lister.capacities():
                    if cap.storage_class_name == sc.name and cap.node_topology is not None:
                        for key, _, _ in cap.node_topology.requirements():
                            keys[key] = None
        return list(keys), plugins, uses_name

    def _bound_node_free(self, s: _StateData) -> bool:
        """Whether FindPodVolumes answers the same on every node and finds nothing to bind: the
        pod has claims (PreFilter's state), none waiting for a node, and each bound claim's PV
        (assumed version included) exists and has no node affinity, translated or not
        (:func:`~.binder.without_affinity`). A missing PV (a reason) or any other claim: False,
        the general path."""
        claims = s.claims
        if claims is None or claims.unbound_claims_delay_binding:
            return False
        lister = self._lister
        get = self.binder.pv_cache.get
        for pvc in claims.bound_claims:
            pv = get(lister, pvc.volume_name)
            if pv is None or not without_affinity(pv):
                return False
        return True

    def filter_vectorized(self, state: CycleState, pod: Pod, nodes: fwk.NodeBatch) -> FilterVerdicts | Status:
        try:
            s = _state(state)
        except KeyError as e:
            return Status.from_error(e)
        table = getattr(nodes, "table", None)
        n = len(nodes)
        if table is None or n == 0:
            return FilterVerdicts.from_statuses([self.filter(state, pod, ni) for ni in nodes])
        if self._bound_node_free(s):
            # every claim bound to a PV with no node affinity, translated or not (every cycle of
            # the scheduler_perf volume cases): FindPodVolumes checks each such PV's affinity
            # (None: every node passes) and has nothing to bind; its answer on every node, without
            # the key collection below and the call
            s.vector_results.append((table, np.asarray(nodes.rows, dtype=np.int64), _one_group(n),
                                     [PodVolumes(None, None, None)]))
            return FilterVerdicts.all_pass(n)
        keys, plugins, uses_name = self._relevant(s)
        rows = np.asarray(nodes.rows, dtype=np.int64)
        if not keys and not plugins and not uses_name:
            # FindPodVolumes reads nothing of the node (claims bound to PVs without node affinity,
            # every cycle of SchedulingInTreePVs; or no claim to bind by topology): one call on no
            # labels answers every row, one group, no label columns to read or key to build
            volumes, status = self._find(pod, s, "", {}, None)
            if volumes is not None and volumes.static_bindings:
                s.has_static_bindings = True
            s.vector_results.append((table, rows, _one_group(n), [volumes]))
            return FilterVerdicts.all_pass(n) if status is None else status
        lister = self._lister
        columns = []
        for key in keys:
            col = table.label_column(key)
            columns.append(np.full(n, -1, dtype=np.int64) if col is None else col[rows].astype(np.int64))
        names = nodes.names if (uses_name or plugins) else None
        if plugins:
            version = storage_version(lister.client)
            for plugin in sorted(plugins):
                columns.append(migrated_rows(table, lister, plugin, version)[rows].astype(np.int64))
        if uses_name:
            columns.append(np.arange(n, dtype=np.int64))
        # (columns is not empty: a key, a plugin or the name, see above) one int64 key per row
        # (mixed radix over the columns' code ranges), grouped by np.unique
        row_key = np.zeros(n, dtype=np.int64)
        for col in columns:
            span = int(col.max()) + 2 if n else 1
            row_key = row_key * span + (col + 1)
        if n and (row_key == row_key[0]).all():  # one group (e.g. no node has a CSINode): no sort
            first: list[int] = [0]
            groups = _one_group(n)
        else:
            _, first_at, groups = np.unique(row_key, return_index=True, return_inverse=True)
            first = first_at.tolist()
            groups = groups.reshape(-1)
        results: list[PodVolumes | None] = []
        statuses: list[Status | None] = []
        for i in first:
            labels = {}
            for key, col in zip(keys, columns):
                code = int(col[i])
                if code >= 0:
                    labels[key] = table.label_values[key][code]
            # (the name is read only for the CSINode and a selected-node claim)
            name = names[i] if names is not None else ""
            csi_node = lister.csi_node(name) if plugins else None
            volumes, status = self._find(pod, s, name if uses_name else "", labels, csi_node)
            results.append(volumes)
            statuses.append(status)
            if volumes is not None and volumes.static_bindings:
                s.has_static_bindings = True
        s.vector_results.append((table, rows, groups, results))
        if len(statuses) == 1:
            st = statuses[0]
            return FilterVerdicts.all_pass(n) if st is None else st
        return _take(FilterVerdicts.from_statuses(statuses), groups)

    def filter_window_mask(self, state: CycleState, pod: Pod, nodes: fwk.NodeBatch, mask: np.ndarray,
                           first: bool) -> bool:
        """The compiled cycle's window Filter (``CompiledCycle._filter_windows``): whether each
        row of ``nodes`` passes :meth:`filter_vectorized`, written into ``mask`` (C,) uint8 at the
        rows (set when ``first``, else ANDed); False (nothing written) for a Status answer or an
        Error verdict (:func:`~.storage_view.verdicts_into_mask`)."""
        return verdicts_into_mask(self.filter_vectorized(state, pod, nodes), nodes.rows, mask, first)

    def filter_passes_everywhere(self, state: CycleState, pod: Pod, table: NodeTable) -> bool:
        """The compiled cycle's question after PreFilter (framework.columns.CycleFilterShortcuts):
        True when :meth:`filter_vectorized` would answer every row of ``table`` with "pass" and
        empty PodVolumes this cycle (:meth:`_bound_node_free`: each claim bound to an existing PV
        without node affinity, nothing waiting for a node), those PodVolumes then kept in the
        state for every row (as the vectorized Filter keeps them for the rows it was asked
        about): Score and Reserve find them for the nodes they are asked about."""
        try:
            s = _state(state)
        except KeyError:
            return False
        if not self._bound_node_free(s):
            return False
        s.everywhere = (table, PodVolumes(None, None, None))
        return True

    # -- PreScore / Score -----------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[fwk.NodeInfo]) -> Status | None:
        if self.scorer is None:  # no scorer without the StorageCapacityScoring gate (alpha, off in v1.34)
            return Status(Code.SKIP)
        try:
            s = _state(state)
        except KeyError as e:
            return Status.from_error(e)
        if s.has_static_bindings or self.enable_storage_capacity_scoring:
            return None
        return Status(Code.SKIP)

    def score_zero_everywhere(self, state: CycleState, pod: Pod) -> bool:
        """The compiled cycle's question before Score (framework.columns.CycleFilterShortcuts):
        True when :meth:`score_vectorized` scores 0 on every node this cycle, because no node's
        PodVolumes (none, or the Filter's answers so far) has a volume to bind or provision:
        upstream's Score then fills no class in and its scorer answers 0 (``Score``,
        ``buildScorerFunction``; VolumeBinding has no NormalizeScore). False says nothing."""
        if self.scorer is None:
            return True
        s = state.storage.get(STATE_KEY)
        if type(s) is not _StateData or s.has_static_bindings or s.pod_volumes_by_node:
            return False
        everywhere = s.everywhere
        if everywhere is not None and self._score_volumes(everywhere[1]):
            return False
        return not any(self._score_volumes(volumes) for entry in s.vector_results for volumes in entry[3])

    def _score_volumes(self, volumes: PodVolumes | None) -> int:
        """``Score`` for a node's PodVolumes: the class utilizations through the shape, averaged."""
        if volumes is None or (not volumes.static_bindings and not volumes.dynamic_provisions):
            # nothing to bind or provision (claims bound already): upstream's Score fills no
            # class into classResources, and the scorer answers 0 for an empty map (scorer.go
            # buildScorerFunction: weightSum == 0)
            return 0
        classes: dict[str, list[int]] = {}   # class -> [requested, capacity]
        if volumes.static_bindings or not self.enable_storage_capacity_scoring:
            for b in volumes.static_bindings or ():
                requested, capacity = b.storage_resource()
                entry = classes.setdefault(b.pv.storage_class_name, [0, 0])
                entry[0] += requested
                entry[1] += capacity
        else:
            for claim, cap in zip(volumes.dynamic_provisions or (), volumes.provision_capacities or ()):
                if cap is None:
                    continue
                entry = classes.setdefault(claim.storage_class_name or "", [0, 0])
                # "=" not "+=": two claims of a class on one node see the same capacity object
                entry[1] = cap.capacity.value() if cap.capacity is not None else 0
                entry[0] += claim.request.value() if claim.request is not None else 0
        if not classes:
            return 0
        scorer = self.scorer
        assert scorer is not None  # Score runs only with the scorer (PreScore skips without it)
        total = 0
        for requested, capacity in classes.values():
            if capacity == 0 or requested > capacity:
                total += scorer(MAX_UTILIZATION)
            else:
                total += scorer(go_div(requested * MAX_UTILIZATION, capacity))
        return int(math.floor(total / len(classes) + 0.5))  # Go's math.Round (scores are >= 0)

    def score(self, state: CycleState, pod: Pod, node_info: fwk.NodeInfo) -> tuple[int, Status | None]:
        if self.scorer is None:
            return 0, None
        try:
            s = _state(state)
        except KeyError as e:
            return 0, Status.from_error(e)
        return self._score_volumes(s.pod_volumes(node_info.node().name)), None

    def score_vectorized(self, state: CycleState, pod: Pod, nodes: fwk.NodeBatch) -> tuple[np.ndarray, Status | None]:
        n = len(nodes)
        if self.scorer is None:
            return np.zeros(n, dtype=np.int64), None
        try:
            s = _state(state)
        except KeyError as e:
            return np.zeros(n, dtype=np.int64), Status.from_error(e)
        # filter_passes_everywhere's PodVolumes, the same on every row, score 0 (or there are none)
        everywhere_zero = s.everywhere is None or not self._score_volumes(s.everywhere[1])
        if not s.pod_volumes_by_node and not s.vector_results and everywhere_zero:
            # no node has PodVolumes (a pod without claims, under the gate), or every node the
            # same that score 0: 0 everywhere
            return np.zeros(n, dtype=np.int64), None
        # (_score_groups gives rows outside the groups 0: not when ``everywhere`` may score them)
        if not s.pod_volumes_by_node and everywhere_zero \
                and all(entry[0] is nodes.table for entry in s.vector_results):
            return self._score_groups(s, nodes), None
        out = np.zeros(n, dtype=np.int64)
        scores: dict[int, int] = {}   # id(PodVolumes) -> score: one per Filter group
        for i in range(n):
            volumes = s.pod_volumes(nodes.name_at(i))
            key = id(volumes)
            score = scores.get(key)
            if score is None:
                score = scores[key] = self._score_volumes(volumes)
            out[i] = score
        return out, None

    def _score_groups(self, s: _StateData, nodes: fwk.NodeBatch) -> np.ndarray:
        """score_vectorized when every node's PodVolumes comes from the vectorized Filter's groups
        on the batch's own table: each node takes its group's score (what :meth:`_StateData.pod_volumes`
        finds for it, scored once per group) without a lookup or a copy per node."""
        n = len(nodes)
        out = np.zeros(n, dtype=np.int64)
        # every group scoring 0 (claims bound already: no static binding, no provisioning; the
        # scheduler_perf volume cases' every pod) leaves every node at 0, whichever group it is in
        if not any(self._score_volumes(volumes) for entry in s.vector_results for volumes in entry[3]):
            return out
        todo = np.ones(n, dtype=bool)
        batch_rows = nodes.rows
        for table, rows, groups, results in s.vector_results:
            if len(results) == 1:  # one group (the usual batch): which rows it holds is enough
                volumes = results[0]
                if volumes is not None:
                    held = np.zeros(table.capacity, dtype=bool)   # (C,) the batch's rows
                    held[rows] = True
                    present = held[batch_rows] & todo
                    if present.any():
                        out[present] = self._score_volumes(volumes)
                        todo[present] = False
            else:
                # where: (C,) int64, per table row the group of its last position in ``rows`` (-1:
                # absent), as pod_volumes takes at[-1]. A Filter batch (a window of the node order)
                # holds each row once, so a plain scatter is exact; a batch with a repeated row
                # (which the scatter would resolve in no specified order) takes the sorting path.
                where = np.full(table.capacity, -1, dtype=np.int64)
                positions = np.arange(len(rows), dtype=np.int64)
                where[rows] = positions
                if (where[rows] == positions).all():  # every row once
                    where[rows] = groups
                else:
                    last = len(rows) - 1 - np.unique(rows[::-1], return_index=True)[1]
                    where[rows[last]] = np.asarray(groups, dtype=np.int64)[last]
                g = where[batch_rows]
                g[~todo] = -1
                for group in np.flatnonzero(np.bincount(g[g >= 0], minlength=len(results))).tolist():
                    volumes = results[group]
                    if volumes is None:
                        continue   # pod_volumes looks on in the next Filter batch
                    at = g == group
                    out[at] = self._score_volumes(volumes)
                    todo[at] = False
            if not todo.any():
                break
        return out

    def score_extensions(self) -> None:
        return None

    # -- Reserve / PreBind ----------------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        try:
            s = _state(state)
        except KeyError as e:
            return Status.from_error(e)
        volumes = s.pod_volumes(node_name)
        if volumes is None:
            s.all_bound = True  # the pod references no claim
            return None
        try:
            s.all_bound = self.binder.assume_pod_volumes(pod, node_name, volumes)
        except BinderError as e:
            return Status.from_error(str(e))
        return None

    def binding_idle(self, state: CycleState, pod: Pod, node_name: str) -> bool:
        """Whether :meth:`reserve` would find every claim of ``pod`` bound (upstream's AllBound)
        and leave nothing to undo or bind (see ``ReservePlugin.binding_idle``): the node's
        PodVolumes absent (no claim), or empty with :meth:`VolumeBinder.are_pod_volumes_bound`
        True, as :meth:`reserve` decides it; ``all_bound`` is then set as it sets it, and
        :meth:`pre_bind_pre_flight` would answer Skip, :meth:`pre_bind` Success, :meth:`unreserve`
        revert nothing. PodVolumes with bindings or provisions (even with every claim bound: its
        Unreserve would restore their PVs and claims), no PreFilter state (Reserve's Error), or a
        subclass that overrides one of these four methods: False, the general path."""
        if not self._idle_judgeable:
            return False
        s = state.storage.get(STATE_KEY)
        if type(s) is not _StateData:
            return False
        volumes = s.pod_volumes(node_name)  # (what reserve() reads first, cached as it caches it)
        if volumes is not None and (volumes.static_bindings or volumes.dynamic_provisions
                                    or not self.binder.are_pod_volumes_bound(pod)):
            return False
        s.all_bound = True
        return True

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        try:
            s = _state(state)
        except KeyError:
            return None
        volumes = s.pod_volumes_by_node.get(node_name)
        if volumes is not None:
            self.binder.revert_assumed_pod_volumes(volumes)
        return None

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        try:
            s = _state(state)
        except KeyError as e:
            return Status.from_error(e)
        if s.all_bound:
            return Status(Code.SKIP)   # no need to bind volumes
        return None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        try:
            s = _state(state)
        except KeyError as e:
            return Status.from_error(e)
        if s.all_bound:
            return None
        volumes = s.pod_volumes(node_name)
        if volumes is None:
            return Status.from_error(f"no pod volumes found for node {_go_quote(node_name)}")
        try:
            self.binder.bind_pod_volumes(pod, node_name, volumes)
        except BinderError as e:
            return Status.from_error(str(e))
        return None

    # -- EnqueueExtensions ----------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        node_actions = ActionType.ADD | ActionType.UPDATE_NODE_LABEL
        if not self._enable_scheduling_queue_hint:
            node_actions |= ActionType.UPDATE_NODE_TAINT  # covers Node/Add events lost to preCheck
        add_update = ActionType.ADD | ActionType.UPDATE
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.STORAGE_CLASS, add_update),
                                 self.is_schedulable_after_storage_class_change),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, add_update),
                                 self.is_schedulable_after_persistent_volume_claim_change),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME, add_update)),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, node_actions)),
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_NODE, add_update), self.is_schedulable_after_csi_node_change),
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_DRIVER, ActionType.UPDATE),
                                 self.is_schedulable_after_csi_driver_change),
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_STORAGE_CAPACITY, add_update),
                                 self.is_schedulable_after_csi_storage_capacity_change),
        ]

    # The hints type their objects as upstream's util.As does: an object of another type is answered
    # with Queue and the error (isSchedulableAfter... in volume_binding.go), not raised or skipped.
    @staticmethod
    def is_schedulable_after_csi_node_change(pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, Any]:
        if old is None:
            return QueueingHint.QUEUE, None
        original, modified, err = as_typed(CSINode, "*v1.CSINode", old, new)
        if err is not None:
            return QueueingHint.QUEUE, err
        assert original is not None and modified is not None  # an update
        # upstream compares the annotation's values as strings ("a,b" -> "b,a" is a change)
        if original.annotations.get(ANN_MIGRATED_PLUGINS, "") != modified.annotations.get(ANN_MIGRATED_PLUGINS, ""):
            return QueueingHint.QUEUE, None
        return QueueingHint.QUEUE_SKIP, None

    @staticmethod
    def is_schedulable_after_persistent_volume_claim_change(pod: Pod, old: Any,
                                                            new: Any) -> tuple[QueueingHint, Any]:
        _, modified, err = as_typed(PersistentVolumeClaim, "*v1.PersistentVolumeClaim", old, new)
        if err is not None:
            return QueueingHint.QUEUE, err
        if modified is None or pod.namespace != modified.namespace:
            return QueueingHint.QUEUE_SKIP, None
        return (QueueingHint.QUEUE if modified.name in pod_claim_names(pod) else QueueingHint.QUEUE_SKIP), None

    @staticmethod
    def is_schedulable_after_storage_class_change(pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, Any]:
        original, modified, err = as_typed(StorageClass, "*v1.StorageClass", old, new)
        if err is not None:
            return QueueingHint.QUEUE, err
        assert modified is not None  # an add or an update
        if original is None or original.allowed_topologies != modified.allowed_topologies:
            return QueueingHint.QUEUE, None
        return QueueingHint.QUEUE_SKIP, None

    @staticmethod
    def is_schedulable_after_csi_storage_capacity_change(pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, Any]:
        original, modified, err = as_typed(CSIStorageCapacity, "*v1.CSIStorageCapacity", old, new)
        if err is not None:
            return QueueingHint.QUEUE, err
        assert modified is not None  # an add or an update
        if original is None:
            return QueueingHint.QUEUE, None

        def limit(c: CSIStorageCapacity) -> Any:
            return c.maximum_volume_size if c.maximum_volume_size is not None else c.capacity

        new_limit, old_limit = limit(modified), limit(original)
        if new_limit is not None and (old_limit is None or new_limit.value() > old_limit.value()):
            return QueueingHint.QUEUE, None
        return QueueingHint.QUEUE_SKIP, None

    @staticmethod
    def is_schedulable_after_csi_driver_change(pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, Any]:
        original, modified, err = as_typed(CSIDriver, "*v1.CSIDriver", old, new)
        if err is not None:
            return QueueingHint.QUEUE, err
        assert original is not None and modified is not None  # an update
        for v in pod.volumes:
            csi = v.get("csi")
            if csi is None or csi.get("driver") != modified.name:
                continue
            if original.storage_capacity and not modified.storage_capacity:
                return QueueingHint.QUEUE, None
        return QueueingHint.QUEUE_SKIP, None


#: a read-only zeros buffer: the group of each row of a Filter batch whose rows share one
_ONE_GROUP = np.zeros(0, dtype=np.int64)


def _one_group(n: int) -> np.ndarray:
    """(n,) int64 zeros, a read-only view of a shared buffer (no allocation per cycle)."""
    global _ONE_GROUP
    if n > len(_ONE_GROUP):
        buf = np.zeros(max(n, 2 * len(_ONE_GROUP)), dtype=np.int64)
        buf.flags.writeable = False
        _ONE_GROUP = buf
    return _ONE_GROUP[:n]


def _take(verdicts: FilterVerdicts, index: np.ndarray) -> FilterVerdicts:
    """The verdicts of groups broadcast to their rows."""
    return FilterVerdicts(verdicts.codes[index], verdicts.reason_ids[index], verdicts.reasons)


def new(args: Any, handle: fwk.Handle) -> VolumeBinding:
    """Upstream ``New``: type-check and validate the args (``shape`` needs StorageCapacityScoring,
    read from the handle's feature gates) and build the scorer when the gate is on."""
    from ...config.errors import ConfigError
    from ...features import feature_gates_of

    enabled = feature_gates_of(handle).enabled("StorageCapacityScoring")
    if args is None:
        args = VolumeBindingArgs()
    if not isinstance(args, VolumeBindingArgs):
        args = validated_args(args, VolumeBindingArgs, "want args to be of type VolumeBindingArgs, got {got}")
    errors = args.validate(storage_capacity_scoring=enabled)
    if errors:
        raise ConfigError(errors)
    return VolumeBinding(args, handle, enable_storage_capacity_scoring=enabled)


__all__ = ["NAME", "VolumeBinding", "new", "STATE_KEY", "REASON_UNBOUND_IMMEDIATE"]
