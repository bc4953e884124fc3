"""DryRunPreemption over the node table (upstream ``DryRunPreemption`` and ``SelectVictimsOnNode``,
``pkg/scheduler/framework/preemption/preemption.go`` and ``defaultpreemption/default_preemption.go``).

Upstream dry-runs preemption one node at a time: copy the NodeInfo and the CycleState, remove every
lower-priority pod, run RunFilterPluginsWithNominatedPods, then add the pods back one by one (the
PDB-violating ones first) and keep those with which the preemptor still fits. fastsched does the
same for every walked node at once when the Filter plugins that can still reject the preemptor have
a form that works on columns:

* *node-only* filters, whose verdict does not depend on the pods on the node (NodeUnschedulable,
  NodeName, TaintToleration, NodeAffinity): their own ``filter_vectorized`` on the table;
* *additive* filters, whose verdict depends on the node's pods only through sums (NodeResourcesFit:
  requested resources and pod count; NodePorts: host ports in use): NodeResourcesFit's checks and
  NodePorts' conflict rule on the dry run's usage (lower-priority pods removed, nominated pods of
  equal or higher priority added, as the first pass of RunFilterPluginsWithNominatedPods does), in
  :mod:`fastsched._kernels._preemption` during the reprieve;
* every other Filter plugin is in the PreFilter skip set, and no PreFilter plugin outside it has
  AddPod/RemovePod extensions (so removing or adding a pod changes no CycleState).

Otherwise (another plugin can reject the pod, a custom ``is_eligible_pod`` or victim order, a
subclass overriding the per-node steps, a handle that is not the in-tree Framework) the Evaluator
takes the per-node path, which stays the reference: both give the same candidates, victims in the
same order, PDB violations, node statuses (same order), errors and random draws;
``tests/test_vectorized.py`` checks it on random clusters.

Why the additive form is exact: the second pass of RunFilterPluginsWithNominatedPods runs on fewer
pods than the first, and these filters pass it whenever they pass the first (fewer pods never use
more resources or ports); and a node that fits the preemptor with some pods fits it with one more
exactly when that pod's requests fit in what is left and it uses no port the preemptor wants.

Statuses: a walked node that fails gets the status the runtime's own vectorized Filter gives on a
shadow table holding the dry run's usage (the same code path, so the same first failing plugin and
reasons); it is built when first read, since only a preemption that finds no candidate reads it.

The same shadow gives :func:`filter_with_nominated_pods`, RunFilterPluginsWithNominatedPods over
many nodes in one vectorized pass (the scheduling cycle's Filter with nominated pods).

Caches: the bound pods' attributes live in :class:`PodColumns`, a per-table pool reloaded row by
row when the table's ``row_version`` moves; the nominated pods in :class:`_NominationIndex`, rebuilt
when the nominations change.
"""
from __future__ import annotations

import collections.abc
import itertools
import operator
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..._kernels import _preemption
from ...extender.extender import Victims
from ...framework.status import Code, Status, StatusError
from ...framework.types import HostPortInfo, NodeToStatus
from ...runtime.capabilities import vectorized_method
from ...snapshot.snapshot import NodeBatch
from .util import NOT_STARTED

if TYPE_CHECKING:  # pragma: no cover
    from ...api import Pod
    from ...framework.cycle_state import CycleState
    from ...snapshot.table import NodeTable

#: Filter plugins whose verdict does not depend on the pods on the node.
NODE_ONLY_FILTERS = ("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity")
#: Filter plugins whose verdict depends on the node's pods only through sums (see the module doc).
ADDITIVE_FILTERS = ("NodeResourcesFit", "NodePorts")

_ERROR = int(Code.ERROR)
_SHADOW_VERSIONS = itertools.count(1)
#: First window of walked nodes, in multiples of numCandidates (doubled while too few are found).
_FIRST_WINDOW_FACTOR = 1.25
_MIN_WINDOW = 32


_CLASSES: dict[str, type] = {}


def _plugin_classes() -> dict[str, type]:
    """The in-tree classes of the filters above (imported late: plugins import this package)."""
    if not _CLASSES:
        _CLASSES.update(_import_plugin_classes())
    return _CLASSES


def _import_plugin_classes() -> dict[str, type]:
    from ..nodeaffinity.node_affinity import NodeAffinity
    from ..nodename import NodeName
    from ..noderesources.fit import Fit
    from ..nodeports import NodePorts
    from ..nodeunschedulable import NodeUnschedulable
    from ..tainttoleration import TaintToleration
    classes = {"NodeUnschedulable": NodeUnschedulable, "NodeName": NodeName, "TaintToleration": TaintToleration,
               "NodeAffinity": NodeAffinity, "NodeResourcesFit": Fit, "NodePorts": NodePorts}
    assert set(classes) == set(NODE_ONLY_FILTERS) | set(ADDITIVE_FILTERS)
    return classes


# ------------------------------------------------------------------------------------------------
# eligibility
# ------------------------------------------------------------------------------------------------
class DryRunPlan:
    """What the vectorized dry run needs for one pod: which filters are active, and the additive ones'
    checks.

    ``check_fit``: NodeResourcesFit is active; ``cols``/``wants`` its resource checks (table columns,
    -1 when no node has the resource; the requests; empty without checks) and ``fit_state`` whether
    its PreFilter state exists. ``check_ports``: NodePorts is active; ``wanted_ports`` the pod's host
    ports (None without the PreFilter state). ``node_only``: the active node-only filters.
    """

    __slots__ = ("check_fit", "cols", "wants", "check_ports", "wanted_ports", "node_only", "fit_state")

    def __init__(self) -> None:
        self.check_fit = False
        self.cols = np.zeros(0, dtype=np.int64)
        self.wants = np.zeros(0, dtype=np.int64)
        self.check_ports = False
        self.wanted_ports: tuple | None = None
        #: the active node-only filters, in profile order
        self.node_only: list[str] = []
        self.fit_state = False

    @property
    def additive_exact(self) -> bool:
        """Whether the additive filters' verdicts follow from the plan alone: their PreFilter
        states exist, so they answer Success or Unschedulable, never Error."""
        return (not self.check_fit or self.fit_state) and (not self.check_ports or self.wanted_ports is not None)


_FRAMEWORK_METHODS = ("run_filter_plugins_with_nominated_pods", "run_filter_plugins", "_add_ge_nominated_pods",
                      "run_pre_filter_extension_add_pod", "run_pre_filter_extension_remove_pod",
                      "run_filter_plugins_vectorized", "nominated_pods_for_node")
_PLUGIN_METHODS = ("select_victims_on_node", "is_preemption_allowed", "has_potential_victims", "no_victims_status",
                   "_sort_by_importance", "_remove_pod", "_index_pdbs")


def plan_dry_run(plugin: Any, state: "CycleState", pod: "Pod", table: "NodeTable") -> DryRunPlan | None:
    """A :class:`DryRunPlan` when the vectorized dry run reproduces the per-node one, else None."""
    from .default_preemption import DefaultPreemption
    from .util import more_important_pod

    if not isinstance(plugin, DefaultPreemption):
        return None
    cls = type(plugin)
    if any(getattr(cls, m) is not getattr(DefaultPreemption, m) for m in _PLUGIN_METHODS):
        return None
    if plugin.is_eligible_pod is not None or plugin.more_important_pod is not more_important_pod:
        return None
    return filters_plan(plugin.handle, state, table)


def filters_plan(handle: Any, state: "CycleState", table: "NodeTable") -> DryRunPlan | None:
    """A :class:`DryRunPlan` when every Filter plugin that can still reject the pod (outside the
    PreFilter skip set) is node-only or additive and no PreFilter plugin outside it has
    AddPod/RemovePod extensions (so adding or removing pods changes no CycleState); else None."""
    skip = state.skip_filter_plugins
    # what the plan reads: the profile, the skip set, the PreFilter states, the table's resources
    key = (handle, skip, table, len(table.resource_names), state.get(_FIT_STATE_KEY), state.get(_PORTS_STATE_KEY))
    last = _LAST_PLAN[0]
    if last is not None and len(last[0]) == len(key) and all(map(operator.is_, last[0], key)):
        return last[1]
    plan = _filters_plan(handle, state, table, skip)
    _LAST_PLAN[0] = (key, plan)
    return plan


_FIT_STATE_KEY = "PreFilterNodeResourcesFit"
_PORTS_STATE_KEY = "PreFilterNodePorts"
#: the last (key, plan) of filters_plan: a scheduling cycle asks for the same pod several times
_LAST_PLAN: list = [None]


def _filters_plan(handle: Any, state: "CycleState", table: "NodeTable", skip: Any) -> DryRunPlan | None:
    from ...runtime.framework import Framework
    if not isinstance(handle, Framework):
        return None
    hcls = type(handle)
    if any(getattr(hcls, m) is not getattr(Framework, m) for m in _FRAMEWORK_METHODS):
        return None
    for pl in handle.pre_filter_plugins:
        if pl.name() in skip:
            continue
        try:
            if pl.pre_filter_extensions() is not None:
                return None  # AddPod/RemovePod would change the state per removed pod
        except Exception:  # noqa: BLE001 - the per-node path reports it
            return None
    classes = _plugin_classes()
    plan = DryRunPlan()
    for pl in handle.filter_plugins:
        name = pl.name()
        if name in skip:
            continue
        cls_ = classes.get(name)
        if cls_ is None or not isinstance(pl, cls_) or vectorized_method(pl, "filter_vectorized") is None:
            return None
        if name == "NodeResourcesFit":
            plan.check_fit = True
            _fit_checks(plan, pl, state, table)
        elif name == "NodePorts":
            plan.check_ports = True
            plan.wanted_ports = _wanted_ports(state)
        else:
            plan.node_only.append(name)
    return plan


def _fit_checks(plan: DryRunPlan, fit: Any, state: "CycleState", table: "NodeTable") -> None:
    """NodeResourcesFit's checks (``fitsRequest``): the resources with a non-zero request, not ignored."""
    from ..noderesources import fit as fit_module
    pod_request, status = fit_module.get_pre_filter_state(state)
    if status is not None:
        return  # every node fails with the plugin's Error; no reprieve runs
    checks = fit_module._checked_resources(pod_request, fit.ignored_resources, fit.ignored_resource_groups)
    index = table.resource_index
    plan.cols = np.array([index.get(name, -1) for name, _ in checks], dtype=np.int64)
    plan.wants = np.array([want for _, want in checks], dtype=np.int64)
    plan.fit_state = True


def _wanted_ports(state: "CycleState") -> tuple | None:
    from ..nodeports import PRE_FILTER_STATE_KEY
    try:
        return tuple(state.read(PRE_FILTER_STATE_KEY))
    except Exception:  # noqa: BLE001 - every node then fails with the plugin's Error
        return None


# ------------------------------------------------------------------------------------------------
# the pod columns
# ------------------------------------------------------------------------------------------------
class PodColumns:
    """The table's bound pods as columns, for the dry run (a pool of entries; one range per row).

    Entry ``e``: ``prio`` (int64), ``start`` (float64, +inf = not started), ``req`` (R int64, the
    table's resource columns), ``sig`` (label-signature id, for PDB matching), ``has_ports``,
    ``pinfo`` (the PodInfo). Row ``r``'s pods are entries ``row_start[r]`` to ``row_start[r] +
    row_count[r]``, in the table's pod-list order, loaded when ``row_version[r]`` moved. A reloaded
    row appends a new range; the pool is rebuilt when the dead ranges outgrow the live ones.
    """

    def __init__(self, table: "NodeTable"):
        self.table_uid = table.uid
        self.width = len(table.resource_names)
        self._alloc_rows(table.capacity)
        self._alloc_pool(1024)
        self.size = 0
        self.live = 0
        self.signatures: dict[tuple, int] = {}
        self.signature_keys: list[tuple[str, dict]] = []

    def _alloc_rows(self, capacity: int) -> None:
        self.row_start = np.zeros(capacity, dtype=np.int64)
        self.row_count = np.zeros(capacity, dtype=np.int64)
        self.row_version = np.full(capacity, -1, dtype=np.int64)

    def _alloc_pool(self, cap: int) -> None:
        self.cap = cap
        self.prio = np.zeros(cap, dtype=np.int64)
        self.start = np.zeros(cap, dtype=np.float64)
        self.req = np.zeros((cap, self.width), dtype=np.int64)
        self.sig = np.zeros(cap, dtype=np.int64)
        self.has_ports = np.zeros(cap, dtype=bool)
        self.pinfo = np.empty(cap, dtype=object)
        self.pods = np.empty(cap, dtype=object)
        self.volatile = np.zeros(cap, dtype=bool)

    def begin(self, table: "NodeTable") -> None:
        """Prepare for a dry run: follow the table's capacity and resources; compact when needed.

        Entries stay valid for the whole dry run (compaction happens only here, and growing copies).
        """
        width = len(table.resource_names)
        if table.capacity != len(self.row_start) or width != self.width or self.size > 2 * self.live + 4096:
            # rebuild: rows reload lazily (a new pool, so candidates of earlier runs keep theirs)
            if width != self.width:
                self.width = width
            self._alloc_rows(table.capacity)
            self._alloc_pool(max(1024, 2 * self.live))
            self.size = 0
            self.live = 0

    def _grow(self, need: int) -> None:
        cap = self.cap
        while cap < need:
            cap *= 2
        if cap == self.cap:
            return
        old = self.size
        prio, start, req, sig, ports, pinfo = self.prio, self.start, self.req, self.sig, self.has_ports, self.pinfo
        pods, volatile = self.pods, self.volatile
        self._alloc_pool(cap)
        self.pods[:old] = pods[:old]
        self.volatile[:old] = volatile[:old]
        self.prio[:old] = prio[:old]
        self.start[:old] = start[:old]
        self.req[:old] = req[:old]
        self.sig[:old] = sig[:old]
        self.has_ports[:old] = ports[:old]
        self.pinfo[:old] = pinfo[:old]

    def refresh(self, table: "NodeTable", rows: np.ndarray, is_assumed: Any = None) -> None:
        """Reload the rows among ``rows`` that changed since they were loaded.

        ``is_assumed(pod)`` (the scheduler cache's) tells which not-started pods are assumed, the
        only ones whose start the scheduler may still set in place; None: any not-started pod may.
        """
        stale = self.row_version[rows] != table.row_version[rows]
        if not stale.any():
            return
        for row in rows[stale].tolist():
            self._load_row(table, row, is_assumed)

    def _load_row(self, table: "NodeTable", row: int, is_assumed: Any = None) -> None:
        pis = table.pods[row]
        n = len(pis)
        self.live += n - int(self.row_count[row])
        s = self.size
        if s + n > self.cap:
            self._grow(s + n)
        index = table.resource_index
        signatures = self.signatures
        prio, start, req, sig, ports, pinfo = self.prio, self.start, self.req, self.sig, self.has_ports, self.pinfo
        pod_objects, volatile = self.pods, self.volatile
        req[s:s + n] = 0
        for k, pi in enumerate(pis):
            e = s + k
            pod = pi.pod
            p = pod.priority
            prio[e] = 0 if p is None else p
            t = pod.start_time
            if t is None:
                start[e] = NOT_STARTED
                volatile[e] = is_assumed is None or is_assumed(pod)
            else:
                start[e] = t
                volatile[e] = False
            for name, amount in pi.requests.items():
                if amount:
                    req[e, index[name]] = amount
            labels = pod.labels
            key = (pod.namespace, tuple(sorted(labels.items()))) if labels else (pod.namespace, ())
            sid = signatures.get(key)
            if sid is None:
                sid = signatures[key] = len(self.signature_keys)
                self.signature_keys.append((pod.namespace, dict(labels)))
            sig[e] = sid
            ports[e] = bool(pod.host_ports)
            pinfo[e] = pi
            pod_objects[e] = pod
        self.row_start[row] = s
        self.row_count[row] = n
        self.row_version[row] = table.row_version[row]
        self.size = s + n

    def settle_start_times(self, entries: np.ndarray) -> None:
        """Re-read the start of the ``entries`` that may have started since they were loaded.

        The scheduler sets a pod's ``status.startTime`` on its (assumed) Pod object when it binds it
        (the kubelet starting it), which moves no table version; a start, once set, does not change.
        """
        volatile = entries[self.volatile[entries]]
        if volatile.size and _preemption.settle_start_times(self.pods, volatile, self.start):
            self.volatile[volatile] = self.start[volatile] == NOT_STARTED


class _PDBMatches:
    """Per label signature, the PDBs that count a pod against them (``filterPodsWithPDBViolation``)."""

    def __init__(self, index: Any):
        self.index = index
        self.allowed = np.array([pdb.disruptions_allowed for pdb in index.pdbs], dtype=np.int64)
        self.by_signature: dict[int, tuple[int, ...]] = {}
        #: PDBs with disruptedPods (a pod listed there is not counted again)
        self.with_disrupted = {i for i, pdb in enumerate(index.pdbs) if pdb.disrupted_pods}

    def of_signature(self, sid: int, key: tuple[str, dict]) -> tuple[int, ...]:
        got = self.by_signature.get(sid)
        if got is None:
            namespace, labels = key
            got = ()
            if labels:  # a pod without labels matches no PDB here
                got = tuple(i for i, pdb in self.index.by_namespace.get(namespace, ())
                            if pdb.selector.matches(labels))
            self.by_signature[sid] = got
        return got


# ------------------------------------------------------------------------------------------------
# the shadow table
# ------------------------------------------------------------------------------------------------
class _PortsByRow(dict):
    """Host ports by row: the rows set here, else ``fallback[row]`` (None without a fallback)."""

    def __init__(self, fallback: Any = None):
        super().__init__()
        self.fallback = fallback

    def __missing__(self, row: int) -> Any:
        return None if self.fallback is None else self.fallback[row]


class _ShadowTable:
    """The node table as one dry run sees it: ``requested``, ``pod_count`` and the host ports of the
    walked rows are the dry run's; every other attribute reads the real table. ``version`` is
    unique, so no plugin cache keyed on it mistakes this for the table."""

    def __init__(self, base: "NodeTable"):
        self._base = base
        self.requested = np.zeros_like(base.requested)
        self.pod_count = np.zeros_like(base.pod_count)
        self.has_host_ports = np.zeros_like(base.has_host_ports)
        self.ports = _PortsByRow()
        self.version = -next(_SHADOW_VERSIONS)

    def fits(self, base: "NodeTable") -> bool:
        return (self._base is base and self.requested.shape == base.requested.shape
                and self.pod_count.shape == base.pod_count.shape)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._base, name)


# ------------------------------------------------------------------------------------------------
# results
# ------------------------------------------------------------------------------------------------
class VectorCandidates(collections.abc.Sequence):
    """The dry run's candidates (non-violating first), as upstream's list; a
    :class:`~.preemption.Candidate` is built when it is read.

    Candidate ``i`` is node ``names[i]``; its victims are the pool entries
    ``victims[ptr[i]:ptr[i] + n_victims[i]]`` (most important first) of ``pinfo``. The other arrays
    hold what ``pickOneNodeForPreemption``'s default criteria read (see :meth:`pick`).
    """

    def __init__(self, names: list[str], pinfo: np.ndarray, victims: np.ndarray, ptr: np.ndarray,
                 n_victims: np.ndarray, num_violations: np.ndarray, top_priority: np.ndarray,
                 sum_priority: np.ndarray, first_start: np.ndarray):
        self.names = names
        self._pinfo = pinfo
        self._victims = victims
        self._ptr = ptr
        self.n_victims = n_victims
        self.num_violations = num_violations
        self.top_priority = top_priority
        self.sum_priority = sum_priority
        self.first_start = first_start
        self._built: list[Any] = [None] * len(names)

    def __len__(self) -> int:
        return len(self.names)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        c = self._built[i]
        if c is None:
            from .preemption import Candidate
            pinfo = self._pinfo
            a = int(self._ptr[i])
            pods = [pinfo[e].pod for e in self._victims[a:a + int(self.n_victims[i])].tolist()]
            c = self._built[i] = Candidate(self.names[i], Victims(pods, int(self.num_violations[i])))
        return c

    def __eq__(self, other: object) -> bool:
        if isinstance(other, collections.abc.Sequence):
            return list(self) == list(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"VectorCandidates({list(self)!r})"

    def pick(self) -> int:
        """Upstream ``pickOneNodeForPreemption`` with its default criteria, over the arrays: fewest
        PDB violations, lowest highest-victim priority, lowest sum of (priority + 2^31), fewest
        victims, latest start of the first victim (victims are sorted by importance, so that is the
        earliest start among the highest-priority ones); then the first node left."""
        idx = np.arange(len(self.names))
        for values, best in ((self.num_violations, np.min), (self.top_priority, np.min),
                             (self.sum_priority, np.min), (self.n_victims, np.min), (self.first_start, np.max)):
            v = values[idx]
            idx = idx[v == best(v)]
            if len(idx) == 1:
                break
        return int(idx[0])


class _LazyNodeToStatus(NodeToStatus):
    """The dry run's per-node statuses, in walk order, made into Status objects on first use
    (only a preemption that finds no candidate reads them)."""

    def __init__(self, build):
        super().__init__()
        self._build = build

    def _ready(self) -> None:
        if self._build is not None:
            build, self._build = self._build, None
            for name, status in build():
                self._map[name] = status

    def get(self, node_name: str) -> Status:
        self._ready()
        return super().get(node_name)

    def set(self, node_name: str, status: Status) -> None:
        self._ready()
        super().set(node_name, status)

    def len(self) -> int:
        self._ready()
        return super().len()

    __len__ = len

    def items(self):
        self._ready()
        return super().items()

    def for_each_explicit_node(self, fn) -> None:
        self._ready()
        super().for_each_explicit_node(fn)

    def nodes_for_status_code(self, node_names, code: Code) -> list[str]:
        self._ready()
        return super().nodes_for_status_code(node_names, code)


class _Window:
    """One window of walked nodes: per position its outcome and, for candidates, its victims."""

    __slots__ = ("rows", "kind", "code", "results", "result_pos", "victims", "seg", "n_victims", "n_violating",
                 "top_priority", "sum_priority", "first_start", "deferred")

    #: kinds
    CANDIDATE, FILTERED, NO_VICTIMS, NO_VICTIM_LEFT = 0, 1, 2, 3


# ------------------------------------------------------------------------------------------------
# the dry run
# ------------------------------------------------------------------------------------------------
class VectorizedDryRun:
    """The vectorized dry run of one DefaultPreemption plugin (keeps its pod columns between runs)."""

    def __init__(self, plugin: Any):
        self.plugin = plugin
        self._columns: PodColumns | None = None
        self._shadow: _ShadowTable | None = None
        self._pdb_key: tuple | None = None
        self._pdb_matches: _PDBMatches | None = None
        #: nodes the last run walked (sizes the next run's first window)
        self._last_walk = 0

    def _is_assumed(self) -> Any:
        """The scheduler cache's ``is_assumed_pod``, when the client has one."""
        cache = getattr(getattr(self.plugin.handle, "client", None), "cache", None)
        fn = getattr(cache, "is_assumed_pod", None)
        return fn if callable(fn) else None

    def columns(self, table: "NodeTable") -> PodColumns:
        """The pod columns of ``table`` (new ones for another table)."""
        cols = self._columns
        if cols is None or cols.table_uid != table.uid:
            cols = self._columns = PodColumns(table)
        return cols

    def _shadow_for(self, table: "NodeTable") -> _ShadowTable:
        shadow = self._shadow
        if shadow is None or not shadow.fits(table):
            shadow = self._shadow = _ShadowTable(table)
        shadow.version = -next(_SHADOW_VERSIONS)
        shadow.ports.clear()
        return shadow

    def _matches(self, pdbs: Sequence[Any]) -> _PDBMatches:
        key = tuple(map(id, pdbs))
        if self._pdb_key != key or self._pdb_matches is None:
            self._pdb_key = key
            self._pdb_pinned = list(pdbs)  # keeps the ids in the key valid
            self._pdb_matches = _PDBMatches(self.plugin._index_pdbs(self._pdb_pinned))
        return self._pdb_matches

    # -- public ----------------------------------------------------------------------------------
    def run(self, state: "CycleState", pod: "Pod", table: "NodeTable", rows: np.ndarray, pdbs: Sequence[Any],
            offset: int, num_candidates: int, plan: DryRunPlan
            ) -> tuple[VectorCandidates, NodeToStatus, str | None]:
        """Upstream ``DryRunPreemption`` over the potential nodes ``rows`` (table rows, in the
        order the per-node path walks them before the rotation by ``offset``).

        Returns what :meth:`~.preemption.Evaluator.dry_run_preemption` returns: the candidates
        (non-violating then violating, each capped at ``num_candidates``), the statuses of the
        walked nodes that are no candidate, and the aggregated Error messages (or None).
        """
        n = len(rows)
        if n == 0:
            return self._collect([], -1, num_candidates, table, self.columns(table))
        offset %= n  # upstream walks potential[(offset + i) % n]
        walk = rows if offset == 0 else np.concatenate((rows[offset:], rows[:offset]))
        columns = self.columns(table)
        columns.begin(table)
        nominated = _Nominated(self.plugin.handle, _table_state(table).nominations, pod, table, columns.width, state)
        matches = self._matches(pdbs) if len(pdbs) else None
        k = num_candidates
        windows: list[_Window] = []
        done, nv_total, v_total = 0, 0, 0
        # the first window: enough for numCandidates candidates at the last run's candidate rate
        # (consecutive preemptors see similar clusters); any size gives the same result
        size = max(_MIN_WINDOW, int(k * _FIRST_WINDOW_FACTOR) + 1, int(self._last_walk * 1.1) + 1)
        stop = -1  # window-local position of the candidate that ends the walk
        while done < n:
            end = min(n, done + size)
            win = self._window(state, pod, table, walk[done:end], plan, columns, nominated, matches)
            windows.append(win)
            done = end
            size *= 2
            is_candidate = win.kind == _Window.CANDIDATE
            if not is_candidate.any():
                continue
            non_violating = is_candidate & (win.n_violating == 0)
            cnv = nv_total + np.cumsum(non_violating)
            cv = v_total + np.cumsum(is_candidate & ~non_violating)
            capped_nv, capped_v = np.minimum(cnv, k), np.minimum(cv, k)
            # upstream: stop once nonViolating > 0 and nonViolating + violating >= numCandidates,
            # checked after each candidate is added (lists capped at numCandidates)
            hit = np.flatnonzero(is_candidate & (capped_nv > 0) & (capped_nv + capped_v >= k))
            if hit.size:
                stop = int(hit[0])
                break
            nv_total, v_total = int(cnv[-1]), int(cv[-1])
        self._last_walk = done - len(windows[-1].rows) + stop + 1 if stop >= 0 else done
        return self._collect(windows, stop, k, table, columns)

    # -- one window ------------------------------------------------------------------------------
    def _window(self, state: "CycleState", pod: "Pod", table: "NodeTable", rows: np.ndarray, plan: DryRunPlan,
                columns: PodColumns, nominated: "_Nominated", matches: _PDBMatches | None) -> _Window:
        w = len(rows)
        columns.refresh(table, rows, self._is_assumed())
        starts = columns.row_start[rows]
        counts = columns.row_count[rows]
        seg = np.empty(w + 1, dtype=np.int64)
        entries = np.empty(int(counts.sum()), dtype=np.int64)
        lower_req = np.empty((w, columns.width), dtype=np.int64)
        priority = _priority(pod)
        # 1. the potential victims: the pods of lower priority (IsEligiblePod is the default)
        m = _preemption.gather_lower(starts, counts, columns.prio, priority, columns.req, seg, entries, lower_req)
        entries = entries[:m]
        n_lower = seg[1:] - seg[:-1]

        # 3. RunFilterPluginsWithNominatedPods once they are gone: the filters' own vectorized
        # verdicts on a shadow table with the dry run's usage (the nominated pods' included)
        nom_req, nom_count, nom_ports = nominated.usage(rows)
        used = table.requested[rows] - lower_req
        count = table.pod_count[rows] - n_lower
        if nom_req is not None:
            used += nom_req
            count += nom_count
        hp = np.flatnonzero(n_lower)  # 2. no potential victim: "No preemption victims found"
        win = _Window()
        win.rows = rows
        win.result_pos = hp
        kind = np.full(w, _Window.NO_VICTIMS, dtype=np.int8)
        code = np.zeros(w, dtype=np.int8)
        active = np.zeros(w, dtype=np.uint8)
        win.results = None
        win.deferred = None
        if hp.size:
            sub_rows = rows[hp]
            passed = None
            if plan.additive_exact:
                passed = self._verdicts(state, pod, table, sub_rows, used[hp], count[hp], plan, priority, nom_ports,
                                        win, hp)
            if passed is None:
                shadow = self._shadow_for(table)
                shadow.requested[sub_rows] = used[hp]
                shadow.pod_count[sub_rows] = count[hp]
                if plan.check_ports:
                    self._shadow_ports(shadow, table, sub_rows, priority, nom_ports)
                res = self.plugin.handle.run_filter_plugins_vectorized(state, pod, NodeBatch(shadow, sub_rows))
                win.results = res
                code[hp] = res.codes
                passed = res.codes == 0
            kind[hp] = np.where(passed, _Window.CANDIDATE, _Window.FILTERED)
            active[hp[passed]] = 1

        # 4-7. sort, PDB split, reprieve and order the victims on the nodes that fit without them
        if active.any():
            act = np.flatnonzero(active)
            columns.settle_start_times(_segments(entries, seg, act))
        conflict = np.zeros(m, dtype=np.uint8)
        if plan.check_ports and plan.wanted_ports is not None and m:
            _port_conflicts(conflict, entries, columns, plan.wanted_ports)
        pdb_ptr, pdb_ids, pdb_allowed = _pdb_csr(entries, columns, matches)
        cols = plan.cols
        if (cols < 0).any():  # no node has the resource: allocatable and usage are 0
            safe = np.where(cols >= 0, cols, 0)
            alloc = table.alloc[rows][:, safe]
            base = used[:, safe]
            alloc[:, cols < 0] = 0
            base[:, cols < 0] = 0
        else:
            alloc = table.alloc[rows][:, cols]
            base = used[:, cols]
        win.victims = victims = np.empty(m, dtype=np.int64)
        win.n_victims = n_victims = np.empty(w, dtype=np.int64)
        win.n_violating = n_violating = np.empty(w, dtype=np.int64)
        win.top_priority = top_priority = np.empty(w, dtype=np.int64)
        win.sum_priority = sum_priority = np.empty(w, dtype=np.int64)
        win.first_start = first_start = np.empty(w, dtype=np.float64)
        _preemption.select_victims(seg, entries, active, columns.prio, columns.start, columns.req, conflict,
                                   pdb_ptr, pdb_ids, pdb_allowed, plan.check_fit, cols, plan.wants,
                                   np.ascontiguousarray(alloc), table.allowed_pods[rows],
                                   np.ascontiguousarray(base), count, victims, np.zeros(m, dtype=np.uint8),
                                   n_victims, n_violating, top_priority, sum_priority, first_start)
        kind[(active == 1) & (n_victims == 0)] = _Window.NO_VICTIM_LEFT
        win.kind = kind
        win.code = code
        win.seg = seg
        return win

    def _verdicts(self, state: "CycleState", pod: "Pod", table: "NodeTable", rows: np.ndarray, used: np.ndarray,
                  count: np.ndarray, plan: DryRunPlan, priority: int, nom_ports: dict[int, list] | None,
                  win: _Window, positions: np.ndarray) -> np.ndarray | None:
        """Pass/fail of RunFilterPluginsWithNominatedPods on ``rows`` once their potential victims
        are gone, without building the failing nodes' statuses (they are made when read).

        The node-only filters run vectorized on the table; the additive ones are NodeResourcesFit's
        and NodePorts' checks on the dry run's usage. A node passes when all pass, whatever their
        order; which status a failing node gets depends on the order, so it comes from the full
        evaluation, deferred. None when a node-only filter answers Error (the first failure then
        decides whether a node's status is that Error, needed at once): evaluate everything now.
        """
        ok = np.ones(len(rows), dtype=bool)
        if plan.node_only:
            res = self.plugin.handle.run_filter_plugins_vectorized(state, pod, NodeBatch(table, rows),
                                                                   only=plan.node_only)
            codes = res.codes
            if (codes == _ERROR).any():
                return None
            ok &= codes == 0
        if plan.check_fit:
            fail = count + 1 > table.allowed_pods[rows]  # "Too many pods"
            cols = plan.cols
            if len(cols):
                safe = np.where(cols >= 0, cols, 0)
                free = table.alloc[rows][:, safe] - used[:, safe]
                if (cols < 0).any():
                    free[:, cols < 0] = 0  # no node has the resource
                fail |= (plan.wants > free).any(axis=1)
            ok &= ~fail
        ports: dict[int, HostPortInfo] = {}
        if plan.check_ports:
            from ..nodeports import fits_ports
            ports = _ports_in_use(table, rows, priority, nom_ports)
            if ports:
                position = {r: i for i, r in enumerate(rows.tolist())}
                for row, hp in ports.items():
                    if not fits_ports(plan.wanted_ports, hp):
                        ok[position[row]] = False
        failing = np.flatnonzero(~ok)
        if failing.size:
            f_rows = rows[failing]
            win.deferred = (state, pod, table, f_rows, used[failing], count[failing],
                            {r: ports[r] for r in f_rows.tolist() if r in ports}, plan.check_ports)
            win.result_pos = positions[failing]
        return ok

    def _deferred_results(self, win: _Window) -> Any:
        """The FilterResults of a window's failing nodes, evaluated now (see :meth:`_verdicts`)."""
        if win.results is None and win.deferred is not None:
            state, pod, table, rows, used, count, ports, check_ports = win.deferred
            shadow = _ShadowTable(table)
            shadow.requested[rows] = used
            shadow.pod_count[rows] = count
            if check_ports:
                shadow.has_host_ports[rows] = False
                for row, hp in ports.items():
                    shadow.has_host_ports[row] = True
                    shadow.ports[row] = hp
            win.results = self.plugin.handle.run_filter_plugins_vectorized(state, pod, NodeBatch(shadow, rows))
            win.deferred = None
        return win.results

    @staticmethod
    def _shadow_ports(shadow: _ShadowTable, table: "NodeTable", sub_rows: np.ndarray, priority: int,
                      nom_ports: dict[int, list] | None) -> None:
        """The host ports in use once the potential victims are gone and the nominated pods added."""
        shadow.has_host_ports[sub_rows] = False
        for row, hp in _ports_in_use(table, sub_rows, priority, nom_ports).items():
            shadow.has_host_ports[row] = True
            shadow.ports[row] = hp

    # -- the result ------------------------------------------------------------------------------
    def _collect(self, windows: list[_Window], stop: int, k: int, table: "NodeTable", columns: PodColumns
                 ) -> tuple[VectorCandidates, NodeToStatus, str | None]:
        """Candidates, statuses and errors of the walk, up to the candidate that stopped it."""
        if not windows:
            empty = np.zeros(0, dtype=np.int64)
            return (VectorCandidates([], columns.pinfo, empty, empty, empty, empty, empty, empty,
                                     np.zeros(0, dtype=np.float64)), NodeToStatus(), None)
        if len(windows) == 1:
            win = windows[0]
            rows, kind, code = win.rows, win.kind, win.code
            victims, seg = win.victims, win.seg
            fields = [win.n_victims, win.n_violating, win.top_priority, win.sum_priority, win.first_start]
            window_of = None
        else:  # one walk: positions and victims numbered across the windows
            rows = np.concatenate([w.rows for w in windows])
            kind = np.concatenate([w.kind for w in windows])
            code = np.concatenate([w.code for w in windows])
            victims = np.concatenate([w.victims for w in windows])
            shift = np.cumsum([0] + [len(w.victims) for w in windows[:-1]])
            seg = np.concatenate([w.seg[:-1] + d for w, d in zip(windows, shift)])
            fields = [np.concatenate([getattr(w, a) for w in windows])
                      for a in ("n_victims", "n_violating", "top_priority", "sum_priority", "first_start")]
            window_of = np.repeat(np.arange(len(windows)), [len(w.rows) for w in windows])
        n_victims, n_violating, top_priority, sum_priority, first_start = fields
        # the walk ends at the stopping candidate: it is kept, nothing after it is recorded
        end = len(kind) - len(windows[-1].kind) + stop + 1 if stop >= 0 else len(kind)
        kind = kind[:end]
        cand = np.flatnonzero(kind == _Window.CANDIDATE)
        nv = n_violating[cand] == 0
        chosen = np.concatenate((cand[nv][:k], cand[~nv][:k]))
        candidates = VectorCandidates(table.node_names[rows[chosen]].tolist(), columns.pinfo, victims, seg[chosen],
                                      n_victims[chosen], n_violating[chosen], top_priority[chosen],
                                      sum_priority[chosen], first_start[chosen])
        others = np.flatnonzero(kind != _Window.CANDIDATE)
        starts = np.cumsum([0] + [len(w.rows) for w in windows[:-1]])

        def local(p: int) -> tuple[_Window, int]:
            wi = 0 if window_of is None else int(window_of[p])
            return windows[wi], p - int(starts[wi])

        def status_of(p: int) -> Status:
            kp = kind[p]
            if kp == _Window.NO_VICTIMS:
                return self.plugin.no_victims_status()
            if kp == _Window.NO_VICTIM_LEFT:
                return Status.from_error(StatusError(_no_victim_left_message(table.node_names[rows[p]])))
            win, q = local(p)
            results = self._deferred_results(win)
            return results.status(int(np.searchsorted(win.result_pos, q)))

        # Error statuses, aggregated in walk order (upstream's errs, sequential here)
        errors = []
        for p in np.flatnonzero((kind == _Window.NO_VICTIM_LEFT) | (code[:end] == _ERROR)).tolist():
            s = status_of(p)
            err = s.as_error()
            errors.append(str(err) if err is not None else s.message())

        if not len(chosen):
            # no candidate: the statuses make the FitError now; evaluate them against this cluster
            for win in windows:
                self._deferred_results(win)

        def build():
            names = table.node_names[rows[others]].tolist()
            for name, p in zip(names, others.tolist()):
                yield name, status_of(p)

        from .preemption import aggregate_error_message
        err = aggregate_error_message(errors) if errors else None
        return candidates, _LazyNodeToStatus(build), err


def _ports_in_use(table: "NodeTable", rows: np.ndarray, priority: int, nom_ports: dict[int, list] | None
                  ) -> dict[int, HostPortInfo]:
    """Per row with any: the host ports in use by the pods that stay (priority at least
    ``priority``) and the nominated pods that count."""
    busy = set(rows[table.has_host_ports[rows]].tolist())
    if nom_ports:
        in_rows = set(rows.tolist())
        busy.update(r for r in nom_ports if r in in_rows)
    out: dict[int, HostPortInfo] = {}
    for row in busy:
        hp = HostPortInfo()
        for pi in table.pods[row]:
            p = pi.pod.priority
            if (0 if p is None else p) >= priority:
                for ip, proto, port in pi.pod.host_ports:
                    hp.add(ip, proto, port)
        for ip, proto, port in (nom_ports or {}).get(row, ()):
            hp.add(ip, proto, port)
        if len(hp):
            out[row] = hp
    return out


def _segments(entries: np.ndarray, seg: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """The entries of the given nodes' segments, concatenated."""
    lo, hi = seg[nodes], seg[nodes + 1]
    lengths = hi - lo
    total = int(lengths.sum())
    if total == 0:
        return entries[:0]
    shift = np.repeat(lo - np.cumsum(lengths) + lengths, lengths)
    return entries[np.arange(total) + shift]


def _no_victim_left_message(node_name: str) -> str:
    """Upstream's error for a node whose every potential victim was reprieved."""
    return f'expected at least one victim pod on node "{node_name}"'


def _priority(pod: "Pod") -> int:
    p = pod.priority
    return 0 if p is None else int(p)


def _port_conflicts(conflict: np.ndarray, entries: np.ndarray, columns: PodColumns, wanted: tuple) -> None:
    """Per potential victim: whether it uses a host port the preemptor wants (NodePorts' conflict
    rule; the node's ports in use are the union of its pods')."""
    from ..nodeports import fits_ports
    with_ports = np.flatnonzero(columns.has_ports[entries])
    pinfo = columns.pinfo
    for m in with_ports.tolist():
        hp = HostPortInfo()
        for ip, proto, port in pinfo[int(entries[m])].pod.host_ports:
            hp.add(ip, proto, port)
        conflict[m] = not fits_ports(wanted, hp)


def _pdb_csr(entries: np.ndarray, columns: PodColumns, matches: _PDBMatches | None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per potential victim, the PDBs it counts against: (ptr (M + 1,), ids, disruptionsAllowed)."""
    m = len(entries)
    if matches is None or not len(matches.allowed):
        return np.zeros(m + 1, dtype=np.int64), np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int64)
    keys = columns.signature_keys
    sigs = columns.sig[entries]
    per_sig: dict[int, tuple[int, ...]] = {}
    for sid in np.unique(sigs).tolist():
        per_sig[sid] = matches.of_signature(sid, keys[sid])
    lists = [per_sig[s] for s in sigs.tolist()]
    if matches.with_disrupted:
        pinfo = columns.pinfo
        pdbs = matches.index.pdbs
        for i, lst in enumerate(lists):
            if lst and any(d in matches.with_disrupted for d in lst):
                name = pinfo[int(entries[i])].pod.name
                # already being disrupted: its eviction was counted by the API server
                lists[i] = tuple(d for d in lst if name not in pdbs[d].disrupted_pods)
    lengths = np.fromiter((len(lst) for lst in lists), dtype=np.int64, count=m)
    ptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    ids = np.fromiter(itertools.chain.from_iterable(lists), dtype=np.int32, count=int(ptr[-1]))
    return ptr, ids, matches.allowed


class _NominationIndex:
    """Every nominated pod as arrays: its node's row, priority, requests, uid and host ports.

    Rebuilt only when the nominations changed: the nominator's node -> pods mapping is compared
    with the one the arrays were built from (same nodes in the same order, the same PodInfo and Pod
    objects), which costs a few C-level list comparisons instead of a Python step per pod.
    """

    def __init__(self) -> None:
        self._key: tuple | None = None
        self._entries: dict[int, tuple] = {}
        self.arrays: tuple | None = None
        self._cycle: tuple | None = None
        #: (arrays, priority, uid, selection) of the last _Nominated._counted
        self.selection: tuple | None = None
        #: (C,) int64 scratch, -1 outside a call: row -> position in the rows asked about
        self.pos_of: np.ndarray | None = None

    def get(self, handle: Any, table: "NodeTable", width: int, state: Any = None) -> tuple:
        """(rows (Q,), priorities (Q,), requests (Q, R), uids (Q,), [(index, host ports)], node
        names (Q,)), or None when the nominator cannot list its nodes.

        ``state``: the scheduling cycle's CycleState. Nothing changes the nominations during a
        cycle's Filter and PostFilter (the scheduler is single-threaded), so within one cycle the
        arrays are checked against the nominator's counts only.
        """
        nominator = getattr(handle, "pod_nominator", None)
        mapping = _nominations_by_node(nominator)
        if state is not None and mapping is not None and self.arrays is not None:
            cycle = self._cycle
            if (cycle is not None and cycle[0] is state and cycle[1] is nominator and cycle[2] is table
                    and cycle[3] == len(mapping) and cycle[4] == len(nominator) and cycle[5] == width):
                return self.arrays
        if mapping is not None:
            names = list(mapping)
            lists = list(mapping.values())
        else:
            names_fn = getattr(nominator, "nominated_node_names", None)
            if names_fn is None:
                return None  # the caller asks node by node
            names = list(names_fn())
            lists = [handle.nominated_pods_for_node(n) for n in names]
        flat = list(itertools.chain.from_iterable(lists))
        # a PodInfo's requests follow its Pod (PodInfo.update replaces both)
        key = (nominator, table.uid, width, names, list(map(len, lists)), flat, list(map(_POD_OF, flat)))
        arrays = self.arrays
        if arrays is not None and self._key is not None and _same_key(self._key, key):
            rows = arrays[0]
            if not len(rows) or (table.node_names[rows] == arrays[5]).all():
                self._remember_cycle(state, nominator, table, mapping, width)
                return arrays
        prev, prev_arrays = self._key, arrays
        self._key = key
        if prev is not None and prev_arrays is not None and _extends(prev, key):
            # new nominations on nodes after the known ones (the common case: one preemption)
            n0 = len(prev[3])
            more = self._build(table, width, names[n0:], lists[n0:], keep=True)
            self.arrays = arrays = _concat_arrays(prev_arrays, more)
        else:
            self.arrays = arrays = self._build(table, width, names, lists)
        self._remember_cycle(state, nominator, table, mapping, width)
        return arrays

    def _remember_cycle(self, state: Any, nominator: Any, table: "NodeTable", mapping: Any, width: int) -> None:
        self._cycle = None
        if state is not None and mapping is not None:
            self._cycle = (state, nominator, table, len(mapping), len(nominator), width)

    def _build(self, table: "NodeTable", width: int, names: list[str], lists: list[list], keep: bool = False
               ) -> tuple:
        """The arrays of the nominated pods of ``names`` (``keep``: add to the known entries)."""
        row_of = table.row_of
        index = table.resource_index
        old = self._entries
        entries = old if keep else {}
        rows: list[int] = []
        prios: list[int] = []
        vectors: list[np.ndarray] = []
        uids: list[str] = []
        ports: list[tuple[int, tuple]] = []
        node_names: list[str] = []
        for name, pis in zip(names, lists):
            row = row_of.get(name)
            if row is None:
                continue
            for pi in pis:
                pod = pi.pod
                got = old.get(id(pi))
                if got is None or got[0] is not pod or got[1] is not pi.requests or len(got[3]) != width:
                    vec = np.zeros(width, dtype=np.int64)
                    for res, amount in pi.requests.items():
                        col = index.get(res)
                        # a resource no node has: the preemptor's request for it fails anyway
                        if amount and col is not None and col < width:
                            vec[col] = amount
                    p = pod.priority
                    got = (pod, pi.requests, 0 if p is None else p, vec, pod.host_ports, pi)
                entries[id(pi)] = got
                q = len(rows)
                rows.append(row)
                prios.append(got[2])
                vectors.append(got[3])
                uids.append(pod.uid)
                node_names.append(name)
                if got[4]:
                    ports.append((q, got[4]))
        self._entries = entries
        q = len(rows)
        return (np.array(rows, dtype=np.int64), np.array(prios, dtype=np.int64),
                np.array(vectors, dtype=np.int64).reshape(q, width), _objects(uids), ports, _objects(node_names))


def _extends(a: tuple, b: tuple) -> bool:
    """Whether nomination key ``b`` is ``a`` with more nodes after ``a``'s (same objects before)."""
    if a[0] is not b[0] or a[1] != b[1] or a[2] != b[2]:
        return False
    n0, f0 = len(a[3]), len(a[5])
    if len(b[3]) <= n0 or b[3][:n0] != a[3] or b[4][:n0] != a[4]:
        return False
    for x, y in zip(a[5:], b[5:]):
        if not all(map(operator.is_, x, y[:f0])):
            return False
    return True


def _concat_arrays(a: tuple, b: tuple) -> tuple:
    """The nomination arrays of ``a`` followed by those of ``b`` (``b``'s indices shifted)."""
    q = len(a[0])
    return (np.concatenate((a[0], b[0])), np.concatenate((a[1], b[1])), np.concatenate((a[2], b[2])),
            np.concatenate((a[3], b[3])), a[4] + [(i + q, ports) for i, ports in b[4]], np.concatenate((a[5], b[5])))


def _objects(items: list) -> np.ndarray:
    """A 1-D object array of ``items`` (strings are not turned into a fixed-width dtype)."""
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def _same_key(a: tuple, b: tuple) -> bool:
    """Whether two nomination keys are equal, comparing objects by identity."""
    if a[0] is not b[0] or a[1] != b[1] or a[2] != b[2] or a[3] != b[3] or a[4] != b[4]:
        return False
    for x, y in zip(a[5:], b[5:]):
        if len(x) != len(y) or not all(map(operator.is_, x, y)):
            return False
    return True


_POD_OF = operator.attrgetter("pod")


class _Nominated:
    """The nominated pods a dry run or a Filter pass adds to each node (``addGENominatedPods``):
    those of equal or higher priority than the pod, other than itself."""

    def __init__(self, handle: Any, index: _NominationIndex, pod: "Pod", table: "NodeTable", width: int,
                 state: Any = None):
        self.handle = handle
        self.index = index
        self.state = state
        self.uid = pod.uid
        self.priority = _priority(pod)
        self.table = table
        self.width = width
        self._selected: tuple | None = None
        self._none = getattr(handle, "pod_nominator", None) is None

    def _counted(self) -> tuple | None:
        """(rows, requests, indices, host ports by index) of the nominated pods that count for
        this pod (the same for every window of one pod: kept on the index)."""
        if self._selected is None:
            arrays = self.index.get(self.handle, self.table, self.width, self.state)
            if arrays is None:
                return None
            last = self.index.selection
            if last is not None and last[0] is arrays and last[1] == self.priority and last[2] == self.uid:
                self._selected = last[3]
                return self._selected
            rows, prios, vectors, uids, ports, _ = arrays
            keep = (prios >= self.priority) & (uids != self.uid)
            kept_ports = {int(q): p for q, p in ports if keep[q]} if ports else {}
            self._selected = (rows[keep], vectors[keep], np.flatnonzero(keep), kept_ports)
            self.index.selection = (arrays, self.priority, self.uid, self._selected)
        return self._selected

    def usage(self, rows: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None, dict[int, list] | None]:
        """(requests (W, R), pod counts (W,), host ports by row) of the nominated pods on ``rows``;
        (None, None, None) when there are none."""
        if self._none:
            return None, None, None
        counted = self._counted()
        if counted is None:
            return self._usage_node_by_node(rows)
        nom_rows, vectors, indices, ports = counted
        if not len(nom_rows):
            return None, None, None
        pos_of = self.index.pos_of
        if pos_of is None or len(pos_of) != self.table.capacity:
            pos_of = self.index.pos_of = np.full(self.table.capacity, -1, dtype=np.int64)
        pos_of[rows] = np.arange(len(rows), dtype=np.int64)
        pos = pos_of[nom_rows]
        pos_of[rows] = -1
        sel = pos >= 0
        if not sel.any():
            return None, None, None
        at = pos[sel]
        req = np.zeros((len(rows), self.width), dtype=np.int64)
        np.add.at(req, at, vectors[sel])
        count = np.bincount(at, minlength=len(rows)).astype(np.int64)
        by_row: dict[int, list] = {}
        if ports:
            for k in np.flatnonzero(sel).tolist():
                extra = ports.get(int(indices[k]))
                if extra:
                    by_row.setdefault(int(nom_rows[k]), []).extend(extra)
        return req, count, by_row or None

    def _usage_node_by_node(self, rows: np.ndarray) -> tuple:
        """``usage`` through ``nominated_pods_for_node`` on each row (a nominator that cannot list
        its nodes)."""
        names = self.table.node_names[rows].tolist()
        index = self.table.resource_index
        req = np.zeros((len(rows), self.width), dtype=np.int64)
        count = np.zeros(len(rows), dtype=np.int64)
        by_row: dict[int, list] = {}
        for i, name in enumerate(names):
            for pi in self.handle.nominated_pods_for_node(name):
                p = pi.pod.priority
                if (0 if p is None else p) < self.priority or pi.pod.uid == self.uid:
                    continue
                for res, amount in pi.requests.items():
                    col = index.get(res)
                    if amount and col is not None and col < self.width:
                        req[i, col] += amount
                count[i] += 1
                if pi.pod.host_ports:
                    by_row.setdefault(int(rows[i]), []).extend(pi.pod.host_ports)
        if not count.any():
            return None, None, None
        return req, count, by_row or None


_NOMINATOR_CLASS: list[type] = []


def _nominations_by_node(nominator: Any) -> dict | None:
    """The in-tree Nominator's own node -> nominated PodInfos mapping (read-only), or None.

    ``Framework.nominated_pods_for_node`` returns a copy of one of its lists; reading the mapping
    directly gives the same pods without a call and a copy per node (the dry run and the Filter
    correction read every nominated node). Any other nominator goes through the public calls.
    """
    if nominator is None:
        return None
    if not _NOMINATOR_CLASS:
        from ...scheduler.backend.queue.nominator import Nominator
        _NOMINATOR_CLASS.append(Nominator)
    if type(nominator) is not _NOMINATOR_CLASS[0]:
        return None
    mapping = getattr(nominator, "_nominated_pods", None)
    return mapping if type(mapping) is dict else None


# ------------------------------------------------------------------------------------------------
# RunFilterPluginsWithNominatedPods over many nodes
# ------------------------------------------------------------------------------------------------
class _TableState:
    """Per node table: the nominated pods' arrays (shared by the dry runs and the Filter
    correction) and the shadow of :func:`filter_with_nominated_pods`."""

    def __init__(self, table: "NodeTable") -> None:
        self.table = table
        self.shadow: _ShadowTable | None = None
        self.nominations = _NominationIndex()
        #: (state, pod, framework, table version, table, shadow) of the last Filter correction
        self.filter_for: tuple | None = None


_TABLE_STATES: dict[int, _TableState] = {}


def _table_state(table: "NodeTable") -> _TableState:
    st = _TABLE_STATES.get(table.uid)
    if st is None or st.table is not table:
        if len(_TABLE_STATES) >= 8:  # tables of finished schedulers
            _TABLE_STATES.clear()
        st = _TABLE_STATES[table.uid] = _TableState(table)
    return st


def filter_with_nominated_pods(fw: Any, state: "CycleState", pod: "Pod", nodes: Any) -> Any:
    """``RunFilterPluginsWithNominatedPods`` on every node of the NodeBatch ``nodes`` in one
    vectorized pass, or None when the pod's filters have no additive form (see
    :func:`filters_plan`; the caller then runs its per-node path).

    Returns the FilterResults ``fw.run_filter_plugins_vectorized`` gives, evaluated where a node has
    nominated pods of equal or higher priority (not the pod itself) on a shadow table holding them:
    upstream's first pass. Its second pass (without them) cannot fail where the first passed, for
    node-only and additive filters, so the verdicts and statuses are upstream's, and every filter
    runs once per node.
    """
    table = getattr(nodes, "table", None)
    if table is None or getattr(nodes, "rows", None) is None:
        return None
    st = _TABLE_STATES.get(table.uid)
    ready = st.filter_for if st is not None else None
    if (ready is not None and ready[0] is state and ready[1] is pod and ready[2] is fw
            and ready[3] == table.version and ready[4] is table and isinstance(ready[5], _ShadowTable)):
        # the next window of this cycle's Filter (see below)
        return fw.run_filter_plugins_vectorized(state, pod, NodeBatch(ready[5], nodes.rows))
    nominator = getattr(fw, "pod_nominator", None)
    if nominator is None:
        return fw.run_filter_plugins_vectorized(state, pod, nodes)
    mapping = _nominations_by_node(nominator)
    if mapping is not None:
        if not mapping:
            return fw.run_filter_plugins_vectorized(state, pod, nodes)
    else:
        names_fn = getattr(nominator, "nominated_node_names", None)
        if names_fn is not None and not names_fn():
            return fw.run_filter_plugins_vectorized(state, pod, nodes)
    plan = filters_plan(fw, state, table)
    if plan is None:
        return None
    st = _table_state(table)
    # One shadow per scheduling cycle: the table and the nominations do not change between the
    # windows the scheduler filters (_filter_until_enough).
    ready = st.filter_for
    if not (ready is not None and ready[0] is state and ready[1] is pod and ready[2] is fw
            and ready[3] == table.version and ready[4] is table):
        shadow = _nominated_shadow(st, fw, state, pod, table, plan)
        st.filter_for = ready = (state, pod, fw, table.version, table, shadow)
    shadow = ready[5]
    if shadow is None:  # no nominated pod counts for this pod
        return fw.run_filter_plugins_vectorized(state, pod, nodes)
    if shadow is _NODE_BY_NODE:
        return _filter_node_by_node(st, fw, state, pod, nodes, plan)
    return fw.run_filter_plugins_vectorized(state, pod, NodeBatch(shadow, nodes.rows))


#: the nominator cannot list its nodes: each batch asks for its own nodes' nominated pods
_NODE_BY_NODE = object()


def _nominated_shadow(st: _TableState, fw: Any, state: "CycleState", pod: "Pod", table: "NodeTable",
                      plan: DryRunPlan) -> Any:
    """A shadow of the whole table with the nominated pods that count for ``pod`` added (None when
    none counts; ``_NODE_BY_NODE`` when the nominator cannot list its nodes)."""
    nominated = _Nominated(fw, st.nominations, pod, table, len(table.resource_names), state)
    counted = nominated._counted()
    if counted is None:
        return _NODE_BY_NODE
    nom_rows, vectors, indices, ports = counted
    if not len(nom_rows):
        return None
    shadow = st.shadow
    if shadow is None or not shadow.fits(table):
        shadow = st.shadow = _ShadowTable(table)
    shadow.version = -next(_SHADOW_VERSIONS)
    shadow.ports = _PortsByRow(table.ports)
    np.copyto(shadow.requested, table.requested)
    np.copyto(shadow.pod_count, table.pod_count)
    np.add.at(shadow.requested, nom_rows, vectors)
    np.add.at(shadow.pod_count, nom_rows, 1)
    if plan.check_ports:
        np.copyto(shadow.has_host_ports, table.has_host_ports)
        extra: dict[int, list] = {}
        for k, q in enumerate(indices.tolist()):
            if q in ports:
                extra.setdefault(int(nom_rows[k]), []).extend(ports[q])
        _add_ports(shadow, table, extra)
    return shadow


def _add_ports(shadow: _ShadowTable, table: "NodeTable", extra: dict[int, list]) -> None:
    """Rows' host ports in use with the nominated pods' ports added."""
    for row, more in extra.items():
        base = table.ports[row]
        hp = base.clone() if base is not None else HostPortInfo()
        for ip, proto, port in more:
            hp.add(ip, proto, port)
        shadow.ports[row] = hp
        shadow.has_host_ports[row] = len(hp) > 0


def _filter_node_by_node(st: _TableState, fw: Any, state: "CycleState", pod: "Pod", nodes: Any,
                         plan: DryRunPlan) -> Any:
    """:func:`filter_with_nominated_pods` asking the nominator for each node of ``nodes``."""
    table = nodes.table
    rows = nodes.rows
    nom_req, nom_count, nom_ports = _Nominated(fw, st.nominations, pod, table, len(table.resource_names),
                                               state).usage(rows)
    if nom_req is None:
        return fw.run_filter_plugins_vectorized(state, pod, nodes)
    shadow = _ShadowTable(table)
    shadow.ports = _PortsByRow(table.ports)
    shadow.requested[rows] = table.requested[rows] + nom_req
    shadow.pod_count[rows] = table.pod_count[rows] + nom_count
    if plan.check_ports:
        shadow.has_host_ports[rows] = table.has_host_ports[rows]
        _add_ports(shadow, table, nom_ports or {})
    return fw.run_filter_plugins_vectorized(state, pod, NodeBatch(shadow, rows))


__all__ = ["ADDITIVE_FILTERS", "NODE_ONLY_FILTERS", "DryRunPlan", "PodColumns", "VectorCandidates",
           "VectorizedDryRun", "filter_with_nominated_pods", "filters_plan", "plan_dry_run"]
