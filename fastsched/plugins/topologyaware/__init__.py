"""TopologyPlacementGenerator (upstream ``pkg/scheduler/framework/plugins/topologyaware/topology_placement.go``,
v1.37.2; the CompositePodGroup readings built, not yet switched on).

The PlacementGenerate plugin of TopologyAwareWorkloadScheduling: a PodGroup without
``spec.schedulingConstraints.topology`` gets its parent placement back; with a topology key, one
placement per value of that node label among the parent placement's nodes (nodes without the label
are in none), named after the value, its nodes in the parent's order. When members of the group are
already scheduled (assumed or bound), only their domain is offered; members on nodes of different
domains, on a node without the label or on a node the snapshot does not have are an error
``cannot determine domain for already scheduled pods: ...``.

Upstream collects the domains in a Go map, so the order of the placements (which the group cycle
evaluates in turn and whose first one's status it reports when none fits) is Go's map iteration
order, random per call; here it is the order in which the domains first appear among the parent
placement's nodes (docs/reference/deviations.md).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...features import COMPOSITE_POD_GROUP, feature_gates_of
from ...framework import protocols as fwk
from ...framework.composite import get_pod_group_states
from ...framework.interface import GeneratePlacementsResult, Placement
from ...framework.status import Status, StatusError

NAME = "TopologyPlacementGenerator"


class TopologyPlacement:
    """``TopologyPlacement`` (a PlacementGeneratePlugin). ``composite_pod_group``: the
    CompositePodGroup gate (a composite entity's already scheduled pods are every leaf
    PodGroup's under it, ``helper.GetPodGroupStates``; off: the group's own)."""

    def __init__(self, handle: Any, composite_pod_group: bool = False):
        self._handle = handle
        self._composite = composite_pod_group

    def name(self) -> str:
        return NAME

    def generate_placements(self, state: Any, pod_group: Any, parent_placement: Placement
                            ) -> tuple[GeneratePlacementsResult | None, Status | None]:
        key = topology_key(pod_group)
        if key is None:
            return GeneratePlacementsResult([parent_placement]), None
        required: str | None = None
        try:
            scheduled = self._scheduled_pods(pod_group)
            if scheduled:
                required = self._scheduled_pods_topology_domain(key, scheduled)
        except _DomainError as e:
            return None, Status.from_error(StatusError(f"cannot determine domain for already scheduled pods: {e}"))
        except LookupError as e:
            return None, Status.from_error(StatusError(str(e.args[0] if e.args else e)))
        nodes = parent_placement.nodes
        table = getattr(nodes, "table", None)
        if table is not None and isinstance(getattr(nodes, "rows", None), np.ndarray):
            return GeneratePlacementsResult(_domains_of_batch(nodes, key, required)), None
        positions: dict[str, list[int]] = {}
        for i, info in enumerate(nodes):
            domain = info.node().labels.get(key)
            if domain is None or (required is not None and domain != required):
                continue
            positions.setdefault(domain, []).append(i)
        placements = [Placement(domain, _subset(nodes, pos)) for domain, pos in positions.items()]
        return GeneratePlacementsResult(placements), None

    def _scheduled_pods(self, pod_group: Any) -> list:
        manager = getattr(self._handle, "pod_group_manager", None)
        if manager is None:
            raise LookupError("no pod group manager")
        if self._composite:
            pods: list = []
            for state, err in get_pod_group_states(manager.pod_group_states_lister(),
                                                   manager.composite_groups.composite_states_lister(), pod_group.key):
                if err is not None:
                    raise err
                pods.extend(state.scheduled_pods())
            return pods
        return list(manager.pod_group_states_lister().get(pod_group.namespace, pod_group.name).scheduled_pods())

    def _scheduled_pods_topology_domain(self, key: str, pods: list) -> str:
        lister = self._handle.snapshot_shared_lister()
        domain = ""
        for pod in pods:
            try:
                node = lister.node_infos().get(pod.node_name).node()
            except KeyError:
                raise _DomainError(f"getting node for pod {pod.namespace}/{pod.name}: nodeinfo not found for node "
                                   f'name "{pod.node_name}"') from None
            value = node.labels.get(key)
            if value is None:
                raise _DomainError(f"no topology domain found for pod {pod.namespace}/{pod.name}")
            if domain and domain != value:
                raise _DomainError(f"more than 1 domain found for pod group: {domain}, {value}")
            domain = value
        return domain


class _DomainError(Exception):
    pass


def topology_key(pod_group: Any) -> str | None:
    """``getTopologyKey``: the first topology constraint's key of the group's PodGroup, else of its
    CompositePodGroup (a composite entity), if any."""
    group = getattr(pod_group, "pod_group", None)
    if group is None:
        group = getattr(pod_group, "composite_pod_group", None)
    constraints = None if group is None else group.scheduling_constraints
    if constraints is None or not constraints.topology:
        return None
    return constraints.topology[0].key


def _subset(nodes: Any, positions: list[int]) -> Any:
    """The nodes at ``positions`` (a NodeBatch of the same table, or a list)."""
    select = getattr(nodes, "select", None)
    if select is not None:
        return select(np.asarray(positions, dtype=np.int64))
    return [nodes[i] for i in positions]


def _domains_of_batch(nodes: Any, key: str, required: str | None) -> list[Placement]:
    """The placements of a NodeBatch from the table's label column of ``key``: the same as the
    node-by-node loop (domains in order of first appearance, nodes in the batch's order)."""
    table = nodes.table
    column = table.label_column(key)
    if column is None or not len(nodes):
        return []
    codes = column[nodes.rows]
    if required is not None:
        code = table.label_code(key, required)
        codes = np.where(codes == code, codes, -1) if code >= 0 else np.full_like(codes, -1)
    present = codes >= 0
    if not present.any():
        return []
    values, first = np.unique(codes[present], return_index=True)
    positions = np.flatnonzero(present)
    order = np.argsort(codes[present], kind="stable")  # each domain's positions, in the batch's order
    bounds = np.searchsorted(codes[present][order], values)
    ends = np.append(bounds[1:], len(order))
    names = table.label_values[key]
    out = []
    for i in np.argsort(first, kind="stable"):
        out.append(Placement(names[int(values[i])], nodes.select(positions[order[bounds[i]:ends[i]]])))
    return out


def new(args: Any, handle: fwk.Handle) -> TopologyPlacement:
    """Upstream ``New``: no args; the CompositePodGroup gate from the handle."""
    return TopologyPlacement(handle, feature_gates_of(handle).enabled(COMPOSITE_POD_GROUP))


__all__ = ["NAME", "TopologyPlacement", "new", "topology_key"]
