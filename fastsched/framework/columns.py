"""The column form: how a plugin's Filter and Score join the fused scheduling-cycle kernel.

A plugin that can state what it does for a pod as table columns offers ``column_form(pod, table)``.
When every PreFilter, Filter, PreScore and Score plugin of a profile offers it and each answers for
the pod, the cycle runs as one compiled pass (:mod:`fastsched.runtime.compiled_cycle`,
``fastsched/_kernels/_cycle.pyx``) instead of one plugin call per extension point. Otherwise the
pod takes the vectorized path with the plugin calls, with identical results. A pod for which no node
fits always takes that path too (it builds the diagnosis and runs PostFilter).

``column_form`` returns None when the plugin cannot be expressed for this pod, or a
:class:`ColumnForm`:

* ``filter`` (its PreFilter and Filter together):

  - :data:`NODES`: the results depend only on the pod and node-side data (labels, taints, images,
    allocatable, ``spec.unschedulable``, the set of nodes), not on the pods on the nodes. The engine
    calls the plugin's own ``pre_filter`` and ``filter_vectorized`` over every node once per pod spec
    and node-set version and keeps the passing rows as a mask. A PreFilter Skip removes the Filter,
    a PreFilterResult that narrows the nodes, a failure, or an Error verdict sends the pod to the
    plugin-call path.
  - :data:`RESOURCES`: NodeResourcesFit's checks on the live ``requested`` and ``pod_count``
    columns; the plugin gives them with ``column_filter_params(state, pod, table) -> (cols, wants)``
    ((K,) int64 table columns, -1 when no node has the resource, and (K,) int64 amounts); and,
    optionally, ``column_filter_rows(state, pod, table)``: a (C,) bool mask of the rows the checks
    can pass at all while the nodes are unchanged (None: any), which joins the plan's static mask.
  - :data:`CYCLE`: the results depend on the pods on the nodes (InterPodAffinity,
    PodTopologySpread). Each cycle the engine calls the plugin's own ``pre_filter`` over every
    node, then its ``filter_vectorized`` on windows of the node order from the round-robin start,
    as the plugin-call path does, and the kernel filters each window with the passing rows; the
    same PreFilter answers (Skip, narrowing, failure, Error verdicts) as for :data:`NODES` send the
    pod to the plugin-call path.
  - :data:`NONE`: the plugin is not a Filter plugin.

* ``score`` (its PreScore and Score together): :data:`NODES` as above with ``pre_score`` and
  ``score_vectorized`` over every node (PreScore then must not depend on which nodes are feasible),
  normalized by ``normalize`` (:data:`NORMALIZE_NONE`, :data:`NORMALIZE_DEFAULT` or
  :data:`NORMALIZE_DEFAULT_REVERSE`, upstream's ``DefaultNormalizeScore``); :data:`RESOURCES` for a
  resource scorer described by ``column_score_params(state, pod, table) -> ResourceScoreParams``;
  :data:`CYCLE` when the scores depend on the pods on the nodes or on which nodes are feasible (e.g.
  PodTopologySpread's domain weights): each cycle, once the kernel has found the feasible nodes, the
  engine calls the plugin's ``pre_score``, ``score_vectorized`` and ``normalize_score_vectorized`` on
  them, as the plugin-call path does, and the kernel adds the weighted results; or :data:`NONE`.

* ``keeps_state``: a later extension point (Reserve, PreBind, ...) reads what the plugin's PreFilter
  wrote in the CycleState. The engine then calls the plugin's ``pre_filter`` on each cycle's state
  (its answer is already known), so every cycle gets fresh state as upstream's does. Plugins whose
  written state nothing reads after Score leave it False.

The engine keeps a compiled plan per pod spec (the identity of the spec fields the scheduler reads),
table and node-set version (``NodeTable.node_version``), and the values of the plugins'
``column_guard(pod, table)`` (optional; a hashable). A plugin whose answer also depends on the pods in
the cluster says so through its guard; it must be cheap, since it runs every cycle (e.g.
InterPodAffinity's table-wide counters of pods with affinity terms).

A plugin may also state ``column_reads``: the pod spec fields (names of
``fastsched.runtime.compiled_cycle.SPEC_FIELDS``) its ``column_form`` and its NODES / RESOURCES parts
read. When every plugin of the profile states it, pods whose specs differ only in fields that no
plugin with a NODES or RESOURCES part reads share a plan (keyed by the forms and the identity of the
fields that are read): a StatefulSet's pods each mount their own claims, which only the volume
plugins read, and those judge the pods each cycle (CYCLE). A plugin that does not state it is taken
to read every field; a form's own ``reads`` narrows them for that form (``()`` for the forms of pods
a plugin skips). Stating too few fields would share a plan between pods it does not fit.

A plugin reading containers (``containers``, ``init_containers``, ``ephemeral_containers``) is taken
to read all of each container, its ``volume_mounts`` included, unless it states
``column_reads_mounts = False`` (its ``column_form`` and NODES / RESOURCES parts read no mount). When
no plugin with such a part reads the mounts, pods whose containers differ only in them share a plan:
the ServiceAccount admission mounts a token volume named per pod (``kube-api-access-<random>``) in
every container, so no two pods of a cluster dump have equal containers.

A plugin stating request fields (containers, init containers, overhead, pod-level resources) among
its reads may also state ``column_named_resources(pod)``: the resources the pod requests whose
names its plan parts depend on (a scoring strategy's resources; ``None``: it cannot say). When every
such plugin of the profile states it, a pod differing from a compiled pod only in which other
extended resources it requests (a bijective renaming of them, amounts equal) derives its plan from
that pod's: the resource Filter's checks and row mask are asked for it, the rest is shared.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Hashable, Protocol, runtime_checkable

import numpy as np

from .._kernels import _cycle

if TYPE_CHECKING:  # pragma: no cover
    from ..api import Pod
    from .protocols import NodeTable
    from .cycle_state import CycleState

#: ``ColumnForm.filter`` / ``.score`` kinds
NONE = "none"
NODES = "nodes"
RESOURCES = "resources"
CYCLE = "cycle"
#: ``ColumnForm.normalize``
NORMALIZE_NONE = _cycle.NORMALIZE_NONE_MODE
NORMALIZE_DEFAULT = _cycle.NORMALIZE_DEFAULT_MODE
NORMALIZE_DEFAULT_REVERSE = _cycle.NORMALIZE_REVERSE_MODE


@dataclass(frozen=True, slots=True)
class ColumnForm:
    """How a plugin's PreFilter+Filter and PreScore+Score are expressed for one pod."""

    filter: str = NONE
    score: str = NONE
    normalize: int = NORMALIZE_NONE
    keeps_state: bool = False
    #: the spec fields this form's NODES / RESOURCES parts read, when fewer than the plugin's
    #: ``column_reads``: ``()`` for a form whose PreFilter and PreScore answer Skip (the form itself
    #: says so, whatever the fields hold)
    reads: tuple[str, ...] | None = None


#: Forms shared by the built-in plugins.
FILTER_ON_NODES = ColumnForm(filter=NODES)
#: a Filter that reads what changes between cycles (pods on the nodes, API objects such as volumes)
FILTER_EACH_CYCLE = ColumnForm(filter=CYCLE)
#: a Filter whose PreFilter answers Skip for the pod (nothing of the pod's spec in the plan)
FILTER_SKIPPED = ColumnForm(filter=NODES, reads=())
#: a Filter and Score plugin whose PreFilter and PreScore answer Skip for the pod
SKIPPED = ColumnForm(filter=NODES, score=NODES, reads=())
#: a Filter and Score plugin that reads what changes between cycles (and, to score, the feasible nodes)
EACH_CYCLE = ColumnForm(filter=CYCLE, score=CYCLE)
NOTHING = ColumnForm()


@dataclass(frozen=True, slots=True)
class ResourceScoreParams:
    """A resource scorer for the fused kernel (see ``_arith.resource_score``); arrays are (J,) over
    the scorer's configured resources, ``shape_u`` / ``shape_s`` the RequestedToCapacityRatio shape."""

    kind: int
    alloc_cols: np.ndarray      # int64: table column of the allocatable, -1 when it does not count
    used_cols: np.ndarray       # int64: column of the usage (in nonzero_requested when used_nonzero)
    used_nonzero: np.ndarray    # uint8
    requests: np.ndarray        # int64: the pod's request of each resource
    weights: np.ndarray         # int64: per-resource weights
    shape_u: np.ndarray         # int64
    shape_s: np.ndarray         # int64


@runtime_checkable
class ColumnPlugin(Protocol):
    """A plugin that can join the fused cycle (see the module docstring)."""

    def column_form(self, pod: "Pod", table: "NodeTable") -> ColumnForm | None: ...


class ResourceFilterColumns(Protocol):
    def column_filter_params(self, state: "CycleState", pod: "Pod",
                             table: "NodeTable") -> tuple[np.ndarray, np.ndarray]: ...


class ResourceFilterChecks(Protocol):
    """Optional beside :class:`ResourceFilterColumns`: the checks and their reasons ("Too many
    pods", then one per check), for the compiled Filter diagnosis, which judges the RESOURCES
    Filter by its check masks (bit 0 the pod count, bit ``j + 1`` check ``j``; Unresolvable when a
    check asks more than the node's allocatable, or of a resource no node has) and takes a failing
    node's reasons as the bits set, in order. A plugin whose verdicts are not that leaves it out."""

    def column_filter_checks(self, state: "CycleState", pod: "Pod",
                             table: "NodeTable") -> tuple[np.ndarray, np.ndarray, list[str]]: ...


class NodeDependentFilterState(Protocol):
    """Optional for a plugin with a :data:`CYCLE` Filter: ``filter_records_node_state(state)``, asked
    after the cycle's PreFilter, answers True when this cycle's Filter calls may write to the
    CycleState something a later extension point reads and that depends on which nodes the Filter
    was asked about (DynamicResources: the allocated claims unavailable on some node, which its
    PostFilter deallocates). Upstream asks a Filter only about the nodes every earlier Filter in
    the profile passed; the compiled cycle asks its CYCLE Filters about whole windows of the node
    order, so on True it leaves the cycle to the plugin-call path, which asks as upstream does. A
    plugin whose Filter writes nothing, or only per-node results read for the chosen node, leaves
    it out."""

    def filter_records_node_state(self, state: "CycleState") -> bool: ...


class CycleFilterShortcuts(Protocol):
    """Optional for a plugin with :data:`CYCLE` parts, asked each cycle after its PreFilter (and
    taken only when the plugin's own class defines them beside ``filter_vectorized`` /
    ``score_vectorized``: a subclass overriding one of the pair keeps the general path).

    ``filter_passes_everywhere(state, pod, table)``: True promises that this cycle's
    ``filter_vectorized`` answers :meth:`~fastsched.framework.vectorized.FilterVerdicts.all_pass`
    on any batch of ``table``'s rows, and that the call has written to ``state`` what those
    Filter calls would (VolumeBinding: the PodVolumes every node gets when each claim is bound to
    a PV without node affinity). The compiled cycle then does not ask that Filter about each
    window; with no other CYCLE Filter the kernel walks the order alone. False says nothing.

    ``score_zero_everywhere(state, pod)`` (only for a Score without NormalizeScore): True promises
    that this cycle's ``score_vectorized`` scores 0 on every node (VolumeBinding when no node has
    a volume to bind or provision: upstream's Score finds no class to score). The compiled cycle
    then neither calls it nor adds its column; the totals are the same.

    ``normalized_score_zero_everywhere(state, pod)`` (for a Score with its own NormalizeScore, the
    plugin's own ``normalize_score_vectorized``): True promises that this cycle's
    ``score_vectorized`` followed by ``normalize_score_vectorized`` gives 0 on every node of any
    batch of the table's rows, without an error (InterPodAffinity when every node has the same raw
    score: upstream's NormalizeScore then maps every score to 0). The compiled cycle then calls
    neither."""

    def filter_passes_everywhere(self, state: "CycleState", pod: "Pod", table: "NodeTable") -> bool: ...

    def score_zero_everywhere(self, state: "CycleState", pod: "Pod") -> bool: ...

    def normalized_score_zero_everywhere(self, state: "CycleState", pod: "Pod") -> bool: ...


class ResourceScoreColumns(Protocol):
    def column_score_params(self, state: "CycleState", pod: "Pod",
                            table: "NodeTable") -> ResourceScoreParams: ...


class GuardedColumnPlugin(Protocol):
    """A plugin whose :meth:`ColumnPlugin.column_form` reads more than the pod's spec fields.

    ``column_guard(pod, table)``: a hashable value of everything beside the pod's spec fields (the
    compiled cycle's ``SPEC_FIELDS``) that the plugin's ``column_form`` for the pod depends on (the
    table's totals, the DeviceClasses, the Services selecting the pod ...). The compiled cycle
    keys its plans on the spec objects, the node-set version and every guard's value, and asks
    each guard every cycle.

    ``column_guard_fixed(pod)`` (optional; the contract of the guard memo). True promises that
    ``column_guard(pod, table)`` returns one and the same value for every table, every state of
    the cluster's other objects and every later cycle, for every pod whose spec fields are the
    same objects as ``pod``'s: the value is a function of those spec fields (and of what is
    derived from them alone, e.g. ``pod.requests``) and of the plugin's own arguments, which do not
    change after construction. The compiled cycle then calls ``column_guard`` once per spec and
    reuses the value for later pods of that spec (``CompiledCycle._guard_memo``). It must answer
    False whenever the guard's value for this pod may read anything else (the table, another API
    object, a feature that can change): a wrong True keeps a stale plan after such a change. The
    answer itself must also depend on the pod's spec fields and the plugin's arguments alone.
    ``tests/runtime/test_cycle_guards.py`` checks the promise for the stock plugins' guards.

    ``column_guard_source(pod)`` (optional, asked once per spec with the memo): None, or a
    hashable callable ``source`` promising that ``source()`` returns ``column_guard(p, table)``
    for every table, every state of the cluster and every later cycle, for every pod ``p`` whose
    spec fields are the same objects as ``pod``'s (whether it answers None depends on those
    fields and the plugin's arguments alone, as ``column_guard_fixed``'s answer); and that two
    sources that compare equal return equal values at any moment. The compiled cycle then calls
    one source of each group of equal sources each cycle instead of those guards (the
    DeviceClasses' version that NodeResourcesFit, BalancedAllocation and DynamicResources read
    for a pod requesting DRA extended resources: ``noderesources.dra_extended.DeviceClassesGuard``)."""

    def column_guard(self, pod: "Pod", table: "NodeTable") -> Hashable: ...
