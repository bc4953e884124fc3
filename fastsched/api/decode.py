"""Decoding API manifests into :mod:`fastsched.api` objects, kind by kind (no validation).

``parse_<kind>(manifest)`` turns one manifest (a mapping already decoded by :mod:`.schema`) into
its object, with the API server's defaulting (container requests from limits, pod-level requests,
host-network ports, node allocatable from capacity, ...); :data:`PARSERS` maps each kind to its
parser (the workload, storage and DRA kinds' parsers are in their modules). Kept apart from
:mod:`.load` (sources, documents, validation) so that validation can parse the pod template of a
workload (:mod:`.strategy`) without importing the loader that validates.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping

from ._manifest import (
    EMPTY_MAP,
    FrozenDict,
    as_bool,
    as_int,
    as_list,
    as_map,
    as_optional_str,
    as_str,
    as_string_map,
    as_string_tuple,
    as_timestamp,
    child_path,
    get_field,
)
from ._meta import int_or_string, list_of, nested, object_meta, toleration
from .errors import ManifestError
from .labels import LabelSelector, NodeSelector, PreferredSchedulingTerm
from .objects import (
    DEFAULT_SCHEDULER_NAME,
    PREEMPT_LOWER_PRIORITY,
    Affinity,
    Container,
    ContainerImage,
    ContainerPort,
    KubeObject,
    Namespace,
    Node,
    NodeAffinity,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodAntiAffinity,
    PodDisruptionBudget,
    PodSchedulingGroup,
    PriorityClass,
    ResourceRequirements,
    Taint,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
from .quantity import amount_from_nanos, parse_quantity, read_resource_list
from .resources import aggregate_container_request_nanos, is_pod_level_resource, node_allocatable_claim_nanos
from .workloads import WORKLOAD_PARSERS
from .storage import STORAGE_PARSERS
from .resource import RESOURCE_PARSERS
from .scheduling import SCHEDULING_PARSERS
from .compositepodgroup import COMPOSITE_POD_GROUP_PARSERS
from .runtimeclass import RUNTIME_CLASS_PARSERS

__all__ = ["PARSERS", "SUPPORTED_KINDS", "parse_namespace", "parse_node", "parse_pod",
           "parse_pod_disruption_budget", "parse_priority_class"]


# --------------------------------------------------------------------------------------------
# Shared pieces
#
# Parsers report field paths relative to the value they are given; a caller that knows where
# the value sits prefixes the path (ManifestError.nested_under) only when an error happens, so
# the common, error-free case builds no path strings.
# --------------------------------------------------------------------------------------------
def _label_selector(value: Any, path: str) -> LabelSelector | None:
    return None if value is None else LabelSelector.from_dict(value, path)


def _raw_map(value: Any) -> Mapping[str, Any]:
    return as_map(value, "")


def _frozen(mapping: dict) -> Mapping:
    return FrozenDict(mapping) if mapping else EMPTY_MAP


# --------------------------------------------------------------------------------------------
# Pods
# --------------------------------------------------------------------------------------------
def _container_port(value: Any, host_network: bool) -> ContainerPort:
    port = as_map(value, "")
    container_port = as_int(get_field(port, "containerPort"), "containerPort") or 0
    host_port = as_int(get_field(port, "hostPort"), "hostPort") or 0
    if host_network and host_port == 0:
        host_port = container_port  # defaultHostNetworkPorts
    return ContainerPort(
        container_port=container_port,
        host_port=host_port,
        host_ip=as_str(get_field(port, "hostIP"), "hostIP"),
        protocol=as_str(port.get("protocol"), "protocol") or "TCP",
        name=as_str(port.get("name"), "name"),
    )


def _host_network_port(value: Any) -> ContainerPort:
    return _container_port(value, True)


def _port(value: Any) -> ContainerPort:
    return _container_port(value, False)


def _container(value: Any, host_network: bool) -> Container:
    container = as_map(value, "")
    resources = as_map(container.get("resources"), "resources")
    if resources:
        requests, request_nanos = read_resource_list(resources.get("requests"), "resources.requests")
        limits, limit_nanos = read_resource_list(resources.get("limits"), "resources.limits")
        for name, amount in limits.items():  # SetDefaults_Pod: a missing request defaults to the limit
            if name not in requests:
                requests[name] = amount
                request_nanos[name] = limit_nanos[name]
    else:
        requests, request_nanos, limits = {}, {}, {}
    ports = container.get("ports")
    return Container(
        name=as_str(container.get("name"), "name"),
        image=as_str(container.get("image"), "image"),
        requests=_frozen(requests),
        limits=_frozen(limits),
        ports=() if ports is None else list_of(ports, "ports", _host_network_port if host_network else _port),
        restart_policy=as_optional_str(get_field(container, "restartPolicy"), "restartPolicy"),
        restart_policy_rules=list_of(get_field(container, "restartPolicyRules"), "restartPolicyRules", _raw_map),
        volume_mounts=_without_bind_mount_options(list_of(get_field(container, "volumeMounts"), "volumeMounts",
                                                          _raw_map)),
        exact_request_nanos=request_nanos,
    )


def _host_network_container(value: Any) -> Container:
    return _container(value, True)


def _regular_container(value: Any) -> Container:
    return _container(value, False)


def _pod_resources(value: Any, containers: tuple[Container, ...],
                   init_containers: tuple[Container, ...]) -> ResourceRequirements:
    resources = as_map(value, "")
    requests, request_nanos = read_resource_list(resources.get("requests"), "requests")
    limits, limit_nanos = read_resource_list(resources.get("limits"), "limits")
    if limits:
        # defaultPodRequests: with pod-level limits set, a missing pod-level cpu/memory request
        # defaults to the containers' aggregate request, then any missing supported request
        # defaults to the pod-level limit.
        for name, nanos in aggregate_container_request_nanos(containers, init_containers).items():
            if name not in requests and name in ("cpu", "memory"):
                requests[name] = amount_from_nanos(name, nanos)
                request_nanos[name] = nanos
        for name, amount in limits.items():
            if name not in requests and is_pod_level_resource(name):
                requests[name] = amount
                request_nanos[name] = limit_nanos[name]
    return ResourceRequirements(requests=_frozen(requests), limits=_frozen(limits), exact_request_nanos=request_nanos)


def _pod_affinity_term(value: Any) -> PodAffinityTerm:
    term = as_map(value, "")
    return PodAffinityTerm(
        topology_key=as_str(get_field(term, "topologyKey"), "topologyKey"),
        label_selector=_label_selector(get_field(term, "labelSelector"), "labelSelector"),
        namespaces=as_string_tuple(term.get("namespaces"), "namespaces"),
        namespace_selector=_label_selector(get_field(term, "namespaceSelector"), "namespaceSelector"),
        match_label_keys=as_string_tuple(get_field(term, "matchLabelKeys"), "matchLabelKeys"),
        mismatch_label_keys=as_string_tuple(get_field(term, "mismatchLabelKeys"), "mismatchLabelKeys"),
    )


def _weighted_pod_affinity_term(value: Any) -> WeightedPodAffinityTerm:
    term = as_map(value, "")
    return WeightedPodAffinityTerm(
        weight=as_int(term.get("weight"), "weight") or 0,
        pod_affinity_term=nested("podAffinityTerm", _pod_affinity_term, get_field(term, "podAffinityTerm")),
    )


_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def _pod_affinity_rules(value: Any, cls: type) -> Any:
    rules = as_map(value, "")
    return cls(
        required=list_of(get_field(rules, _REQUIRED), _REQUIRED, _pod_affinity_term),
        preferred=list_of(get_field(rules, _PREFERRED), _PREFERRED, _weighted_pod_affinity_term),
    )


def _node_affinity(value: Any) -> NodeAffinity:
    rules = as_map(value, "")
    required = get_field(rules, _REQUIRED)
    # Like upstream, the selector's lazy parse errors use paths relative to the selector.
    return NodeAffinity(
        required=None if required is None else nested(_REQUIRED, NodeSelector.from_dict, required),
        preferred=list_of(get_field(rules, _PREFERRED), _PREFERRED,
                           lambda item: PreferredSchedulingTerm.from_dict(item, "")),
    )


def _affinity(value: Any) -> Affinity:
    affinity = as_map(value, "")
    node_affinity = get_field(affinity, "nodeAffinity")
    pod_affinity = get_field(affinity, "podAffinity")
    pod_anti_affinity = get_field(affinity, "podAntiAffinity")
    return Affinity(
        node_affinity=None if node_affinity is None else nested("nodeAffinity", _node_affinity, node_affinity),
        pod_affinity=None if pod_affinity is None else nested(
            "podAffinity", lambda rules: _pod_affinity_rules(rules, PodAffinity), pod_affinity),
        pod_anti_affinity=None if pod_anti_affinity is None else nested(
            "podAntiAffinity", lambda rules: _pod_affinity_rules(rules, PodAntiAffinity), pod_anti_affinity),
    )


def _merge_label_keys(term: PodAffinityTerm, labels: Mapping[str, str]) -> PodAffinityTerm:
    """The API server's ``applyMatchLabelKeysAndMismatchLabelKeys`` (MatchLabelKeysInPodAffinity,
    on by default in v1.34): ``key In (value)`` for each matchLabelKeys key the pod has, ``key
    NotIn (value)`` for each mismatchLabelKeys key, added to a non-nil labelSelector. Applying it
    again to a pod read back from a cluster only repeats requirements, which changes no match."""
    selector = term.label_selector
    if selector is None or not (term.match_label_keys or term.mismatch_label_keys):
        return term
    added = [(key, "In", (labels[key],)) for key in term.match_label_keys if key in labels]
    added += [(key, "NotIn", (labels[key],)) for key in term.mismatch_label_keys if key in labels]
    if not added or selector.selects_nothing():
        return term
    merged = LabelSelector([*selector.requirements(), *added])
    return dataclasses.replace(term, label_selector=merged)


def _merge_affinity_label_keys(affinity: Affinity | None, labels: Mapping[str, str]) -> Affinity | None:
    """:func:`_merge_label_keys` over every pod (anti-)affinity term of ``affinity``."""
    if affinity is None or not any(
            term.match_label_keys or term.mismatch_label_keys
            for rules in (affinity.pod_affinity, affinity.pod_anti_affinity) if rules is not None
            for term in (*rules.required, *(weighted.pod_affinity_term for weighted in rules.preferred))):
        return affinity
    changed = {}
    for name in ("pod_affinity", "pod_anti_affinity"):
        rules = getattr(affinity, name)
        if rules is None:
            continue
        required = tuple(_merge_label_keys(term, labels) for term in rules.required)
        preferred = tuple(dataclasses.replace(weighted, pod_affinity_term=_merge_label_keys(
            weighted.pod_affinity_term, labels)) for weighted in rules.preferred)
        if required != rules.required or preferred != rules.preferred:
            changed[name] = type(rules)(required=required, preferred=preferred)
    return dataclasses.replace(affinity, **changed) if changed else affinity


def _topology_spread_constraint(value: Any) -> TopologySpreadConstraint:
    constraint = as_map(value, "")
    return TopologySpreadConstraint(
        max_skew=as_int(get_field(constraint, "maxSkew"), "maxSkew") or 0,
        topology_key=as_str(get_field(constraint, "topologyKey"), "topologyKey"),
        when_unsatisfiable=as_str(get_field(constraint, "whenUnsatisfiable"), "whenUnsatisfiable"),
        label_selector=_label_selector(get_field(constraint, "labelSelector"), "labelSelector"),
        min_domains=as_int(get_field(constraint, "minDomains"), "minDomains"),
        node_affinity_policy=as_optional_str(get_field(constraint, "nodeAffinityPolicy"), "nodeAffinityPolicy"),
        node_taints_policy=as_optional_str(get_field(constraint, "nodeTaintsPolicy"), "nodeTaintsPolicy"),
        match_label_keys=as_string_tuple(get_field(constraint, "matchLabelKeys"), "matchLabelKeys"),
    )


def _without_bind_mount_options(mounts: tuple[Mapping[str, Any], ...]) -> tuple[Mapping[str, Any], ...]:
    """The API server's create strategy (``pkg/api/pod/util.go``: ``dropDisabledFields``, v1.37.2)
    clears ``bindMountOptions`` while VolumeBindMountOptions (alpha) is off, as it is by default:
    the scheduler never sees them, and NodeDeclaredFeatures infers nothing from them."""
    if not any("bindMountOptions" in m for m in mounts):
        return mounts
    return tuple(_raw_map({k: v for k, v in m.items() if k != "bindMountOptions"}) for m in mounts)


def _optional_bool(value: Any, path: str) -> bool | None:
    return None if value is None else as_bool(value, path)


def _scheduling_group(value: Any) -> PodSchedulingGroup | None:
    if value is None:
        return None
    group = as_map(value, "spec.schedulingGroup")
    return PodSchedulingGroup(as_optional_str(get_field(group, "podGroupName"), "spec.schedulingGroup.podGroupName"))


def _scheduling_gate(value: Any) -> str:
    return as_str(as_map(value, "").get("name"), "name")


def parse_pod(obj: Mapping[str, Any]) -> Pod:
    """Build a Pod from a manifest dict (camelCase or client snake_case)."""
    meta = object_meta(obj, namespaced=True)
    spec = as_map(obj.get("spec"), "spec")
    status = as_map(obj.get("status"), "status")
    host_network = as_bool(get_field(spec, "hostNetwork"), "spec.hostNetwork")
    parse_container = _host_network_container if host_network else _regular_container
    containers = list_of(spec.get("containers"), "spec.containers", parse_container)
    init_containers = list_of(get_field(spec, "initContainers"), "spec.initContainers", parse_container)
    overhead, overhead_nanos = read_resource_list(spec.get("overhead"), "spec.overhead")
    resources = spec.get("resources")
    node_selector = get_field(spec, "nodeSelector")
    affinity = spec.get("affinity")
    return Pod(
        **meta,
        node_name=as_str(get_field(spec, "nodeName"), "spec.nodeName"),
        scheduler_name=as_str(get_field(spec, "schedulerName"), "spec.schedulerName") or DEFAULT_SCHEDULER_NAME,
        priority=as_int(spec.get("priority"), "spec.priority"),
        priority_class_name=as_str(get_field(spec, "priorityClassName"), "spec.priorityClassName"),
        preemption_policy=as_str(get_field(spec, "preemptionPolicy"), "spec.preemptionPolicy")
        or PREEMPT_LOWER_PRIORITY,
        containers=containers,
        init_containers=init_containers,
        overhead=_frozen(overhead),
        exact_overhead_nanos=overhead_nanos,
        resources=None if resources is None else nested(
            "spec.resources", lambda value: _pod_resources(value, containers, init_containers), resources),
        node_selector=None if node_selector is None else as_string_map(node_selector, "spec.nodeSelector"),
        affinity=None if affinity is None else _merge_affinity_label_keys(
            nested("spec.affinity", _affinity, affinity), meta["labels"]),
        tolerations=list_of(spec.get("tolerations"), "spec.tolerations", toleration),
        topology_spread_constraints=list_of(get_field(spec, "topologySpreadConstraints"),
                                             "spec.topologySpreadConstraints", _topology_spread_constraint),
        scheduling_gates=list_of(get_field(spec, "schedulingGates"), "spec.schedulingGates", _scheduling_gate),
        scheduling_group=_scheduling_group(get_field(spec, "schedulingGroup")),
        volumes=list_of(spec.get("volumes"), "spec.volumes", _raw_map),
        resource_claims=list_of(get_field(spec, "resourceClaims"), "spec.resourceClaims", _raw_map),
        host_network=host_network,
        host_users=_optional_bool(get_field(spec, "hostUsers"), "spec.hostUsers"),
        ephemeral_containers=list_of(get_field(spec, "ephemeralContainers"), "spec.ephemeralContainers",
                                     _regular_container),
        **pod_status_fields(status),
        node_allocatable_claim_nanos=node_allocatable_claim_nanos(
            list_of(get_field(status, "nodeAllocatableResourceClaimStatuses"),
                    "status.nodeAllocatableResourceClaimStatuses", _node_allocatable_claim_status)),
    )


def _optional_nanos(value: Any, path: str) -> int | None:
    return None if value is None else parse_quantity(value, path).nano_value()


def _node_allocatable_claim_status(value: Any) -> dict[str, Any]:
    """One ``nodeAllocatableResourceClaimStatuses`` entry as :func:`node_allocatable_claim_nanos`
    takes it (quantities in nano-units; a mapping without quantity contributes nothing)."""
    entry = as_map(value, "")
    mapping = []
    for i, m in enumerate(as_list(entry.get("mapping") or [], "mapping")):
        m = as_map(m, f"mapping[{i}]")
        nanos = _optional_nanos(m.get("quantity"), f"mapping[{i}].quantity")
        if nanos is not None:
            mapping.append((as_str(m.get("name"), f"mapping[{i}].name"), nanos))
    overhead = []
    for i, o in enumerate(as_list(entry.get("overhead") or [], "overhead")):
        o = as_map(o, f"overhead[{i}]")
        overhead.append((as_str(o.get("name"), f"overhead[{i}].name"),
                         _optional_nanos(get_field(o, "perPod"), f"overhead[{i}].perPod"),
                         _optional_nanos(get_field(o, "perContainer"), f"overhead[{i}].perContainer")))
    return {"containers": as_string_tuple(entry.get("containers"), "containers"), "mapping": mapping,
            "overhead": overhead}


def pod_status_fields(status: Mapping[str, Any]) -> dict[str, Any]:
    """The Pod fields read from ``status`` (a map), as constructor keywords: the part of a pod that
    pods stamped from one template do not share (:mod:`.templates` reads it per pod with this)."""
    return {
        "nominated_node_name": as_str(get_field(status, "nominatedNodeName"), "status.nominatedNodeName"),
        "phase": as_str(status.get("phase"), "status.phase"),
        "start_time": as_timestamp(get_field(status, "startTime"), "status.startTime"),
        "conditions": list_of(status.get("conditions"), "status.conditions", _raw_map),
        "resource_claim_statuses": list_of(get_field(status, "resourceClaimStatuses"),
                                           "status.resourceClaimStatuses", _raw_map),
    }


# --------------------------------------------------------------------------------------------
# Nodes and the small kinds
# --------------------------------------------------------------------------------------------
def _taint(value: Any) -> Taint:
    taint = as_map(value, "")
    return Taint(
        key=as_str(taint.get("key"), "key"),
        value=as_str(taint.get("value"), "value"),
        effect=as_str(taint.get("effect"), "effect"),
        time_added=as_timestamp(get_field(taint, "timeAdded"), "timeAdded"),
    )


def _container_image(value: Any) -> ContainerImage:
    image = as_map(value, "")
    return ContainerImage(
        names=as_string_tuple(image.get("names"), "names"),
        size_bytes=as_int(get_field(image, "sizeBytes"), "sizeBytes") or 0,
    )


def parse_node(obj: Mapping[str, Any]) -> Node:
    """Build a Node from a manifest dict (camelCase or client snake_case)."""
    meta = object_meta(obj, namespaced=False)
    spec = as_map(obj.get("spec"), "spec")
    status = as_map(obj.get("status"), "status")
    capacity, _ = read_resource_list(status.get("capacity"), "status.capacity")
    allocatable_value = status.get("allocatable")
    if allocatable_value is None:
        allocatable = capacity  # SetDefaults_NodeStatus
    else:
        allocatable, _ = read_resource_list(allocatable_value, "status.allocatable")
    return Node(
        **meta,
        taints=list_of(spec.get("taints"), "spec.taints", _taint),
        unschedulable=as_bool(spec.get("unschedulable"), "spec.unschedulable"),
        allocatable=_frozen(allocatable),
        capacity=_frozen(capacity),
        images=list_of(status.get("images"), "status.images", _container_image),
        declared_features=as_string_tuple(get_field(status, "declaredFeatures"), "status.declaredFeatures"),
    )


def parse_namespace(obj: Mapping[str, Any]) -> Namespace:
    """Build a Namespace from a manifest dict."""
    return Namespace(**object_meta(obj, namespaced=False))


def parse_priority_class(obj: Mapping[str, Any]) -> PriorityClass:
    """Build a PriorityClass from a manifest dict (its fields are top-level, not under spec)."""
    return PriorityClass(
        **object_meta(obj, namespaced=False),
        value=as_int(obj.get("value"), "value") or 0,
        global_default=as_bool(get_field(obj, "globalDefault"), "globalDefault"),
        preemption_policy=as_str(get_field(obj, "preemptionPolicy"), "preemptionPolicy") or PREEMPT_LOWER_PRIORITY,
        description=as_str(obj.get("description"), "description"),
    )


def _disrupted_pods(value: Any) -> Mapping[str, float | None]:
    path = "status.disruptedPods"
    disrupted = {}
    for pod, time in as_map(value, path).items():
        if type(pod) is not str:
            raise ManifestError(f"pod names must be strings, got {pod!r}", path)
        disrupted[pod] = as_timestamp(time, child_path(path, pod))
    return _frozen(disrupted)


def parse_pod_disruption_budget(obj: Mapping[str, Any]) -> PodDisruptionBudget:
    """Build a policy/v1 PodDisruptionBudget from a manifest dict."""
    meta = object_meta(obj, namespaced=True)
    spec = as_map(obj.get("spec"), "spec")
    status = as_map(obj.get("status"), "status")
    return PodDisruptionBudget(
        **meta,
        selector=_label_selector(spec.get("selector"), "spec.selector"),
        min_available=int_or_string(get_field(spec, "minAvailable"), "spec.minAvailable"),
        max_unavailable=int_or_string(get_field(spec, "maxUnavailable"), "spec.maxUnavailable"),
        disrupted_pods=_disrupted_pods(get_field(status, "disruptedPods")),
        disruptions_allowed=as_int(get_field(status, "disruptionsAllowed"), "status.disruptionsAllowed") or 0,
        current_healthy=as_int(get_field(status, "currentHealthy"), "status.currentHealthy") or 0,
        desired_healthy=as_int(get_field(status, "desiredHealthy"), "status.desiredHealthy") or 0,
        expected_pods=as_int(get_field(status, "expectedPods"), "status.expectedPods") or 0,
    )


PARSERS: dict[str, Callable[[Mapping[str, Any]], KubeObject]] = {
    "Pod": parse_pod,
    "Node": parse_node,
    "Namespace": parse_namespace,
    "PriorityClass": parse_priority_class,
    "PodDisruptionBudget": parse_pod_disruption_budget,
}
PARSERS.update(WORKLOAD_PARSERS)
PARSERS.update(STORAGE_PARSERS)
PARSERS.update(RESOURCE_PARSERS)
PARSERS.update(SCHEDULING_PARSERS)
PARSERS.update(COMPOSITE_POD_GROUP_PARSERS)
PARSERS.update(RUNTIME_CLASS_PARSERS)
#: The kinds :func:`load_objects` understands.
SUPPORTED_KINDS = tuple(PARSERS)
