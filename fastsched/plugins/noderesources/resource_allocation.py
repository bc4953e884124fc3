"""Upstream ``resource_allocation.go``: what a resource scorer sees of a node, for one node or many.

For each configured resource (in the args' order) the scorer gets the node's allocatable, the
node's requested amount without the pod ("allocated", v1.37) and with the pod's request added:

* ``cpu`` / ``memory``: ``NonZeroRequested`` (NodeResourcesFit) or ``Requested``
  (BalancedAllocation, ``useRequested``) plus the pod's request;
* ``ephemeral-storage``: always ``Requested`` plus the pod's request;
* a scalar resource: left out when the pod requests none of it; otherwise ``Requested`` plus the
  pod's request when the node's allocatable lists it, else left out; but when its allocatable is 0
  (or absent) and a DeviceClass maps its name (DRAExtendedResource), the node's devices of that
  class and how many are allocated, if it has any (:class:`.dra_extended.DRAScoreState`);
* any other name: left out (upstream's NodeInfo never holds it).

A left-out resource, and any with allocatable 0, reaches the scorer with allocatable 0 and is
skipped there. The pod's requests are upstream's ``calculatePodResourceRequest``: ``PodRequests``
with overhead, with the non-zero cpu/memory defaults for NodeResourcesFit
(:attr:`~fastsched.api.Pod.scoring_requests`; pod-level requests ignored, see
:func:`fit_scoring_requests`) and without them for BalancedAllocation (:attr:`~fastsched.api.Pod.requests`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, Sequence

import numpy as np

from ..._kernels import _resources
from ...config.args import ResourceSpec
from ...framework import protocols as fwk
from ...framework.status import Code, Status
from ...framework.columns import ResourceScoreParams
from ...framework.types import CPU, EPHEMERAL_STORAGE, MEMORY
from .resource_names import is_scalar_resource_name

if TYPE_CHECKING:  # pragma: no cover
    from ...framework.protocols import NodeTable
    from ...api import Pod
    from .dra_extended import DRAScoreState

#: Column of cpu / memory in ``NodeTable.nonzero_requested``.
_NONZERO_COLUMN = {CPU: 0, MEMORY: 1}
#: Distinct (table, pod requests) column sets kept per scorer; pods of a workload share one.
_COLUMNS_CACHE_SIZE = 256


class Scorer(Protocol):
    """A resource scorer (:mod:`.scorers`): the one-node form and the description of its kernel."""

    kernel_kind: int
    kernel_weights: np.ndarray | None
    kernel_shape: tuple[np.ndarray, np.ndarray]

    def score_one(self, requested: Sequence[int], allocated: Sequence[int], allocatable: Sequence[int]) -> int: ...


def resources_not_found() -> Status:
    return Status(Code.ERROR, "resources not found")


def _has_pod_level_requests(pod: "Pod") -> bool:
    from ...api.resources import _pod_level_requests  # noqa: PLC2701 - upstream IsPodLevelRequestsSet

    return _pod_level_requests(pod) is not None


def fit_scoring_requests(pod: "Pod") -> dict[str, int]:
    """NodeResourcesFit's scoring requests: the containers' requests with the non-zero cpu/memory
    defaults, plus overhead, and *without* pod-level ``spec.resources``.

    Upstream v1.34's ``NewFit`` builds its ``resourceAllocationScorer`` without setting
    ``enablePodLevelResources`` (fit.go: ``resourceAllocationScorer: *scorePlugin(args)``), so
    ``calculatePodResourceRequest`` passes ``SkipPodLevelResources: true`` to ``PodRequests``:
    NodeResourcesFit's Score ignores pod-level requests (its Filter and BalancedAllocation's
    Score honour them). Found by the differential oracle (tests/oracle).
    """
    from ...api.resources import _DEFAULT_REQUEST_NANOS, _add_into, _to_amounts  # noqa: PLC2701
    from ...api.resources import aggregate_container_request_nanos

    total = aggregate_container_request_nanos(pod.containers, pod.init_containers, _DEFAULT_REQUEST_NANOS)
    _add_into(total, pod.overhead_nanos)
    return _to_amounts(total)


class ResourceAllocationScorer:
    """Gathers (allocatable, requested) per configured resource and hands them to ``scorer``."""

    def __init__(self, name: str, resources: Sequence[ResourceSpec], scorer: Scorer, *, use_requested: bool):
        self.name = name
        self.resources = list(resources)
        self.resource_names = [r.name for r in self.resources]
        self.scorer = scorer
        self.use_requested = use_requested
        weights = scorer.kernel_weights
        self._kernel_weights = (np.ones(len(self.resources), dtype=np.int64) if weights is None
                                else np.ascontiguousarray(weights, dtype=np.int64))
        # (table, number of table resources, pod requests) -> the kernel's per-resource columns
        self._columns: dict[tuple, tuple[np.ndarray, ...]] = {}

    # -- the pod ---------------------------------------------------------------------------------
    def pod_request_list(self, pod: "Pod") -> tuple[int, ...]:
        """The pod's request of each configured resource, in the args' order."""
        if self.use_requested:
            requests = pod.requests
        elif _has_pod_level_requests(pod):
            requests = fit_scoring_requests(pod)
        else:
            requests = pod.scoring_requests
        return tuple(int(requests.get(name, 0)) for name in self.resource_names)

    # -- one node --------------------------------------------------------------------------------
    def score(self, node_info: fwk.NodeInfo, pod_requests: Sequence[int],
              dra: DRAScoreState | None = None) -> tuple[int, Status | None]:
        """Upstream ``resourceAllocationScorer.score`` for one NodeInfo (``dra``: PreScore's
        ``draPreScoreState``, for extended resources backed by DRA)."""
        if not self.resources:
            return 0, resources_not_found()
        requested, allocated, allocatable = self._node_allocatable_request(node_info, pod_requests, dra)
        return self.scorer.score_one(requested, allocated, allocatable), None

    def _node_allocatable_request(self, node_info: fwk.NodeInfo, pod_requests: Sequence[int],
                                  dra: DRAScoreState | None = None) -> tuple[list[int], list[int], list[int]]:
        """Upstream ``calculateNodeAllocatableRequest``: per configured resource the node's
        (requested with the pod's, allocated, allocatable); an extended resource the pod does not
        request, or the node does not have, stays 0."""
        allocatable_res = node_info.allocatable
        requested_res = node_info.requested
        used_res = requested_res if self.use_requested else node_info.non_zero_requested
        requested = [0] * len(self.resources)
        allocated = [0] * len(self.resources)
        allocatable = [0] * len(self.resources)
        for i, (name, pod_request) in enumerate(zip(self.resource_names, pod_requests)):
            scalar = is_scalar_resource_name(name)
            if pod_request == 0 and scalar:
                continue
            if name == CPU:
                alloc, used = allocatable_res.milli_cpu, used_res.milli_cpu
            elif name == MEMORY:
                alloc, used = allocatable_res.memory, used_res.memory
            elif name == EPHEMERAL_STORAGE:
                alloc, used = allocatable_res.ephemeral_storage, requested_res.ephemeral_storage
            elif scalar and dra is not None and not allocatable_res.scalar_resources.get(name, 0) \
                    and dra.maps(name) and dra.totals(node_info.node(), name)[0] > 0:
                alloc, used = dra.totals(node_info.node(), name)
            elif scalar and name in allocatable_res.scalar_resources:
                alloc = allocatable_res.scalar_resources[name]
                used = requested_res.scalar_resources.get(name, 0)
            else:
                continue
            if alloc == 0:
                continue
            # upstream v1.37 calculateNodeAllocatableRequest: requested = allocated + the pod's
            allocatable[i] = alloc
            allocated[i] = used
            requested[i] = used + pod_request
        return requested, allocated, allocatable

    # -- a placement (TopologyAwareWorkloadScheduling) ---------------------------------------------
    def score_placement(self, assignments: Any) -> int:
        """Upstream ``scorePlacement``: the proposed members' requests plus what the placement's
        nodes hold, over the nodes' allocatable, scored by the strategy. Each node's entries are
        computed with the running sum as the "pod's" requests (an extended resource nobody asked
        for so far is skipped on that node), as upstream's loop does."""
        n = len(self.resources)
        requested = [0] * n
        for assignment in assignments.proposed_assignments:
            for i, want in enumerate(self.pod_request_list(assignment.pod)):
                requested[i] += want
        nodes = assignments.nodes
        if isinstance(getattr(nodes, "rows", None), np.ndarray) and getattr(nodes, "table", None) is not None:
            return self._score_placement_columns(nodes, requested)
        allocatable = [0] * n
        allocated = [0] * n
        for node_info in assignments.nodes:
            _, node_allocated, node_allocatable = self._node_allocatable_request(node_info, list(requested))
            for i in range(n):
                allocatable[i] += node_allocatable[i]
                allocated[i] += node_allocated[i]
                requested[i] += node_allocated[i]
        return self.scorer.score_one(requested, allocated, allocatable)

    def _score_placement_columns(self, nodes: fwk.NodeBatch, requested: list[int]) -> int:
        """:meth:`score_placement` over a NodeBatch, from the table's columns. Node by node the
        running sum only grows, so an extended resource the members do not request is skipped on
        every node (none adds to it), and any other resource counts on every node with some of it
        allocatable: the sums below."""
        table = nodes.table
        rows = nodes.rows
        n = len(self.resources)
        alloc_cols, used_cols, used_nonzero, _ = self._kernel_columns(table, requested)
        allocatable = [0] * n
        allocated = [0] * n
        total = list(requested)
        for i in range(n):
            col = int(alloc_cols[i])
            if col < 0:
                continue
            alloc = table.alloc[rows, col]
            has = alloc > 0
            used = (table.nonzero_requested if used_nonzero[i] else table.requested)[rows, int(used_cols[i])]
            allocatable[i] = int(alloc[has].sum())
            allocated[i] = int(used[has].sum())
            total[i] += allocated[i]
        return self.scorer.score_one(total, allocated, allocatable)

    # -- many nodes ------------------------------------------------------------------------------
    def score_vectorized(self, nodes: fwk.NodeBatch, pod_requests: Sequence[int],
                         dra: DRAScoreState | None = None) -> tuple[np.ndarray, Status | None]:
        """The same for every node of a NodeBatch: int64 scores of shape (N,), from the kernel
        (node by node when ``dra`` maps a resource the pod requests)."""
        n = len(nodes)
        if not self.resources:
            return np.zeros(n, dtype=np.int64), resources_not_found()
        if dra is not None and any(want and dra.maps(name) for name, want in zip(self.resource_names, pod_requests)):
            if dra.nil_cel_cache:  # BalancedAllocation's panic is raised node by node, as upstream's
                return np.fromiter((self.score(info, pod_requests, dra)[0] for info in nodes), dtype=np.int64,
                                   count=n), None
            return self._score_dra_columns(nodes, pod_requests, dra), None
        table = nodes.table
        alloc_cols, used_cols, used_nonzero, requests = self._kernel_columns(table, pod_requests)
        out = np.empty(n, dtype=np.int64)
        shape_u, shape_s = self.scorer.kernel_shape
        _resources.resource_scores(table.alloc, table.requested, table.nonzero_requested,
                                   np.ascontiguousarray(nodes.rows), alloc_cols, used_cols, used_nonzero,
                                   requests, self._kernel_weights, self.scorer.kernel_kind, shape_u, shape_s, out)
        return out, None

    def _score_dra_columns(self, nodes: fwk.NodeBatch, pod_requests: Sequence[int], dra: DRAScoreState) -> np.ndarray:
        """:meth:`score` of every node of ``nodes`` when ``dra`` maps a requested resource: the
        kernel over the nodes' own (N, K) allocatable and usage per configured resource, read
        from the table's columns as :meth:`_kernel_columns` says, with a DRA-mapped requested
        scalar resource's pair replaced by the node's device totals (:meth:`DRAScoreState.totals`,
        shared per node shape) on the nodes whose allocatable has none of it and whose totals
        count some device -- :meth:`_node_allocatable_request`'s choice, row by row. An
        allocatable of 0 does not count in the kernel, as there."""
        table = nodes.table
        rows = nodes.rows
        n, k = len(rows), len(self.resources)
        alloc_cols, used_cols, used_nonzero, requests = self._kernel_columns(table, pod_requests)
        alloc = np.zeros((n, k), dtype=np.int64)        # (N, K) allocatable per configured resource
        used = np.zeros((n, k), dtype=np.int64)         # (N, K) its usage (non-zero or requested)
        for i, name in enumerate(self.resource_names):
            col = int(alloc_cols[i])
            if col >= 0:
                alloc[:, i] = table.alloc[rows, col]
                used[:, i] = (table.nonzero_requested if used_nonzero[i] else table.requested)[rows, int(used_cols[i])]
            if pod_requests[i] and is_scalar_resource_name(name) and dra.maps(name):
                at = np.flatnonzero(alloc[:, i] == 0)
                if len(at):
                    capacity, allocated = dra.totals_rows(table, rows[at], name)
                    some = capacity > 0
                    alloc[at[some], i] = capacity[some]
                    used[at[some], i] = allocated[some]
        out = np.empty(n, dtype=np.int64)
        shape_u, shape_s = self.scorer.kernel_shape
        local_cols = np.arange(k, dtype=np.int64)
        _resources.resource_scores(alloc, used, used, np.arange(n, dtype=np.int64), local_cols, local_cols,
                                   np.zeros(k, dtype=np.uint8), requests, self._kernel_weights,
                                   self.scorer.kernel_kind, shape_u, shape_s, out)
        return out

    def column_params(self, table: NodeTable, pod_requests: Sequence[int]) -> ResourceScoreParams:
        """This scorer as one of the fused cycle kernel's resource scorers."""
        if not self.resources:
            raise ValueError(resources_not_found().message())
        alloc_cols, used_cols, used_nonzero, requests = self._kernel_columns(table, pod_requests)
        shape_u, shape_s = self.scorer.kernel_shape
        return ResourceScoreParams(self.scorer.kernel_kind, alloc_cols, used_cols, used_nonzero, requests,
                                   self._kernel_weights, np.ascontiguousarray(shape_u, dtype=np.int64),
                                   np.ascontiguousarray(shape_s, dtype=np.int64))

    def _kernel_columns(self, table: NodeTable, pod_requests: Sequence[int]) -> tuple[np.ndarray, ...]:
        """Per configured resource: table column of the allocatable (-1: does not count), column of
        the usage, whether the usage is the non-zero one, and the pod's request."""
        key = (table.uid, len(table.resource_names), tuple(pod_requests))
        cols = self._columns.get(key)
        if cols is not None:
            return cols
        k = len(self.resources)
        alloc_cols = np.full(k, -1, dtype=np.int64)
        used_cols = np.zeros(k, dtype=np.int64)
        used_nonzero = np.zeros(k, dtype=np.uint8)
        for i, (name, pod_request) in enumerate(zip(self.resource_names, pod_requests)):
            scalar = is_scalar_resource_name(name)
            if pod_request == 0 and scalar:
                continue
            if not (scalar or name in (CPU, MEMORY, EPHEMERAL_STORAGE)):
                continue
            col = table.resource_index.get(name)
            if col is None:  # no node lists it: allocatable 0 everywhere
                continue
            alloc_cols[i] = col
            if name in _NONZERO_COLUMN and not self.use_requested:
                used_cols[i], used_nonzero[i] = _NONZERO_COLUMN[name], 1
            else:
                used_cols[i] = col
        cols = (alloc_cols, used_cols, used_nonzero, np.asarray(pod_requests, dtype=np.int64))
        if len(self._columns) >= _COLUMNS_CACHE_SIZE:
            self._columns.clear()
        self._columns[key] = cols
        return cols
