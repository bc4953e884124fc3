"""The NodePorts plugin: PreFilter, per-node and batch Filter."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Sequence

import numpy as np

from ...api import Pod
from ...framework.interface import FILTER_ADDITIVE
from ...framework import protocols as fwk
from ...framework.vectorized import VectorizedFilterPlugin, FilterVerdicts
from ...framework.columns import FILTER_EACH_CYCLE, FILTER_SKIPPED, ColumnForm
from ...framework.cycle_state import CycleState, NotFoundError
from ...framework.interface import (ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions,
                                    EventResource, PreFilterPlugin, QueueingHint)
from ...framework import signers
from ...framework.status import Code, Status, StatusError
from ...framework.types import HostPortInfo, PreFilterResult
from ..helper.typed import as_typed

if TYPE_CHECKING:  # pragma: no cover
    from ...framework.protocols import NodeTable

NAME = "NodePorts"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME

#: Filter reason when a wanted host port is in use on the node.
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"

#: (host_ip, protocol, host_port) with upstream's defaults applied ("0.0.0.0", "TCP").
HostPort = tuple[str, str, int]


class _PreFilterState(tuple):
    """The pod's wanted host ports; immutable, so ``clone`` shares it (as upstream does)."""

    def clone(self) -> "_PreFilterState":
        return self


def fits_ports(wanted: Iterable[HostPort], ports_in_use: HostPortInfo) -> bool:
    """Upstream ``fitsPorts``: no wanted port conflicts with the ports in use."""
    for ip, protocol, port in wanted:
        if ports_in_use.check_conflict(ip, protocol, port):
            return False
    return True


def fits(pod: Pod, node_info: fwk.NodeInfo) -> bool:
    """Upstream ``Fits``: the pod's host ports are all free on the node."""
    return fits_ports(pod.host_ports, node_info.used_ports)


def _read_wanted_ports(state: CycleState) -> Sequence[HostPort] | Status:
    try:
        return state.read(PRE_FILTER_STATE_KEY)
    except NotFoundError as e:
        # Upstream: fmt.Errorf("reading %q from cycleState: %w", key, ErrNotFound) as an Error status.
        return Status.from_error(StatusError(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: {e}'))


class NodePorts(PreFilterPlugin, VectorizedFilterPlugin, EnqueueExtensions):
    """Checks that the pod's host ports are free on the node (Unschedulable otherwise)."""

    #: the verdict reads the host ports the node's pods use: more pods never free a port
    #: (fastsched.framework.interface.FilterPlugin.filter_pod_dependence)
    filter_pod_dependence = FILTER_ADDITIVE

    def __init__(self, *, enable_scheduling_queue_hint: bool = True):
        self._queue_hints = enable_scheduling_queue_hint

    def name(self) -> str:
        return NAME

    # -- opportunistic batching ---------------------------------------------------------------------
    def sign_pod(self, pod: Pod) -> tuple[signers.Fragments | None, Status | None]:
        """Upstream ``SignPod``: the distinct host ports (not their protocols or IPs)."""
        return ((signers.HOST_PORTS_SIGNER, signers.host_ports_signer(pod)),), None

    #: the pod spec fields its column form and plan parts read (fastsched.framework.columns)
    column_reads = ("containers", "init_containers", "host_network")
    #: its column form and plan parts read no container's ``volume_mounts`` (compiled_cycle shares a plan
    #: between pods whose mounts alone differ)
    column_reads_mounts = False

    def column_named_resources(self, pod: "Pod") -> frozenset[str]:
        """None of the pod's resources by name: it reads the containers, not their resources."""
        return frozenset()

    def column_form(self, pod: Pod, table: NodeTable) -> ColumnForm | None:
        """The fused cycle's form: a pod without host ports is skipped at PreFilter; one with host
        ports depends on the ports the pods on each node use: its Filter runs each cycle (CYCLE)."""
        return FILTER_EACH_CYCLE if pod.host_ports else FILTER_SKIPPED

    def events_to_register(self) -> list[ClusterEventWithHint]:
        node_action = ActionType.ADD
        if not self._queue_hints:
            # Without queueing hints the preCheck may swallow Node/Add, so node updates count too.
            node_action |= ActionType.UPDATE_NODE_TAINT | ActionType.UPDATE_NODE_LABEL
        return [
            # Container ports are immutable: only a deleted assigned pod can free a port.
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE),
                                 self.is_schedulable_after_assigned_pod_deleted),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, node_action)),
        ]

    @staticmethod
    def is_schedulable_after_assigned_pod_deleted(pod: Pod, old_obj: Any, new_obj: Any) -> tuple[QueueingHint, Any]:
        """Upstream ``isSchedulableAfterAssignedPodDeleted`` (v1.37.2): Queue when the deleted pod
        was bound or nominated and used a host port the pod wants."""
        deleted, _, err = as_typed(Pod, "*v1.Pod", old_obj, None)
        if err is not None:
            return QueueingHint.QUEUE, err
        assert deleted is not None  # a delete
        if not deleted.node_name and not deleted.nominated_node_name:
            return QueueingHint.QUEUE_SKIP, None
        if not deleted.host_ports:
            return QueueingHint.QUEUE_SKIP, None
        in_use = HostPortInfo()
        for ip, protocol, port in deleted.host_ports:
            in_use.add(ip, protocol, port)
        if fits_ports(pod.host_ports, in_use):
            return QueueingHint.QUEUE_SKIP, None  # no port in common: the deletion frees none it wants
        return QueueingHint.QUEUE, None

    # -- PreFilter --------------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[fwk.NodeInfo]
                   ) -> tuple[PreFilterResult | None, Status | None]:
        wanted = pod.host_ports
        if not wanted:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(wanted))
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    # -- Filter -----------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: fwk.NodeInfo) -> Status | None:
        wanted = _read_wanted_ports(state)
        if isinstance(wanted, Status):
            return wanted
        if fits_ports(wanted, node_info.used_ports):
            return None
        return Status(Code.UNSCHEDULABLE, ERR_REASON)

    def filter_vectorized(self, state: CycleState, pod: Pod, nodes: fwk.NodeBatch) -> FilterVerdicts | Status:
        """Only nodes whose pods use host ports can conflict (``table.has_host_ports``).

        Those rows are checked one by one against their ``HostPortInfo`` (``table.ports[row]``): a
        Python loop, but over the few nodes running host-port pods, never over all candidates.
        """
        wanted = _read_wanted_ports(state)
        if isinstance(wanted, Status):
            return wanted
        table, rows = nodes.table, nodes.rows
        busy_positions = np.flatnonzero(table.has_host_ports[rows])  # (k,) positions in the batch
        conflict = np.zeros(len(rows), dtype=bool)  # (n,)
        ports = table.ports
        for position in busy_positions.tolist():
            in_use = ports[int(rows[position])]
            if in_use is not None and not fits_ports(wanted, in_use):
                conflict[position] = True
        return FilterVerdicts.from_mask(conflict, Code.UNSCHEDULABLE, ERR_REASON)


def new(args: Any, handle: fwk.Handle) -> NodePorts:
    """The plugin factory; NodePorts takes no args."""
    return NodePorts()
