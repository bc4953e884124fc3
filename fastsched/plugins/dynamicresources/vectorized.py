"""DynamicResources' Filter over a batch of nodes.

The allocator answers one node at a time. For the common shape -- every claim to allocate has
only ``exactly`` requests in ExactCount mode without admin access, and every ResourceSlice is
bound to one node by ``nodeName`` -- the number of free devices a request can use on a node
decides a lot, and that number is kept as a column per *device signature* (device class name +
request selectors)::

    free[row]   (C,) int32   devices on the node's complete pools (v1.37.2's allocator takes
                             nothing from incomplete pools; a node with an invalid pool, devices
                             consuming counters or tainted devices take the per-node path) that
                             pass the class and request selectors and are not allocated (in
                             flight included)

kept current through the DRA manager's device listener (a device allocated or freed changes one
entry) and rebuilt when slices, classes or nodes change. For a pod:

* a node where, for some signature, ``free`` is below the devices the pod's requests of that
  signature need cannot be allocated: ``cannot allocate all claims``, as the allocator finds;
* when the pod's requests all have one signature and its claims have no constraints and no
  allocated claim restricts nodes, ``free >= needed`` is also sufficient (any such devices form
  a solution), so the node passes and the allocation itself is computed for the chosen node only
  (:func:`allocate_for_reserve`, the same allocator call Filter would have made);
* otherwise the remaining nodes go through the allocator one by one (the per-node path).

Anything the columns cannot express exactly (selectors failing with a CEL error, slices for many
nodes, claims over the per-claim device limit, ...) takes the per-node path for every node, so
errors surface as upstream reports them.
"""
from __future__ import annotations

import time
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from ...api.resource import ALLOCATION_MODE_EXACT_COUNT, ALLOCATION_RESULTS_MAX_SIZE
from ...dra.allocator import AllocatorError, GroupAnswer, SameShapeAnswer, gather_pools, node_local
from ...api.cel import CELError, compile_expression
from ...framework.status import Code, Status
from ...framework.vectorized import FilterVerdicts
from . import CANNOT_ALLOCATE_ALL_CLAIMS, CLAIM_NOT_AVAILABLE_ON_NODE, declares_optional_node_operations

if TYPE_CHECKING:  # pragma: no cover
    from ...api import Pod
    from ...api.resource import ResourceClaim
    from ...framework import protocols as fwk
    from ...framework.protocols import NodeTable
    from . import DynamicResources, _StateData
    from .manager import DRAManager

__all__ = ["filter_batch", "allocate_for_reserve", "DeviceColumns"]

#: the node table's base columns (cpu, memory, ephemeral-storage); the extended ones, from this
#: index on, have their nonzero rows indexed in ``table.extended_rows``
_N_BASE = 3


class _NodeStub:
    """The node as ``gather_pools`` reads it for ``nodeName`` slices (name only)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name


class DeviceColumns:
    """``free`` counts per device signature over the rows of one node table (see the module
    doc). ``key`` says what they were built from; a changed key means rebuild."""

    #: up to this many columns counting a device, a held or freed device updates them one by one
    SCALAR_COLUMNS = 4
    #: how many ``free >= needed`` masks are kept current (each costs a scalar update per device
    #: held or freed on its row); past it, ``enough`` computes the mask per call
    KEPT_ENOUGH = 32

    def __init__(self, manager: DRAManager, table: NodeTable, key: tuple, features: Any):
        self.manager = manager
        self.features = features
        self.table = table
        self.key = key
        #: signature -> its column: row ``index[signature]`` of ``matrix`` (a view)
        self.free: dict[tuple, np.ndarray] = {}
        #: the built columns, one matrix row each, so that a device held or freed changes every
        #: column counting it in one indexed add (the DRA extended-resource cases keep 25-50
        #: columns over the same devices)
        self.matrix = np.zeros((0, len(table.live)), dtype=np.int32)
        self.index: dict[tuple, int] = {}
        #: signature -> device id -> row, for the counted (selectable, valid-pool) devices
        self.rows_of: dict[tuple, dict[tuple, int]] = {}
        #: signatures whose selectors failed (CEL error): never vectorized
        self.failed: set[tuple] = set()
        #: device id -> [the matrix rows of the built columns counting it (a list, and as an
        #: array once asked for, None until then), its node's table row]
        self.entries_of: dict[tuple, list[Any]] = {}
        #: the matrix rows in use: signatures counting the same devices (the DRA extended-resource
        #: cases' 25-50 classes all select every device of one driver) share one row, so a device
        #: held or freed changes one entry instead of one per class (issue 27)
        self.rows_used = 0
        #: (matrix row, devices needed) -> (C,) bool ``free >= needed``, kept current by
        #: ``_devices_changed`` (the rows of the device's node): ``_enough`` reads it instead of a
        #: compare over the table per pod; at most ``KEPT_ENOUGH`` of them
        self.enough_of: dict[tuple[int, int], np.ndarray] = {}
        #: matrix row -> the ``needed`` values of ``enough_of`` kept for it
        self.enough_needed: dict[int, list[int]] = {}
        manager.device_listeners.append(self._devices_changed)

    def close(self) -> None:
        try:
            self.manager.device_listeners.remove(self._devices_changed)
        except ValueError:
            pass

    def _devices_changed(self, device_ids: list[tuple], now_held: bool) -> None:
        """The manager's listener: ``device_ids`` became held (``now_held``) or free, in order."""
        entries_of = self.entries_of
        delta = -1 if now_held else 1
        matrix = self.matrix
        enough_needed, enough_of = self.enough_needed, self.enough_of
        for device_id in device_ids:
            entry = entries_of.get(device_id)
            if entry is None:
                continue
            row = entry[2]
            if len(entry[0]) <= self.SCALAR_COLUMNS:
                # a device counted by a few columns (a claim-template pod's class): one scalar
                # add each, ~10x cheaper than numpy's indexed add for so few
                for k in entry[0]:
                    matrix[k, row] += delta
            else:
                columns = entry[1]
                if columns is None:
                    columns = entry[1] = np.array(entry[0], dtype=np.intp)
                # (distinct matrix rows: each signature counts a device once)
                matrix[columns, row] += delta
            if enough_needed:
                for k in entry[0]:
                    for needed in enough_needed.get(k, ()):
                        enough_of[(k, needed)][row] = matrix[k, row] >= needed

    def enough(self, signature: tuple, needed: int) -> np.ndarray | None:
        """(C,) bool: the rows with at least ``needed`` free devices of ``signature``, None when
        its column cannot be built. A kept mask (read-only for the caller), current with the
        column; past ``KEPT_ENOUGH`` masks, a new array per call."""
        col = self.column(signature)
        if col is None:
            return None
        k = self.index[signature]
        kept = self.enough_of.get((k, needed))
        if kept is not None:
            return kept
        mask = col >= needed
        if len(self.enough_of) < self.KEPT_ENOUGH:
            self.enough_of[(k, needed)] = mask
            self.enough_needed.setdefault(k, []).append(needed)
        return mask

    def column(self, signature: tuple) -> np.ndarray | None:
        """The ``free`` column of ``signature`` (built on first use); None when its selectors
        cannot be evaluated on every device without an error."""
        col = self.free.get(signature)
        if col is not None:
            return col
        if signature in self.failed:
            return None
        class_name, selectors = signature
        manager = self.manager
        device_class = manager.get_class(class_name)
        if device_class is None:
            self.failed.add(signature)
            return None
        compiled = [compile_expression(sel) for sel in (*(s.cel for s in device_class.selectors), *selectors)]
        if any(c.error for c in compiled):
            self.failed.add(signature)
            return None
        table = self.table
        free = np.zeros(len(table.live), dtype=np.int32)
        rows: dict[tuple, int] = {}
        cache = manager.selector_cache
        row_of = table.row_of
        all_slices = manager.slices
        try:
            for node_name, node_slices in manager._slices_by_node.items():
                row = row_of.get(node_name)
                if row is None or not node_slices:
                    continue
                pools = gather_pools(manager.slices_for_node(_NodeStub(node_name)), _NodeStub(node_name),
                                     self.features, all_slices)
                for pool in pools:
                    if pool.is_invalid:  # its node's verdict has another message: never decided here
                        self.failed.add(signature)
                        return None
                    if pool.is_incomplete:  # v1.37.2's allocator takes nothing from it
                        continue
                    for s in pool.slices:
                        if s.skip_node_operations:
                            # usable or not by the node's declared features: never decided here
                            self.failed.add(signature)
                            return None
                        for device in s.devices:
                            if device.consumes_counters or device.taints or device.allow_multiple_allocations:
                                # counters, taints and multiple allocations (shares, consumed
                                # capacity) decide per device: never decided here
                                self.failed.add(signature)
                                return None
                            if any(q.sign() < 0 for q in device.capacity.values()):
                                # a negative capacity aborts the allocator's search with an error
                                # when it meets the device (errNegativeCapacity): never decided here
                                # (the columns passed the node, then Reserve found no allocation)
                                self.failed.add(signature)
                                return None
                            if device.binding_conditions and not self.features.device_binding:
                                continue
                            if not all(cache.matches(c, s.driver, device) for c in compiled):
                                continue
                            device_id = (pool.driver, pool.pool, device.name)
                            rows[device_id] = row
                            if not manager.is_held(device_id):
                                free[row] += 1
        except CELError:
            self.failed.add(signature)
            return None
        for sig, other in self.rows_of.items():
            if other == rows:  # the same devices on the same rows: the same counts, now and after
                k = self.index[sig]
                self.index[signature] = k
                self.free[signature] = column = self.free[sig]
                self.rows_of[signature] = other
                return column
        k = self.rows_used
        self.rows_used = k + 1
        matrix = self.matrix
        if k == len(matrix):  # full: a larger matrix, the columns' views moved onto it
            matrix = np.zeros((max(8, 2 * k), matrix.shape[1]), dtype=np.int32)
            matrix[:k] = self.matrix
            self.matrix = matrix
            for sig, j in self.index.items():
                self.free[sig] = matrix[j]
        matrix[k] = free
        self.index[signature] = k
        self.free[signature] = column = matrix[k]
        self.rows_of[signature] = rows
        entries_of = self.entries_of
        for device_id, row in rows.items():
            entry = entries_of.get(device_id)
            if entry is None:
                entries_of[device_id] = [[k], None, row]
            else:
                entry[0].append(k)
                entry[1] = None
        return column


def _columns(plugin: DynamicResources, table: NodeTable) -> DeviceColumns | None:
    manager = plugin.manager
    if not manager.incremental or manager.has_slices_for_many_nodes():
        return None
    key = (id(table), len(table.row_of), len(table.live), manager.slice_version, manager.class_version)
    cols = plugin._vector_filter
    if cols is None or cols.key != key or cols.table is not table or cols.manager is not manager:
        if cols is not None:
            cols.close()
        cols = plugin._vector_filter = DeviceColumns(manager, table, key, plugin.features)
    return cols


class _Plan:
    """What one pod needs: devices per signature, and whether counts decide feasibility."""

    __slots__ = ("needs", "sufficient", "table", "enough", "cols", "special")

    def __init__(self, needs: dict[tuple, int], sufficient: bool):
        self.needs = needs
        self.sufficient = sufficient
        #: a special-claim plan's (claim, request mappings, requested resource names): what
        #: ``_filter_extended_resources`` gives every node offering none of those resources
        #: (``_special_plan``; None for other plans)
        self.special: tuple[ResourceClaim, list[dict[str, str]], tuple[str, ...]] | None = None
        self.table = None  # the node table of the last batch decided from the columns alone
        #: (C,) bool over the table rows: enough free devices for every signature (None: not yet)
        self.enough: np.ndarray | None = None
        self.cols: DeviceColumns | None = None


def _plan(s: _StateData, claims: list[ResourceClaim] | None = None) -> _Plan | None:
    """The plan of the claims to allocate (``claims``: those the allocator is given, by default
    the pod's claims of ``to_allocate``)."""
    if s.reused or s.after_reserve is not None:
        return None  # a pod group member reusing pending allocations: Filter combines them per node
    made = _needs(claims if claims is not None else [s.claims[index] for index in s.to_allocate])
    if made is None:
        return None
    return _plan_of(s, *made)


def _plan_of(s: _StateData, needs: dict[tuple, int], constrained: bool) -> _Plan:
    """The plan of claims needing ``needs`` (``_needs``) on the pod's state ``s``."""
    sufficient = (len(needs) == 1 and not constrained and all(sel is None for sel in s.available_on_nodes)
                  and not s.binding_failed and not s.needs_node_operations)
    return _Plan(needs, sufficient)


def _needs(claims: list[ResourceClaim]) -> tuple[dict[tuple, int], bool] | None:
    """What a plan reads of ``claims``: the devices needed per signature and whether some claim
    has constraints; None when the columns cannot decide for them."""
    needs: dict[tuple, int] = {}
    constrained = False
    for claim in claims:
        per_claim = 0
        for request in claim.requests:
            body = request.exactly
            if (body is None or body.allocation_mode != ALLOCATION_MODE_EXACT_COUNT or body.admin_access
                    or body.capacity is not None  # capacity requests decide per device
                    or body.derived_attributes):  # evaluating one may fail before the search runs out
                return None
            signature = (body.device_class_name, tuple(sel.cel for sel in body.selectors))
            needs[signature] = needs.get(signature, 0) + body.count
            per_claim += body.count
        if per_claim > ALLOCATION_RESULTS_MAX_SIZE:
            return None  # the allocator reports an error for this claim
        if claim.constraints:
            constrained = True
    return needs, constrained


def filter_batch(plugin: DynamicResources, s: _StateData, pod: Pod, nodes: fwk.NodeBatch,
                 state: Any = None) -> FilterVerdicts | Status:
    """Filter for every node of ``nodes`` (see the module doc)."""
    n = len(nodes)
    table = nodes.table
    rows = nodes.rows
    if plugin.node_allocatable:
        # DRANodeAllocatableResources: Filter reads the node's free allocatable and the devices
        # the allocator picks there (their node-allocatable amounts): node by node, with no
        # columns, shapes or shared answers
        from . import _pod_group_state  # (the group's pending allocations, for the sharing check)
        group_data = _pod_group_state(state) if state is not None else None
        statuses: list[Status | None] = [None] * n
        for i in range(n):
            info = nodes[i]
            statuses[i] = plugin._filter_node(s, pod, info.node(), info, group_data)
        return FilterVerdicts.from_statuses(statuses)
    if s.extended_index is not None:
        # the special claim is made per node (from its allocatable), and its checks run even when
        # nothing is left to allocate: columns only for the nodes that leave it every request
        extended = _extended_columns(plugin, s, pod, nodes)
        if extended is not None:
            return extended
        return _per_node(plugin, s, pod, nodes, np.arange(n))
    if s.allocator is None:
        return _allocated_only(s, nodes)
    if s.vector is None:
        s.vector = _plan(s) or False
    plan = s.vector
    cols = _columns(plugin, table) if plan else None
    if not plan or cols is None:
        return _per_node(plugin, s, pod, nodes, np.arange(n))
    enough = _enough(plan, cols, table)
    if enough is None:
        return _per_node(plugin, s, pod, nodes, np.arange(n))
    ok = enough[rows]
    if plan.sufficient:
        plan.table = table  # Reserve finds the chosen node's object there
        if ok.all():
            return FilterVerdicts.all_pass(n)
        return FilterVerdicts.from_mask(~ok, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, CANNOT_ALLOCATE_ALL_CLAIMS)
    # (``nonzero()[0]`` of a 1-d mask: np.flatnonzero's result, without its Python-level
    # ravel and dispatch, ~2% of a match_empty cycle in samples)
    return _per_node(plugin, s, pod, nodes, ok.nonzero()[0], rejected=~ok)


def _enough(plan: Any, cols: Any, table: Any) -> np.ndarray | None:
    """The rows with enough free devices for every signature the plan needs (bool, one per table
    row), over the whole table once per cycle and kept on the plan (the columns do not change
    between the Filter calls of one cycle); None when the columns have no such signature."""
    enough = plan.enough
    if enough is None or plan.cols is not cols:
        enough = None
        for signature, needed in plan.needs.items():
            mask = cols.enough(signature, needed)
            if mask is None:
                return None
            # (a kept mask is the columns' and changes with them: copied, as the plan keeps what
            # the columns said at its first Filter call of the cycle)
            enough = mask.copy() if enough is None else enough & mask
        if enough is None:
            enough = np.ones(len(table.live), dtype=bool)
        plan.enough, plan.cols = enough, cols
    return enough


def _extended_columns(plugin: DynamicResources, s: _StateData, pod: Pod, nodes: fwk.NodeBatch
                      ) -> FilterVerdicts | None:
    """Filter for a pod whose only claim is the special one (extended resources backed by DRA),
    from the device columns, or None (the per-node path decides every node).

    filterExtendedResources reads of a node only, for each resource the pod requests, whether the
    node's allocatable has it and whether it is zero there. When every requested resource maps to
    a DeviceClass, a node with none of them nonzero (the table's ``alloc``: absent and zero are
    alike then) leaves the special claim every request: one claim object, the same for all such
    nodes (``_filter_extended_resources`` keeps it per set of requests). That claim is an ordinary
    claim to allocate, so the columns decide those nodes as ``_plan`` decides a pod's own claims;
    the nodes holding some of the resources go through the per-node path."""
    if (s.num_user_claims or s.allocator is None or s.reused or s.after_reserve is not None or s.binding_failed
            or s.needs_node_operations or any(sel is not None for sel in s.available_on_nodes)):
        return None
    index = s.extended_index
    assert index is not None
    claim = s.claims[index]
    if claim.requests or claim.allocation is not None:
        return None  # a prior cycle's claim: the per-node path gives its verdict
    requested = [name for name, amount in s.pod_scalar_resources.items() if amount]
    resolver = plugin.manager.device_class_resolver()
    if not requested or any(resolver.get_device_class(name) is None for name in requested):
        return None  # absent and zero differ for such a resource: node by node
    table = nodes.table
    rows = nodes.rows
    plan = s.vector
    if plan is None:
        plan = s.vector = _special_plan(plugin, s) or False
    if not plan:
        return None
    cols = _columns(plugin, table)
    if cols is None:
        return None
    enough = _enough(plan, cols, table)
    if enough is None:
        return None
    resource_index = table.resource_index
    extended_rows = table.extended_rows
    held = None  # nodes offering some requested resource themselves (None: no node of the table)
    for name in requested:
        col_index = resource_index.get(name)
        if col_index is None:
            continue
        # an extended column's nonzero rows are indexed (``extended_rows``): a resource the table
        # interned only for pods requesting it, on no node, is not read per window row (issue 27)
        if col_index >= _N_BASE and not extended_rows.get(col_index):
            continue
        offered = table.alloc[rows, col_index] != 0
        held = offered if held is None else held | offered
    ok = enough[rows]
    plan.table = table  # Reserve finds the chosen node's object there
    if plan.sufficient and (held is None or not held.any()):
        # (count_nonzero: ``ok.all()``'s reduction cost ~5x more on a window's rows)
        if np.count_nonzero(ok) == len(ok):
            return FilterVerdicts.all_pass(len(rows))
        return FilterVerdicts.from_mask(~ok, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, CANNOT_ALLOCATE_ALL_CLAIMS)
    if held is None:
        held = np.zeros(len(rows), dtype=bool)
    rejected = ~held & ~ok
    per_node = held if plan.sufficient else held | ok
    return _per_node(plugin, s, pod, nodes, per_node.nonzero()[0], rejected=rejected)


class _NoneOffered:
    """A node as filterExtendedResources reads it (its allocatable only), offering none of the
    pod's extended resources."""

    __slots__ = ()
    name = ""
    allocatable: dict[str, Any] = {}


def _special_plan(plugin: DynamicResources, s: _StateData) -> _Plan | None:
    """The plan of the special claim that a node offering none of the pod's requested extended
    resources leaves the pod (``_filter_extended_resources``' claim for such a node, every
    request through DRA), when it is the only claim to allocate."""
    if s.to_allocate != [s.extended_index]:
        return None
    special, mappings, status = plugin._filter_extended_resources(s, _NoneOffered())
    if status is not None or special is None:
        return None
    if s.reused or s.after_reserve is not None or special.constraints:
        return _plan(s, [special])
    # a special claim has requests only (no constraints): what the plan reads of it is kept per
    # requests object, which the pods sharing their containers share (issue 27)
    requests = special.requests
    kept = plugin._special_needs.get(id(requests))
    if kept is None or kept[0] is not requests:
        if len(plugin._special_needs) >= 256:
            plugin._special_needs.clear()
        kept = plugin._special_needs[id(requests)] = (requests, _needs([special]))
    made = kept[1]
    if made is None:
        return None
    plan = _plan_of(s, *made)
    plan.special = (special, mappings, tuple(name for name, amount in s.pod_scalar_resources.items() if amount))
    return plan


def _allocated_only(s: _StateData, nodes: fwk.NodeBatch) -> FilterVerdicts:
    """Every claim is allocated: a node fails (``resourceclaim not available on the node``) when
    some claim's allocation node selector does not match it, or some claim's devices failed to
    bind; those claims are recorded for PostFilter, as the per-node Filter records them."""
    table, rows = nodes.table, nodes.rows
    ok = np.ones(len(rows), dtype=bool)
    if s.binding_failed and len(rows):
        # claims whose devices' binding failed are unavailable everywhere (v1.37.2 Filter)
        s.unavailable_claims.update(s.binding_failed)
        ok[:] = False
    if s.needs_node_operations and len(rows):
        # allocated claims whose devices skip node operations: only on nodes declaring the feature
        table_nodes = table.nodes
        declares = np.fromiter((declares_optional_node_operations(table_nodes[int(r)]) for r in rows),
                               dtype=bool, count=len(rows))
        if not declares.all():
            s.unavailable_claims.update(s.needs_node_operations)
        ok &= declares
    for index, selector in enumerate(s.available_on_nodes):
        if selector is None:
            continue
        matches = _selector_mask(selector, table, rows)
        if not matches.all():
            s.unavailable_claims.add(index)
        ok &= matches
    if ok.all():
        return FilterVerdicts.all_pass(len(rows))
    return FilterVerdicts.from_mask(~ok, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, CLAIM_NOT_AVAILABLE_ON_NODE)


def _selector_mask(selector: Any, table: NodeTable, rows: np.ndarray) -> np.ndarray:
    """(len(rows),) bool: whether each node matches ``selector``. Terms of ``metadata.name``
    In / NotIn fields only (what allocations of node-local devices carry) are evaluated on the
    node name column; other selectors node by node."""
    terms = selector.terms
    if terms and all(not t.parse_errors and not t.match_expressions and t.match_fields
                     and all(f.key == "metadata.name" and f.operator in ("In", "NotIn") for f in t.match_fields)
                     for t in terms):
        names = table.node_names[rows]
        out = np.zeros(len(rows), dtype=bool)
        for term in terms:
            term_ok = np.ones(len(rows), dtype=bool)
            for f in term.match_fields:
                isin = np.isin(names, list(f.values))
                term_ok &= isin if f.operator == "In" else ~isin
            out |= term_ok
        # upstream skips matchFields for a node without a name; every table row has one
        return out
    table_nodes = table.nodes
    return np.fromiter((selector.matches(table_nodes[int(r)]) for r in rows), dtype=bool, count=len(rows))


def _per_node(plugin: DynamicResources, s: _StateData, pod: Pod, nodes: fwk.NodeBatch, positions: np.ndarray,
              rejected: np.ndarray | None = None) -> FilterVerdicts:
    n = len(nodes)
    statuses: list[Status | None] = [None] * n
    rejected_at: list[int] = []
    if rejected is not None:
        rejected_at = rejected.nonzero()[0].tolist()
        for i in rejected_at:
            statuses[i] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, CANNOT_ALLOCATE_ALL_CLAIMS)
    table_nodes = nodes.table.nodes
    rows = nodes.rows
    allocator = s.allocator
    filter_node = plugin._filter_node
    if (allocator is None or allocator.shapes is None or s.binding_failed or s.reused or s.after_reserve is not None
            or s.needs_node_operations
            or any(selector is not None for selector in s.available_on_nodes)):
        for i in positions.tolist():
            statuses[i] = filter_node(s, pod, table_nodes[int(rows[i])])
        return FilterVerdicts.from_statuses(statuses)
    # Nodes of one shape (dra.allocator.NodeShapes) leaving the pod the same special claim get one
    # Filter: with no per-node part left (no allocated claim restricting nodes, no failed binding)
    # past the special claim -- which filterExtendedResources makes from the node's allocatable,
    # node by node, one object per distinct set of DRA-served requests -- the verdict is the
    # allocator's on the same claims, which is the same for them; a passing node gets the first
    # node's answer (one GroupAnswer shared by the group, with the node's pools beside it),
    # relocated when Reserve picks it. Errors and node-specific failures are not shared.
    node_shape = allocator.node_shape
    node_allocations, node_extended, node_pools = s.node_allocations, s.node_extended, s.node_pools
    extended_index = s.extended_index
    manager = plugin.manager
    if extended_index is None and allocator.shape_key == manager.shape_key and len(positions):
        grouped = _by_shape(plugin, s, pod, nodes, positions, statuses, rejected_at)
        if grouped is not None:
            return grouped
    filter_extended = plugin._filter_extended_resources
    only_extended = s.num_user_claims == 0
    special: ResourceClaim | None = None
    mappings: list[dict[str, str]] = []
    #: (id(shape), id(special claim)) -> (status, the group's answer or None). By identity:
    #: the manager's kept keys of equal shapes are one object (NodeShapes interns them), and
    #: ``keys`` holds every key compared here, so equal ids are equal shapes (other keys, equal
    #: but distinct objects, only share less)
    seen: dict[tuple[int, int], tuple] = {}
    # filterExtendedResources reads of a node only whether each resource the pod requests is in
    # its allocatable and whether it is zero there: one call per such pattern
    requested = [name for name, amount in s.pod_scalar_resources.items() if amount]
    by_allocatable: dict[tuple[int, ...], tuple] = {}
    single = requested[0] if len(requested) == 1 else None
    row_list = rows.tolist()
    at = positions.tolist()
    at_nodes: list[Any] = [table_nodes[row_list[i]] for i in at]
    # the nodes' shape keys in one pass when they are the manager's kept ones (the same keys
    # node_shape reads one node at a time; Filter holds or frees no device, so none changes
    # within the loop)
    keys = (manager.shape_keys(at_nodes) if allocator.shape_key == manager.shape_key
            else [node_shape(node) for node in at_nodes])
    for i, node, key in zip(at, at_nodes, keys):
        if extended_index is not None:
            allocatable = node.allocatable
            if single is not None:
                have = allocatable.get(single)
                pattern: tuple[int, ...] = (0,) if have is None else (1,) if not have else (2,)
            else:
                pattern = tuple(0 if (have := allocatable.get(name)) is None else 1 if not have else 2
                                for name in requested)
            found = by_allocatable.get(pattern)
            if found is None:
                found = by_allocatable[pattern] = filter_extended(s, node)
            special, mappings, status = found
            if status is not None:
                statuses[i] = status
                continue
            if special is None and only_extended:
                continue  # extended resources only, all from device plugins here: passes
        group = (id(key[0]), id(special)) if key is not None else None
        known = seen.get(group) if group is not None else None
        if known is not None:
            assert key is not None
            status, answer = known
            statuses[i] = status
            if status is None:
                name = node.name
                if s.row_groups is None:
                    node_allocations[name] = answer
                else:
                    s.set_node_allocation(name, answer)
                node_pools[name] = key[1]
                if extended_index is not None:
                    node_extended[name] = (special, mappings)
            continue
        status = statuses[i] = filter_node(s, pod, node)
        if group is None:
            continue
        assert key is not None
        if status is None:
            answer = s.allocation_at(node.name)
            if answer is not None and all(node_local(a, node.name) for a in answer):
                seen[group] = (None, GroupAnswer(answer, node.name, key[1]))
        elif status.code() == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and status.reasons() == [CANNOT_ALLOCATE_ALL_CLAIMS]:
            seen[group] = (status, None)
    return FilterVerdicts.from_statuses(statuses)


def _by_shape(plugin: DynamicResources, s: _StateData, pod: Pod, nodes: fwk.NodeBatch, positions: np.ndarray,
              statuses: list[Status | None], rejected_at: list[int]) -> FilterVerdicts | None:
    """:func:`_per_node`'s sharing by shape for a pod without the special claim, over the kept
    shape numbers of the table's rows (``DRAManager.shape_columns``: no per-node key, name or
    Node object for a node whose key is kept): the nodes grouped by shape number, then per group
    the nodes decided one by one until one gives an answer to share (as the per-node loop: an
    error, a failure with another reason or an answer that is not node-local is not shared) and
    the rest of the group given it by row (``_StateData.row_groups``: the answer and the node's
    pools are looked up for the one node Reserve picks). Filter's calls are per node and hold
    nothing, so deciding the groups one after the other instead of in node order gives the same
    verdicts and answers. None when some node has no shape (the per-node loop decides then).
    ``rejected_at``: the positions ``statuses`` already holds a Status at (the columns'
    rejections, none of them in ``positions``); the verdicts are read at those and at the
    positions decided here only, not over every node of the batch."""
    table = nodes.table
    if s.row_groups is not None and s.group_table is not table:
        return None  # (another table's rows: the per-node loop)
    manager = plugin.manager
    numbers, pools = manager.shape_columns(table)
    at_rows = nodes.rows[positions]
    ids = numbers[at_rows]
    table_nodes = table.nodes
    if len(ids) and ids.min() < 0:
        missing = (ids == -1).nonzero()[0]
        if len(missing):
            # keys not kept yet (the first cycle, a node whose devices' bits were dropped): computed
            # and kept, which sets their rows' numbers
            missing_rows = at_rows[missing].tolist()
            manager.shape_keys_by_name(table.node_names[at_rows[missing]].tolist(),
                                       lambda j: table_nodes[missing_rows[j]])
            numbers, pools = manager.shape_columns(table)
            ids = numbers[at_rows]
        if ids.min() < 0:
            return None
    filter_node = plugin._filter_node
    row_groups = s.row_groups
    # an earlier Filter call on this state left per-node answers: a node given a group answer
    # now loses its older one (the latest Filter's answer is the node's, as per node; the rest
    # of a group never had a Filter call of its own in this call)
    earlier = bool(s.node_allocations)
    #: the positions given a Status here (or that may hold one): from_statuses reads only these
    decided: list[int] = []
    for members in _number_groups(ids):
        for k in range(len(members)):
            m = int(members[k])
            row = int(at_rows[m])
            node: Any = table_nodes[row]
            at = int(positions[m])
            status = statuses[at] = filter_node(s, pod, node)
            decided.append(at)
            if status is None:
                answer: Any = s.node_allocations.get(node.name)
                if type(answer) is SameShapeAnswer and answer.node_name == node.name:
                    # a kept answer of another node of this shape (the allocator's memo): the
                    # group shares it as found there, each member's own made by GroupAnswer.at
                    # from those pools as from this node's (one rename, not this node's copy of
                    # every result first); its relocated form names the node alone, so it is
                    # node-local here
                    group_answer = GroupAnswer(answer, answer.first_node, answer.first_pools)
                else:
                    answer = s.allocation_at(node.name)
                    if answer is None or not all(node_local(a, node.name) for a in answer):
                        continue
                    group_answer = GroupAnswer(answer, node.name, pools[row])
                rest = members[k + 1:]
                if len(rest):
                    if row_groups is None or len(row_groups) < len(table.live):  # (none yet, or the table grew)
                        grown = np.empty(len(table.live), dtype=np.int32)
                        grown.fill(-1)  # (np.full's Python-level wrapper, per cycle)
                        if row_groups is not None:
                            grown[:len(row_groups)] = row_groups
                        row_groups = s.row_groups = grown
                        s.group_table = table
                    row_groups[at_rows[rest]] = len(s.group_answers)
                    s.group_answers.append((group_answer, pools))
                    if earlier:
                        pop = s.node_allocations.pop
                        for name in table.node_names[at_rows[rest]].tolist():
                            pop(name, None)
                break
            if status.code() == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and status.reasons() == [CANNOT_ALLOCATE_ALL_CLAIMS]:
                shared = positions[members[k + 1:]].tolist()
                for i in shared:
                    statuses[i] = status
                decided += shared
                break
    if rejected_at:
        decided += rejected_at
    # (ascending, as from_statuses' pass would visit them: the reasons' order is the same)
    decided.sort()
    return FilterVerdicts.from_statuses(statuses, decided)


#: beyond this many shapes in one batch, :func:`_number_groups` groups the rest with one sort
_FEW_SHAPES = 8


def _number_groups(ids: np.ndarray) -> list[np.ndarray]:
    """The positions of ``ids`` grouped by value, the groups in the order of their first position
    and each group's positions ascending. A batch holds a few shapes (the nodes of a
    scheduler_perf cluster are stamped from one template; a node holding devices is another
    shape), so each group is one comparison over the positions left while they are few; more
    take one sort."""
    n = len(ids)
    if not n:
        return []
    same = ids == ids[0]
    if same.all():
        return [np.arange(n)]
    groups = [same.nonzero()[0]]
    left = (~same).nonzero()[0]
    while len(left) and len(groups) < _FEW_SHAPES:
        same = ids[left] == ids[left[0]]
        groups.append(left[same])
        left = left[~same]
    if len(left):
        order = np.argsort(ids[left], kind="stable")  # each group's positions, ascending
        ordered = ids[left][order]
        starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1]))).tolist()
        sorted_left = left[order]
        rest = [sorted_left[a:b] for a, b in zip(starts, starts[1:] + [len(left)])]
        rest.sort(key=_first)
        groups.extend(rest)
    return groups


_first = itemgetter(0)


def allocate_for_reserve(plugin: DynamicResources, s: _StateData, node_name: str) -> list | None:
    """The allocation Filter would have cached for ``node_name`` (the batch Filter passed the
    node from its columns without running the allocator): the same allocator call, now."""
    plan = s.vector
    table = getattr(plan, "table", None) if plan else None
    node = None
    if table is not None:
        row = table.row_of.get(node_name)
        if row is not None:
            node = table.nodes[int(row)]
    if node is None and plugin._client is not None:
        node = plugin._client.get_object("Node", node_name, "")
    if node is None:
        return None
    special = plan.special if plan else None
    if special is not None:
        decided = _special_node_allocation(plugin, s, node, special)
        if decided is not None:
            return s.allocation_at(node_name) if decided else None
    after_reserve, s.after_reserve = s.after_reserve, None  # (Filter ran before any Reserve)
    try:
        if plugin._filter_node(s, None, node) is not None:
            return None
    finally:
        s.after_reserve = after_reserve
    return s.allocation_at(node_name)


def _special_node_allocation(plugin: DynamicResources, s: _StateData, node: Any,
                             special: tuple[ResourceClaim, list[dict[str, str]], tuple[str, ...]]) -> bool | None:
    """``_filter_node(s, None, node)`` for a pod whose only claim to allocate is the special one
    (``special``: its plan's claim, mappings and requested names) on a node that offers none of
    those resources, when nothing else of the per-node Filter applies: the allocator's answer for
    the plan's claim recorded as that Filter records it. True when recorded, False when the node
    has none (nothing recorded, as that Filter's failure), None when the per-node Filter must run
    instead. Why: Reserve's allocation on the chosen node ran the whole per-node Filter, whose
    extended-resource pass gives such a node the claim the plan already holds (issues 27, 29)."""
    index = s.extended_index
    allocator = s.allocator
    if (index is None or allocator is None or s.num_user_claims or s.to_allocate != [index] or s.reused
            or s.binding_failed or s.needs_node_operations or s.mapped_claims is not None
            or plugin.node_allocatable or any(sel is not None for sel in s.available_on_nodes)):
        return None
    claim = s.claims[index]
    if claim.requests or claim.allocation is not None:
        return None  # (a prior cycle's claim, or an allocated one: the per-node Filter's verdicts)
    resolver = plugin.manager.device_class_resolver()
    allocatable = node.allocatable
    for name in special[2]:
        if allocatable.get(name) or resolver.get_device_class(name) is None:
            return None  # the node offers it, or no class maps it (now): node by node
    filter_timeout = plugin.filter_timeout
    deadline = time.monotonic() + filter_timeout if filter_timeout > 0 else None
    try:
        allocations = allocator.allocate(node, [special[0]], deadline)
    except AllocatorError:  # (timeouts and failures on the node included: no answer, as Filter's status)
        return False
    if allocations is None or len(allocations) != 1:
        return False
    s.set_node_allocation(node.name, allocations)
    s.node_extended[node.name] = (special[0], special[1])
    s.node_allocatable_statuses[node.name] = []
    return True
