"""The compiled scheduling cycle: PreFilter to selectHost as one kernel call per pod (issue 13).

For a profile whose PreFilter, Filter, PreScore and Score plugins all offer a column form
(:mod:`fastsched.framework.columns`), :class:`CompiledCycle` turns a pod into a plan once per pod
spec, table and node-set version:

* every Filter that depends only on the pod and the nodes becomes one (C,) row mask, computed by the
  plugins' own ``pre_filter`` / ``filter_vectorized`` over every node;
* NodeResourcesFit's checks stay live (they read ``requested`` and ``pod_count`` each cycle);
* every such Score becomes a (C,) raw column (the plugins' ``pre_score`` / ``score_vectorized``),
  normalized in the kernel over the nodes actually scored; resource scorers run in the kernel.

Each cycle is then a plan lookup and :meth:`fastsched._kernels._cycle.FusedPlan.run`: filter from
the round-robin start in upstream's order, stop at the (k+1)-th feasible node, score the first k,
weights, range check, maximum and ties; the tie is drawn from the scheduler's RNG exactly as on the
plugin-call path, so placements, ``next_start_node_index`` and RNG states are the same.

Plugins whose answers change between cycles (CYCLE forms: InterPodAffinity, PodTopologySpread,
NodePorts, the volume plugins, DynamicResources) are called each cycle instead: their PreFilter over
every node, their Filter on windows of the node order that the kernel then walks
(``FusedPlan.filter_window``), and their PreScore, Score and NormalizeScore on the feasible nodes
found, which ``FusedPlan.score_found`` adds to the plan's scores.

Plans are found by the identity of the pod's spec objects (pods stamped from one template share
them) and, when those are new, by the plugins' forms and the values of the spec fields some plugin
with a static part reads (``column_reads``): pods a controller created, each parsed from its own
manifest, and pods differing only in what CYCLE parts alone read share a plan; so do pods whose
containers differ only in their mounts when no plugin with a static part reads those
(``column_reads_mounts``: a cluster dump's pods each mount a ServiceAccount token of their own name).

A PreFilterResult that names nodes (NodeAffinity's ``metadata.name`` terms: DaemonSet pods)
restricts the kernel's walk to those nodes. The engine declines (returns None, and the scheduler
runs the plugin-call path) when a plugin has no column form for the pod, a PreFilter fails (or
names nodes for a pod with CYCLE parts), a verdict is an Error, a score leaves [0, 100], no node
fits (the failure path builds upstream's diagnosis and runs PostFilter), extenders are configured,
or the pod was nominated (upstream tries its nominated node first).

Nominated pods (upstream's RunFilterPluginsWithNominatedPods: a node holding pods nominated to it of
the pod's priority or higher is filtered twice, with them added through the PreFilter extensions'
AddPod and without): the nodes holding such pods (a few, the preemptors' nodes) are masked out of
the kernel's walk; those the walk reached are judged by the runtime's per-node two-pass Filter on a
CycleState every PreFilter plugin wrote, and the walk runs again with the ones it accepts (see
``_walk_nominated``). The kernel judges every node as it is (the second pass, or the only one).
Upstream scores the nodes as they are, so scores need nothing.
"""
from __future__ import annotations

from collections import OrderedDict
from time import perf_counter as _perf_counter
from typing import TYPE_CHECKING, Any, Callable, Sequence, cast

import numpy as np

from .._kernels import _cycle, _diagnosis, _preemption
from .._kernels._getters import tuple_getter
from .._kernels._score import MAX_TIES as _MAX_TIES
from .._kernels._score import nth_equal as _nth_equal
from .._kernels._score import nth_tie as _nth_tie
from ..api.objects import Pod
from ..framework.columns import (CYCLE, NODES, NONE, NORMALIZE_DEFAULT, NORMALIZE_DEFAULT_REVERSE,
                                 NORMALIZE_NONE, RESOURCES, ColumnForm, ResourceFilterColumns, ResourceScoreColumns)
from ..framework.cycle_state import CycleState
from ..framework.interface import PreFilterPlugin
from ..framework.status import MAX_NODE_SCORE, Code
from ..framework.types import PodInfo
from ..framework.vectorized import FilterVerdicts, passes_every_node
from ..snapshot.snapshot import NodeBatch
from .filter_results import _IS_REJECTED, FilterResults, _valid_values
from .nominated import (NominatedUsage, filter_shadow, filter_with_nominated_pods, nominations_by_node, table_batch,
                        table_state)
from ..util.forking import ForkCopier
from ..util.hashed_key import HashedKey
from .capabilities import vectorized_method

if TYPE_CHECKING:  # pragma: no cover
    from ..framework.protocols import NodeTable
    from .framework import Framework

#: The Pod fields a plan depends on (everything the scheduling plugins read of a pod's spec). Plans
#: are keyed by the identity of these objects (pods of one template share them), then by value.
SPEC_FIELDS = ("namespace", "labels", "containers", "init_containers", "overhead", "resources",
               "node_selector", "affinity", "tolerations", "topology_spread_constraints", "volumes",
               "resource_claims", "host_network", "node_name",
               # NodeDeclaredFeatures' inference (v1.37) reads these too
               "host_users", "ephemeral_containers")
#: (compiled: a Pod's slot fields read by offset under its class's version tag, the 16 getattr
#: calls of an attrgetter saved per cycle; any other object through the attrgetter)
_spec_of = tuple_getter(Pod, SPEC_FIELDS)
#: positions in a plan key (see CompiledCycle.schedule): the spec's ids, the node-set version, the guards' values
_NODE_VERSION_AT = len(SPEC_FIELDS)
#: range(len(SPEC_FIELDS)): the spec tuple's positions
_SPEC_POSITIONS = range(len(SPEC_FIELDS))
_GUARDS_AT = _NODE_VERSION_AT + 1
_same_objects = _cycle.same_objects
#: Plan keys kept per framework (least recently used dropped first); a plan holds (C,) arrays and
#: may be kept under two keys (its spec's objects and, when those are new, its spec's values).
PLAN_CACHE_SIZE = 128
#: plans kept as templates for pods renaming their extended resources (CompiledCycle._renamed)
RENAMED_CACHE_SIZE = 32
#: Spec-object keys remembered for the plans found by value (a dict entry and a spec tuple each):
#: pods a controller created one after the other, from equal manifests, hold the same objects.
ALIAS_CACHE_SIZE = 4096
#: Plugin forms remembered by the identity of the spec values each plugin reads (see _shared_key):
#: cleared when full; a pod whose values are all known costs one lookup per plugin.
FORM_MEMO_SIZE = 8192
#: Bytes the plans' score caches may hold together (``FusedPlan.enable_score_cache``:
#: ``_cycle.cache_nbytes``, ~13.5 bytes a table row whatever the resource scorers (the row's total
#: and its block of the node order, the blocks' summaries), 13.5 MB at 1,000,000 rows). A plan gets one when it is used a second time; the least recently used lose
#: theirs first.
SCORE_CACHE_BUDGET = 256 << 20
_ERROR = int(Code.ERROR)
_UNSCHEDULABLE = int(Code.UNSCHEDULABLE)
_UNRESOLVABLE = int(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
_MERGE_FOUND = _diagnosis.MERGE_FOUND
#: entries of CompiledCycle._pattern_memo before it is cleared
_PATTERN_MEMO_SIZE = 4096
_EMPTY_STATIC = np.zeros((0, 1), dtype=np.int64)
#: FusedPlan.score_found's extra scores when there are none
_NO_EXTRA = np.zeros((0, 0), dtype=np.int64)
_NO_EXTRA_WEIGHTS = np.zeros(0, dtype=np.int64)
#: from this many rows with nominated pods on, their first Filter pass is the vectorized one
#: (_nominated_rejects); below it the per-row clones cost less than building the shadow table
_VECTORIZED_NOMINATED_ROWS = 8
#: no rows (never changed), and no selection remembered (CompiledCycle._nominated_rows)
_NO_ROWS: list[int] = []
_NO_NOMINATIONS: tuple = (None, None, None)
_SCORE_OUT_OF_RANGE = _cycle.SCORE_OUT_OF_RANGE
_PLACE_DRAW_TIES = _cycle.PLACE_DRAW_TIES
#: form kinds that leave nothing of the pod's spec in a plan
_PER_CYCLE_KINDS = (CYCLE, NONE)
#: the spec fields a pod's request totals come from
_REQUEST_FIELDS = frozenset({"containers", "init_containers", "overhead", "resources"})
_CONTAINERS_AT = SPEC_FIELDS.index("containers")
#: the spec fields holding containers, whose ``volume_mounts`` a plugin may state it does not read
#: (``column_reads_mounts``): the ServiceAccount token's mount, named per pod, is in every container
_CONTAINER_FIELDS = frozenset({"containers", "init_containers", "ephemeral_containers"})
_CONTAINER_POSITIONS = frozenset(i for i, f in enumerate(SPEC_FIELDS) if f in _CONTAINER_FIELDS)
#: a Container's stored fields but its mounts: those a pod's container must share (be the very
#: objects of) with the last shared key's pod's for the two to differ at most in their mounts
_CONTAINER_SLOTS_BUT_MOUNTS = ("name", "image", "requests", "limits", "ports", "restart_policy",
                               "restart_policy_rules", "_request_nanos")
_INIT_CONTAINERS_AT = SPEC_FIELDS.index("init_containers")
_OVERHEAD_AT = SPEC_FIELDS.index("overhead")
_RESOURCES_AT = SPEC_FIELDS.index("resources")


def _is_extended_resource_name(name: str) -> bool:
    """Upstream's IsExtendedResourceName without the name's validation: not native (a name without
    "/" or in kubernetes.io's domain) and not a quota "requests." name."""
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")
#: The first window of nodes a CYCLE Filter judges is k + k/4 + this many nodes (then doubled while
#: the kernel has not found k + 1 feasible nodes): most pods need one window.
CYCLE_WINDOW_SLACK = 64


def _verdicts_of_shape(res: Any, n: int) -> bool:
    """``res`` is a FilterVerdicts of ``n`` int8 codes and ``n`` reason ids (the diagnosis' check of
    a plugin's batch answer: anything else leaves the attempt to the plugin-call path)."""
    return (type(res) is FilterVerdicts and type(res.codes) is np.ndarray and res.codes.dtype == np.int8
            and res.codes.shape == (n,) and type(res.reason_ids) is np.ndarray and res.reason_ids.shape == (n,))


def _record_rejections(res: Any, failed: np.ndarray, rows: np.ndarray, j: int, plugin: np.ndarray,
                       code: np.ndarray, rid: np.ndarray, reasons: list) -> bool:
    """Write plugin ``j``'s rejections of ``rows[failed]`` into the diagnosis arrays (its reason ids
    offset past the ``reasons`` gathered so far, which its tuples then extend); False, writing
    nothing, when a failing verdict is no rejection (an Error) or carries bad values."""
    failed_codes = res.codes[failed]
    failed_rids = res.reason_ids[failed]
    if not _IS_REJECTED[failed_codes.view(np.uint8)].all() or not _valid_values(res, failed_rids):
        return False
    at = rows[failed]
    plugin[at] = j
    code[at] = failed_codes
    rid[at] = np.where(failed_rids >= 0, failed_rids + len(reasons), -1)
    reasons.extend(tuple(r) for r in res.reasons)
    return True


class _Declined:
    """A cached "this pod spec takes the plugin-call path" (with the reason, for tests and debugging)."""

    __slots__ = ("reason", "spec")

    def __init__(self, reason: str, spec: tuple):
        self.reason = reason
        self.spec = spec


class _Plan:
    """A compiled pod spec: the kernel plan plus what the cycle's state needs."""

    __slots__ = ("fused", "spec", "skip_filter", "skip_score", "state_plugins", "score_cached", "cycle_pre_filter",
                 "cycle_filter", "cycle_pre_score", "cycle_score", "has_cycle_parts", "narrowed", "narrowed_order",
                 "stateless_binding", "idle", "renamable", "diagnosis")

    def __init__(self, fused: Any, spec: tuple, skip_filter: frozenset, skip_score: frozenset,
                 state_plugins: list[PreFilterPlugin], cycle_pre_filter: Sequence[tuple] = (),
                 cycle_filter: Sequence[tuple] = (), cycle_pre_score: Sequence[tuple] = (),
                 cycle_score: Sequence[tuple] = ()):
        self.fused = fused
        self.spec = spec  # keeps the spec objects alive, so their ids in the cache key stay theirs
        self.skip_filter = skip_filter
        self.skip_score = skip_score
        #: plugins whose PreFilter state a later extension point reads (``keeps_state``)
        self.state_plugins = state_plugins
        #: whether the plan was given a score cache (or has no resource scorer to cache)
        self.score_cached = False
        #: PreFilter plugins with a CYCLE Filter form, in PreFilter order: (name, pre_filter), run
        #: each cycle (also when the plugin is not enabled at Filter: Reserve may read its state)
        self.cycle_pre_filter = cycle_pre_filter
        #: CYCLE Filters, in Filter order: (name, filter_vectorized, filter_window_mask or None,
        #: filter_passes_everywhere or None; see framework.columns.CycleFilterShortcuts)
        self.cycle_filter = cycle_filter
        #: PreScore plugins with a CYCLE Score form, in PreScore order: (name, pre_score)
        self.cycle_pre_score = cycle_pre_score
        #: CYCLE Scores: (name, score_vectorized, normalize_score_vectorized or None, weight,
        #: score_zero_everywhere or None; see framework.columns.CycleFilterShortcuts)
        self.cycle_score = cycle_score
        self.has_cycle_parts = bool(cycle_pre_filter or cycle_filter or cycle_pre_score or cycle_score)
        #: (C,) bool, the rows of the nodes a PreFilterResult named (None: every node); with
        #: ``narrowed_order`` the snapshot order it was last applied to and the result
        self.narrowed: np.ndarray | None = None
        self.narrowed_order: tuple[Any, Any] = (None, None)
        #: whether nothing after a placement reads what ``state_plugins`` write (see
        #: :meth:`CompiledCycle._stateless_binding`): a placed cycle then does not run them
        self.stateless_binding = False
        #: ``Framework.idle_binding_for(skip_filter)``: what the binding points come to for a pod
        #: placed with this plan's skip set (None: a plugin has work), given to ``schedule``'s
        #: ``commit`` (set at compile time: the answer is fixed per skip set and framework)
        self.idle: Any = None
        #: what a pod whose requests rename this plan's pod's renamable extended resources needs to
        #: derive its plan (see CompiledCycle._derive): (the static mask without the resource
        #: Filter's rows, the resource Filter plugin, the FusedPlan's other arguments), or None
        self.renamable: tuple | None = None
        #: the Filter diagnosis' per-plan arrays (see CompiledCycle._diagnosis_arrays): None until
        #: a failing pod of the plan first asks for them, False when the plan cannot give them
        self.diagnosis: Any = None


class RunPlacement:
    """:meth:`CompiledCycle.place_run`'s answer: the plan, when the run started, and per placed
    pod (the first ``len(hosts)`` of the pods given) its node, the pod as accounted there (node
    name set), and upstream's ``evaluatedNodes`` / ``feasibleNodes`` counts."""

    __slots__ = ("plan", "t0", "hosts", "assumed", "examined", "found", "pods")

    def __init__(self, plan: "_Plan", t0: float):
        self.plan = plan
        self.t0 = t0
        self.hosts: list[str] = []
        self.assumed: list = []
        self.examined: list[int] = []
        self.found: list[int] = []
        #: the placed pods as given (no node name: what their PreFilters see)
        self.pods: list = []


#: the CycleState key of a pod group cycle's group state (fastsched.scheduler.schedule_one_podgroup's
#: POD_GROUP_CYCLE_KEY; not imported: the runtime layer sits below the scheduler's)
_POD_GROUP_CYCLE_KEY = "fastsched.io/pod-group-scheduling-cycle"

#: (the Generator, its bit generator's capsule) of the last seeded_tie call
_last_capsule: tuple[Any, Any] = (None, None)


def seeded_tie(totals: np.ndarray, n: int, best: int, ties: int, rng: Any) -> int:
    """The index in ``totals[:n]`` (int64) of the tie ``rng`` picks among the ``ties`` entries
    equal to ``best``: the ``rng.integers(ties)``-th of them. For a NumPy ``Generator`` the draw is
    made in C from its bit generator (the same number and state as ``rng.integers``, without its
    2 µs of dispatch); any other ``rng`` (a user's object with ``integers``) is called as it is."""
    global _last_capsule
    if type(rng) is np.random.Generator and ties <= _MAX_TIES:
        last_rng, capsule = _last_capsule
        if last_rng is not rng:
            capsule = rng.bit_generator.capsule
            _last_capsule = (rng, capsule)
        return _nth_tie(totals, n, best, ties, capsule)
    return _nth_equal(totals[:n], best, int(rng.integers(ties)))


def _window_mask_of(plugin: Any, filter_vectorized: Any) -> Callable | None:
    """``plugin.filter_window_mask`` (the compiled cycle's window Filter straight into its pass
    mask, see :meth:`CompiledCycle._filter_windows`) when ``filter_vectorized`` is the plugin's own
    method of the class that defines it: a subclass overriding one of the two, or a wrapper around
    the vectorized Filter, keeps the verdicts' path."""
    return _paired_with_filter(plugin, "filter_window_mask", filter_vectorized)


def _own_normalize(plugin: Any, ext: Any, normalize: Any) -> bool:
    """Whether ``normalize`` is ``plugin``'s own ``normalize_score_vectorized`` (its score
    extensions are the plugin itself, the method that of the class defining
    ``normalized_score_zero_everywhere``): a shortcut that answers for the normalized column
    answers only for the plugin's own NormalizeScore."""
    if ext is not plugin or getattr(normalize, "__self__", None) is not plugin:
        return False
    owner = next((c for c in type(plugin).__mro__ if "normalized_score_zero_everywhere" in c.__dict__), None)
    return owner is not None and getattr(normalize, "__func__", None) is owner.__dict__.get("normalize_score_vectorized")


def _paired_with_filter(plugin: Any, attr: str, filter_vectorized: Any,
                        method: str = "filter_vectorized") -> Callable | None:
    """``plugin.<attr>`` (a shortcut standing for the plugin's vectorized Filter) when
    ``filter_vectorized`` is the plugin's own method of the class that defines ``attr``: a
    subclass overriding one of the two, or a wrapper around the vectorized Filter, keeps the
    verdicts' path. ``method``: the name of the vectorized method the shortcut stands for
    (``score_vectorized`` for a Score shortcut)."""
    fn = getattr(plugin, attr, None)
    if fn is None:
        return None
    mro = type(plugin).__mro__
    mask_owner = next((c for c in mro if attr in c.__dict__), None)
    vec_owner = next((c for c in mro if method in c.__dict__), None)
    if mask_owner is None or mask_owner is not vec_owner or attr in getattr(plugin, "__dict__", {}):
        return None
    if getattr(filter_vectorized, "__func__", None) is not vec_owner.__dict__[method] \
            or getattr(filter_vectorized, "__self__", None) is not plugin:
        return None
    return fn


def first_rows(rows: np.ndarray) -> tuple[list[int], np.ndarray]:
    """Each row of ``rows`` (a 1-D int64 array of table rows) once, where it first appears, as a
    list and as an intp array: ``list(dict.fromkeys(rows))`` in one compiled pass (the dict over
    every nominated pod's row and the list's conversion back to an array cost a Python step per
    nominated pod at every preemptor's attempt)."""
    index = _preemption.first_rows(np.ascontiguousarray(rows, dtype=np.int64))
    return index.tolist(), index


def _sources_agree(sourced: tuple, key: tuple) -> bool:
    """Whether each guard source of a memo entry (``((source, positions), ...)``, see
    ``CompiledCycle._guard_memo``) answers, called once, the value ``key`` holds at each of its
    guards' positions."""
    for source, positions in sourced:
        value = source()
        for i in positions:
            known = key[_GUARDS_AT + i]
            if value is not known and value != known:
                return False
    return True


class CompiledCycle:
    """The fused pass for one :class:`~fastsched.runtime.Framework` (see the module docstring)."""

    def __fork__(self, copier: ForkCopier) -> "CompiledCycle":
        """The fork's compiled cycle (fastsched.util.forking): its caches of compiled plans (per pod
        spec and node-set version, with cached scores) left empty, compiled again on demand in the
        fork with the same results; unbound from the table until its first cycle there."""
        clone = object.__new__(type(self))
        copier.remember(self, clone)
        for k, v in self.__dict__.items():
            if k in ("_table", "_columns"):
                clone.__dict__[k] = None
            elif k in ("_plans", "_score_cached", "_form_memo", "_renamed", "_guard_memo", "_pattern_memo"):
                clone.__dict__[k] = type(v)()
            elif k == "_nominated_memo":  # the fork's nominator selects its own
                clone.__dict__[k] = _NO_NOMINATIONS
            elif k == "_nominated_last":
                clone.__dict__[k] = None
            elif k == "_order_positions":
                clone.__dict__[k] = (None, None)
            elif k in ("_capsule_rng", "_capsule", "_nodes", "_last_lookup", "_last_shared",
                       "_shortcut_spec"):  # found again in the fork
                clone.__dict__[k] = None
            else:
                clone.__dict__[k] = copier.copy(v)
        return clone

    def __init__(self, fw: "Framework"):
        self.fw = fw
        self.plugins: dict[str, Any] = {}
        self.declined_reason = ""
        points = (fw.pre_filter_plugins, fw.filter_plugins, fw.pre_score_plugins, fw.score_plugins)
        for lst in points:
            for p in lst:
                self.plugins[p.name()] = p
        # name -> the plugin's bound column_form (None without one: then the engine is disabled)
        self._forms: dict[str, Any] = {name: getattr(p, "column_form", None) for name, p in self.plugins.items()}
        guarded = [p for p in self.plugins.values() if callable(getattr(p, "column_guard", None))]
        self._guards = [p.column_guard for p in guarded]
        #: Filter name -> its filter_records_node_state (framework.columns.NodeDependentFilterState)
        self._node_state_hooks: dict[str, Any] = {
            name: hook for name, p in self.plugins.items()
            if callable(hook := getattr(p, "filter_records_node_state", None))}
        #: per guard, the plugin's column_guard_fixed (None without one: asked every cycle)
        self._guards_fixed = [getattr(p, "column_guard_fixed", None) for p in guarded]
        #: per guard, the plugin's column_guard_source (None without one)
        self._guard_sources = [getattr(p, "column_guard_source", None) for p in guarded]
        #: spec-object ids -> (the spec, the guards' values with the fixed ones filled in, the
        #: positions of the guards to ask each cycle, the sources read each cycle instead of
        #: their guards: ((source, the positions it answers), ...), None until the spec is met
        #: again): the guard memo (the contracts
        #: of ``column_guard_fixed`` and ``column_guard_source``:
        #: framework.columns.GuardedColumnPlugin). The entry holds the spec, so the ids in its key
        #: stay its objects' while it lives.
        self._guard_memo: dict[tuple, tuple] = {}
        # which spec fields each plugin reads (``column_reads``): known for every plugin, a plan can
        # be shared by specs differing only in fields that CYCLE parts alone read (see _shared_key)
        reads = [getattr(p, "column_reads", None) for p in self.plugins.values()]
        for name, r in zip(self.plugins, reads):
            unknown = sorted(set(r or ()) - set(SPEC_FIELDS))
            if unknown:
                raise ValueError(f"plugin {name!r}: column_reads names fields that are not pod spec fields "
                                 f"({', '.join(SPEC_FIELDS)}): {', '.join(unknown)}")
        self._reads: list[tuple[Any, frozenset]] | None = None
        #: per entry of _reads: the positions in SPEC_FIELDS of the fields that plugin reads
        self._read_positions: list[tuple[int, ...]] = []
        #: per entry of _reads: whether the plugin reads the containers' ``volume_mounts`` when it
        #: reads containers (``column_reads_mounts``, True unless it states otherwise)
        self._reads_mounts: list[bool] = [getattr(p, "column_reads_mounts", True) is not False
                                          for p in self.plugins.values()]
        if all(r is not None for r in reads):
            self._reads = [(self._forms[name], frozenset(r or ())) for name, r in zip(self.plugins, reads)]
            self._read_positions = [tuple(i for i, f in enumerate(SPEC_FIELDS) if f in r) for _, r in self._reads]
        #: per position in SPEC_FIELDS holding containers, the indexes in _reads of the plugins that
        #: read that field and its containers' mounts: the forms to ask again for a pod whose
        #: containers differ from the last shared key's pod's only in their mounts
        self._mount_readers_at: dict[int, tuple[int, ...]] = {
            i: tuple(j for j, positions in enumerate(self._read_positions) if i in positions and self._reads_mounts[j])
            for i in _CONTAINER_POSITIONS}
        #: per position in SPEC_FIELDS, the indexes in _reads of the plugins that read that field
        #: (_read_positions inverted, once per framework): _shared_key_of_last asks the forms of a
        #: changed field's readers without testing every plugin's positions each cycle
        self._readers_at: tuple[tuple[int, ...], ...] = tuple(
            tuple(j for j, positions in enumerate(self._read_positions) if i in positions)
            for i in range(len(SPEC_FIELDS)))
        #: (plugin's index in _reads, ids of the spec values it reads, node-set version, guards) ->
        #: (those values, the plugin's form): a form depends on no other part of the pod (its
        #: ``column_reads``) nor of the table (the guards, the node-set version). The entry holds
        #: the values, so the ids in its key stay theirs while it lives.
        self._form_memo: dict[tuple, tuple] = {}
        #: the last shared key _shared_key computed and what it was computed from (see
        #: _shared_key_of_last), or None
        self._last_shared: tuple | None = None
        #: the spec objects the last _plan_of_last_values shortcut was taken for (_shortcut_once)
        self._shortcut_spec: tuple | None = None
        missing = sorted(name for name, f in self._forms.items() if not callable(f))
        if missing:
            self.declined_reason = f"plugins without a column form: {', '.join(missing)}"
        elif not fw.filter_plugins or not fw.score_plugins:
            self.declined_reason = "the profile has no Filter or no Score plugin"
        self.enabled = not self.declined_reason
        self._plans: OrderedDict[tuple, _Plan | _Declined] = OrderedDict()
        #: the plugins that read request fields: their column_named_resources (None when one lacks
        #: it, or some plugin does not state its reads: then no plan is derived, see _renamed_key)
        self._namers: list[Any] | None = None
        if self._reads is not None:
            namers = [getattr(p, "column_named_resources", None)
                      for p, (_, r) in zip(self.plugins.values(), self._reads) if r & _REQUEST_FIELDS]
            if all(callable(n) for n in namers):
                self._namers = namers
        #: renamed key (see _renamed_key) -> a plan compiled for a pod of it, least recently used
        #: first: pods differing from that pod only in which extended resources they request derive
        #: their plans from it (_derive)
        self._renamed: OrderedDict[_ValueKey, _Plan] = OrderedDict()
        #: spec-object key -> (shared key, the spec) for specs found by value (see _shared_key)
        self._aliases: OrderedDict[tuple, tuple] = OrderedDict()
        #: the plans holding a score cache, least recently used first
        self._score_cached: OrderedDict[tuple, _Plan] = OrderedDict()
        #: see SCORE_CACHE_BUDGET; 0 turns the score caches off
        self.score_cache_budget = SCORE_CACHE_BUDGET
        self._table: Any = None
        self._columns: Any = None
        #: (C,) uint8 scratch: this cycle's CYCLE Filter verdicts on the rows of the windows filtered
        self._cycle_ok: np.ndarray | None = None
        #: (C,) uint8 ones: rows masked out of a cycle's walk (nominated pods) are 0 during it
        self._nominated_ok: np.ndarray | None = None
        #: (the node order, (C,) each row's position in it or -1) of the last cycle with nominated rows
        self._order_positions: tuple[Any, Any] = (None, None)
        #: (the NominationIndex's selection, its distinct rows) of the last cycle (see _nominated_rows)
        self._nominated_memo: tuple = _NO_NOMINATIONS
        #: (state, pod, table, nominator, its version, node version, width, rows) of the last
        #: _nominated_rows answer for a cycle's state (see there)
        self._nominated_last: tuple | None = None
        #: the last rng a cycle drew ties from and its bit generator's capsule (see _capsule_for)
        self._capsule_rng: Any = None
        self._capsule: Any = None
        #: the last snapshot.batch() the state plugins' PreFilters were given (see _all_nodes)
        self._nodes: NodeBatch | None = None
        #: (key, plan, spec, the spec's guard memo entry or None) of the last cycle's lookup when
        #: it compiled nothing (see _look_up), else None
        self._last_lookup: tuple[tuple, _Plan | _Declined, tuple, tuple | None] | None = None
        #: (id of a resource Filter's reasons list, check mask) -> (the list, the mask's reason
        #: tuple): the diagnosis' resource verdicts as FilterResults reasons (see diagnose)
        self._pattern_memo: dict[tuple[int, int], tuple[list, tuple[str, ...]]] = {}
        #: (MAX_PATTERNS,) int64 scratch: the check masks _diagnosis.merge_fit numbers
        self._patterns = np.empty(_diagnosis.MAX_PATTERNS, dtype=np.int64)
        #: (table uid, the checks' cols and wants as bytes) -> the resource checks' mask per row
        #: across diagnoses (``_diagnosis.merge_fit``'s cache: (C,) int64 versions, -1 none, and
        #: masks): a preemptor's failing cycle judges every node, and between two preemptors only
        #: the rows they changed move (issue 29: ~half of merge_fit's ~100 instructions a node)
        self._fit_cache: tuple[tuple, np.ndarray, np.ndarray] | None = None
        #: OpenMP threads that score windows of _cycle.PARALLEL_MIN_NODES or more feasible nodes. 1
        #: by default: on the 2-core development machine, shared with other work, two threads
        #: scored 50,000 nodes in 1.2-1.5 ms against 0.9 ms for one (BENCHMARKS.md). Raise it
        #: (e.g. to ``fw.parallelizer().threads``) on a machine with idle cores; results do not change.
        self.threads = 1
        #: counters a user or test can read: cycles placed by the kernel, cycles declined
        self.fused_cycles = 0
        self.declined_cycles = 0
        #: of the cycles placed, those with nodes holding nominated pods that count (see
        #: _walk_nominated)
        self.nominated_cycles = 0

    # -- the cycle ---------------------------------------------------------------------------------
    def schedule(self, state: CycleState, pod: "Pod", snapshot: Any, start_index: int, k: int,
                 rng: Any, k_of: "Callable[[int], int] | None" = None,
                 placement_rows: np.ndarray | None = None, commit: "Callable[[Any, tuple, Any], Any] | None" = None,
                 commit_ctx: Any = None) -> Any:
        """Place ``pod``: ``(node name, nodes examined past the start, feasible nodes found)``, or
        None when the plugin-call path must run instead (nothing has changed then). ``k`` is how
        many feasible nodes to find (upstream's numFeasibleNodesToFind, the caller's to decide);
        ``k_of(n)`` the same for ``n`` nodes, for pods whose PreFilters name their nodes (without
        it such pods take the plugin-call path). ``placement_rows``: the assumed placement's rows
        in its order (TopologyAwareWorkloadScheduling's ListNodesInPlacement): the candidates, as
        the plugin-call path takes them (PreFilter still sees every node); ``k`` is then the
        placement's.

        ``commit`` (the scheduler's, when its compiled binding path could serve the pod): called
        as ``commit(commit_ctx, (node name, examined, found), idle)`` right after a placement by
        the kernel's one call (``FusedPlan.place``) with a plan whose binding is idle (``idle``:
        the plan's IdleBinding), or after a placement with per-cycle parts when the binding is
        idle for the chosen node (``Framework.idle_binding_at``, asked where the binding cycle
        would call Reserve: the skip set's IdleBinding, or the judges' answer, VolumeBinding
        with every claim bound); when it returns something other than None the pod is bound and
        that is returned instead of the tuple (docs/dev/compiled-binding-path.md, step 5). The
        runtime does not import the scheduler: what a commit does is the caller's."""
        t0 = _perf_counter()
        table = snapshot.table
        if table is not self._table:
            self._bind_new_table(table)
        # the plan found by the last lookup's spec objects, else the guard memo, else the caches
        # (_plan_of: the same rule for the attempt and for a failing pod's diagnosis)
        plan = self._plan_of(pod, table, snapshot)
        if isinstance(plan, _Declined):
            self.declined_cycles += 1
            return None
        return self._run_plan(plan, state, pod, snapshot, table, start_index, k, rng, k_of, placement_rows, t0,
                              commit, commit_ctx)

    def evaluate_row(self, state: CycleState, pod: "Pod", snapshot: Any, row: int, rng: Any) -> str | None:
        """Upstream's evaluateNominatedNode on the kernel: the node name of ``row`` (the pod's
        nominated node) when ``pod`` passes Filter with nominated pods there, else None, having
        changed nothing (the caller then takes the plugin-call path, which judges the node again
        and searches every node). The cycle is :meth:`schedule`'s over the one row: PreFilter as
        the plan folds it (a pod PreFilter rejects finds no node), and on a pass the end of a
        placed cycle (the state plugins' PreFilter, the skip sets, the counters).

        Filter with nominated pods on that one node: with no nominated pod of the pod's priority or
        higher there other than the pod itself (a preemptor's own nomination is on it), upstream's
        RunFilterPluginsWithNominatedPods is one plain Filter pass, the kernel's verdict; with one,
        this declines (two passes: the plugin-call path's). So the nominations are asked for
        this node only (the nominator's dict), not listed and selected for every node as
        :meth:`_nominated_rows` does for a walk over all of them (that selection cost more than
        the plugin-call path's whole judgement of the node). Upstream judges the nominated node
        whatever PreFilter's node names are: a plan that narrows the nodes declines. With one
        feasible node nothing is drawn from ``rng`` (the kernel draws ties of two or more)."""
        t0 = _perf_counter()
        fw = self.fw
        if fw.pod_nominator is not None:
            if not type(fw).nominated_filters_vectorizable:
                self.declined_cycles += 1
                return None
            others = fw.nominated_pods_for_node(snapshot.table.node_names[row])
            if others:
                prio = 0 if pod.priority is None else int(pod.priority)
                uid = pod.uid
                for pi in others:
                    p = pi.pod.priority
                    if (0 if p is None else int(p)) >= prio and pi.pod.uid != uid:
                        self.declined_cycles += 1
                        return None
        table = snapshot.table
        if table is not self._table:
            self._bind_new_table(table)
        plan = self._plan_of(pod, table, snapshot)
        if isinstance(plan, _Declined) or plan.narrowed is not None:
            self.declined_cycles += 1
            return None
        # (one row: numFeasibleNodesToFind(1) is 1, the start index 0 - upstream's nextStartNodeIndex
        # does not move for the nominated node - and the caller keeps the index as it is)
        placed = self._run_plan(plan, state, pod, snapshot, table, 0, 1, rng, None,
                                np.array([row], dtype=np.int64), t0, nominated=_NO_ROWS)
        return None if placed is None else placed[0]

    def _memo_guards(self, pod: "Pod", spec: tuple, ids: tuple, table: Any) -> tuple:
        """The guard memo's entry for ``spec`` (see ``_guard_memo``): every guard asked once, the
        values of those whose ``column_guard_fixed`` answers True for the pod kept, the others'
        positions listed to be asked each cycle; no sources yet (None: :meth:`_source_guards`
        groups them when the spec is met again, so that pods of specs met once, one manifest
        each, pay nothing for it). Bounded: cleared when full (a spec met again is asked
        again)."""
        memo = self._guard_memo
        if len(memo) >= FORM_MEMO_SIZE:
            memo.clear()
        values = []
        asked = []
        for i, (guard, fixed) in enumerate(zip(self._guards, self._guards_fixed)):
            values.append(guard(pod, table))
            if fixed is None or not fixed(pod):
                asked.append(i)
        entry = memo[ids] = (spec, tuple(values), tuple(asked), None)
        return entry

    def _source_guards(self, pod: "Pod", ids: tuple, entry: tuple, table: Any) -> tuple:
        """The guard memo's entry for a spec met again, its asked guards with a
        ``column_guard_source`` for the pod grouped by equal sources: one call a cycle answers
        every guard of a group (the three guards reading the DeviceClasses' version of a DRA
        extended-resource pod, issues 27, 29); the rest still asked each cycle. A source whose
        value is not its guard's now is not used (the guard stays asked)."""
        asked = []
        sourced: dict[Any, list[int]] = {}
        guards, sources_of = self._guards, self._guard_sources
        for i in entry[2]:
            source_of = sources_of[i]
            source = source_of(pod) if source_of is not None else None
            if source is not None and source() == guards[i](pod, table):
                sourced.setdefault(source, []).append(i)
            else:
                asked.append(i)
        entry = self._guard_memo[ids] = (entry[0], entry[1], tuple(asked),
                                         tuple((source, tuple(positions)) for source, positions in sourced.items()))
        return entry

    def _look_up(self, pod: "Pod", spec: tuple, key: tuple, table: Any, snapshot: Any,
                 guard_entry: tuple | None = None) -> "_Plan | _Declined":
        """The plan for ``key`` (``pod``'s spec ids, the node-set version and the guards' values):
        found by key, by alias or by value (:meth:`_shared_key`), or compiled; the caches' LRU
        order updated. Remembered in ``_last_lookup`` when it compiled nothing: a next lookup of the
        same key would then change nothing."""
        plans = self._plans
        plan = plans.get(key)
        compiled = False
        lookup_key = key
        if plan is None:
            alias = self._aliases.get(key)
            if alias is not None:
                shared_key = alias[0]
                self._aliases.move_to_end(key)
            else:
                shared_key = self._shared_key(pod, spec, table, key) if self._reads is not None else None
            plan = plans.get(shared_key) if shared_key is not None else None
            if plan is None:
                renamed = (self._renamed_key(pod, spec, shared_key)
                           if shared_key is not None and self._namers is not None else None)
                template = self._renamed.get(renamed) if renamed is not None else None
                derived = self._derive(template, pod, spec, snapshot) if template is not None else None
                if derived is not None and renamed is not None:
                    plan = plans[key] = derived
                    self._renamed.move_to_end(renamed)
                else:
                    plan = plans[key] = self._compile(pod, spec, snapshot)
                    if renamed is not None and type(plan) is _Plan and plan.renamable is not None:
                        self._renamed[renamed] = plan
                        if len(self._renamed) > RENAMED_CACHE_SIZE:
                            self._renamed.popitem(last=False)
                if shared_key is not None:
                    plans[shared_key] = plan
                compiled = True
                while len(plans) > PLAN_CACHE_SIZE:
                    old_key, _ = plans.popitem(last=False)
                    old = self._score_cached.pop(old_key, None)
                    if old is not None:  # it may live on under its other key: a cache again when reused
                        old.fused.drop_score_cache()
                        old.score_cached = False
            else:
                if alias is None:  # the next pods with these spec objects find the plan at once
                    self._aliases[key] = (shared_key, spec)  # (spec: their ids in the key stay theirs)
                    if len(self._aliases) > ALIAS_CACHE_SIZE:
                        self._aliases.popitem(last=False)
                key = shared_key
        if not compiled:
            self._touch(key, plan, table.capacity)
        # (spec held: the ids in the key stay this spec's objects while remembered; ``guard_entry``:
        # the spec's guard memo entry, for the next cycle's test of the key)
        self._last_lookup = None if compiled else (lookup_key, plan, spec, guard_entry)
        return plan

    def _run_plan(self, plan: _Plan, state: CycleState, pod: "Pod", snapshot: Any, table: Any, start_index: int,
                  k: int, rng: Any, k_of: "Callable[[int], int] | None", placement_rows: np.ndarray | None,
                  t0: float, commit: Any = None, commit_ctx: Any = None,
                  nominated: list[int] | None = None) -> Any:
        """:meth:`schedule` with the plan found: the kernel's walk and the end of the cycle.
        ``nominated``: the rows of :meth:`_nominated_rows` when the caller knows them (none
        counting among ``placement_rows``: :meth:`evaluate_row`), else found here."""
        # Filter with nominated pods: the rows of nodes carrying nominated pods of the pod's priority
        # or higher take upstream's two passes (see _walk_nominated); the others the kernel alone
        if nominated is None:
            nominated = self._nominated_rows(pod, table, state)
        if nominated is None:
            self.declined_cycles += 1
            return None
        order = snapshot.order() if placement_rows is None else placement_rows
        narrowed = plan.narrowed
        if narrowed is not None:
            if k_of is None:
                self.declined_cycles += 1
                return None
            # findNodesThatFitPod on the named nodes only, in the snapshot's order (fastsched's
            # order for upstream's set iteration, as the plugin-call path): numFeasibleNodesToFind
            # and the start index over them; the next start index still moves over all nodes
            last_order, narrowed_order = plan.narrowed_order
            if last_order is not order:
                narrowed_order = order[narrowed[order]]
                plan.narrowed_order = (order, narrowed_order)
            order = narrowed_order
            k = k_of(len(order))
        n = len(order)
        self._columns.bind(table)
        fused = plan.fused
        if plan.has_cycle_parts:
            placed = self._run_cycle_forms(plan, state, pod, snapshot, order, start_index % n, k, nominated)
            if placed is None:
                self.declined_cycles += 1
                return None
            found, examined, best, ties, first, skip_filter, skip_score = placed
        elif len(nominated):
            start = start_index % n
            walked = self._walk_nominated(
                lambda masked: self._run_masked(fused, order, start, k, masked, table.capacity),
                plan, pod, snapshot, order, start, nominated)
            if walked is None:
                self.declined_cycles += 1
                return None
            found, examined = walked
            best, ties, first = (fused.score_found(self._columns, found, _NO_EXTRA, _NO_EXTRA_WEIGHTS, self.threads)
                                 if found >= 2 else (0, 0, -1))
            skip_filter, skip_score = plan.skip_filter, plan.skip_score
        else:
            # the common case: filter, score and selectHost's pick (the seeded tie draw in C) in
            # one kernel call; ties the kernel cannot draw are drawn below, as after fused.run
            capsule = self._capsule if rng is self._capsule_rng else self._capsule_for(rng)
            row, found, examined = fused.place(self._columns, order, start_index % n, k, self.threads, capsule)
            if row >= 0:
                placed = self._placed(plan, state, pod, snapshot, table, row, examined, found, nominated, t0,
                                      plan.skip_filter, plan.skip_score)
                # (only the plan's static answer here: a plugin that judges its idleness per pod,
                # VolumeBinding, has a CYCLE Filter for the pods it judges, so their plans have
                # per-cycle parts and are committed below)
                if commit is not None and plan.idle is not None:
                    done = commit(commit_ctx, placed, plan.idle)
                    if done is not None:
                        return done
                return placed
            if row != _PLACE_DRAW_TIES:
                self.declined_cycles += 1
                return None
            totals = fused.totals[:found]  # (found,) int64: ties > 1 (or the kernel would have picked)
            best = int(totals.max())
            ties, first = int(np.count_nonzero(totals == best)), -1
            skip_filter, skip_score = plan.skip_filter, plan.skip_score
        if found == 0 or ties == _SCORE_OUT_OF_RANGE:
            self.declined_cycles += 1
            return None
        if found == 1:
            pick = 0
        elif ties > 1:
            pick = seeded_tie(fused.totals, found, best, ties, rng)
        else:
            pick = first
        placed = self._placed(plan, state, pod, snapshot, table, int(fused.selected_rows[pick]), examined, found,
                              nominated, t0, skip_filter, skip_score)
        if commit is not None:
            # (_placed has set the state's skip set: idle_binding_at's static answer is
            # idle_binding_for(skip_filter), else, asked where the binding cycle would call
            # Reserve, the judges' for the chosen node: VolumeBinding with every claim bound,
            # upstream's AllBound, leaving in the state what its Reserve would)
            idle = plan.idle if skip_filter is plan.skip_filter and plan.idle is not None \
                else self.fw.idle_binding_at(state, pod, placed[0])
            if idle is not None:
                done = commit(commit_ctx, placed, idle)
                if done is not None:
                    return done
        return placed

    def _placed(self, plan: _Plan, state: CycleState, pod: "Pod", snapshot: Any, table: Any, row: int,
                examined: int, found: int, nominated: list[int], t0: float, skip_filter: frozenset,
                skip_score: frozenset) -> tuple[str, int, int]:
        """The end of a placed cycle (``row``: the chosen node's): the state later points read,
        the Filter observation and the counters; :meth:`schedule`'s answer."""
        state.skip_filter_plugins = skip_filter
        state.skip_score_plugins = skip_score
        if plan.state_plugins and not (plan.stateless_binding and skip_filter is plan.skip_filter
                                       and _POD_GROUP_CYCLE_KEY not in state.storage):
            nodes = self._all_nodes(snapshot)
            for pl in plan.state_plugins:  # fresh state per cycle, as upstream writes it
                pl.pre_filter(state, pod, nodes)
        # One observation for the fused Filter-to-selectHost pass (upstream observes each point).
        self.fw._observe_point("Filter", None, _perf_counter() - t0)
        self.fused_cycles += 1
        if len(nominated):
            self.nominated_cycles += 1
        return table.node_names[row], examined, found

    def _stateless_binding(self, skip_filter: frozenset) -> bool:
        """Whether a pod placed with ``skip_filter`` needs no PreFilter state after its placement
        (issue 29, docs/dev/compiled-binding-path.md step 1): the state plugins (``keeps_state``:
        DynamicResources, VolumeBinding) write it for their Reserve, Unreserve, PreBind pre-flight
        and PreBind, which the framework does not call when the binding is idle
        (:meth:`Framework.idle_binding_for`: every Reserve and PreBind plugin skipped the pod, no
        Permit plugin), on the idle and on the generic binding path alike; PostBind plugins and
        Bind plugins other than the stock binder get the CycleState, so a profile with them keeps
        the PreFilters. A pod group cycle keeps them too (checked per cycle: DynamicResources'
        PreFilter also writes the group's state, which PodGroupPostFilter reads)."""
        fw = self.fw
        return (fw.idle_binding_for(skip_filter) is not None and not fw.post_bind_plugins
                and all(pl.name() == "DefaultBinder" for pl in fw.bind_plugins))

    # -- a gang's run of identical members (docs/dev/gang-runs.md section 4) -----------------------
    def place_run(self, pods: Sequence["Pod"], snapshot: Any, start_index: int, k: int, rng: Any,
                  reserve_idle: Callable[[frozenset], bool]) -> "RunPlacement | None":
        """Place and account pods one after another in one kernel call, as :meth:`schedule` and
        ``NodeTable.add_pod`` would for each in turn: the pods (members of a pod group cycle, in
        member order) from the first one on whose :meth:`schedule` key is the last cycle's (same
        spec objects, node set and guard values: the last lookup's plan, which nothing has changed
        since), while each derives the same accounting data and is not being deleted. Each placed
        pod's row is in the node table (``NodeTable.add_run``) as the pod with its node name set,
        before the next pod is filtered; the caller takes up the cache's side (``Cache.assume_run``)
        and the rest of each cycle, then calls :meth:`finish_run`.

        None (nothing changed) when the last lookup's plan cannot take a run: no plan, a plan with
        CYCLE parts or named nodes, a Reserve plugin with work for the plan's skip set
        (``reserve_idle``), or a nominated pod anywhere (the kernel's walk takes no nominated
        rows). The run ends early at a pod the kernel cannot pick a row for (no feasible node, a
        score out of range, ties it cannot draw) and at the records the table holds without
        growing: those pods are the single path's (:class:`RunPlacement` says how many were placed,
        possibly none)."""
        t0 = _perf_counter()
        table = snapshot.table
        last = self._last_lookup
        if last is None or table is not self._table or not pods:
            return None
        plan = last[1]
        if type(plan) is not _Plan or plan.has_cycle_parts or plan.narrowed is not None \
                or not reserve_idle(plan.skip_filter):
            return None
        fw = self.fw
        if fw.pod_nominator is not None:
            if not type(fw).nominated_filters_vectorizable:
                return None
            mapping = nominations_by_node(fw.pod_nominator)
            if mapping is None or mapping:
                return None
        key0 = last[0]
        guards = self._guards
        node_version = table.node_version
        d, m_derived = table.run_derived(pods)
        m = 0
        entry = last[3]
        if not guards or entry is not None:
            # _plan_of's rule for the last key: the last lookup's spec objects (their ids are
            # key0's), the node-set version, and only the guards the spec's memo entry asks each
            # cycle (the others are fixed for the spec: ``column_guard_fixed``'s contract); every
            # guard per member otherwise cost ~18% of a run
            last_spec = last[2]
            if key0[_NODE_VERSION_AT] == node_version:
                asked = [(guards[i], key0[_GUARDS_AT + i]) for i in entry[2]] if entry is not None else []
                sourced = entry[3] if entry is not None and entry[3] else ()
                for pod in pods[:m_derived]:
                    if not _same_objects(_spec_of(pod), last_spec):
                        break
                    for guard, known in asked:
                        value = guard(pod, table)
                        if value is not known and value != known:
                            break
                    else:
                        if not sourced or _sources_agree(sourced, key0):
                            m += 1
                            continue
                    break
        else:
            for pod in pods[:m_derived]:
                spec = _spec_of(pod)
                key = (*map(id, spec), node_version, *[g(pod, table) for g in guards])
                if key != key0:
                    break
                m += 1
        run = RunPlacement(plan, t0)
        if m == 0 or d is None:
            return run
        recs, from_freed = table.take_run_records(m)
        m = len(recs)
        order = snapshot.order()
        n = len(order)
        rows = np.empty(m, dtype=np.int64)
        examined = np.empty(m, dtype=np.int64)
        found = np.empty(m, dtype=np.int64)
        canonical = np.empty(m, dtype=np.uint8)
        placed = 0
        try:
            if m and n:
                self._columns.bind(table)
                capsule = self._capsule if rng is self._capsule_rng else self._capsule_for(rng)
                placed = plan.fused.place_run(self._columns, order, start_index % n, k, m, table._acc, recs,
                                              [p.uid for p in pods[:m]], d.shape, d.flags, d.signature,
                                              d.affinity_signature, table.version, self.threads, capsule,
                                              rows, examined, found, canonical)
        finally:
            row_list = rows[:placed].tolist()
            names = table.node_names
            hosts = [names[r] for r in row_list]
            assumed = [pod.with_node_name(host) for pod, host in zip(pods, hosts)]
            table.add_run(row_list, recs, from_freed, [PodInfo(a) for a in assumed], d, d.flags, canonical)
        run.hosts = hosts
        run.assumed = assumed
        run.pods = list(pods[:placed])
        run.examined = examined[:placed].tolist()
        run.found = found[:placed].tolist()
        return run

    def finish_run(self, run: "RunPlacement", states: Sequence[CycleState], snapshot: Any) -> None:
        """The end of each placed cycle of a run (:meth:`_placed`'s, in member order): the skip sets
        in ``states`` (one per placed pod), the state plugins' PreFilter (their run form,
        ``pre_filter_run``, where a plugin has one: the shared work done once for the run), one
        Filter observation each (the run's time shared out) and the counters."""
        plan = run.plan
        placed = len(run.hosts)
        skip_filter, skip_score = plan.skip_filter, plan.skip_score
        for state in states:
            state.skip_filter_plugins = skip_filter
            state.skip_score_plugins = skip_score
        if plan.state_plugins and placed:
            pods = run.pods
            keep = [i for i, st in enumerate(states)
                    if not (plan.stateless_binding and _POD_GROUP_CYCLE_KEY not in st.storage)]
            if keep:
                nodes = self._all_nodes(snapshot)
                kept_states = [states[i] for i in keep]
                kept_pods = [pods[i] for i in keep]
                for pl in plan.state_plugins:
                    pre_filter_run = getattr(pl, "pre_filter_run", None)
                    if pre_filter_run is not None:
                        pre_filter_run(kept_states, kept_pods, nodes)
                    else:
                        for state, pod in zip(kept_states, kept_pods):
                            pl.pre_filter(state, pod, nodes)
        if placed:
            share = (_perf_counter() - run.t0) / placed
            observe = self.fw._observe_point
            for _ in range(placed):
                observe("Filter", None, share)
            self.fused_cycles += placed

    def _capsule_for(self, rng: Any) -> Any:
        """The bit generator capsule ``FusedPlan.place`` draws ties from: a NumPy ``Generator``'s,
        None for any other ``rng`` (then the caller draws, calling it); remembered with ``rng``."""
        capsule = rng.bit_generator.capsule if type(rng) is np.random.Generator else None
        self._capsule_rng, self._capsule = rng, capsule
        return capsule

    def _all_nodes(self, snapshot: Any) -> NodeBatch:
        """``snapshot.batch()``, the PreFilter's every node, reused while the snapshot's node order
        is the same array (it is rebuilt, a new object, whenever the node set changes): the batch is
        a view of the table at those rows, so it reads the nodes as they are now."""
        order = snapshot.order()
        nodes = self._nodes
        if nodes is None or nodes.rows is not order or nodes.table is not snapshot.table:
            nodes = self._nodes = snapshot.batch()
        return nodes

    # -- the Filter diagnosis of a pod that fits nowhere (issue 29, docs/dev/failing-cycle.md) -------
    def diagnose(self, state: CycleState, pod: "Pod", snapshot: Any, nodes: NodeBatch, start: int
                 ) -> "tuple[FilterResults, NodeBatch] | None":
        """The plugin-call path's Filter over every node of ``nodes`` rotated to ``start``
        (``ScheduleOneMixin._filter_until_enough``'s ``(FilterResults, evaluated NodeBatch)``) for
        a pod that no node fits, from the plan's arrays instead of each plugin's windows: the NODES
        Filters' verdicts kept per plan (:meth:`_diagnosis_arrays`), the others' (the RESOURCES
        Filter's, the CYCLE Filters') asked once over the nodes no earlier plugin rejected, merged
        by profile position as RunFilterPlugins stops at the first rejection. ``state`` is the
        cycle's, its PreFilters run. Nodes holding nominated pods that count are judged on the
        shadow table (upstream's first pass, exact for node-only and additive filters, as
        ``filter_with_nominated_pods``).

        None (the windows run, as before) unless: ``nodes`` is the snapshot's whole order, the pod's
        plan has no narrowing and gives the arrays, the PreFilters skipped what the plan skipped,
        the kernel's walk (masked at the nominated rows) finds no node, no node passes the merge,
        and every verdict is a rejection (an Error or a bad value is the plugin-call path's to
        report). The answer holds the same status on every node as that path's."""
        if not self.enabled:
            return None
        table = snapshot.table
        order = snapshot.order()
        if nodes.rows is not order or nodes.table is not table:
            return None  # (a PreFilterResult's or a placement's candidates)
        if table is not self._table:
            self._bind_new_table(table)
        plan = self._plan_of(pod, table, snapshot)
        if type(plan) is not _Plan or plan.narrowed is not None:
            return None
        arrays = plan.diagnosis
        if arrays is None:
            arrays = plan.diagnosis = self._diagnosis_arrays(plan, state, pod, snapshot)
        if arrays is False:
            return None
        first, codes, rids, static_reasons, dynamic, names, static_names, fit = arrays
        skip = state.skip_filter_plugins
        if not (skip >= plan.skip_filter and static_names.isdisjoint(skip)):
            return None  # (the plan's static verdicts are for its own skip set)
        nominated = self._nominated_rows(pod, table, state)
        if nominated is None:
            return None
        shadow = None
        if len(nominated):
            usable, shadow = filter_shadow(self.fw, state, pod, table)
            if not usable:
                return None
        n = len(order)
        evaluated = nodes.window(start, 0, n)
        rows = evaluated.rows
        judged = table if shadow is None else shadow
        merged = -1  # the profile position of the resource Filter when merge_fit judged it
        if fit is not None and fit[1] not in skip:
            got = self._merge_fit(fit, arrays, state, pod, table, judged, rows, nominated)
            if got is None:
                return None
            if type(got) is tuple:
                pid, code, rid, reasons = got
                merged = fit[0]
        if merged < 0:
            # the node-only arrays gathered and the resource Filter asked through its
            # filter_vectorized below (no merge_fit: no checks method, or more masks than it numbers)
            self._columns.bind(table)
            found, _ = self._run_masked(plan.fused, order, start, 1, nominated, table.capacity)
            if found:
                return None
            pid = first[rows]
            code = codes[rows]
            rid = rids[rows]
            reasons = list(static_reasons)
        try:
            for j, name, filter_vectorized in dynamic:
                if j == merged or name in skip:
                    continue
                pending = np.flatnonzero((pid < 0) | (pid > j))
                m = len(pending)
                if not m:
                    break  # (a later plugin's pending nodes are among these)
                res = filter_vectorized(state, pod, table_batch(judged, rows[pending]))
                if res is None:
                    continue
                if not _verdicts_of_shape(res, m):
                    return None
                failed = res.codes != 0
                if failed.any() and not _record_rejections(res, failed, pending, j, pid, code, rid, reasons):
                    return None  # (the plugin-call path turns it into an Error, as upstream)
        except Exception:  # noqa: BLE001 - the plugin-call path runs the plugin again and reports it
            return None
        if not code.all():
            return None  # a node passes: the plugin-call path decides (a nominated row, a CYCLE verdict)
        return FilterResults.from_arrays(code, pid, rid, reasons, list(names)), evaluated

    def _plan_of(self, pod: "Pod", table: Any, snapshot: Any) -> "_Plan | _Declined":
        """The plan for ``pod`` (:meth:`schedule`'s and :meth:`diagnose`'s one rule; the key: spec
        ids, node-set version, guards): the last lookup's when the spec objects are the last
        cycle's (pods of one template one after another) and the node-set version and the guards
        asked every cycle are unchanged (the other guards are fixed for the spec, see
        ``_guard_memo``); then nothing moves in the caches, since that lookup left the plan (its
        alias, its score cache) most recent in each. Else the key from the guard memo's values and
        a lookup, remembered with the memo's entry so that the next test of the last key knows
        which guards to ask."""
        spec = _spec_of(pod)
        last = self._last_lookup
        guards = self._guards
        if last is not None and _same_objects(spec, last[2]):
            key = last[0]
            entry = last[3]
            same = key[_NODE_VERSION_AT] == table.node_version
            if same and guards:
                if entry is not None and entry[3] is None and entry[2]:  # (met again: sources grouped once)
                    entry = self._source_guards(pod, key[:_NODE_VERSION_AT], entry, table)
                    self._last_lookup = (key, last[1], last[2], entry)
                if entry is None:
                    same = False  # (no memo entry to tell which guards to ask: the key below)
                else:
                    for i in entry[2]:
                        value = guards[i](pod, table)
                        known = key[_GUARDS_AT + i]
                        if value is not known and value != known:
                            same = False
                            break
                    if same and entry[3]:
                        same = _sources_agree(entry[3], key)
            if same:
                return last[1]
        entry = None
        if guards:
            ids = tuple(map(id, spec))
            entry = self._guard_memo.get(ids)
            if entry is None:
                shortcut = self._shortcut_once(pod, spec, ids, table)
                if shortcut is not None:
                    return shortcut
                entry = self._memo_guards(pod, spec, ids, table)
                values = entry[1]
            elif entry[2] or entry[3]:
                if entry[3] is None:  # (met again: its sources grouped once)
                    entry = self._source_guards(pod, ids, entry, table)
                values = list(entry[1])
                for i in entry[2]:
                    values[i] = guards[i](pod, table)
                for source, positions in entry[3]:
                    value = source()
                    for i in positions:
                        values[i] = value
            else:
                values = entry[1]
            key = (*ids, table.node_version, *values)
        else:
            key = (*map(id, spec), table.node_version)
            if last is None or last[0] != key:
                shortcut = self._shortcut_once(pod, spec, key[:_NODE_VERSION_AT], table)
                if shortcut is not None:
                    return shortcut
        if last is not None and last[0] == key:
            return last[1]
        return self._look_up(pod, spec, key, table, snapshot, entry)

    def _shortcut_once(self, pod: "Pod", spec: tuple, ids: tuple, table: Any) -> "_Plan | _Declined | None":
        """:meth:`_plan_of_last_values` for spec objects met for the first time, None (the full
        path) for the spec objects the last shortcut was taken for. Why: the shortcut leaves no
        guard memo entry and no last lookup for its spec (made for specs met once), so pods that
        share spec objects but follow a pod of another spec that the shortcut relates them to
        (SchedulingDeletedPodsWithFinalizers: 5,000 measured light pods after 5,000 finalizer pods
        of an equal plan) took it every cycle, computing every guard and the shared key each time;
        the full path, taken on the second meeting, memoizes them, and the next pods of that spec
        find their plan by :meth:`_plan_of`'s first rule. The plan is the same either way (the
        shortcut's is the lookup's). The spec tuple is held, not its ids, so no id is reused."""
        last = self._shortcut_spec
        if last is not None and _same_objects(spec, last):
            self._shortcut_spec = None
            return None
        plan = self._plan_of_last_values(pod, spec, ids, table)
        self._shortcut_spec = spec if plan is not None else None
        return plan

    def _plan_of_last_values(self, pod: "Pod", spec: tuple, ids: tuple, table: Any) -> "_Plan | _Declined | None":
        """The plan of the last shared key (:meth:`_shared_key_of_last`) when ``pod``'s spec objects
        are new to the guard memo but differ from the last shared key's pod only in fields no plugin
        with a static part reads, with the same node-set version and guard values: a StatefulSet's
        pods, each with a label of its own (or pods one manifest each whose labels differ). Each
        such spec is met once, so the guard memo entry, the alias and the lookup :meth:`_look_up`
        would leave for it only fill and churn those caches (~10% of ``run()`` on such pods, issue
        29); the plan, its LRU place and its score cache are what the lookup would give. None: the
        full path (no last shared key, a field or guard that differs, a plan since evicted)."""
        if self._last_shared is None:
            return None
        guards = self._guards
        key = (*ids, table.node_version, *[guard(pod, table) for guard in guards])
        # (Any: the plan caches hold tuple keys and these value keys alike, as in _look_up)
        shared: Any = self._shared_key_of_last(pod, spec, table, key)
        if shared is None:
            return None
        plans = self._plans
        plan = plans.get(shared)
        if plan is None:
            return None
        self._touch(shared, plan, table.capacity)
        # (the last lookup's plan is no longer the most recent in the caches: _plan_of's first
        # rule would not hold for its spec; the memo path finds it again)
        self._last_lookup = None
        return plan

    def _merge_fit(self, fit: tuple, arrays: tuple, state: CycleState, pod: "Pod", table: Any, judged: Any,
                   rows: np.ndarray, nominated: list[int]
                   ) -> "tuple[np.ndarray, np.ndarray, np.ndarray, list[tuple[str, ...]]] | bool | None":
        """The node-only arrays and the resource Filter merged in one kernel pass
        (``_diagnosis.merge_fit``) over ``rows`` (the attempt's order), the resource checks judged on
        ``judged`` (the table, or the shadow with the nominated pods that count): ``(pid, code,
        rid, reasons)``; None when a node that holds no counted nomination passes both (the pod fits
        there: the caller declines, as the compiled cycle's walk finds it); False when the kernel
        cannot number the masks (the caller takes the plugin's filter_vectorized)."""
        j, _, checks = fit
        first, codes, rids, static_reasons = arrays[0], arrays[1], arrays[2], arrays[3]
        try:
            cols, wants, fit_reasons = checks(state, pod, table)
        except Exception:  # noqa: BLE001 - the plugin-call path runs the plugin again and reports it
            return None
        n = len(rows)
        pid = np.empty(n, dtype=np.int16)
        code = np.empty(n, dtype=np.int8)
        rid = np.empty(n, dtype=np.int32)
        patterns = self._patterns
        counted = self._rejects_mask(table.capacity, nominated) if len(nominated) else None
        cache = self._fit_cache
        key = (table.uid, np.asarray(cols, dtype=np.int64).tobytes(), np.asarray(wants, dtype=np.int64).tobytes())
        if cache is None or cache[0] != key or len(cache[1]) != table.capacity:
            cache = self._fit_cache = (key, np.full(table.capacity, -1, dtype=np.int64),
                                       np.zeros(table.capacity, dtype=np.int64))
        try:
            got = _diagnosis.merge_fit(rows, first, codes, rids, j, judged.pod_count, judged.allowed_pods,
                                       judged.alloc, judged.requested, cols, wants, _UNSCHEDULABLE, _UNRESOLVABLE,
                                       len(static_reasons), counted, pid, code, rid, patterns, table.row_version,
                                       cache[1], cache[2])
        finally:
            if counted is not None:
                counted[self._row_index(nominated)] = 1
        if got == _MERGE_FOUND:
            return None
        if got < 0:
            return False
        reasons = list(static_reasons)
        if got:
            memo = self._pattern_memo
            if len(memo) >= _PATTERN_MEMO_SIZE:
                memo.clear()
            base = id(fit_reasons)
            for mask in patterns[:got].tolist():
                hit = memo.get((base, mask))
                if hit is None or hit[0] is not fit_reasons:
                    hit = memo[(base, mask)] = (fit_reasons, tuple(
                        reason for b, reason in enumerate(fit_reasons) if (mask >> b) & 1))
                reasons.append(hit[1])
        return pid, code, rid, reasons

    def _diagnosis_arrays(self, plan: _Plan, state: CycleState, pod: "Pod", snapshot: Any) -> tuple | bool:
        """The plan's arrays for :meth:`diagnose`, or False when the plan cannot give them:

        * ``first`` (C,) int16: the profile position (in ``fw._filter_named``) of the first NODES
          Filter rejecting the row, -1 when none does; ``codes`` (C,) int8 and ``rids`` (C,) int32
          its code and reason tuple id in ``reasons`` (the NODES Filters' reason tuples);
        * ``dynamic``: (position, name, filter_vectorized) of the other Filters (RESOURCES and
          CYCLE forms), asked per attempt;
        * the Filters' names (FilterResults' ``plugin_names``) and the NODES ones';
        * ``fit``: (position, name, column_filter_checks) of the RESOURCES Filter that
          :meth:`_merge_fit` judges in the kernel pass (``framework.columns.ResourceFilterChecks``,
          the plugin's own beside its own filter_vectorized), or None.

        NODES verdicts depend on the pod's spec and the node set only, which the plan's key holds
        (as its ``static_ok``), so they are asked once, of the plugins with this cycle's state
        (written by the same PreFilters). A NODES verdict that is no rejection (an Error) or
        carries bad values leaves the plan to the plugin-call path."""
        fw = self.fw
        table = snapshot.table
        nodes = self._all_nodes(snapshot)
        rows = nodes.rows
        capacity = table.capacity
        first = np.full(capacity, -1, dtype=np.int16)
        codes = np.zeros(capacity, dtype=np.int8)
        rids = np.full(capacity, -1, dtype=np.int32)
        reasons: list[tuple[str, ...]] = []
        dynamic = []
        static_names = set()
        fit: tuple | None = None
        names = [name for name, _ in fw._filter_named]
        try:
            for j, (name, pl) in enumerate(fw._filter_named):
                if name in plan.skip_filter:
                    continue
                vec = fw._filter_vectorized.get(name)
                if vec is None:
                    return False
                kind = self._forms[name](pod, table).filter
                if kind != NODES:
                    dynamic.append((j, name, vec))
                    checks = (_paired_with_filter(pl, "column_filter_checks", vec) if kind == RESOURCES
                              else None)
                    if checks is not None and fit is None:
                        # judged by _merge_fit (a RESOURCES form: no DeviceClass takes a check
                        # over, so its verdicts are the check masks; see ResourceFilterChecks)
                        fit = (j, name, checks)
                    continue
                static_names.add(name)
                res = vec(state, pod, nodes)
                if res is None:
                    continue
                if not _verdicts_of_shape(res, len(rows)):
                    return False
                failed = (res.codes != 0) & (first[rows] < 0)  # (the first rejecting plugin wins)
                if failed.any() and not _record_rejections(res, failed, rows, j, first, codes, rids, reasons):
                    return False
        except Exception:  # noqa: BLE001 - the plugin-call path runs the plugin again and reports it
            return False
        return first, codes, rids, reasons, dynamic, names, frozenset(static_names), fit

    def _bind_new_table(self, table: Any) -> None:
        """What :meth:`schedule` does on a table it has not seen: bind it, drop every cache."""
        self._table = table
        self._columns = _cycle.TableColumns(table)
        self._plans.clear()
        self._aliases.clear()
        self._form_memo.clear()
        self._score_cached.clear()
        self._renamed.clear()
        self._last_lookup = None

    # -- Filter with nominated pods -----------------------------------------------------------------
    def _nominated_rows(self, pod: "Pod", table: Any, state: CycleState | None = None) -> list[int] | None:
        """The rows of the nodes holding a pod nominated to them of ``pod``'s priority or
        higher (other than ``pod``): where upstream's RunFilterPluginsWithNominatedPods runs its
        first pass with them added (addGENominatedPods), in the nominator's node order. None when
        the nominations cannot be listed (a Framework whose nominated pods come from an override of
        the runtime's methods, or a nominator that cannot list its nodes).

        The nominations are the table's :class:`~fastsched.runtime.nominated.NominationIndex`,
        the one the plugin-call path's Filter and the preemption dry run read (rebuilt only when the
        nominations change, extended when nodes are added): indexing them here again, a Python
        step per nominated pod whenever a preemption or a placement changed them (every cycle of
        PreemptionBasic), cost the compiled cycle a sixth of that workload's time. The rows are
        kept per selection (the index keeps the last priority and uid asked)."""
        fw = self.fw
        if fw.pod_nominator is None:
            return _NO_ROWS  # fw.nominated_pods_for_node has none either
        if not type(fw).nominated_filters_vectorizable:
            return None
        mapping = nominations_by_node(fw.pod_nominator)
        if mapping is not None and not mapping:
            # nobody is nominated (most cycles of most workloads): no row to judge, and no
            # NominatedUsage to select (its index check and array selection were a quarter of
            # SchedulingBasic's run(): issue 29)
            return _NO_ROWS
        nominator = fw.pod_nominator
        version = getattr(nominator, "version", None)
        width = len(table.resource_names)
        last = self._nominated_last
        if (state is not None and last is not None and last[0] is state and last[1] is pod and last[2] is table
                and last[3] is nominator and version is not None and last[4] == version
                and last[5] == table.node_version and last[6] == width):
            # the same cycle asking again (diagnose after the walk found no node), nothing
            # nominated or bound since (the version), the same nodes: the same rows (the index's
            # check and selection, a NominatedUsage and the memo's test, asked again, were 0.7%
            # of a PreemptionBasic preemptor's instructions: issue 29)
            return last[7]
        # (``state``: the cycle's, so that the plugin-call path's Filter and PostFilter of this cycle
        # find the index checked against the nominator's version only; see NominationIndex.get)
        counted = NominatedUsage(fw, table_state(table).nominations, pod, table, width, state).counted()
        if counted is None:
            return None
        memo = self._nominated_memo
        if memo[0] is counted:
            found = memo[1]
            self._nominated_last = (state, pod, table, nominator, version, table.node_version, width, found)
            return found
        rows = counted[0]
        if not len(rows):
            found, index = _NO_ROWS, np.zeros(0, dtype=np.intp)
        else:
            found, index = first_rows(rows)
        # (with the rows as an index array, for the masks set and reset at every walk and diagnosis)
        self._nominated_memo = (counted, found, index)
        self._nominated_last = (state, pod, table, nominator, version, table.node_version, width, found)
        return found

    def _walk_nominated(self, walk: Callable[[list[int]], "tuple[int, int] | None"], plan: _Plan, pod: "Pod",
                        snapshot: Any, order: np.ndarray, start: int, nominated: list[int]) -> tuple[int, int] | None:
        """The kernel's filter walk (``walk(masked rows) -> (found, examined)``) with the rows of
        ``nominated`` judged as upstream's two-pass Filter judges them, where the walk reaches them.

        The walk runs with those rows masked out (not feasible). The ones it reached (before the
        position where it stopped) are judged (:meth:`_nominated_rejects`); when some of them pass,
        the walk runs again with those unmasked. A row unmasked adds a feasible node, so the second
        walk stops no later than the first: the rows the first did not reach, it does not reach
        either, and their verdicts are not needed (upstream's search never judged them). None when
        a verdict needs the plugin-call path, and when the walk found no node (see below)."""
        placed = walk(nominated)
        if placed is None:
            return None
        if placed[0] == 0:
            # The walk found no node: only a nominated row that both passes accept could be
            # feasible, where the nominated pods that count on it leave room for this pod too. A
            # pod no other node fits seldom fits there (PreemptionBasic's preemptors never do: each
            # finds hundreds of nominated rows that fit as they are and that the first pass then
            # rejects, and judging them cost about a tenth of that workload's time), and the
            # plugin-call path decides such a pod as upstream does anyway: decline unjudged.
            return None
        examined = placed[1]
        n = len(order)
        last, positions = self._order_positions
        if last is not order or len(positions) < self._table.capacity:
            positions = np.full(self._table.capacity, -1, dtype=np.int64)
            positions[order] = np.arange(n, dtype=np.int64)
            self._order_positions = (order, positions)
        if len(nominated) < _VECTORIZED_NOMINATED_ROWS:
            reached = []
            for row in nominated:  # (a few rows: a loop costs less than array operations)
                p = int(positions[row])
                if p >= 0 and (p - start) % n < examined:
                    reached.append(row)
        else:  # hundreds of rows (PreemptionBasic's preemptors): a loop step each cost more
            rows = np.asarray(nominated, dtype=np.int64)
            p = positions[rows]
            reached = rows[(p >= 0) & ((p - start) % n < examined)].tolist()
        if not reached:
            return placed
        rejected = self._nominated_rejects(plan, pod, snapshot, reached)
        if rejected is None:
            return None
        if len(rejected) == len(reached):
            return placed
        passed = set(reached).difference(rejected)
        return walk([row for row in nominated if row not in passed])

    def _run_masked(self, fused: Any, order: np.ndarray, start: int, k: int, masked: list[int],
                    capacity: int) -> tuple[int, int]:
        """The kernel's filter walk with the rows ``masked`` not feasible: ``(found, examined)``."""
        if not len(masked):
            found, examined, _, _, _ = fused.run(self._columns, order, start, k, False, self.threads)
            return found, examined
        ok = self._rejects_mask(capacity, masked)
        try:
            found, examined, _, _, _ = fused.run(self._columns, order, start, k, False, self.threads, ok)
        finally:
            ok[self._row_index(masked)] = 1
        return found, examined

    def _nominated_rejects(self, plan: _Plan, pod: "Pod", snapshot: Any, rows: list[int]) -> list[int] | None:
        """Of ``rows`` (see _nominated_rows), the ones the first pass of Filter with nominated pods
        rejects: the runtime's own ``_add_ge_nominated_pods`` (a NodeInfo and CycleState clone with
        the nominated pods added through the PreFilter extensions' AddPod) and
        ``run_filter_plugins``, on a CycleState that every PreFilter plugin wrote, as the
        plugin-call path's. The kernel's own walk is the second pass (the node as it is): a row is
        feasible when both accept it (upstream runs the second pass only after the first accepted),
        and a rejected row is simply not feasible. Scores read the nodes as they are (upstream
        scores the NodeInfos the filter walked, not the clones), so they need nothing. None when a
        PreFilter or a verdict needs the plugin-call path (a failure, an Error). The PreFilters the
        plan found skipping (``plan.skip_filter``: plugins whose answer depends on the pod spec and
        the nodes only, which the plan is compiled for) are not called again: they skip, as in
        the kernel's own cycle."""
        fw = self.fw
        state = CycleState()
        nodes = snapshot.batch()
        skip = set()
        try:
            skip_filter = plan.skip_filter
            for pl in fw.pre_filter_plugins:
                name = pl.name()
                if name in skip_filter:
                    skip.add(name)
                    continue
                _, s = pl.pre_filter(state, pod, nodes)
                if s is not None:
                    if s.is_skip():
                        skip.add(name)
                    elif not s.is_success():
                        return None
            state.set_skip_filter_plugins(skip)
            table = snapshot.table
            if len(rows) >= _VECTORIZED_NOMINATED_ROWS:
                # the plugin-call path's vectorized first pass (runtime.nominated: the nominated
                # pods on a shadow of the table, each filter once per node) where the pod's filters
                # allow it: PreemptionBasic's preemptors leave hundreds of nominated rows, and a
                # NodeInfo clone with AddPod per row made the compiled cycle 7x slower than that path
                row_array = np.asarray(rows, dtype=np.int64)
                results = filter_with_nominated_pods(fw, state, pod, table_batch(table, row_array))
                if results is not None:
                    if results.first_error() >= 0:
                        return None
                    return row_array[~results.feasible()].tolist()
            names = table.node_names
            rejected = []
            for row in rows:
                added, state_with, node_with = fw._add_ge_nominated_pods(pod, state, snapshot.get(names[row]))
                if not added:
                    continue
                s = fw.run_filter_plugins(state_with, pod, node_with)
                if s is None or s.is_success():
                    continue
                if not s.is_rejected():
                    return None
                rejected.append(row)
        except Exception:  # noqa: BLE001 - the plugin-call path runs the plugins again and reports it
            return None
        return rejected

    def _rejects_mask(self, capacity: int, rejected: list[int]) -> np.ndarray:
        """The (C,) uint8 scratch of ones with 0 at ``rejected`` (the caller sets them back to 1)."""
        ok = self._nominated_ok
        if ok is None or len(ok) < capacity:
            ok = self._nominated_ok = np.ones(capacity, dtype=np.uint8)
        ok[self._row_index(rejected)] = 0
        return ok

    def _row_index(self, rows: list[int]) -> Any:
        """``rows`` as an index: the memo's array when they are the last :meth:`_nominated_rows`
        answer (hundreds of rows in a preemption-heavy run: a list converted at every mask set and
        reset cost more than the walk's kernel call), else the list itself."""
        memo = self._nominated_memo
        return memo[2] if rows is memo[1] and memo[2] is not None else rows

    def _run_cycle_forms(self, plan: _Plan, state: CycleState, pod: "Pod", snapshot: Any, order: np.ndarray,
                         start: int, k: int, nominated: list[int]) -> tuple | None:
        """The kernel run of a plan with CYCLE forms: their PreFilter over every node, their Filter
        with the kernel's a window at a time (:meth:`_filter_windows`), then their PreScore, Score
        and NormalizeScore on the feasible nodes found, and the kernel's scoring with those scores
        added. None when
        a plugin answers anything the kernel cannot take (the plugin-call path then runs, and
        reports it as upstream would). Their PreFilter and PreScore state is written to ``state``,
        as the plugin-call path writes it."""
        fused = plan.fused
        skip_filter, skip_score = plan.skip_filter, plan.skip_score
        try:
            nodes = snapshot.batch()
            skipped = set()
            for name, pre_filter in plan.cycle_pre_filter:
                result, s = pre_filter(state, pod, nodes)
                if s is not None:
                    if s.is_skip():
                        skipped.add(name)
                        continue
                    if not s.is_success():
                        return None
                if result is not None and not result.all_nodes():
                    return None
            if skipped:
                skip_filter = skip_filter | skipped
            filters = []
            table = snapshot.table
            for name, vec, window_mask, everywhere in plan.cycle_filter:
                if name in skipped:
                    continue
                # a Filter whose calls leave node-dependent state (NodeDependentFilterState) must
                # be asked only about the nodes every earlier Filter passed, as upstream asks it;
                # the windows ask about every node of a window: the plugin-call path instead
                records = self._node_state_hooks.get(name)
                if records is not None and records(state):
                    return None
                if everywhere is not None and everywhere(state, pod, table):
                    # it passes every row of the table this cycle (and has written the state
                    # its Filter would): it ANDs nothing into any window, so it is not asked per
                    # window; with no Filter left the kernel walks alone (_run_masked)
                    continue
                filters.append((vec, window_mask))
            capacity = table.capacity
            candidates = NodeBatch(snapshot.table, order)  # (PreFilter above saw every node; the windows are
            # the candidates', in ``order``)

            def walk(masked: list[int]) -> tuple[int, int] | None:
                if filters:
                    return self._filter_windows(fused, filters, state, pod, candidates, order, start, k, masked)
                return self._run_masked(fused, order, start, k, masked, capacity)

            placed = (self._walk_nominated(walk, plan, pod, snapshot, order, start, nominated) if len(nominated)
                      else walk(nominated))
            if placed is None:
                return None
            found, examined = placed
            if found < 2:
                return found, examined, 0, 0, 0, skip_filter, skip_score
            batch = None
            active = []
            if plan.cycle_pre_score or plan.cycle_score:
                batch = NodeBatch(snapshot.table, fused.selected_rows[:found].copy())
                skipped = set()
                for name, pre_score in plan.cycle_pre_score:
                    s = pre_score(state, pod, batch)
                    if s is not None:
                        if s.is_skip():
                            skipped.add(name)
                        elif not s.is_success():
                            return None
                if skipped:
                    skip_score = skip_score | skipped
                # a Score that scores 0 on every node this cycle (no NormalizeScore, see
                # _compile_plan) adds nothing to any total: its column is neither made nor added
                active = [entry for entry in plan.cycle_score
                          if entry[0] not in skipped and (entry[4] is None or not entry[4](state, pod))]
            extra = np.empty((len(active), found), dtype=np.int64)
            weights = np.empty(len(active), dtype=np.int64)
            for e, (name, score_vectorized, normalize, weight, _) in enumerate(active):
                scores, s = score_vectorized(state, pod, batch)
                if s is not None and not s.is_success():
                    return None
                if type(scores) is not np.ndarray or scores.shape != (found,) or scores.dtype.kind not in "iu":
                    return None
                extra[e] = scores
                if normalize is not None:
                    s = normalize(state, pod, extra[e], batch)
                    if s is not None and not s.is_success():
                        return None
                weights[e] = weight
        except Exception:  # noqa: BLE001 - the plugin-call path runs the plugin again and reports it
            return None
        best, ties, first = fused.score_found(self._columns, found, extra, weights, self.threads)
        return found, examined, best, ties, first, skip_filter, skip_score

    def _filter_windows(self, fused: Any, filters: list, state: CycleState, pod: "Pod", nodes: NodeBatch,
                        order: np.ndarray, start: int, k: int, masked: list[int]) -> tuple[int, int] | None:
        """The kernel's filter with CYCLE Filters, a window of the node order at a time (as the
        plugin-call path filters): the plugins' verdicts on the window's rows go into this cycle's
        mask, the kernel continues through the window, and a larger window follows until the
        (k+1)-th feasible node or the end of the order. ``(found, examined)``, or None for a
        verdict the kernel cannot take."""
        n = len(order)
        table = nodes.table
        mask = self._cycle_ok
        if mask is None or len(mask) < table.capacity:
            mask = self._cycle_ok = np.empty(table.capacity, dtype=np.uint8)
        found, i0 = 0, 0
        width = k + (k >> 2) + CYCLE_WINDOW_SLACK
        while True:
            i1 = min(n, i0 + width)
            window = nodes.window(start, i0, i1)
            rows = window.rows
            passing = None
            written = False  # whether the mask holds the verdicts of the filters so far (passing is None)
            for filter_vectorized, window_mask in filters:
                if window_mask is not None and passing is None and window_mask(state, pod, window, mask,
                                                                                not written):
                    # the plugin wrote whether each row passes into the mask (ANDed after the first):
                    # its verdicts' codes == 0 without the codes and reasons (no Error verdicts)
                    written = True
                    continue
                if written:  # the next filters' verdicts AND into what the mask holds
                    passing = mask[rows] != 0
                    written = False
                res = filter_vectorized(state, pod, window)
                if res is None:
                    continue
                if type(res) is not FilterVerdicts:
                    return None
                codes = res.codes
                if type(codes) is not np.ndarray or codes.shape != rows.shape:
                    return None
                if passes_every_node(res):
                    continue  # FilterVerdicts.all_pass: ANDs nothing into the window's verdicts
                ok = codes == 0
                if not ok.all() and (codes == _ERROR).any():
                    return None
                passing = ok if passing is None else passing & ok
            if not written:
                mask[rows] = 1 if passing is None else passing
            if len(masked):  # (rows outside the window are not walked: all of them can be set)
                mask[masked] = 0
            found, examined = fused.filter_window(self._columns, order, start, k, i0, i1, found, mask)
            if examined >= 0:
                return found, examined
            i0 = i1
            width *= 2

    def _shared_key(self, pod: "Pod", spec: tuple, table: NodeTable, key: tuple) -> "_ValueKey | None":
        """The key of a plan that pods with equal spec values can share, also when their spec
        objects are not the same (pods a controller created, each parsed from its own manifest), and
        that pods differing only in fields read by CYCLE parts alone share (a StatefulSet's pods,
        each with its own claims: only the volume plugins read ``volumes``, and they judge those
        pods each cycle): the plugins' forms, and the values (the identity, for values that cannot
        be hashed) of the fields some plugin with a static part (a NODES or RESOURCES Filter or
        Score) reads. None when a plugin has no form for the pod."""
        forms = []
        read: set[str] = set()
        mounts_read = False
        if self._reads is None:  # not called then: without every plugin's reads no plan is shared
            return None
        same = self._shared_key_of_last(pod, spec, table, key)
        if same is not None:
            return same
        # Each plugin's form is remembered by the identity of the values it reads: pods whose spec
        # objects differ only in fields some plugins read (a StatefulSet's pods, a label each)
        # call only those plugins' column_form (a third of run() on such pods when every plugin
        # was asked for every pod).
        tail = key[len(SPEC_FIELDS):]
        memo = self._form_memo
        if len(memo) > FORM_MEMO_SIZE:
            memo.clear()
        for index, (form_of, reads) in enumerate(self._reads):
            values = tuple([spec[i] for i in self._read_positions[index]])
            memo_key = (index, *map(id, values), *tail)
            known = memo.get(memo_key)
            if known is not None:
                form = known[1]
            else:
                form = form_of(pod, table)
                memo[memo_key] = (values, form)
            if form is None:
                return None
            forms.append(form)
            if form.filter not in _PER_CYCLE_KINDS or form.score not in _PER_CYCLE_KINDS:
                form_reads = reads if form.reads is None else form.reads
                read.update(form_reads)
                if self._reads_mounts[index] and not _CONTAINER_FIELDS.isdisjoint(form_reads):
                    mounts_read = True
        # Containers (and overhead, pod-level resources) compare by their rounded amounts: pods whose
        # exact nano-unit requests differ compare equal there, so the totals the plugins use join.
        # Their mounts are left out when no plugin with a static part reads them: every pod of a
        # dump mounts a ServiceAccount token volume of its own name (kube-api-access-<random>),
        # which no plugin's plan depends on (the volume plugins read the volumes, not the mounts,
        # and judge a projected volume as no volume at all)
        exact = (pod.requests, pod.non_zero_requests, pod.scoring_requests) if read & _REQUEST_FIELDS else None
        shared = _ValueKey((tuple((_by_value(v) if mounts_read or f not in _CONTAINER_FIELDS else _without_mounts(v))
                                  if f in read else None for f, v in zip(SPEC_FIELDS, spec)), exact,
                            tuple(forms), *key[len(SPEC_FIELDS):]))
        self._last_shared = (table, spec, tail, tuple(forms), frozenset(read), shared, mounts_read)
        return shared

    def _shared_key_of_last(self, pod: "Pod", spec: tuple, table: NodeTable, key: tuple) -> "_ValueKey | None":
        """The last shared key _shared_key computed, when it is ``pod``'s too, else None (compute
        it). It is when the table, the node-set version and the guards' values are the last
        computation's, the spec objects differ from that pod's only in fields that no plugin with
        a static part read there (request fields excepted: ``pod.requests`` is part of the key),
        and every plugin reading one of those fields answers the same form for ``pod``: then each
        form, the fields read and their values are the same, so the key is. Scheduler_perf's
        volume cases: each pod mounts its own claim (only ``volumes`` differs, which only the
        volume plugins' CYCLE parts read); the full key was ~40 us of ~250 a cycle."""
        last = self._last_shared
        if last is None or last[0] is not table:
            return None
        _, last_spec, tail, forms, read, shared, mounts_read = last
        if key[len(SPEC_FIELDS):] != tail:
            return None
        readers: list[int] = []   # the plugins reading a changed field (indexes in _reads)
        readers_at = self._readers_at
        for i in _SPEC_POSITIONS:
            if spec[i] is not last_spec[i]:
                if not mounts_read and i in _CONTAINER_POSITIONS and _differ_in_mounts_only(spec[i], last_spec[i]):
                    # (containers whose other fields are the very objects of the last pod's: the
                    # key's containers without their mounts and the request totals are the same;
                    # the forms that may depend on mounts are asked)
                    readers.extend(self._mount_readers_at[i])
                    continue
                field = SPEC_FIELDS[i]
                if field in read or field in _REQUEST_FIELDS:
                    return None
                readers.extend(readers_at[i])
        if readers:
            reads = self._reads or ()
            # (in plugin order, each once: a plugin reading two changed fields is asked once)
            for index in (readers if len(readers) == 1 else sorted(set(readers))):
                form = reads[index][0](pod, table)
                if form is None or form != forms[index]:
                    return None
        self._last_shared = (table, spec, tail, forms, read, shared, mounts_read)
        return shared

    def _touch(self, key: Any, plan: "_Plan | _Declined", capacity: int) -> None:
        """A plan found again under ``key`` (a lookup's or the last shared key's): most recent in
        the plan cache, and in the score caches' order (or given a score cache: see
        :meth:`_give_score_cache`)."""
        self._plans.move_to_end(key)
        if type(plan) is _Plan:
            if not plan.score_cached:
                self._give_score_cache(key, plan, capacity)
            elif key in self._score_cached:
                self._score_cached.move_to_end(key)

    def _give_score_cache(self, key: tuple, plan: _Plan, capacity: int) -> None:
        """A plan used again keeps its rows' resource scores (FusedPlan.enable_score_cache),
        within score_cache_budget: the least recently used plans' caches are dropped for it."""
        plan.score_cached = True
        if self.score_cache_budget <= 0 or not plan.fused.enable_score_cache(capacity):
            return
        cached = self._score_cached
        cached[key] = plan
        total = sum(p.fused.score_cache_nbytes for p in cached.values())
        while total > self.score_cache_budget and cached:
            _, old = cached.popitem(last=False)
            total -= old.fused.score_cache_nbytes
            old.fused.drop_score_cache()

    # -- compiling a pod spec ------------------------------------------------------------------------
    def _compile(self, pod: "Pod", spec: tuple, snapshot: Any) -> _Plan | _Declined:
        if not self.enabled:
            return _Declined(self.declined_reason, spec)
        try:
            return self._compile_plan(pod, spec, snapshot)
        except _Decline as d:
            return _Declined(str(d), spec)
        except Exception as e:  # noqa: BLE001 - the plugin-call path reports it as upstream would
            return _Declined(f"{type(e).__name__}: {e}", spec)

    def _compile_plan(self, pod: "Pod", spec: tuple, snapshot: Any) -> _Plan:
        fw = self.fw
        table = snapshot.table
        nodes = snapshot.batch()
        rows = nodes.rows
        forms: dict[str, ColumnForm] = {}
        for name, form_of in self._forms.items():
            form = form_of(pod, table)
            if form is None:
                raise _Decline(f"{name} has no column form for this pod")
            forms[name] = form
        states: dict[str, CycleState] = {name: CycleState() for name in self.plugins}

        # PreFilter: Skip removes the Filter; anything but a plain Success declines. A
        # PreFilterResult naming nodes (NodeAffinity's metadata.name, DaemonSet pods) restricts the
        # cycle to them, as findNodesThatFitPod does (see CompiledCycle.schedule).
        skip_filter: set[str] = set()
        narrowed_names: set[str] | None = None
        cycle_pre_filter = []
        for pl in fw.pre_filter_plugins:
            name = pl.name()
            if forms[name].filter == NONE:
                raise _Decline(f"{name} is a PreFilter plugin without a Filter column form")
            if forms[name].filter == CYCLE:
                cycle_pre_filter.append((name, pl.pre_filter))  # run each cycle (_run_cycle_forms)
                continue
            r, s = pl.pre_filter(states[name], pod, nodes)
            if s is not None and s.is_skip():
                skip_filter.add(name)
                continue
            if s is not None and not s.is_success():
                raise _Decline(f"{name} PreFilter returned {s.code()}")
            if r is not None and r.node_names is not None:
                # upstream merges the PreFilterResults (the intersection of the names)
                narrowed_names = set(r.node_names) if narrowed_names is None else narrowed_names & r.node_names

        capacity = table.capacity
        static_ok = np.ones(capacity, dtype=np.uint8)
        fit_cols = fit_wants = can_pass = None
        fit_plugin: Any = None
        cycle_filter = []
        for fpl in fw.filter_plugins:
            name = fpl.name()
            if name in skip_filter:
                continue
            kind = forms[name].filter
            if kind == CYCLE:
                vec = fw._filter_vectorized.get(name)
                if vec is None:
                    raise _Decline(f"{name} has no filter_vectorized")
                cycle_filter.append((name, vec, _window_mask_of(fpl, vec),
                                     _paired_with_filter(fpl, "filter_passes_everywhere", vec)))
            elif kind == RESOURCES:
                if fit_cols is not None:
                    raise _Decline("more than one resource Filter")
                # a RESOURCES filter form promises column_filter_params (fastsched.framework.columns)
                cols, wants = cast(ResourceFilterColumns, fpl).column_filter_params(states[name], pod, table)
                fit_cols = np.ascontiguousarray(cols, dtype=np.int64)
                fit_wants = np.ascontiguousarray(wants, dtype=np.int64)
                # the rows it can pass at all, when it can tell (Fit.column_filter_rows): the
                # kernel skips the others without reading their resource columns
                rows_of = getattr(fpl, "column_filter_rows", None)
                can_pass = rows_of(states[name], pod, table) if rows_of is not None else None
                fit_plugin = fpl
            elif kind == NODES:
                vec = fw._filter_vectorized.get(name)
                if vec is None:
                    raise _Decline(f"{name} has no filter_vectorized")
                res = vec(states[name], pod, nodes)
                if res is None:
                    continue
                if not isinstance(res, FilterVerdicts):
                    raise _Decline(f"{name} Filter returned {type(res).__name__}")
                codes = np.asarray(res.codes)
                if codes.shape != rows.shape or (codes == _ERROR).any():
                    raise _Decline(f"{name} Filter verdicts need the plugin-call path")
                static_ok[rows[codes != 0]] = 0
            else:
                raise _Decline(f"{name} is a Filter plugin without a Filter column form")

        # PreScore: Skip removes the Score.
        skip_score: set[str] = set()
        cycle_pre_score = []
        for ppl in fw.pre_score_plugins:
            name = ppl.name()
            if forms[name].score == NONE:
                raise _Decline(f"{name} is a PreScore plugin without a Score column form")
            if forms[name].score == CYCLE:
                cycle_pre_score.append((name, ppl.pre_score))
                continue
            s = ppl.pre_score(states[name], pod, nodes)
            if s is not None and s.is_skip():
                skip_score.add(name)
                continue
            if s is not None and not s.is_success():
                raise _Decline(f"{name} PreScore returned {s.code()}")

        static_cols, static_modes, static_weights = [], [], []
        rs = []
        cycle_score = []
        offset = 0
        for spl in fw.score_plugins:
            name = spl.name()
            if name in skip_score:
                continue
            form = forms[name]
            weight = fw.score_plugin_weight[name]
            if form.score == CYCLE:
                vec = fw._score_vectorized.get(name)
                if vec is None:
                    raise _Decline(f"{name} has no score_vectorized")
                ext = spl.score_extensions()
                normalize = None
                if ext is not None:
                    normalize = vectorized_method(ext, "normalize_score_vectorized")
                    if normalize is None:
                        raise _Decline(f"{name} has no normalize_score_vectorized")
                # (a plugin's "0 on every node this cycle" stands for its Score only without a
                # NormalizeScore: a normalized column of zeros need not be zeros; with one, its
                # "normalized to 0 on every node" does, asked only of the plugin's own pair)
                if normalize is None:
                    zero = _paired_with_filter(spl, "score_zero_everywhere", vec, "score_vectorized")
                else:
                    zero = _paired_with_filter(spl, "normalized_score_zero_everywhere", vec, "score_vectorized")
                    if zero is not None and not _own_normalize(spl, ext, normalize):
                        zero = None
                cycle_score.append((name, vec, normalize, weight, zero))
            elif form.score == RESOURCES:
                # a RESOURCES score form promises column_score_params (fastsched.framework.columns)
                rs.append((cast(ResourceScoreColumns, spl).column_score_params(states[name], pod, table), weight))
            elif form.score == NODES:
                vec = fw._score_vectorized.get(name)
                if vec is None:
                    raise _Decline(f"{name} has no score_vectorized")
                scores, s = vec(states[name], pod, nodes)
                if s is not None and not s.is_success():
                    raise _Decline(f"{name} Score returned {s.code()}")
                raw = np.asarray(scores, dtype=np.int64)
                ext = spl.score_extensions()
                if ext is not None and form.normalize == NORMALIZE_NONE:
                    raise _Decline(f"{name} normalizes its scores but its column form does not say how")
                constant = _constant_score(raw, form.normalize)
                if constant is not None:
                    # the same normalized score on every node, whichever are scored: a fixed offset
                    offset += constant * weight
                    continue
                column = np.zeros(capacity, dtype=np.int64)
                column[rows] = raw
                static_cols.append(column)
                static_modes.append(form.normalize)
                static_weights.append(weight)
            else:
                raise _Decline(f"{name} is a Score plugin without a Score column form")

        # (a CYCLE plugin's PreFilter already runs on each cycle's state)
        state_plugins = [pl for pl in fw.pre_filter_plugins
                         if forms[pl.name()].keeps_state and forms[pl.name()].filter != CYCLE]
        others = (np.ascontiguousarray(np.vstack(static_cols)) if static_cols else _EMPTY_STATIC,
                  np.array(static_modes, dtype=np.int64), np.array(static_weights, dtype=np.int64),
                  *_pack_resource_scorers(rs))
        base_ok = static_ok
        if can_pass is not None:  # (the resource Filter's rows: _derive puts another pod's in)
            static_ok = static_ok.copy()
            static_ok[~can_pass] = 0
        fused = _cycle.FusedPlan(None if static_ok.all() else static_ok, fit_cols, fit_wants, *others,
                                 offset=offset)
        plan = _Plan(fused, spec, frozenset(skip_filter), frozenset(skip_score), state_plugins, cycle_pre_filter,
                     cycle_filter, cycle_pre_score, cycle_score)
        plan.stateless_binding = bool(state_plugins) and self._stateless_binding(plan.skip_filter)
        plan.idle = self.fw.idle_binding_for(plan.skip_filter)
        if narrowed_names is not None:
            if plan.has_cycle_parts:
                raise _Decline("a PreFilter narrowed the nodes of a plan with per-cycle parts")
            row_of = table.row_of
            named = [row_of[n] for n in narrowed_names if n in row_of]
            if not named:
                raise _Decline("the PreFilterResult names no node of the snapshot")
            plan.narrowed = np.zeros(capacity, dtype=bool)
            plan.narrowed[named] = True
        if fit_plugin is not None and fit_plugin in fw.pre_filter_plugins:
            plan.renamable = (base_ok, fit_plugin, others, offset)
        return plan

    def _renamed_key(self, pod: "Pod", spec: tuple, shared_key: "_ValueKey") -> "_ValueKey | None":
        """``shared_key`` with the pod's renamable extended resources renamed by their order in
        ``pod.requests`` (0, 1, ...): pods with equal renamed keys differ at most in which extended
        resources (by name) they request, where every plugin reading request fields names the
        resources its plan parts depend on by name (``column_named_resources``; Fit's and
        BalancedAllocation's scoring resources, a DeviceClass's) and those are not renamed: the
        resource Filter's checks and rows are then all that differ (see _derive). Scheduler_perf
        SchedulingWithExtendedResource: 5,000 pods, each requesting its own ``foo.com/bar-<i>``,
        each compiled a plan of its own. None when nothing is renamed or a plugin cannot say."""
        requests = pod.requests
        fixed: set[str] = set()
        for named in self._namers or ():
            names = named(pod)
            if names is None:
                return None
            fixed.update(names)
        mapping: dict[str, int] = {}
        for name in requests:
            if name not in fixed and _is_extended_resource_name(name):
                mapping[name] = len(mapping)
        if not mapping:
            return None
        values, exact, forms, *tail = shared_key.parts
        overhead, resources = spec[_OVERHEAD_AT], spec[_RESOURCES_AT]
        if (overhead and not mapping.keys().isdisjoint(overhead)) or (
                resources is not None and not (mapping.keys().isdisjoint(resources.requests)
                                               and mapping.keys().isdisjoint(resources.limits))):
            return None  # (pod-level amounts of them: not renamed, so no plan derived)

        def rename(amounts: Any) -> dict:
            return {mapping.get(n, n): v for n, v in amounts.items()}

        def containers(cs: Any) -> Any:
            if cs is None:
                return None
            return tuple(c.replace(requests=rename(c.requests), limits=rename(c.limits))
                         if not (mapping.keys().isdisjoint(c.requests) and mapping.keys().isdisjoint(c.limits))
                         else c for c in cs)

        values = list(values)
        values[_CONTAINERS_AT] = containers(values[_CONTAINERS_AT])
        values[_INIT_CONTAINERS_AT] = containers(values[_INIT_CONTAINERS_AT])
        if exact is not None:
            exact = tuple(frozenset(rename(amounts).items()) for amounts in exact)  # (hashable, as a map compares)
        elif values[_CONTAINERS_AT] is None and values[_INIT_CONTAINERS_AT] is None:
            return None  # (no plugin with a static part reads the requests: shared_key shares already)
        return _ValueKey((tuple(values), exact, forms, *tail))

    def _derive(self, template: _Plan, pod: "Pod", spec: tuple, snapshot: Any) -> _Plan | None:
        """``pod``'s plan from ``template``, a plan compiled for a pod of the same renamed key
        (_renamed_key): everything but the resource Filter's checks and rows is the template's
        (those plugins' answers do not depend on the renamed names); those are asked of the plugin
        for ``pod``, as _compile_plan asks them. None (compile it) when its PreFilter does not
        answer a plain Success."""
        assert template.renamable is not None
        base_ok, fit, others, offset = template.renamable
        table = snapshot.table
        state = CycleState()
        r, s = fit.pre_filter(state, pod, snapshot.batch())
        if (s is not None and not s.is_success()) or (r is not None and r.node_names is not None):
            return None
        cols, wants = fit.column_filter_params(state, pod, table)
        rows_of = getattr(fit, "column_filter_rows", None)
        can_pass = rows_of(state, pod, table) if rows_of is not None else None
        static_ok = base_ok
        if can_pass is not None:
            static_ok = base_ok.copy()
            static_ok[~can_pass] = 0
        fused = _cycle.FusedPlan(None if static_ok.all() else static_ok, np.ascontiguousarray(cols, dtype=np.int64),
                                 np.ascontiguousarray(wants, dtype=np.int64), *others, offset=offset)
        plan = _Plan(fused, spec, template.skip_filter, template.skip_score, template.state_plugins,
                     template.cycle_pre_filter, template.cycle_filter, template.cycle_pre_score,
                     template.cycle_score)
        plan.stateless_binding = template.stateless_binding
        plan.idle = template.idle  # (the same skip set and framework: the same answer)
        plan.narrowed = template.narrowed
        plan.renamable = template.renamable
        return plan


class _Decline(Exception):
    pass


#: a shared plan's key (:meth:`CompiledCycle._shared_key`): its parts (containers, label maps, ...)
#: hash deeply each time, and the key is looked up on every cycle of the pods that find their plan by it
_ValueKey = HashedKey


def _by_value(value: Any) -> Any:
    """A spec field as a key: its value (spec values are immutable), or its identity when it cannot
    be hashed (raw manifest parts such as ``volumes``)."""
    try:
        hash(value)
    except TypeError:
        return ("id", id(value))
    return value


def _without_mounts(containers: Any) -> Any:
    """Containers as a key when no plugin with a static part reads their mounts: each without its
    ``volume_mounts`` (the containers themselves when none has any)."""
    if not any(c.volume_mounts for c in containers):
        return containers
    return tuple(c.replace(volume_mounts=()) if c.volume_mounts else c for c in containers)


def _differ_in_mounts_only(a: Any, b: Any) -> bool:
    """Whether containers ``a`` and ``b`` (tuples) are pairwise the same objects or hold the very
    same field objects but their ``volume_mounts`` (a pod stamped from a template, with its own
    token mount: its containers are copies of the template's, see ``api.templates``)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x is not y:
            for name in _CONTAINER_SLOTS_BUT_MOUNTS:
                if getattr(x, name) is not getattr(y, name):
                    return False
    return True


def _constant_score(raw: np.ndarray, normalize: int) -> int | None:
    """The normalized score every node gets when a plugin's raw scores are all equal (None when
    they are not, or when that score is outside [0, 100] and the kernel must report it)."""
    if raw.size == 0 or not (raw == raw[0]).all():
        return None
    c = int(raw[0])
    if normalize == NORMALIZE_DEFAULT:
        value = MAX_NODE_SCORE if c > 0 else c          # DefaultNormalizeScore: max 0 leaves scores
    elif normalize == NORMALIZE_DEFAULT_REVERSE:
        value = 0 if c > 0 else MAX_NODE_SCORE
    else:
        value = c
    return value if 0 <= value <= MAX_NODE_SCORE else None


def _pack_resource_scorers(scorers: list) -> tuple:
    """Concatenate resource scorers' arrays with offsets, as FusedPlan takes them."""
    kinds = np.array([p.kind for p, _ in scorers], dtype=np.int64)
    weights = np.array([w for _, w in scorers], dtype=np.int64)
    sizes = [len(p.alloc_cols) for p, _ in scorers]
    shape_sizes = [len(p.shape_u) for p, _ in scorers]
    off = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    shape_off = np.concatenate(([0], np.cumsum(shape_sizes))).astype(np.int64)

    def cat(attr: str, dtype: Any) -> np.ndarray:
        parts = [np.asarray(getattr(p, attr), dtype=dtype) for p, _ in scorers]
        return np.ascontiguousarray(np.concatenate(parts) if parts else np.zeros(0, dtype=dtype), dtype=dtype)

    return (kinds, weights, off, cat("alloc_cols", np.int64), cat("used_cols", np.int64),
            cat("used_nonzero", np.uint8), cat("requests", np.int64), cat("weights", np.int64),
            shape_off, cat("shape_u", np.int64), cat("shape_s", np.int64))


__all__ = ["CompiledCycle", "SPEC_FIELDS", "PLAN_CACHE_SIZE"]
