"""Cluster events the scheduling queue knows by name, and the helpers that match and label them
(upstream ``pkg/scheduler/framework/events.go``, v1.37.2, with ``ClusterEvent.Label``,
``MatchClusterEvents``, ``MatchAnyClusterEvent`` and ``ClusterEventIsWildCard`` of ``types.go``).

The event types themselves (:class:`~fastsched.framework.interface.ClusterEvent`,
:class:`~fastsched.framework.interface.ActionType`, :class:`~fastsched.framework.interface.EventResource`)
are in :mod:`fastsched.framework.interface`.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Iterable

from ..api.resources import requests_without_claim_statuses
from .interface import ActionType, ClusterEvent, EventResource

if TYPE_CHECKING:  # pragma: no cover
    from ..api.objects import Node, Pod

# Special event labels
SCHEDULE_ATTEMPT_FAILURE = "ScheduleAttemptFailure"
BACKOFF_COMPLETE = "BackoffComplete"
POP_FROM_BACKOFF_Q = "PopFromBackoffQ"
FORCE_ACTIVATE = "ForceActivate"
UNSCHEDULABLE_TIMEOUT = "UnschedulableTimeout"

EVENT_ASSIGNED_POD_ADD = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD)
EVENT_ASSIGNED_POD_UPDATE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE)
EVENT_ASSIGNED_POD_DELETE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE)
EVENT_UNSCHEDULED_POD_ADD = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD)
EVENT_UNSCHEDULED_POD_UPDATE = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE)
EVENT_UNSCHEDULED_POD_DELETE = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.DELETE)
EVENT_TARGET_POD_UPDATE = ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE)
EVENT_UNSCHEDULABLE_TIMEOUT = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, UNSCHEDULABLE_TIMEOUT)
EVENT_FORCE_ACTIVATE = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, FORCE_ACTIVATE)


def _resource(r: Any) -> str:
    return r.value if isinstance(r, EventResource) else str(r)


_ACTION_NAMES = {
    ActionType.ADD: "Add", ActionType.DELETE: "Delete", ActionType.UPDATE_NODE_ALLOCATABLE: "UpdateNodeAllocatable",
    ActionType.UPDATE_NODE_LABEL: "UpdateNodeLabel", ActionType.UPDATE_NODE_TAINT: "UpdateNodeTaint",
    ActionType.UPDATE_NODE_CONDITION: "UpdateNodeCondition",
    ActionType.UPDATE_NODE_ANNOTATION: "UpdateNodeAnnotation",
    ActionType.UPDATE_NODE_DECLARED_FEATURE: "UpdateNodeDeclaredFeature",
    ActionType.UPDATE_NODE_PREEMPTION_POLICY: "UpdateNodePreemptionPolicy", ActionType.UPDATE_POD_LABEL: "UpdatePodLabel",
    ActionType.UPDATE_POD_SCALE_DOWN: "UpdatePodScaleDown", ActionType.UPDATE_POD_SCALE_UP: "UpdatePodScaleUp",
    ActionType.UPDATE_POD_TOLERATIONS: "UpdatePodToleration",
    ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED: "UpdatePodSchedulingGatesEliminated",
    ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM: "UpdatePodGeneratedResourceClaim",
    ActionType.UPDATE: "Update", ActionType.ALL: "All",
}


def event_label(event: ClusterEvent) -> str:
    """Upstream ``ClusterEvent.Label()``: the custom label, else resource + action."""
    if event.label:
        return event.label
    a = ActionType(event.action_type)
    name = _ACTION_NAMES.get(a)
    if name is None:
        name = "|".join(_ACTION_NAMES.get(m, str(int(m))) for m in ActionType if m in a and m in _ACTION_NAMES
                        and m not in (ActionType.UPDATE, ActionType.ALL))
    return f"{_resource(event.resource)}{name}"


def cluster_event_is_wildcard(event: ClusterEvent) -> bool:
    """Upstream ``ClusterEventIsWildCard``: resource ``*`` and action All (any label)."""
    return _resource(event.resource) == "*" and int(event.action_type) == int(ActionType.ALL)


def _match_event_resources(registered: str, incoming: str) -> bool:
    """Upstream ``matchEventResources``: ``*`` matches every resource; ``Pod`` matches its three
    specific resources, ``AssignedPod``, ``UnscheduledPod`` and ``TargetPod``."""
    return (registered == "*" or registered == incoming
            or (registered == "Pod" and incoming in ("AssignedPod", "UnscheduledPod", "TargetPod")))


def match_cluster_events(registered: ClusterEvent, incoming: ClusterEvent) -> bool:
    """Upstream ``MatchClusterEvents``: ``incoming`` is the same as or more specific than ``registered``.

    A wildcard registration matches everything. Otherwise the resources must match (``*`` matches
    any resource; ``Pod`` matches ``AssignedPod``, ``UnscheduledPod`` and ``TargetPod``), the action bits must
    intersect, and ``incoming.action_type <= registered.action_type`` (so an incoming generic
    Update does not match a registration for one specific update). An incoming wildcard event only
    matches a wildcard registration.
    """
    if cluster_event_is_wildcard(registered):
        return True
    r_act, i_act = int(registered.action_type), int(incoming.action_type)
    return (_match_event_resources(_resource(registered.resource), _resource(incoming.resource))
            and (r_act & i_act) != 0 and i_act <= r_act)


def match_any_cluster_event(incoming: ClusterEvent, registered: Iterable[ClusterEvent]) -> bool:
    """Upstream ``MatchAnyClusterEvent``."""
    return any(match_cluster_events(e, incoming) for e in registered)


#: (resource, action) -> the one ClusterEvent for it: the properties-change events are built per
#: update, and the queue memoizes its answers per event object (by identity), so equal events
#: are the same object
_EVENTS: dict[tuple[EventResource, ActionType], ClusterEvent] = {}


def _event(resource: EventResource, action: ActionType) -> ClusterEvent:
    event = _EVENTS.get((resource, action))
    if event is None:
        event = _EVENTS[(resource, action)] = ClusterEvent(resource, action)
    return event


def pod_scheduling_properties_change(new_pod: Pod, old_pod: Pod, is_target_pod: bool = False) -> list[ClusterEvent]:
    """Upstream ``PodSchedulingPropertiesChange``: the specific Pod update events, else a generic Update.

    The resource is ``AssignedPod`` when the new pod has a node, else ``TargetPod`` when the
    update is the pod's own (``is_target_pod``: ``PriorityQueue.update``), else
    ``UnscheduledPod``. Checked in upstream's order: labels changed, a request scaled down (or
    removed), a request scaled up (or added), scheduling gates all removed, tolerations count
    changed, ``status.resourceClaimStatuses`` changed (UpdatePodGeneratedResourceClaim,
    DynamicResourceAllocation being locked on; ``extendedResourceClaimStatus`` is not modelled).
    """
    if new_pod.node_name:
        r = EventResource.ASSIGNED_POD
    elif is_target_pod:
        r = EventResource.TARGET_POD
    else:
        r = EventResource.UNSCHEDULED_POD
    actions = []
    # (the same object on both sides, as a status patch's copy shares them: equal, nothing to compare)
    if new_pod.labels is not old_pod.labels and dict(new_pod.labels) != dict(old_pod.labels):
        actions.append(ActionType.UPDATE_POD_LABEL)
    # extractPodScaleDown / extractPodScaleUp: PodRequests without the DRA node-allocatable claim
    # statuses (a status write by DynamicResources' PreBind or Unreserve is no resize)
    new_req, old_req = requests_without_claim_statuses(new_pod), requests_without_claim_statuses(old_pod)
    if new_req is not old_req:
        for name, old_v in old_req.items():
            if name not in new_req or old_v > new_req[name]:
                actions.append(ActionType.UPDATE_POD_SCALE_DOWN)
                break
        for name, new_v in new_req.items():
            if name not in old_req or new_v > old_req[name]:
                actions.append(ActionType.UPDATE_POD_SCALE_UP)
                break
    if not new_pod.scheduling_gates and old_pod.scheduling_gates:
        actions.append(ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    if len(new_pod.tolerations) != len(old_pod.tolerations):
        actions.append(ActionType.UPDATE_POD_TOLERATIONS)
    if tuple(new_pod.resource_claim_statuses) != tuple(old_pod.resource_claim_statuses):
        actions.append(ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM)  # DynamicResourceAllocation is on
    if not actions:
        actions.append(ActionType.UPDATE)
    return [_event(r, a) for a in actions]


def _conditions(node: Node) -> Any:
    """The node's ``status.conditions`` as its manifest has them (None without): fastsched's Node
    keeps no conditions (no plugin reads them), a node built in code has none."""
    status = (node.manifest or {}).get("status")
    return status.get("conditions") if isinstance(status, Mapping) else None


def _condition_statuses(conditions: Any) -> dict[Any, Any]:
    """``extractNodeConditionsChange``'s ``strip``: each condition type's status (the last entry
    of a type wins, as in upstream's map)."""
    return {c.get("type"): c.get("status") for c in conditions or () if isinstance(c, Mapping)}


def node_scheduling_properties_change(new_node: Node, old_node: Node) -> list[ClusterEvent]:
    """Upstream ``NodeSchedulingPropertiesChange`` (v1.37.2): one Node event per kind of change, in
    upstream's order: ``spec.unschedulable`` turned off (UpdateNodeTaint), allocatable, labels,
    taints, conditions' statuses (UpdateNodeCondition, read from the manifests: a kubelet's
    Ready flipping; heartbeat times are no change), annotations, declared features
    (NodeDeclaredFeatures, locked on); none when nothing a plugin reads changed. fastsched's Node
    has no preemption policy, so UpdateNodePreemptionPolicy never comes."""
    actions = []
    if new_node.unschedulable != old_node.unschedulable and not new_node.unschedulable:
        actions.append(ActionType.UPDATE_NODE_TAINT)
    if dict(old_node.allocatable) != dict(new_node.allocatable):
        actions.append(ActionType.UPDATE_NODE_ALLOCATABLE)
    if dict(old_node.labels) != dict(new_node.labels):
        actions.append(ActionType.UPDATE_NODE_LABEL)
    if old_node.taints != new_node.taints:
        actions.append(ActionType.UPDATE_NODE_TAINT)
    # (found by the differential class hints: a Ready condition flipping was no event at all, so
    # a plugin registering Node/Update, or every event, never heard of it)
    old_conditions, new_conditions = _conditions(old_node), _conditions(new_node)
    # (equal lists first: the strip only when something, perhaps a heartbeat time, differs)
    if old_conditions != new_conditions and _condition_statuses(old_conditions) != _condition_statuses(new_conditions):
        actions.append(ActionType.UPDATE_NODE_CONDITION)
    if dict(old_node.annotations) != dict(new_node.annotations):
        actions.append(ActionType.UPDATE_NODE_ANNOTATION)
    if tuple(old_node.declared_features) != tuple(new_node.declared_features):
        actions.append(ActionType.UPDATE_NODE_DECLARED_FEATURE)
    return [_event(EventResource.NODE, a) for a in actions]
