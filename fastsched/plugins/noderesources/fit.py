"""NodeResourcesFit (upstream ``noderesources/fit.go``, v1.34 with its default feature gates).

PreFilter stores the pod's effective requests (``PodRequests`` with overhead, no defaults). Filter
rejects a node with "Too many pods" when one more pod exceeds ``allocatable.pods``, then with
"Insufficient <resource>" for each requested resource that does not fit beside the node's
``Requested`` (cpu, memory, ephemeral-storage, then the scalar resources); the status is
UnschedulableAndUnresolvable when some request exceeds the node's whole allocatable (preemption
cannot help), else Unschedulable. PreScore/Score rate the node with the configured strategy
(LeastAllocated, MostAllocated or RequestedToCapacityRatio, see :mod:`.scorers`).

Deviation from upstream, by necessity: upstream lists the failing scalar resources in Go map order,
which is random; here they are in name order.

Gates (v1.34 defaults): SidecarContainers, PodLevelResources, InPlacePodVerticalScaling and
SchedulerQueueingHints on. DRAExtendedResource (GA and locked on at v1.37.2): a requested resource a
DeviceClass maps is left to DynamicResources on nodes whose allocatable has none of it
(``shouldDelegateResourceToDRA``, see :mod:`.dra_extended`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from ..._kernels import _resources
from ...config.args import (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO,
                            NodeResourcesFitArgs, ScoringStrategy)
from ...framework.interface import FILTER_ADDITIVE
from ...framework import protocols as fwk
from ...framework.vectorized import VectorizedFilterPlugin, VectorizedScorePlugin, FilterVerdicts
from ...framework.columns import CYCLE, RESOURCES, ColumnForm, ResourceScoreParams
from ...framework.cycle_state import CycleState, NotFoundError
from ...api.objects import Node as _Node, Pod as _Pod
from ...api.resources import requests_without_claim_statuses
from ...framework.interface import (ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions,
                                    EventResource, PreFilterPlugin, PreScorePlugin, QueueingHint)
from ...framework import signers
from ...features import TOPOLOGY_AWARE_WORKLOAD_SCHEDULING, feature_gates_of
from ...framework.status import Code, Status, StatusError
from ...framework.types import CPU, EPHEMERAL_STORAGE, MEMORY, NodeInfo, PreFilterResult, Resource
from ..helper.args import validated_args
from ..helper.typed import as_typed
from . import dra_extended
from .resource_allocation import ResourceAllocationScorer
from .resource_names import is_extended_resource_name, is_scalar_resource_name
from .scorers import LeastAllocatedScorer, MostAllocatedScorer, RequestedToCapacityRatioScorer

if TYPE_CHECKING:  # pragma: no cover
    from ...framework.protocols import NodeTable
    from ...api import Pod

NAME = "NodeResourcesFit"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME

TOO_MANY_PODS = "Too many pods"
#: Distinct pod requests whose Filter kernel inputs are kept.
_CHECKS_CACHE_SIZE = 256
# the Filter kernel's codes (plain ints: the kernel takes int8)
_UNSCHEDULABLE = int(Code.UNSCHEDULABLE)
_UNRESOLVABLE = int(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
#: the table's columns of cpu, memory and ephemeral-storage (0, 1, 2): the rest are extended
_N_BASE = 3
_NO_ROWS: dict[int, int] = {}
#: Filter and Score are the fused kernel's resource checks and scorer.
_COLUMN_FORM = ColumnForm(filter=RESOURCES, score=RESOURCES)
_DRA_COLUMN_FORM = ColumnForm(filter=CYCLE, score=RESOURCES)
#: a configured scoring resource the pod requests is backed by DRA: Score reads the devices each cycle
_DRA_SCORED_COLUMN_FORM = ColumnForm(filter=RESOURCES, score=CYCLE)
_DRA_SCORE_COLUMN_FORM = ColumnForm(filter=CYCLE, score=CYCLE)
PRE_SCORE_DRA_STATE_KEY = PRE_SCORE_STATE_KEY + "/dra"


def insufficient_reason(resource: str) -> str:
    return f"Insufficient {resource}"


# ------------------------------------------------------------------------------------------------
# Cycle state
# ------------------------------------------------------------------------------------------------
class PreFilterState:
    """The pod's effective requests as upstream's ``framework.Resource`` (scalar resources only
    beside cpu/memory/ephemeral-storage, in name order)."""

    __slots__ = ("milli_cpu", "memory", "ephemeral_storage", "scalar_resources")

    def __init__(self, milli_cpu: int = 0, memory: int = 0, ephemeral_storage: int = 0,
                 scalar_resources: dict[str, int] | None = None):
        self.milli_cpu = milli_cpu
        self.memory = memory
        self.ephemeral_storage = ephemeral_storage
        self.scalar_resources = dict(sorted((scalar_resources or {}).items()))

    def clone(self) -> "PreFilterState":
        return self  # read-only after PreFilter, as upstream

    def __repr__(self) -> str:
        return (f"PreFilterState(cpu={self.milli_cpu}, memory={self.memory}, "
                f"ephemeral_storage={self.ephemeral_storage}, scalar={self.scalar_resources})")


class PreScoreState:
    """The pod's scoring request of each configured resource, in the args' order."""

    __slots__ = ("pod_requests",)

    def __init__(self, pod_requests: Sequence[int]):
        self.pod_requests = tuple(pod_requests)

    def clone(self) -> "PreScoreState":
        return self


def compute_pod_resource_request(pod: "Pod") -> PreFilterState:
    """Upstream ``computePodResourceRequest``: ``PodRequests`` into a Resource (``SetMaxResource``,
    which keeps only cpu, memory, ephemeral-storage and scalar resources)."""
    requests = pod.requests
    scalar = {name: int(amount) for name, amount in requests.items()
              if name not in (CPU, MEMORY, EPHEMERAL_STORAGE) and is_scalar_resource_name(name)}
    return PreFilterState(int(requests.get(CPU, 0)), int(requests.get(MEMORY, 0)),
                          int(requests.get(EPHEMERAL_STORAGE, 0)), scalar)


#: upstream ``resourceapi.ResourceDeviceClassPrefix``: the implicit extended resource of a DeviceClass
RESOURCE_DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"
_DRA_SIGN_REFUSED = "signature disabled when dra extended resources are used in the cluster"


def _backed_by_device_class(handle: Any, name: str) -> bool:
    """Upstream ``shouldDelegateResourceToDRA(name, nil, ...)``: whether a DeviceClass maps the
    extended resource ``name`` (its ``extendedResourceName``, or the implicit
    ``deviceclass.resource.kubernetes.io/<class>``)."""
    client = getattr(handle, "client", None)
    if client is None or not hasattr(client, "list_objects"):
        return False
    if name.startswith(RESOURCE_DEVICE_CLASS_PREFIX):
        return client.get_object("DeviceClass", name[len(RESOURCE_DEVICE_CLASS_PREFIX):], "") is not None
    return any(getattr(c, "extended_resource_name", "") == name for c in client.list_objects("DeviceClass"))


def sign_pod_requests(handle: Any, pod: "Pod") -> tuple[Any, Status | None]:
    """Upstream ``(*Fit).SignPod`` (and BalancedAllocation's): the aggregate request
    (``computePodResourceRequest``, not the non-zero scoring requests); with DRAExtendedResource
    (GA) refused when a non-zero scalar request is backed by a DeviceClass."""
    request = compute_pod_resource_request(pod)
    for name, amount in request.scalar_resources.items():
        if amount != 0 and _backed_by_device_class(handle, name):
            return None, Status(Code.UNSCHEDULABLE, _DRA_SIGN_REFUSED)
    value = (request.milli_cpu, request.memory, request.ephemeral_storage, 0,
             tuple(sorted(request.scalar_resources.items())))
    return ((signers.RESOURCES_SIGNER, value),), None


def pre_filter_state_or_error(state: CycleState) -> PreFilterState | Status:
    """The PreFilter state, or upstream's Error status when PreFilter did not run."""
    try:
        value = state.read(PRE_FILTER_STATE_KEY)
    except NotFoundError as e:
        return Status.from_error(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: {e}')
    if not isinstance(value, PreFilterState):
        return Status.from_error(f"{value!r}  convert to NodeResourcesFit.preFilterState error")
    return value


def get_pre_filter_state(state: CycleState) -> tuple[PreFilterState | None, Status | None]:
    """``(state, None)``, or ``(None, Error status)`` when PreFilter did not run (upstream's form)."""
    got = pre_filter_state_or_error(state)
    return (None, got) if isinstance(got, Status) else (got, None)


# ------------------------------------------------------------------------------------------------
# fitsRequest
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class InsufficientResource:
    """A resource the node lacks for the pod; ``unresolvable`` when the request exceeds the node's
    whole allocatable (no preemption can help)."""

    resource_name: str
    reason: str
    requested: int
    used: int
    capacity: int
    unresolvable: bool = False


def _is_ignored(name: str, ignored: frozenset[str], ignored_groups: frozenset[str]) -> bool:
    """Only extended resources can be ignored, by name or by the prefix before '/'."""
    if not is_extended_resource_name(name):
        return False
    prefix = name.split("/")[0] if ignored_groups else ""
    return name in ignored or prefix in ignored_groups


def fits_request(pod_request: PreFilterState, node_info: fwk.NodeInfo, ignored: frozenset[str] = frozenset(),
                 ignored_groups: frozenset[str] = frozenset(),
                 delegable: frozenset[str] = frozenset()) -> list[InsufficientResource]:
    """Upstream ``fitsRequest`` for one NodeInfo: the insufficient resources, in reason order.
    ``delegable``: the resources DynamicResources serves where the node's allocatable has none."""
    insufficient: list[InsufficientResource] = []
    allocatable = node_info.allocatable
    pod_count = len(node_info.pods)
    allowed = allocatable.allowed_pod_number
    if pod_count + 1 > allowed:
        insufficient.append(InsufficientResource("pods", TOO_MANY_PODS, 1, pod_count, allowed))

    if (pod_request.milli_cpu == 0 and pod_request.memory == 0 and pod_request.ephemeral_storage == 0
            and not pod_request.scalar_resources):
        return insufficient

    requested = node_info.requested
    for name, want, used, capacity in (
            (CPU, pod_request.milli_cpu, requested.milli_cpu, allocatable.milli_cpu),
            (MEMORY, pod_request.memory, requested.memory, allocatable.memory),
            (EPHEMERAL_STORAGE, pod_request.ephemeral_storage, requested.ephemeral_storage,
             allocatable.ephemeral_storage)):
        if want > 0 and want > capacity - used:
            insufficient.append(InsufficientResource(name, insufficient_reason(name), want, used, capacity,
                                                     want > capacity))

    for name, want in pod_request.scalar_resources.items():
        if want == 0 or _is_ignored(name, ignored, ignored_groups):
            continue
        used = requested.scalar_resources.get(name, 0)
        capacity = allocatable.scalar_resources.get(name, 0)
        if name in delegable and capacity <= 0:
            continue  # shouldDelegateResourceToDRA
        if want > capacity - used:
            insufficient.append(InsufficientResource(name, insufficient_reason(name), want, used, capacity,
                                                     want > capacity))
    return insufficient


def fits(pod: "Pod", node_info: fwk.NodeInfo) -> list[InsufficientResource]:
    """Upstream ``Fits``: whether ``node_info`` has room for ``pod`` (nothing ignored)."""
    return fits_request(compute_pod_resource_request(pod), node_info)


def _checked_resources(pod_request: PreFilterState, ignored: frozenset[str],
                       ignored_groups: frozenset[str]) -> list[tuple[str, int]]:
    """(resource, request) pairs that fitsRequest compares with the node, in reason order."""
    checks = [(name, want) for name, want in ((CPU, pod_request.milli_cpu), (MEMORY, pod_request.memory),
                                              (EPHEMERAL_STORAGE, pod_request.ephemeral_storage)) if want > 0]
    checks += [(name, want) for name, want in pod_request.scalar_resources.items()
               if want != 0 and not _is_ignored(name, ignored, ignored_groups)]
    return checks


# ------------------------------------------------------------------------------------------------
# The plugin
# ------------------------------------------------------------------------------------------------
class Fit(PreFilterPlugin, VectorizedFilterPlugin, PreScorePlugin, VectorizedScorePlugin, EnqueueExtensions):
    """Checks that the node has room for the pod's requests; scores by the configured strategy."""

    #: more pods never fit where fewer fail: the verdict reads the node's requested resources and pod count
    #: only (fastsched.framework.interface.FilterPlugin.filter_pod_dependence)
    filter_pod_dependence = FILTER_ADDITIVE

    def __init__(self, args: NodeResourcesFitArgs, handle: fwk.Handle | None = None):
        self.handle = handle
        self.ignored_resources = frozenset(args.ignored_resources)
        self.ignored_resource_groups = frozenset(args.ignored_resource_groups)
        if args.scoring_strategy is None:  # new() checks this first (the Fit built directly did not)
            raise ValueError("scoring strategy not specified")
        self.scorer = _build_scorer(args.scoring_strategy)
        #: TopologyAwareWorkloadScheduling: MostAllocated over the strategy's resources, for placements
        self.placement_scorer: ResourceAllocationScorer | None = None
        if feature_gates_of(handle).enabled(TOPOLOGY_AWARE_WORKLOAD_SCHEDULING):
            self.placement_scorer = _build_scorer(ScoringStrategy(MOST_ALLOCATED, args.scoring_strategy.resources))
        # (table, number of table resources, pod request) -> Filter's kernel inputs
        self._checks_cache: dict[tuple, tuple[np.ndarray, np.ndarray, list[str]]] = {}
        # id(checks' cols) -> (cols, delegable, node version, the checks without the absent
        # delegated ones)
        self._absent_cache: dict[int, tuple[np.ndarray, frozenset[str], int, tuple]] = {}
        # (id(reasons), mask) -> (reasons, the mask's reason tuple): see _pattern_reasons
        self._pattern_cache: dict[tuple[int, int], tuple[list[str], tuple[str, ...]]] = {}

    def name(self) -> str:
        return NAME

    # -- PlacementScore (TopologyAwareWorkloadScheduling) -------------------------------------------
    def score_placement(self, state: Any, pod_group: Any, assignments: Any) -> tuple[int, Status | None]:
        """``ScorePlacement``: the capacity ratio over the placement's nodes with the proposed
        members' requests (MostAllocated, the scoring strategy's resources and weights)."""
        if self.placement_scorer is None:  # upstream: a nil scorer (the gate off never gets here)
            return 0, Status.from_error(StatusError("placement scoring needs TopologyAwareWorkloadScheduling"))
        return self.placement_scorer.score_placement(assignments), None

    def placement_score_extensions(self) -> None:
        """Fit does not normalize placement scores."""
        return None

    # -- opportunistic batching ---------------------------------------------------------------------
    def sign_pod(self, pod: "Pod") -> tuple[signers.Fragments | None, Status | None]:
        """Upstream ``(*Fit).SignPod``: the aggregate requests; refused when a requested extended
        resource is backed by a DeviceClass (DRAExtendedResource)."""
        return sign_pod_requests(self.handle, pod)

    # -- the fused cycle ---------------------------------------------------------------------------
    #: the pod spec fields its column form and plan parts read (fastsched.framework.columns)
    column_reads = ("containers", "init_containers", "overhead", "resources", "resource_claims")
    #: its column form and plan parts read no container's ``volume_mounts`` (compiled_cycle shares a plan
    #: between pods whose mounts alone differ)
    column_reads_mounts = False

    def column_form(self, pod: "Pod", table: NodeTable) -> ColumnForm:
        """Filter and Score run in the fused kernel on the live resource columns (Filter through
        ``filter_vectorized`` each cycle when DynamicResources may serve some requested resource)."""
        dra_score = dra_extended.dra_scores_pod(self.handle, self.scorer.resource_names,
                                                self.scorer.pod_request_list(pod))
        if self._delegable(compute_pod_resource_request(pod)):
            return _DRA_SCORE_COLUMN_FORM if dra_score else _DRA_COLUMN_FORM
        return _DRA_SCORED_COLUMN_FORM if dra_score else _COLUMN_FORM

    def column_named_resources(self, pod: "Pod") -> frozenset[str]:
        """The requested resources its plan parts depend on by name, beside the Filter's checks and
        rows (which the compiled cycle asks for each pod): the scoring strategy's resources, and the
        ones a DeviceClass maps (they change its form)."""
        mapped = dra_extended.delegable_resources(self.handle, pod.requests.items())
        return frozenset(self.scorer.resource_names) | mapped

    def column_guard(self, pod: "Pod", table: NodeTable) -> Any:
        """The DeviceClasses' version for pods requesting extended resources (see :mod:`.dra_extended`)."""
        return dra_extended.dra_guard(self.handle, pod.requests)

    def column_guard_fixed(self, pod: "Pod") -> bool:
        """:meth:`column_guard` is None for every cluster state when the pod requests no DRA
        extended resource name (``framework.columns.GuardedColumnPlugin``'s contract)."""
        return dra_extended.dra_guard_fixed(pod.requests)

    def column_guard_source(self, pod: "Pod") -> Any:
        """:meth:`column_guard`'s source for pods requesting DRA extended resource names, shared
        with the other plugins reading the handle's DeviceClasses (``dra_extended.DeviceClassesGuard``,
        ``framework.columns.GuardedColumnPlugin``)."""
        return dra_extended.dra_guard_source(self.handle, pod.requests)

    def _delegable(self, pod_request: PreFilterState) -> frozenset[str]:
        if not pod_request.scalar_resources:
            return frozenset()
        return dra_extended.delegable_resources(self.handle, pod_request.scalar_resources.items())

    def column_filter_params(self, state: CycleState, pod: "Pod", table: NodeTable) -> tuple[np.ndarray, np.ndarray]:
        """The Filter's checks for the kernel: (K,) table columns (-1: no node has the resource)
        and (K,) requested amounts, from the PreFilter state in ``state``."""
        pod_request = pre_filter_state_or_error(state)
        if isinstance(pod_request, Status):
            raise ValueError(pod_request.message())
        cols, wants, _ = self._filter_checks(table, pod_request)
        return cols, wants

    def column_filter_checks(self, state: CycleState, pod: "Pod", table: NodeTable
                             ) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """:meth:`column_filter_params` and the 1 + K reasons of its checks ("Too many pods" first,
        then ``Insufficient <name>`` per check), for a caller judging a RESOURCES-form Filter by the
        kernel's check masks itself (``CompiledCycle.diagnose``): a node failing the checks of mask
        ``m`` (bit 0 the pod count, bit ``j + 1`` check ``j``) gets the reasons of the bits set, in
        order, Unresolvable when a check asks more than the node's allocatable or a resource no
        node has, as :meth:`filter_vectorized` gives them whenever the form is RESOURCES (no
        DeviceClass may take a check over: :meth:`column_form`)."""
        pod_request = pre_filter_state_or_error(state)
        if isinstance(pod_request, Status):
            raise ValueError(pod_request.message())
        return self._filter_checks(table, pod_request)

    def column_filter_rows(self, state: CycleState, pod: "Pod", table: NodeTable) -> np.ndarray | None:
        """The rows the Filter may pass, (C,) bool, for the plan (valid while the nodes are
        unchanged): None when that is not much fewer than all. A pod requesting ``want`` > 0 of an
        extended resource fails on every node whose allocatable of it is below ``want`` (the
        node's requests are >= 0), so only the rows of its rarest requested resource having enough
        of it remain, read from ``table.extended_rows`` (O(those rows), not a strided (C,) read of
        the column). The kernel still checks them all; this only spares it the other rows (upstream
        SchedulingWithExtendedResource: one node in 5,000 has the resource a pod asks for)."""
        if table.negative_requests:  # (unvalidated test pods only: requests are then not >= 0)
            return None
        pod_request = pre_filter_state_or_error(state)
        if isinstance(pod_request, Status) or self._delegable(pod_request):
            return None
        cols, wants, _ = self._filter_checks(table, pod_request)
        rarest: tuple[Mapping[int, int], int] | None = None
        for col, want in zip(cols.tolist(), wants.tolist()):
            if col < _N_BASE or want <= 0:  # (col -1: the kernel fails every row at once)
                continue
            rows = table.extended_rows.get(col, _NO_ROWS)
            if rarest is None or len(rows) < len(rarest[0]):
                rarest = (rows, want)
        if rarest is None or 2 * len(rarest[0]) > len(table):
            return None
        rows, want = rarest
        mask = np.zeros(table.capacity, dtype=bool)
        mask[[row for row, amount in rows.items() if amount >= want]] = True
        return mask

    def column_score_params(self, state: CycleState, pod: "Pod", table: NodeTable) -> ResourceScoreParams:
        """The configured scoring strategy as a kernel resource scorer."""
        return self.scorer.column_params(table, self._pod_requests(state, pod))

    # -- PreFilter -------------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: "Pod", nodes: Sequence[fwk.NodeInfo]
                   ) -> tuple[PreFilterResult | None, Status | None]:
        state.write(PRE_FILTER_STATE_KEY, compute_pod_resource_request(pod))
        return None, None

    # -- Filter ----------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: "Pod", node_info: fwk.NodeInfo) -> Status | None:
        pod_request = pre_filter_state_or_error(state)
        if isinstance(pod_request, Status):
            return pod_request
        insufficient = fits_request(pod_request, node_info, self.ignored_resources, self.ignored_resource_groups,
                                    self._delegable(pod_request))
        if not insufficient:
            return None
        code = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE if any(r.unresolvable for r in insufficient)
                else Code.UNSCHEDULABLE)
        return Status(code, *(r.reason for r in insufficient))

    def filter_vectorized(self, state: CycleState, pod: "Pod", nodes: fwk.NodeBatch) -> FilterVerdicts | Status:
        pod_request = pre_filter_state_or_error(state)
        if isinstance(pod_request, Status):
            return pod_request
        table = nodes.table
        cols, wants, reasons = self._filter_checks(table, pod_request)
        delegable = self._delegable(pod_request)
        names: list[str] = []
        if delegable:
            cols, wants, reasons, delegable, names = self._without_absent_delegated(table, pod_request, cols, wants,
                                                                                    reasons, delegable)
        n = len(nodes)
        if not len(cols) and not delegable:
            # no resource check left (pods of native resources they do not request, or only
            # delegated ones no node offers: the DRA extended-resource cases): the kernel's bit 0
            # alone, "Too many pods" where pod_count + 1 > allowed_pods; a node failing it takes
            # the kernel's verdicts (issue 27: the kernel's ten buffer arguments cost more than
            # these two reads of the rows)
            if not (table.pod_count[nodes.rows] >= table.allowed_pods[nodes.rows]).any():
                return FilterVerdicts.all_pass(n)
        rows = np.ascontiguousarray(nodes.rows)
        codes = np.empty(n, dtype=np.int8)                                  # (N,)
        reason_ids = np.empty(n, dtype=np.int32)                            # (N,)
        patterns = np.empty(_resources.MAX_PATTERNS, dtype=np.int64)
        n_patterns = _resources.fit_filter_verdicts(
            table.pod_count, table.allowed_pods, table.alloc, table.requested, rows, cols, wants,
            _UNSCHEDULABLE, _UNRESOLVABLE, codes, reason_ids, patterns)
        if n_patterns == 0:
            return FilterVerdicts.all_pass(n)
        if n_patterns > 0 and not delegable:
            return FilterVerdicts(codes, reason_ids, [self._pattern_reasons(reasons, int(m))
                                                      for m in patterns[:n_patterns].tolist()])
        # more patterns or checks than the kernel numbers, or checks a DeviceClass may take over
        # failed[:, j]: the node lacks reason j's resource (0: too many pods); (N, len(reasons))
        failed = np.empty((n, len(reasons)), dtype=np.uint8)
        unresolvable = np.empty(n, dtype=np.uint8)                          # (N,)
        n_failed = _resources.fit_filter(table.pod_count, table.allowed_pods, table.alloc, table.requested,
                                         rows, cols, wants, failed, unresolvable)
        if n_failed and delegable:
            dra_extended.clear_delegated(failed, unresolvable, table, rows, cols, wants, names, delegable)
            n_failed = int(failed.any(axis=1).sum())
        if n_failed == 0:
            return FilterVerdicts.all_pass(n)
        return _batch_result(failed.view(bool), unresolvable.view(bool), reasons)

    def _without_absent_delegated(self, table: NodeTable, pod_request: PreFilterState, cols: np.ndarray,
                                  wants: np.ndarray, reasons: list[str], delegable: frozenset[str]
                                  ) -> tuple[np.ndarray, np.ndarray, list[str], frozenset[str], list[str]]:
        """The Filter's checks without those of delegated resources that no node of the table has
        in its allocatable (no column, or a column -- interned for the pods requesting it -- whose
        allocatable is 0 on every row): fitsRequest skips a DRA-mapped resource on a node whose
        allocatable has none of it, so such a check passes on every node, and the other checks'
        verdicts, unresolvable included, do not read it (what ``clear_delegated`` would leave).
        The pods of the DRA extended-resource cases request only such resources, so their Filter
        is the kernel's verdicts with no (N, 1 + K) matrix. Also the delegable resources left
        (in some node's allocatable: ``clear_delegated`` decides those per node) and the checks'
        resource names. Kept per checks object (``_filter_checks`` makes a new one when the
        table's resources change) and the table's node version (allocatable changes only with
        the nodes)."""
        key = id(cols)
        hit = self._absent_cache.get(key)
        if hit is not None and hit[0] is cols and hit[1] == delegable and hit[2] == table.node_version:
            return hit[3]
        names = [name for name, _ in _checked_resources(pod_request, self.ignored_resources,
                                                        self.ignored_resource_groups)]
        alloc = table.alloc
        keep = [j for j, name in enumerate(names)
                if not (name in delegable and (cols[j] < 0 or not (alloc[:, cols[j]] > 0).any()))]
        if len(keep) == len(names):
            out = (cols, wants, reasons, delegable, names)
        else:
            index = np.array(keep, dtype=np.int64)
            out = (np.ascontiguousarray(cols[index]), np.ascontiguousarray(wants[index]),
                   [reasons[0]] + [reasons[j + 1] for j in keep],
                   frozenset(names[j] for j in keep if names[j] in delegable), [names[j] for j in keep])
        if len(self._absent_cache) >= _CHECKS_CACHE_SIZE:
            self._absent_cache.clear()
        self._absent_cache[key] = (cols, delegable, table.node_version, out)
        return out

    def _pattern_reasons(self, reasons: list[str], mask: int) -> tuple[str, ...]:
        """The reasons of the checks set in ``mask`` (bit j: ``reasons[j]``), in order; kept per
        (reasons list, mask): a pod that fits nowhere fails the same way on most nodes, every cycle."""
        key = (id(reasons), mask)
        hit = self._pattern_cache.get(key)
        if hit is not None and hit[0] is reasons:  # (the list is alive while its id is the key's)
            return hit[1]
        out = tuple(reason for j, reason in enumerate(reasons) if (mask >> j) & 1)
        if len(self._pattern_cache) >= _CHECKS_CACHE_SIZE:
            self._pattern_cache.clear()
        self._pattern_cache[key] = (reasons, out)
        return out

    def _filter_checks(self, table: NodeTable, pod_request: PreFilterState) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """The kernel's resource checks for ``pod_request``: (K,) table columns (-1: no node has the
        resource), (K,) requested amounts, and the 1 + K reasons ("Too many pods" first)."""
        key = (table.uid, len(table.resource_names), pod_request.milli_cpu, pod_request.memory,
               pod_request.ephemeral_storage, tuple(pod_request.scalar_resources.items()))
        cached = self._checks_cache.get(key)
        if cached is not None:
            return cached
        checks = _checked_resources(pod_request, self.ignored_resources, self.ignored_resource_groups)
        cols = np.array([table.resource_index.get(name, -1) for name, _ in checks], dtype=np.int64)
        wants = np.array([want for _, want in checks], dtype=np.int64)
        reasons = [TOO_MANY_PODS] + [insufficient_reason(name) for name, _ in checks]
        if len(self._checks_cache) >= _CHECKS_CACHE_SIZE:
            self._checks_cache.clear()
        self._checks_cache[key] = cached = (cols, wants, reasons)
        return cached

    # -- PreScore / Score ------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: "Pod", nodes: Sequence[fwk.NodeInfo]) -> Status | None:
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(self.scorer.pod_request_list(pod)))
        dra = dra_extended.dra_score_state(self.handle, self.scorer.resource_names)
        if dra is not None:
            state.write(PRE_SCORE_DRA_STATE_KEY, dra)
        return None

    def _dra_state(self, state: CycleState) -> "dra_extended.DRAScoreState | None":
        # upstream keeps it in the PreScore state and recomputes both without it
        if isinstance(state.get(PRE_SCORE_STATE_KEY), PreScoreState):
            return state.get(PRE_SCORE_DRA_STATE_KEY)
        return dra_extended.dra_score_state(self.handle, self.scorer.resource_names)

    def _pod_requests(self, state: CycleState, pod: "Pod") -> tuple[int, ...]:
        # Without PreScore state upstream recomputes the requests.
        value = state.get(PRE_SCORE_STATE_KEY)
        if isinstance(value, PreScoreState):
            return value.pod_requests
        return self.scorer.pod_request_list(pod)

    def score(self, state: CycleState, pod: "Pod", node_info: fwk.NodeInfo) -> tuple[int, Status | None]:
        return self.scorer.score(node_info, self._pod_requests(state, pod), self._dra_state(state))

    def score_vectorized(self, state: CycleState, pod: "Pod", nodes: fwk.NodeBatch) -> tuple[np.ndarray, Status | None]:
        return self.scorer.score_vectorized(nodes, self._pod_requests(state, pod), self._dra_state(state))

    # -- EnqueueExtensions -----------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        # v1.37.2 with InPlacePodVerticalScaling (GA) and DRAExtendedResource on; the scale-up events
        # of InPlacePodVerticalScalingSchedulerPreemption (alpha, fixed off here) are not registered.
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE),
                                 self.is_schedulable_after_assigned_pod_delete),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
                                 self.is_schedulable_after_node_change),
            dra_extended.device_class_event(),  # DRAExtendedResource: a class may now map a request
            # a scheduled pod scaled down frees room; the pod itself scaled down may fit now
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_SCALE_DOWN),
                                 self.is_schedulable_after_assigned_pod_scale_down),
            ClusterEventWithHint(ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_SCALE_DOWN),
                                 self.is_schedulable_after_target_pod_scale_down),
        ]

    @staticmethod
    def is_schedulable_after_assigned_pod_delete(pod: "Pod", old_obj: Any, new_obj: Any) -> tuple[QueueingHint, Any]:
        """Upstream ``isSchedulableAfterAssignedPodDelete``: a deleted pod frees room only if it was
        bound or nominated (the deferred-resize check needs the alpha gate, off here)."""
        deleted, _, err = as_typed(_Pod, "*v1.Pod", old_obj, new_obj)
        if err is not None:
            return QueueingHint.QUEUE, err
        assert deleted is not None  # a delete
        if not deleted.node_name and not deleted.nominated_node_name:
            return QueueingHint.QUEUE_SKIP, None
        return QueueingHint.QUEUE, None

    def is_schedulable_after_node_change(self, pod: "Pod", old_obj: Any, new_obj: Any) -> tuple[QueueingHint, Any]:
        """Upstream ``isSchedulableAfterNodeChange``: Skip unless the pod fits the added or updated
        node when empty (``isFit``); for an update, also unless the node's pod count or the
        allocatable of a resource the pod requests went up, or a requested resource is now left to
        DynamicResources there (``haveAnyRequestedResourcesIncreased``). DRAExtendedResource is on
        (GA): both read the DRA manager's DeviceClass mapping, as Filter does. (The deferred-resize
        branch needs InPlacePodVerticalScalingSchedulerPreemption, alpha and fixed off here.)"""
        original, modified, err = as_typed(_Node, "*v1.Node", old_obj, new_obj)
        if err is not None:
            return QueueingHint.QUEUE, err
        assert modified is not None  # an add or an update
        request = compute_pod_resource_request(pod)
        # the requested resources a DeviceClass maps: delegated to DRA where the node has none
        delegable = dra_extended.delegable_resources(self.handle, request.scalar_resources.items())
        if not _is_fit(request, modified, delegable):
            return QueueingHint.QUEUE_SKIP, None  # the pod won't fit the node anyway
        if original is None:
            return QueueingHint.QUEUE, None  # an added node the pod fits
        if not _have_any_requested_resources_increased(request, original, modified, delegable):
            return QueueingHint.QUEUE_SKIP, None  # it fits, but no more than before
        return QueueingHint.QUEUE, None

    @staticmethod
    def is_schedulable_after_target_pod_scale_down(pod: "Pod", old_obj: Any, new_obj: Any) -> tuple[QueueingHint, Any]:
        """Upstream ``isSchedulableAfterTargetPodScaleDown``: the pod itself asks for less, Queue."""
        return QueueingHint.QUEUE, None

    @staticmethod
    def is_schedulable_after_assigned_pod_scale_down(pod: "Pod", old_obj: Any,
                                                     new_obj: Any) -> tuple[QueueingHint, Any]:
        """Upstream ``isSchedulableAfterAssignedPodScaleDown``: Queue when a scheduled pod's request
        of a resource the pod asks for went down (``haveEnoughRelevantResourcesDecreased``)."""
        original, modified, err = as_typed(_Pod, "*v1.Pod", old_obj, new_obj)
        if err is not None:
            return QueueingHint.QUEUE, err
        assert original is not None and modified is not None  # an update
        if _have_enough_relevant_resources_decreased(pod, original, modified):
            return QueueingHint.QUEUE, None
        return QueueingHint.QUEUE_SKIP, None


def _is_fit(request: PreFilterState, node: Any, delegable: frozenset[str]) -> bool:
    """Upstream ``isFit``: ``Fits`` on a NodeInfo of ``node`` alone (no pods, nothing ignored)."""
    return not fits_request(request, NodeInfo(node), delegable=delegable)


def _have_any_requested_resources_increased(request: PreFilterState, original: Any, modified: Any,
                                            delegable: frozenset[str]) -> bool:
    """Upstream ``haveAnyRequestedResourcesIncreased``: the node's pod count went up, or the
    allocatable of a resource the pod requests (non-zero), or a requested scalar resource is left to
    DynamicResources on the modified node (``shouldDelegateResourceToDRA``: none of it allocatable
    there and a DeviceClass maps it)."""
    before, after = Resource.from_dict(original.allocatable), Resource.from_dict(modified.allocatable)
    if after.allowed_pod_number > before.allowed_pod_number:
        return True
    if (request.milli_cpu == 0 and request.memory == 0 and request.ephemeral_storage == 0
            and not request.scalar_resources):
        return False
    if ((request.milli_cpu > 0 and after.milli_cpu > before.milli_cpu)
            or (request.memory > 0 and after.memory > before.memory)
            or (request.ephemeral_storage > 0 and after.ephemeral_storage > before.ephemeral_storage)):
        return True
    for name, want in request.scalar_resources.items():
        if want == 0:
            continue
        now = after.scalar_resources.get(name, 0)
        if now > before.scalar_resources.get(name, 0):
            return True
        if name in delegable and now <= 0:
            return True
    return False


def _have_enough_relevant_resources_decreased(target: "Pod", original: "Pod", modified: "Pod") -> bool:
    """Upstream ``haveEnoughRelevantResourcesDecreased``: the modified pod is scheduled and its
    request of cpu, memory, ephemeral storage or a scalar resource that ``target`` requests (non-zero)
    went down. The requests are ``PodRequests`` without DRA node-allocatable claim statuses, as
    upstream's options."""
    if not modified.node_name:
        return False  # an unscheduled pod's update frees nothing
    before, after = requests_without_claim_statuses(original), requests_without_claim_statuses(modified)
    for name, value in requests_without_claim_statuses(target).items():
        if not value:
            continue
        if name in (CPU, MEMORY, EPHEMERAL_STORAGE) or is_scalar_resource_name(name):
            if before.get(name, 0) > after.get(name, 0):
                return True
    return False


def _batch_result(failed: np.ndarray, unresolvable: np.ndarray, reasons: list[str]) -> FilterVerdicts:
    """Codes and one reason tuple per distinct failure pattern (the rows of ``failed``): the
    Filter's matrix path, for what ``fit_filter_verdicts`` does not number (its reason tuples are
    kept per pattern by ``Fit._pattern_reasons``; these few cases make them afresh)."""
    n = failed.shape[0]
    any_failed = failed.any(axis=1)                                         # (N,) bool
    codes = np.zeros(n, dtype=np.int8)  # Success
    codes[any_failed] = _UNSCHEDULABLE
    codes[any_failed & unresolvable] = _UNRESOLVABLE
    reason_ids = np.full(n, -1, dtype=np.int32)
    if not any_failed.any():
        return FilterVerdicts(codes, reason_ids, [])
    k = failed.shape[1]
    if k <= 20:
        # one bit per reason; a lookup table over the 2**k masks numbers the distinct ones in O(N)
        rows = failed[any_failed]
        masks = rows[:, 0].astype(np.int64)                                  # (F,) int64
        for j in range(1, k):  # (k is a few checks: a shift per column costs less than a matmul)
            masks |= rows[:, j].astype(np.int64) << j
        seen = np.zeros(1 << k, dtype=bool)
        seen[masks] = True
        distinct = np.flatnonzero(seen)
        lookup = np.full(1 << k, -1, dtype=np.int32)
        lookup[distinct] = np.arange(len(distinct), dtype=np.int32)
        reason_ids[any_failed] = lookup[masks]
        patterns = [[(int(m) >> j) & 1 for j in range(k)] for m in distinct]
    else:  # many resources requested: group the boolean rows directly
        unique_rows, inverse = np.unique(failed[any_failed], axis=0, return_inverse=True)
        reason_ids[any_failed] = inverse.reshape(-1)
        patterns = unique_rows.tolist()
    tuples = [tuple(reason for reason, bad in zip(reasons, pattern) if bad) for pattern in patterns]
    return FilterVerdicts(codes, reason_ids, tuples)


# ------------------------------------------------------------------------------------------------
# Construction
# ------------------------------------------------------------------------------------------------
def _build_scorer(strategy: ScoringStrategy) -> ResourceAllocationScorer:
    resources = strategy.resources
    weights = [r.weight for r in resources]
    if strategy.type == LEAST_ALLOCATED:
        scorer: Any = LeastAllocatedScorer(weights)
    elif strategy.type == MOST_ALLOCATED:
        scorer = MostAllocatedScorer(weights)
    else:
        if strategy.requested_to_capacity_ratio is None:
            # Upstream dereferences the nil parameter and panics; validation does not catch it.
            raise ValueError("scoring strategy RequestedToCapacityRatio needs requestedToCapacityRatio "
                             "(upstream panics with a nil pointer dereference)")
        scorer = RequestedToCapacityRatioScorer(weights, strategy.requested_to_capacity_ratio.shape)
    return ResourceAllocationScorer(strategy.type, resources, scorer, use_requested=False)


def new(args: NodeResourcesFitArgs | None, handle: fwk.Handle | None = None) -> Fit:
    """Upstream ``NewFit``: validate the args, then build the plugin with its scoring strategy."""
    args = validated_args(args, NodeResourcesFitArgs, "want args to be of type NodeResourcesFitArgs, got {got}")
    if args.scoring_strategy is None:
        raise ValueError("scoring strategy not specified")
    if args.scoring_strategy.type not in (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO):
        raise ValueError(f"scoring strategy {args.scoring_strategy.type} is not supported")
    return Fit(args, handle)
