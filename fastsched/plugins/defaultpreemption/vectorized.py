"""DryRunPreemption over the node table (upstream ``DryRunPreemption`` and ``SelectVictimsOnNode``,
``pkg/scheduler/framework/preemption/preemption.go`` and ``defaultpreemption/default_preemption.go``).

Upstream dry-runs preemption one node at a time: copy the NodeInfo and the CycleState, remove every
lower-priority pod, run RunFilterPluginsWithNominatedPods, then add the pods back one by one (the
PDB-violating ones first) and keep those with which the preemptor still fits. fastsched does the
same for every walked node at once when the Filter plugins that can still reject the preemptor have
a form that works on columns:

* *node-only* filters, whose verdict does not depend on the pods on the node (NodeUnschedulable,
  NodeName, TaintToleration, NodeAffinity, VolumeBinding, VolumeZone, and NodeVolumeLimits for a
  pod no CSINode limit applies to: its ``filter_pod_dependence_of``): their own
  ``filter_vectorized`` on the table;
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

The runtime's RunFilterPluginsWithNominatedPods over many nodes
(:func:`fastsched.runtime.nominated.filter_with_nominated_pods`) decides which filters allow the
vectorized form (:func:`~fastsched.runtime.nominated.nominated_filters`; each plugin class declares
its kind, ``filter_pod_dependence``) and owns the shadow table and the nominated pods' arrays; the
dry run shares them.

Caches: the bound pods' attributes live in :class:`PodColumns`, a per-table pool reloaded row by
row when the table's ``row_version`` moves; the nominated pods in the runtime's
:class:`~fastsched.runtime.nominated.NominationIndex`, rebuilt when the nominations change.
"""
from __future__ import annotations

import collections.abc
import functools
import itertools
import operator
from collections import Counter
from typing import TYPE_CHECKING, Any, Sequence, cast

import numpy as np

from ..._kernels import _preemption
from ...extender.extender import Victims
from ...framework.status import Code, Status, StatusError
from ...framework.types import HostPortInfo, NodeToStatus
from ...runtime.nominated import (NODE_ONLY, PER_POD, NominatedUsage, ShadowTable, filter_with_nominated_pods,
                                  new_shadow_version, nominated_filters, table_batch, table_state)
from ...framework import protocols as fwk
from .util import NOT_STARTED, more_important_pod  # (module level: plan_dry_run importing it was ~1%)

if TYPE_CHECKING:  # pragma: no cover
    from ...api import Pod
    from ...framework.cycle_state import CycleState
    from ...framework.protocols import NodeTable
    from ...framework.types import PodInfo
    from ...runtime.filter_results import FilterResults

#: The in-tree Filter plugins the dry run reproduces, node-only ones (their verdict does not depend
#: on the pods on the node) ...
NODE_ONLY_FILTERS = ("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "VolumeBinding",
                     "VolumeZone", "NodeVolumeLimits")
#: ... and additive ones (they depend on the node's pods only through sums, see the module doc).
#: Each declares its kind itself (``filter_pod_dependence``); the dry run also needs their forms.
ADDITIVE_FILTERS = ("NodeResourcesFit", "NodePorts")
#: The node-only filters whose in-tree Filter never answers plain Unschedulable (only
#: UnschedulableAndUnresolvable or Error): a node the cycle found Unschedulable passed them.
NEVER_UNSCHEDULABLE_FILTERS = frozenset({"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity"})

_ERROR = int(Code.ERROR)
#: First window of walked nodes, in multiples of numCandidates (doubled while too few are found).
_FIRST_WINDOW_FACTOR = 1.25
#: most template prototypes whose fields PodColumns keeps (cleared beyond)
_TEMPLATE_FIELDS_SIZE = 4096
_MIN_WINDOW = 32
#: an empty (0,) int64 array, shared (never written)
_NO_ROWS = np.zeros(0, dtype=np.int64)
_NO_ROWS.flags.writeable = False
#: fewest table records PodColumns loads with NumPy gathers (fewer: entry by entry)
_BULK_RECORDS = 64
#: most entries PodColumns writes element by element (more: a column at a time from lists); a dry
#: run mostly reloads the row or two the last preemption changed, one to four pods
_SCALAR_ENTRIES = 4
#: fewest rows PodColumns loads with one compiled pass over the table's records (fewer: row by row)
_MANY_ROWS = 16


@functools.lru_cache(maxsize=None)
def _plugin_classes() -> dict[str, type]:
    """The in-tree classes of the filters above, by plugin name (imported on first use: the
    plugin packages import this package's siblings)."""
    from ..nodeaffinity.node_affinity import NodeAffinity
    from ..nodename import NodeName
    from ..noderesources.fit import Fit
    from ..nodeports import NodePorts
    from ..nodeunschedulable import NodeUnschedulable
    from ..tainttoleration import TaintToleration
    from ..nodevolumelimits import NodeVolumeLimits
    from ..volumebinding import VolumeBinding
    from ..volumezone import VolumeZone

    return {"NodeUnschedulable": NodeUnschedulable, "NodeName": NodeName, "TaintToleration": TaintToleration,
            "NodeAffinity": NodeAffinity, "NodeResourcesFit": Fit, "NodePorts": NodePorts,
            # node-only (NodeVolumeLimits per pod: filter_pod_dependence_of, asked by filters_plan)
            "VolumeBinding": VolumeBinding, "VolumeZone": VolumeZone, "NodeVolumeLimits": NodeVolumeLimits}


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
    ``node_only_first``: each of them is the in-tree class (whose failures are never
    Unschedulable) and comes before every additive one in profile order; then a node whose Filter
    status is Unschedulable was rejected by an additive filter after passing all the node-only ones.
    """

    __slots__ = ("check_fit", "cols", "wants", "check_ports", "wanted_ports", "node_only", "fit_state",
                 "node_only_first", "per_pod")

    def __init__(self) -> None:
        self.check_fit = False
        self.cols = np.zeros(0, dtype=np.int64)
        self.wants = np.zeros(0, dtype=np.int64)
        self.check_ports = False
        self.wanted_ports: tuple | None = None
        #: the active node-only filters, in profile order
        self.node_only: list[str] = []
        self.fit_state = False
        self.node_only_first = True
        #: the filters whose kind depends on the pod (runtime.nominated.PER_POD): asked per pod
        self.per_pod: list[Any] = []

    @property
    def additive_exact(self) -> bool:
        """Whether the additive filters' verdicts follow from the plan alone: their PreFilter
        states exist, so they answer Success or Unschedulable, never Error."""
        return (not self.check_fit or self.fit_state) and (not self.check_ports or self.wanted_ports is not None)


def plan_dry_run(plugin: Any, state: "CycleState", pod: "Pod", table: "NodeTable") -> DryRunPlan | None:
    """A :class:`DryRunPlan` when the vectorized dry run reproduces the per-node one, else None."""
    # the plugin's class says whether the vectorized dry run reproduces it (DefaultPreemption and
    # subclasses overriding none of DRY_RUN_METHODS); any other PostFilter plugin is not
    if not getattr(type(plugin), "dry_run_vectorizable", False):
        return None
    if plugin.is_eligible_pod is not None or plugin.more_important_pod is not more_important_pod:
        return None
    return filters_plan(plugin.handle, state, table, pod)


def filters_plan(handle: fwk.Handle, state: "CycleState", table: "NodeTable", pod: "Pod | None" = None
                 ) -> DryRunPlan | None:
    """A :class:`DryRunPlan` when every Filter plugin that can still reject the pod (outside the
    PreFilter skip set) is node-only or additive and no PreFilter plugin outside it has
    AddPod/RemovePod extensions (so adding or removing pods changes no CycleState); else None.

    A filter whose kind depends on the pod (NodeVolumeLimits) must answer node-only for ``pod``
    (None without a pod)."""
    skip = state.skip_filter_plugins
    # what the plan reads: the profile, the skip set, the PreFilter states, the table's resources
    fit_state, ports_state = state.get(_FIT_STATE_KEY), state.get(_PORTS_STATE_KEY)
    width = len(table.resource_names)
    key = (handle, skip, table, width, fit_state, ports_state)
    last = _LAST_PLAN[0]
    if last is not None and len(last[0]) == len(key) and all(map(operator.is_, last[0], key)):
        plan = last[1]
    else:
        # each cycle's PreFilter writes new state objects: the plans are also kept by the states'
        # values (the plan reads nothing else of them), so pods of one spec share one plan
        values = _state_values(fit_state, ports_state)
        vkey = None if values is None else (id(handle), skip, id(table), width, values)
        got = _PLANS.get(vkey) if vkey is not None else None
        if got is not None and got[0] is handle and got[1] is table:
            plan = got[2]
        else:
            plan = _filters_plan(handle, state, table, skip)
            if vkey is not None:
                if len(_PLANS) >= _PLANS_SIZE:
                    _PLANS.clear()
                _PLANS[vkey] = (handle, table, plan)
        _LAST_PLAN[0] = (key, plan)
    if plan is not None and plan.per_pod:
        # asked every time: the answer reads the pod and the storage objects, not in the key
        if pod is None or any(pl.filter_pod_dependence_of(state, pod, table) != NODE_ONLY for pl in plan.per_pod):
            return None
    return plan


_FIT_STATE_KEY = "PreFilterNodeResourcesFit"
_PORTS_STATE_KEY = "PreFilterNodePorts"
#: the last (key, plan) of filters_plan: a scheduling cycle asks for the same pod several times
_LAST_PLAN: list = [None]
#: (id(handle), skip set, id(table), resource columns, the PreFilter states' values) ->
#: (handle, table, plan) of filters_plan (plans are never changed once made); cleared when full
_PLANS: dict[tuple, tuple] = {}
_PLANS_SIZE = 64


@functools.lru_cache(maxsize=None)
def _state_types() -> tuple[Any, Any]:
    """NodeResourcesFit's and NodePorts' PreFilter state classes (imported on first use)."""
    from ..nodeports.node_ports import _PreFilterState
    from ..noderesources.fit import PreFilterState
    return PreFilterState, _PreFilterState


def _state_values(fit_state: Any, ports_state: Any) -> tuple | None:
    """What :func:`_filters_plan` reads of the two PreFilter states, as a hashable value (None
    for a state of another type: then the plan is made for the state objects alone)."""
    fit_type, ports_type = _state_types()
    if fit_state is None:
        fit = None
    elif type(fit_state) is fit_type:
        fit = (fit_state.milli_cpu, fit_state.memory, fit_state.ephemeral_storage,
               tuple(fit_state.scalar_resources.items()))
    else:
        return None
    if ports_state is None:
        ports = None
    elif type(ports_state) is ports_type:
        ports = (tuple(ports_state),)
        try:
            hash(ports)
        except TypeError:
            return None
    else:
        return None
    return fit, ports


def _filters_plan(handle: fwk.Handle, state: "CycleState", table: "NodeTable", skip: Any) -> DryRunPlan | None:
    # the runtime's check: registered node-only or additive filters, no AddPod/RemovePod extensions
    filters = nominated_filters(handle, state)
    if filters is None:
        return None
    classes = _plugin_classes()
    plan = DryRunPlan()
    for name, pl, kind in filters:
        cls_ = classes.get(name)
        if cls_ is None or not isinstance(pl, cls_):
            return None  # the dry run knows the in-tree filters' forms only
        if kind == PER_POD:
            plan.per_pod.append(pl)
        if name == "NodeResourcesFit":
            plan.check_fit = True
            _fit_checks(plan, pl, state, table)
        elif name == "NodePorts":
            plan.check_ports = True
            plan.wanted_ports = _wanted_ports(state)
        else:
            plan.node_only.append(name)
            # after an additive filter, a subclass, or a volume plugin (NodeVolumeLimits answers
            # Unschedulable when the pod's CSI driver is not installed on the node, upstream's
            # csi.go): a node the cycle found Unschedulable may fail it
            if (plan.check_fit or plan.check_ports or type(pl) is not cls_
                    or name not in NEVER_UNSCHEDULABLE_FILTERS):
                plan.node_only_first = False
    return plan


def _fit_checks(plan: DryRunPlan, fit: Any, state: "CycleState", table: "NodeTable") -> None:
    """NodeResourcesFit's checks (``fitsRequest``): the resources with a non-zero request, not ignored."""
    from ..noderesources import fit as fit_module
    pod_request = fit_module.pre_filter_state_or_error(state)
    if isinstance(pod_request, Status):
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
    ``pinfo`` (the PodInfo, or None until :meth:`pod_info` builds it from ``rec``, the table record
    of a pod the table keeps as a template record: the dry run reads such a pod's fields off its
    template and builds PodInfos only for the victims read). Row ``r``'s pods are entries
    ``row_start[r]`` to ``row_start[r] + row_count[r]``, in the table's pod-list order, loaded when
    ``row_version[r]`` moved. A reloaded row appends a new range; the pool is rebuilt when the dead
    ranges outgrow the live ones.
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
        #: id(prototype) -> :meth:`_template_fields` of a template record's prototype (kept while
        #: the width stays; the prototype is held, so its id is not reused)
        self._templates: dict[int, tuple] = {}
        self._templates_width = self.width

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
        self.rec = np.full(cap, -1, dtype=np.int64)
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
        pods, volatile, recs = self.pods, self.volatile, self.rec
        self._alloc_pool(cap)
        self.rec[:old] = recs[:old]
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

        ``is_assumed(pod)`` (the snapshot's ``is_assumed_pod``) tells which not-started pods are
        assumed, the only ones whose start the scheduler may still set in place (at bind); None:
        any not-started pod may, and its start is read again when used (``_preemption.settle_segments``).
        """
        stale = _preemption.stale_rows(rows, self.row_version, table.row_version)
        if len(stale):
            self._load_rows(table, stale.tolist(), is_assumed)

    def _load_row(self, table: "NodeTable", row: int, is_assumed: Any = None) -> None:
        """Load one row (see :meth:`_load_rows`)."""
        self._load_rows(table, [row], is_assumed)

    def _template_fields(self, proto: "Pod", index: "collections.abc.Mapping[str, int]") -> tuple:
        """What an entry holds of a template record, read off the template's prototype once per
        PodColumns (every record of one template has the prototype's priority, start, requests,
        labels and host ports: ``NodeTable.pod_prototype``): (prototype, priority, start,
        requests as a (R,) int64 vector or None when all zero, signature id, has host ports)."""
        return (proto, *self._fields(proto, proto.requests, index))

    def _fields(self, pod: "Pod", requests: Any, index: "collections.abc.Mapping[str, int]") -> tuple:
        """(priority, start, requests (R,) int64 or None when all zero, signature id, has host
        ports) of a pod; its ``start`` NOT_STARTED when it has none."""
        p = pod.priority
        t = pod.start_time
        vec = None
        for name, amount in requests.items():
            if amount:
                if vec is None:
                    vec = np.zeros(self.width, dtype=np.int64)
                vec[index[name]] = amount
        labels = pod.labels
        key = (pod.namespace, tuple(sorted(labels.items()))) if labels else (pod.namespace, ())
        signatures = self.signatures
        sid = signatures.get(key)
        if sid is None:
            sid = signatures[key] = len(self.signature_keys)
            self.signature_keys.append((pod.namespace, dict(labels)))
        return (0 if p is None else p, NOT_STARTED if t is None else t, vec, sid, bool(pod.host_ports))

    def _load_rows(self, table: "NodeTable", rows: list[int], is_assumed: Any = None) -> None:
        """Load ``rows`` (each at the table's current version) as new ranges of the pool.

        A row whose PodInfo list is not built is read from the table's records: a record kept as a
        template record (no PodInfo) takes its prototype's fields. With at least
        ``_BULK_RECORDS`` such records the fields are gathered per template with NumPy
        (:meth:`_load_bulk`: the first dry runs load every walked row, ~2,500 pods a run at 5,000
        nodes); fewer go entry by entry (:meth:`_load_entries`). Both write the same columns.
        """
        prototype_of = getattr(table, "pod_prototype", None)
        built = getattr(table.pods, "built", None)
        if self._templates_width != self.width or len(self._templates) > _TEMPLATE_FIELDS_SIZE:
            self._templates = {}  # (requests vectors of another width, or too many prototypes)
            self._templates_width = self.width
        by_records = prototype_of is not None and built is not None
        if (by_records and len(rows) >= _MANY_ROWS and hasattr(table, "pod_records_many")
                and len(set(rows)) == len(rows)):
            self._load_many_rows(table, rows, is_assumed)
            return
        # each row's pods, in ``pods[row]``'s order: (first entry (relative), count) per row; the
        # entries read off records and those records; the entries of PodInfo lists and the PodInfos
        spans: list[tuple[int, int]] = []
        rec_at: list[int] = []
        rec_ids: list[int] = []
        info_at: list[int] = []
        infos: list[Any] = []
        total = 0
        for row in rows:
            if by_records and built(row) is None:  # type: ignore[misc]
                got = cast(Any, table).pod_records(row)
                rec_ids.extend(got)
                at = rec_at
            else:
                got = table.pods[row]
                infos.extend(got)
                at = info_at
            n = len(got)
            at.extend(range(total, total + n))
            spans.append((total, n))
            total += n
        s = self.size
        if s + total > self.cap:
            self._grow(s + total)
        end = s + total
        if len(rec_ids) >= _BULK_RECORDS and hasattr(table, "prototype_ids"):
            self._load_bulk(table, rec_at, rec_ids, info_at, infos, s, is_assumed)
        else:
            items: list[tuple[int, Any]] = [(-1, None)] * total
            for e, rec in zip(rec_at, rec_ids):
                items[e] = (rec, None)
            for e, pi in zip(info_at, infos):
                items[e] = (-1, pi)
            self._load_entries(table, items, slice(s, end), is_assumed)
        row_start, row_count, row_version, versions = self.row_start, self.row_count, self.row_version, table.row_version
        for row, (first, n) in zip(rows, spans):
            self.live += n - int(row_count[row])
            row_start[row] = s + first
            row_count[row] = n
            row_version[row] = versions[row]
        self.size = end

    def _load_many_rows(self, table: "NodeTable", rows: list[int], is_assumed: Any = None) -> None:
        """:meth:`_load_rows` for many distinct rows of a table that keeps records (a dry run's
        first windows load every walked row: thousands at 5,000 nodes): the records of the rows
        whose PodInfo list is not built in one call (``pod_records_many``), the built lists read
        row by row, the rows' ranges written a column at a time. The same entries in the same
        places as the row-by-row loop."""
        t = cast(Any, table)
        arr = np.asarray(rows, dtype=np.int64)
        n = len(arr)
        built_rows = t.built_pod_rows()
        is_built = np.zeros(n, dtype=bool)
        lists: list[Any] = []
        if built_rows:
            position = {r: i for i, r in enumerate(rows)}
            hit = sorted(position[r] for r in built_rows & position.keys())
            is_built[hit] = True
            lists = [table.pods[rows[i]] for i in hit]
        recs, rec_counts = t.pod_records_many(arr[~is_built])
        counts = np.empty(n, dtype=np.int64)
        counts[~is_built] = rec_counts
        counts[is_built] = [len(lst) for lst in lists]
        first = np.zeros(n, dtype=np.int64)  # each row's first entry (relative)
        np.cumsum(counts[:-1], out=first[1:])
        total = int(counts.sum())
        # the entries of the record rows: their row's first entry plus their place in the row
        rec_first = first[~is_built]
        rec_at = np.repeat(rec_first - (np.cumsum(rec_counts) - rec_counts), rec_counts) + np.arange(len(recs))
        info_at: list[int] = []
        infos: list[Any] = []
        for at, lst in zip(first[is_built].tolist(), lists):
            info_at.extend(range(at, at + len(lst)))
            infos.extend(lst)
        s = self.size
        if s + total > self.cap:
            self._grow(s + total)
        end = s + total
        if len(recs) >= _BULK_RECORDS and hasattr(table, "prototype_ids"):
            self._load_bulk(table, rec_at.tolist(), recs.tolist(), info_at, infos, s, is_assumed)
        else:
            items: list[tuple[int, Any]] = [(-1, None)] * total
            for e, rec in zip(rec_at.tolist(), recs.tolist()):
                items[e] = (rec, None)
            for e, pi in zip(info_at, infos):
                items[e] = (-1, pi)
            self._load_entries(table, items, slice(s, end), is_assumed)
        # (distinct rows: each row's old count is taken off once, as the loop does)
        self.live += total - int(self.row_count[arr].sum())
        self.row_start[arr] = s + first
        self.row_count[arr] = counts
        self.row_version[arr] = table.row_version[arr]
        self.size = end

    def _load_entries(self, table: "NodeTable", items: list[tuple[int, Any]], dest: Any, is_assumed: Any) -> None:
        """Entries ``dest`` (a slice of the pool, or (len(items),) int64 entry numbers) from
        ``items`` ((record, None) for a table record, (-1, PodInfo) for a built pod), one at a
        time: the fields gathered in lists, then written a column at a time (up to
        ``_SCALAR_ENTRIES`` entries into a slice: element by element)."""
        prototype_of = getattr(table, "pod_prototype", None)
        index = table.resource_index
        templates = self._templates
        prios: list[int] = []
        starts: list[float] = []
        sigs: list[int] = []
        ports: list[bool] = []
        volatile: list[bool] = []
        recs: list[int] = []
        req_at: list[int] = []          # entries (relative) with a non-zero request vector ...
        req_vecs: list[np.ndarray] = []  # ... and those vectors
        objects: list[tuple[int, Any]] = []  # (relative entry, PodInfo) of entries with one
        for e, (rec, pi) in enumerate(items):
            got = prototype_of(rec) if rec >= 0 else None  # type: ignore[misc]
            if got is not None:
                # a template record: its prototype's fields, no PodInfo built; its start stays
                # the template's (no Pod object the scheduler could start in place exists)
                f = templates.get(id(got))
                if f is None or f[0] is not got:
                    f = templates[id(got)] = self._template_fields(got, index)
                _, p, t, vec, sid, has_ports = f
                vol = False
                recs.append(rec)
            else:
                if pi is None:
                    pi = cast(Any, table).pod_info(rec)
                pod = pi.pod
                p, t, vec, sid, has_ports = self._fields(pod, pi.requests, index)
                # an assumed pod is stored with its PodInfo: the scheduler may start it in place
                vol = pod.start_time is None and (is_assumed is None or is_assumed(pod))
                recs.append(-1)
                objects.append((e, pi))
            prios.append(p)
            starts.append(t)
            sigs.append(sid)
            ports.append(has_ports)
            volatile.append(vol)
            if vec is not None:
                req_at.append(e)
                req_vecs.append(vec)
        if len(prios) <= _SCALAR_ENTRIES and isinstance(dest, slice):
            # a few entries: one element write each costs less than a list's conversion per column
            # (the same values in the same places as the column writes below)
            prio, start, sig, has_ports, vol_col, rec_col, req = (self.prio, self.start, self.sig, self.has_ports,
                                                                   self.volatile, self.rec, self.req)
            e0 = dest.start
            for k in range(len(prios)):
                e = e0 + k
                prio[e] = prios[k]
                start[e] = starts[k]
                sig[e] = sigs[k]
                has_ports[e] = ports[k]
                vol_col[e] = volatile[k]
                rec_col[e] = recs[k]
                req[e] = 0
            for k, vec in zip(req_at, req_vecs):
                req[e0 + k] = vec
            pinfo, pod_objects = self.pinfo, self.pods
            for k, pi in objects:
                pinfo[e0 + k] = pi
                pod_objects[e0 + k] = pi.pod
            return
        self.prio[dest] = prios
        self.start[dest] = starts
        self.sig[dest] = sigs
        self.has_ports[dest] = ports
        self.volatile[dest] = volatile
        self.rec[dest] = recs
        req = self.req
        req[dest] = 0
        if isinstance(dest, slice):
            at = np.arange(dest.start, dest.stop, dtype=np.int64)
        else:
            at = dest
        if req_at:
            req[at[req_at]] = req_vecs
        # the object columns: the pool beyond ``size`` holds None (new or grown pools only), so
        # only the entries with a PodInfo are written
        pinfo, pod_objects = self.pinfo, self.pods
        for e, pi in objects:
            pinfo[at[e]] = pi
            pod_objects[at[e]] = pi.pod

    def _load_bulk(self, table: "NodeTable", rec_at: list[int], rec_ids: list[int], info_at: list[int],
                   infos: list[Any], s: int, is_assumed: Any) -> None:
        """:meth:`_load_entries` for many table records: entries ``s + rec_at[k]`` from records
        ``rec_ids[k]``, entries ``s + info_at[k]`` from the PodInfos ``infos[k]``. The template
        records' fields are gathered from one row of fields per template (``table.prototype_ids``;
        no per-entry Python objects); the other entries go through :meth:`_load_entries`."""
        tids = cast(Any, table).prototype_ids(np.array(rec_ids, dtype=np.int64))
        at = np.array(rec_at, dtype=np.int64)
        is_t = tids >= 0
        present = sorted(set(tids[is_t].tolist()))
        index = table.resource_index
        templates = self._templates
        fields = []
        for t in present:
            proto = cast(Any, table).template_prototype(t)
            f = templates.get(id(proto))
            if f is None or f[0] is not proto:
                f = templates[id(proto)] = self._template_fields(proto, index)
            fields.append(f)
        # template id -> row of the per-template fields below
        slot = np.zeros((present[-1] + 1) if present else 1, dtype=np.int64)
        slot[present] = np.arange(len(present))
        u_prio = np.array([f[1] for f in fields], dtype=np.int64)
        u_start = np.array([f[2] for f in fields], dtype=np.float64)
        u_sig = np.array([f[4] for f in fields], dtype=np.int64)
        u_ports = np.array([f[5] for f in fields], dtype=bool)
        u_req = np.zeros((len(fields), self.width), dtype=np.int64)
        for i, f in enumerate(fields):
            if f[3] is not None:
                u_req[i] = f[3]
        which = slot[tids[is_t]]
        dest = at[is_t] + s
        self.prio[dest] = u_prio[which]
        self.start[dest] = u_start[which]
        self.sig[dest] = u_sig[which]
        self.has_ports[dest] = u_ports[which]
        self.volatile[dest] = False  # no Pod object the scheduler could start in place exists
        self.rec[dest] = np.array(rec_ids, dtype=np.int64)[is_t]
        self.req[dest] = u_req[which]
        # the rest entry by entry: records with a built PodInfo and the rows' PodInfo lists
        built = np.flatnonzero(~is_t).tolist()
        if built or infos:
            items = [(rec_ids[k], None) for k in built] + [(-1, pi) for pi in infos]
            dest = np.array([rec_at[k] for k in built] + info_at, dtype=np.int64) + s
            self._load_entries(table, items, dest, is_assumed)

    def pod_info(self, table: "NodeTable", e: int) -> PodInfo:
        """Entry ``e``'s PodInfo, built from its table record on first use (the entry must be one
        of a row loaded at the table's current version, as within a dry run)."""
        pi = self.pinfo[e]
        if pi is None:
            pi = self.pinfo[e] = cast(Any, table).pod_info(int(self.rec[e]))
            self.pods[e] = pi.pod
            self.rec[e] = -1
        return pi


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
                got = tuple(i for i, _, selector in self.index.by_namespace.get(namespace, ())
                            if selector.matches(labels))
            self.by_signature[sid] = got
        return got


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
        #: (table, rec, rows, row versions): entries whose ``pinfo`` is None are built from their
        #: table record ``rec[e]``, which the candidate's row still holds while its version stands
        self._records: tuple | None = None

    def read_records(self, table: "NodeTable", rec: np.ndarray, rows: np.ndarray) -> None:
        """Build victims without a PodInfo from ``table``'s records ``rec`` (candidate ``i`` is on
        row ``rows[i]``; its row versions are taken now, as the dry run saw them)."""
        self._records = (table, rec, rows, table.row_version[rows].copy())

    def __len__(self) -> int:
        return len(self.names)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        c = self._built[i]
        if c is None:
            from .preemption import Candidate
            pinfo = self._pinfo
            a = int(self._ptr[i])
            entries = self._victims[a:a + int(self.n_victims[i])].tolist()
            pods = []
            for e in entries:
                pi = pinfo[e]
                if pi is None:
                    pi = pinfo[e] = self._record_pod_info(i, e)
                pods.append(pi.pod)
            c = self._built[i] = Candidate(self.names[i], Victims(pods, int(self.num_violations[i])))
        return c

    def _record_pod_info(self, i: int, e: int) -> "PodInfo":
        lazy = self._records
        if lazy is None:
            raise AssertionError(f"dry-run entry {e} has neither a PodInfo nor a record")
        table, rec, rows, versions = lazy
        if table.row_version[rows[i]] != versions[i]:
            # the record may hold another pod by now: never guess
            raise RuntimeError(f"preemption candidate {self.names[i]!r} read after its node's pods changed")
        r = int(rec[e])
        pi = cast(Any, table).pod_info(r)
        rec[e] = -1
        return pi

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
        arrays = (self.num_violations, self.top_priority, self.sum_priority, self.n_victims, self.first_start)
        if all(a.dtype == np.int64 for a in arrays[:4]) and arrays[4].dtype == np.float64:
            return _preemption.pick_candidate(*arrays)  # the same index, in one compiled pass
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

    def __init__(self, build, size: int = 0, histogram=None):
        super().__init__()
        self._build = build
        self._size = size              # how many entries build() yields (distinct nodes)
        self._histogram = histogram    # reason -> count over them, from the walk's arrays

    def _ready(self) -> None:
        if self._build is not None:
            build, self._build = self._build, None
            for name, status in build():
                self._map[name] = status

    def reason_histogram(self) -> dict[str, int]:
        """reason -> how many entries carry it, as counting :meth:`items`' statuses gives it; from
        the walk's arrays while the statuses are not built (a FitError's message needs no more:
        a pod that fits nowhere asks for it at every attempt)."""
        if self._build is not None and self._histogram is not None:
            return self._histogram()
        return super().reason_histogram()

    def get(self, node_name: str) -> Status:
        self._ready()
        return super().get(node_name)

    def set(self, node_name: str, status: Status) -> None:
        self._ready()
        super().set(node_name, status)

    def len(self) -> int:
        if self._build is not None and self._histogram is not None:
            return self._size
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
    rows: np.ndarray          # (w,) the window's table rows
    kind: np.ndarray          # (w,) int8 CANDIDATE / FILTERED / NO_VICTIMS / NO_VICTIM_LEFT
    code: np.ndarray          # (w,) int8 filter code of each node
    results: FilterResults | None      # the failing nodes' filter results (None: not evaluated yet)
    result_pos: np.ndarray    # positions (in the window) the results are for
    victims: np.ndarray       # victim entries of the candidates, by segment
    seg: np.ndarray           # segment bounds of each node's victims in ``victims``
    n_victims: np.ndarray
    n_violating: np.ndarray
    top_priority: np.ndarray
    sum_priority: np.ndarray
    first_start: np.ndarray
    deferred: tuple | None    # the arguments of the deferred filter evaluation (see _verdicts)

    #: kinds
    CANDIDATE, FILTERED, NO_VICTIMS, NO_VICTIM_LEFT = 0, 1, 2, 3


# ------------------------------------------------------------------------------------------------
# the dry run
# ------------------------------------------------------------------------------------------------
class VectorizedDryRun:
    """The vectorized dry run of one DefaultPreemption plugin (keeps its pod columns between runs)."""

    #: :meth:`_window` takes :meth:`_window_fused` where it applies (False: always step by step;
    #: the tests compare both)
    fused = True

    def __init__(self, plugin: Any):
        self.plugin = plugin
        self._columns: PodColumns | None = None
        self._shadow: ShadowTable | None = None
        self._pdb_key: tuple | None = None
        self._pdb_matches: _PDBMatches | None = None
        #: nodes the last run walked (sizes the next run's first window)
        self._last_walk = 0

    def columns(self, table: "NodeTable") -> PodColumns:
        """The pod columns of ``table`` (new ones for another table)."""
        cols = self._columns
        if cols is None or cols.table_uid != table.uid:
            cols = self._columns = PodColumns(table)
            # the PDB matches are kept per signature id, and new columns number their signatures
            # afresh: a fork's table (or any other) must not read the old table's matches
            self._pdb_key = self._pdb_matches = None
        return cols

    def _shadow_for(self, table: "NodeTable") -> ShadowTable:
        shadow = self._shadow
        if shadow is None or not shadow.fits(table):
            shadow = self._shadow = ShadowTable(table)
        shadow.version = new_shadow_version()
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
            offset: int, num_candidates: int, plan: DryRunPlan, screened: bool = False
            ) -> tuple[VectorCandidates, NodeToStatus, str | None]:
        """Upstream ``DryRunPreemption`` over the potential nodes ``rows`` (table rows, in the
        order the per-node path walks them before the rotation by ``offset``).

        Returns what :meth:`~.preemption.Evaluator.dry_run_preemption` returns: the candidates
        (non-violating then violating, each capped at ``num_candidates``), the statuses of the
        walked nodes that are no candidate, and the aggregated Error messages (or None).

        ``screened``: each of ``rows`` was found Unschedulable by this pod's Filter in this cycle
        (``state``'s); with ``plan.node_only_first`` they all pass the node-only filters, which do
        not depend on the pods removed, so the reprieve's verdicts skip them (a failing node's
        status still comes from every filter).
        """
        n = len(rows)
        if n == 0:
            return self._collect([], -1, num_candidates, table, self.columns(table))
        offset %= n  # upstream walks potential[(offset + i) % n]
        walk = rows if offset == 0 else np.concatenate((rows[offset:], rows[:offset]))
        columns = self.columns(table)
        columns.begin(table)
        skip_node_only = screened and plan.node_only_first
        nominated = NominatedUsage(self.plugin.handle, table_state(table).nominations, pod, table, columns.width,
                                   state)
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
            win = self._window(state, pod, table, walk[done:end], plan, columns, nominated, matches,
                               skip_node_only, (k, nv_total, v_total))
            windows.append(win)
            done = end
            size *= 2
            # upstream: stop once nonViolating > 0 and nonViolating + violating >= numCandidates,
            # checked after each candidate is added (lists capped at numCandidates)
            stop, nv_total, v_total = _preemption.walk_stop(win.kind, win.n_violating, nv_total, v_total, k,
                                                            _Window.CANDIDATE)
            if stop >= 0:
                break
        self._last_walk = done - len(windows[-1].rows) + stop + 1 if stop >= 0 else done
        return self._collect(windows, stop, k, table, columns)

    # -- one window ------------------------------------------------------------------------------
    def _window(self, state: "CycleState", pod: "Pod", table: "NodeTable", rows: np.ndarray, plan: DryRunPlan,
                columns: PodColumns, nominated: NominatedUsage, matches: _PDBMatches | None,
                skip_node_only: bool = False, stop_rule: tuple[int, int, int] | None = None) -> _Window:
        """One window of the walk. ``stop_rule``: (numCandidates, non-violating and violating
        candidates before the window): the victims are selected up to the node that ends the walk
        (``select_victims``' stop); the nodes after it are left without victims, as the walk never
        reads them (``run`` stops at that node)."""
        w = len(rows)
        # the scheduler cache's assumptions, as its snapshot gives them (None for a bare snapshot)
        is_assumed = getattr(self.plugin.handle.snapshot_shared_lister(), "is_assumed_pod", None)
        columns.refresh(table, rows, is_assumed)
        if (self.fused and plan.additive_exact and not plan.check_ports and (skip_node_only or not plan.node_only)
                and (matches is None or not len(matches.allowed))):
            win = self._window_fused(pod, table, rows, plan, columns, nominated, stop_rule)
            if win is not None:
                win.deferred = None if win.deferred is None else (state, pod, table, *win.deferred)
                return win
        seg = np.empty(w + 1, dtype=np.int64)
        used = np.empty((w, columns.width), dtype=np.int64)
        count = np.empty(w, dtype=np.int64)
        priority = _priority(pod)
        # 1. the potential victims: the pods of lower priority (IsEligiblePod is the default), and
        # each node's requests and pod count once they are gone, in one pass
        entries = _preemption.window_usage(rows, columns.row_start, columns.row_count, columns.prio, priority,
                                           columns.req, table.requested, table.pod_count, seg, used, count)
        m = len(entries)

        # 3. RunFilterPluginsWithNominatedPods once they are gone: the filters' own vectorized
        # verdicts on a shadow table with the dry run's usage (the nominated pods' included)
        _, nom_ports = nominated.add_to(rows, used, count)
        win = _Window()
        win.rows = rows
        code = np.zeros(w, dtype=np.int8)
        win.results = None
        win.deferred = None
        n_active = -1
        if plan.additive_exact and not plan.check_ports and (skip_node_only or not plan.node_only):
            # only NodeResourcesFit's checks can fail a node with potential victims (what _verdicts
            # finds then): 2. and the verdicts in one compiled pass; the failing nodes' statuses
            # deferred as _verdicts defers them
            kind = np.empty(w, dtype=np.int8)
            active = np.empty(w, dtype=np.uint8)
            n_active = _preemption.window_fit(seg, rows, count, table.allowed_pods, table.alloc, used, plan.cols,
                                              plan.wants, plan.check_fit, kind, active, _Window.CANDIDATE,
                                              _Window.FILTERED, _Window.NO_VICTIMS)
            failing = np.flatnonzero(kind == _Window.FILTERED)
            win.result_pos = failing
            if failing.size:
                win.deferred = (state, pod, table, rows[failing], used[failing], count[failing], {}, False)
            hp = failing[:0]  # (nothing more below)
        else:
            hp = np.flatnonzero(seg[1:] != seg[:-1])  # 2. no potential victim: "No preemption victims found"
            win.result_pos = hp
            kind = np.full(w, _Window.NO_VICTIMS, dtype=np.int8)
            active = np.zeros(w, dtype=np.uint8)
        if hp.size:
            sub_rows = rows[hp]
            passed = None
            if plan.additive_exact:
                passed = self._verdicts(state, pod, table, sub_rows, used[hp], count[hp], plan, priority, nom_ports,
                                        win, hp, skip_node_only)
            if passed is None:
                shadow = self._shadow_for(table)
                shadow.requested[sub_rows] = used[hp]
                shadow.pod_count[sub_rows] = count[hp]
                if plan.check_ports:
                    self._shadow_ports(shadow, table, sub_rows, priority, nom_ports)
                res = self.plugin.handle.run_filter_plugins_vectorized(state, pod, table_batch(shadow, sub_rows))
                win.results = res
                code[hp] = res.codes
                passed = res.codes == 0
            kind[hp] = np.where(passed, _Window.CANDIDATE, _Window.FILTERED)
            active[hp[passed]] = 1

        # 4-7. sort, PDB split, reprieve and order the victims on the nodes that fit without them
        if (active.any() if n_active < 0 else n_active):
            _preemption.settle_segments(columns.pods, entries, seg, np.flatnonzero(active), columns.start,
                                        columns.volatile.view(np.uint8))
        conflict = np.zeros(m, dtype=np.uint8)
        if plan.check_ports and plan.wanted_ports is not None and m:
            _port_conflicts(conflict, entries, columns, plan.wanted_ports, table)
        pdb_ptr, pdb_ids, pdb_allowed = _pdb_csr(entries, columns, matches, table)
        win.victims = victims = np.empty(m, dtype=np.int64)
        win.n_victims = n_victims = np.empty(w, dtype=np.int64)
        win.n_violating = n_violating = np.empty(w, dtype=np.int64)
        win.top_priority = top_priority = np.empty(w, dtype=np.int64)
        win.sum_priority = sum_priority = np.empty(w, dtype=np.int64)
        win.first_start = first_start = np.empty(w, dtype=np.float64)
        stop = _preemption.select_victims(seg, entries, active, columns.prio, columns.start, columns.req, conflict,
                                          pdb_ptr, pdb_ids, pdb_allowed, plan.check_fit, plan.cols, plan.wants,
                                          rows, table.alloc, table.allowed_pods, used, count, victims,
                                          np.zeros(m, dtype=np.uint8),
                                          n_victims, n_violating, top_priority, sum_priority, first_start,
                                          *(stop_rule or ()))
        done = w if stop < 0 else stop + 1
        kind[:done][(active[:done] == 1) & (n_victims[:done] == 0)] = _Window.NO_VICTIM_LEFT
        win.kind = kind
        win.code = code
        win.seg = seg
        return win

    def _window_fused(self, pod: "Pod", table: "NodeTable", rows: np.ndarray, plan: DryRunPlan, columns: PodColumns,
                      nominated: NominatedUsage, stop_rule: tuple[int, int, int] | None) -> _Window | None:
        """:meth:`_window`'s steps in one kernel (``_preemption.window_pass``) when NodeResourcesFit
        is the only filter left to judge and no PDB counts (the branch of :meth:`_window` that
        calls ``window_fit``, with no port conflict and an empty PDB index): the same window.
        ``deferred`` holds the failing nodes' (rows, used, count, ports, check_ports) for the
        caller to complete. None when the nominated pods are not listed as arrays (the caller
        then takes the step-by-step path, which asks node by node)."""
        width = columns.width
        if nominated.none:
            nom_rows, nom_vectors = _NO_ROWS, np.zeros((0, width), dtype=np.int64)
        else:
            counted = nominated.counted()
            if counted is None:
                return None
            nom_rows, nom_vectors = counted[0], counted[1]
        pos_of = nominated.scratch_positions()
        k, nv_before, v_before = stop_rule if stop_rule is not None else (-1, 0, 0)
        (stop, n_filtered, entries, seg, used, count, kind, code, victims, n_victims, n_violating, top_priority,
         sum_priority, first_start) = _preemption.window_pass(
            rows, columns.row_start, columns.row_count, columns.prio, _priority(pod), columns.req, table.requested,
            table.pod_count, nom_rows, nom_vectors, pos_of, table.allowed_pods, table.alloc, plan.cols, plan.wants,
            plan.check_fit, columns.pods, columns.start, columns.volatile.view(np.uint8), k, nv_before, v_before,
            _Window.CANDIDATE, _Window.FILTERED, _Window.NO_VICTIMS, _Window.NO_VICTIM_LEFT)
        win = _Window()
        win.rows = rows
        win.results = None
        win.deferred = None
        if n_filtered:
            failing = np.flatnonzero(kind == _Window.FILTERED)
            win.result_pos = failing
            win.deferred = (rows[failing], used[failing], count[failing], {}, False)
        else:
            win.result_pos = _NO_ROWS
        win.victims = victims
        win.n_victims = n_victims
        win.n_violating = n_violating
        win.top_priority = top_priority
        win.sum_priority = sum_priority
        win.first_start = first_start
        win.kind = kind
        win.code = code
        win.seg = seg
        return win

    def _verdicts(self, state: "CycleState", pod: "Pod", table: "NodeTable", rows: np.ndarray, used: np.ndarray,
                  count: np.ndarray, plan: DryRunPlan, priority: int, nom_ports: dict[int, list] | None,
                  win: _Window, positions: np.ndarray, skip_node_only: bool = False) -> np.ndarray | None:
        """Pass/fail of RunFilterPluginsWithNominatedPods on ``rows`` once their potential victims
        are gone, without building the failing nodes' statuses (they are made when read).

        The node-only filters run vectorized on the table; the additive ones are NodeResourcesFit's
        and NodePorts' checks on the dry run's usage. A node passes when all pass, whatever their
        order; which status a failing node gets depends on the order, so it comes from the full
        evaluation, deferred. None when a node-only filter answers Error (the first failure then
        decides whether a node's status is that Error, needed at once): evaluate everything now.
        """
        ok = np.ones(len(rows), dtype=bool)
        if plan.node_only and not skip_node_only:  # (skipped: known to pass, see run's ``screened``)
            res = self.plugin.handle.run_filter_plugins_vectorized(state, pod, table_batch(table, rows),
                                                                   only=plan.node_only)
            codes = res.codes
            if (codes == _ERROR).any():
                return None
            ok &= codes == 0
        if plan.check_fit:  # "Too many pods", then each checked resource's free amount
            _preemption.fit_verdicts(rows, count, table.allowed_pods, table.alloc, used, plan.cols, plan.wants,
                                     ok.view(np.uint8))
        ports: dict[int, HostPortInfo] = {}
        if plan.check_ports:
            from ..nodeports import fits_ports
            assert plan.wanted_ports is not None  # _verdicts runs only when plan.additive_exact
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
                            {r: ports[r] for r in f_rows.tolist() if r in ports} if ports else {}, plan.check_ports)
            win.result_pos = positions[failing]
        return ok

    def _deferred_results(self, win: _Window) -> Any:
        """The FilterResults of a window's failing nodes, evaluated now (see :meth:`_verdicts`)."""
        if win.results is None and win.deferred is not None:
            state, pod, table, rows, used, count, ports, check_ports = win.deferred
            shadow = ShadowTable(table)
            shadow.requested[rows] = used
            shadow.pod_count[rows] = count
            if check_ports:
                shadow.has_host_ports[rows] = False
                for row, hp in ports.items():
                    shadow.has_host_ports[row] = True
                    shadow.ports[row] = hp
            win.results = self.plugin.handle.run_filter_plugins_vectorized(state, pod, table_batch(shadow, rows))
            win.deferred = None
        return win.results

    @staticmethod
    def _shadow_ports(shadow: ShadowTable, table: "NodeTable", sub_rows: np.ndarray, priority: int,
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
        # the first k non-violating candidates, then the first k violating ones; the positions that
        # are no candidate; the Error ones (a node with no victim left, a filter's Error)
        chosen, others, error_positions = _preemption.collect_positions(
            kind, code, n_violating, end, k, _Window.CANDIDATE, _Window.NO_VICTIM_LEFT, _ERROR)
        candidates = VectorCandidates(table.node_names[rows[chosen]].tolist(), columns.pinfo, victims, seg[chosen],
                                      n_victims[chosen], n_violating[chosen], top_priority[chosen],
                                      sum_priority[chosen], first_start[chosen])
        candidates.read_records(table, columns.rec, rows[chosen])
        starts = [0]  # each window's first position in the walk (a list: read one at a time)
        for w in windows[:-1]:
            starts.append(starts[-1] + len(w.rows))

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
        for p in error_positions.tolist():
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

        def histogram() -> Counter:
            # the reasons status_of gives, counted per kind without making the statuses
            counts: Counter = Counter()
            kinds = kind[others]
            n_none = int(np.count_nonzero(kinds == _Window.NO_VICTIMS))
            if n_none:
                for r in self.plugin.no_victims_status().reasons():
                    counts[r] += n_none
            for p in others[kinds == _Window.NO_VICTIM_LEFT].tolist():
                for r in status_of(p).reasons():
                    counts[r] += 1
            rest = others[(kinds != _Window.NO_VICTIMS) & (kinds != _Window.NO_VICTIM_LEFT)]
            if len(rest):
                where = np.zeros(len(rest), dtype=np.int64) if window_of is None else window_of[rest]
                for wi in np.unique(where).tolist():
                    win = windows[wi]
                    q = rest[where == wi] - int(starts[wi])
                    counts.update(self._deferred_results(win).reason_counts(np.searchsorted(win.result_pos, q)))
            return counts

        message = None
        if errors:  # (imported here: preemption imports this module; a from-import per call cost ~1%)
            from .preemption import aggregate_error_message
            message = aggregate_error_message(errors)
        return candidates, _LazyNodeToStatus(build, len(others), histogram), message


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


def _no_victim_left_message(node_name: str) -> str:
    """Upstream's error for a node whose every potential victim was reprieved."""
    return f'expected at least one victim pod on node "{node_name}"'


def _priority(pod: "Pod") -> int:
    p = pod.priority
    return 0 if p is None else int(p)


def _port_conflicts(conflict: np.ndarray, entries: np.ndarray, columns: PodColumns, wanted: tuple,
                    table: "NodeTable") -> None:
    """Per potential victim: whether it uses a host port the preemptor wants (NodePorts' conflict
    rule; the node's ports in use are the union of its pods')."""
    from ..nodeports import fits_ports
    with_ports = np.flatnonzero(columns.has_ports[entries])
    for m in with_ports.tolist():
        hp = HostPortInfo()
        for ip, proto, port in columns.pod_info(table, int(entries[m])).pod.host_ports:
            hp.add(ip, proto, port)
        conflict[m] = not fits_ports(wanted, hp)


def _pdb_csr(entries: np.ndarray, columns: PodColumns, matches: _PDBMatches | None, table: "NodeTable"
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
        pdbs = matches.index.pdbs
        for i, lst in enumerate(lists):
            if lst and any(d in matches.with_disrupted for d in lst):
                name = columns.pod_info(table, int(entries[i])).pod.name
                # already being disrupted: its eviction was counted by the API server
                lists[i] = tuple(d for d in lst if name not in pdbs[d].disrupted_pods)
    lengths = np.fromiter((len(lst) for lst in lists), dtype=np.int64, count=m)
    ptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    ids = np.fromiter(itertools.chain.from_iterable(lists), dtype=np.int32, count=int(ptr[-1]))
    return ptr, ids, matches.allowed


__all__ = ["ADDITIVE_FILTERS", "NODE_ONLY_FILTERS", "DryRunPlan", "PodColumns", "VectorCandidates",
           "VectorizedDryRun", "filter_with_nominated_pods", "filters_plan", "plan_dry_run"]
