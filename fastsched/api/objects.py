"""Typed views of the Kubernetes objects the scheduler reads.

Instances are immutable by convention: collections are tuples and read-only mappings, and the
way to change a field is :meth:`KubeObject.replace`, which returns a new object. Timestamps are
float seconds since the Unix epoch (UTC), or None when absent. Resource amounts are integers:
millicores for ``cpu`` and :meth:`Quantity.value` for everything else.

Build objects from manifests with ``Pod.from_manifest(...)`` and friends (see :mod:`.load`); the
constructors take already-typed values.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import struct
from dataclasses import InitVar, dataclass, field
from typing import Any, Callable, ClassVar, Iterable, Mapping

from .._kernels import _bind
from ._manifest import EMPTY_MAP, FrozenDict
from .labels import LabelSelector, NodeSelector, PreferredSchedulingTerm
from .quantity import nanos_from_amount
from .resources import non_zero_pod_requests, pod_requests

__all__ = [
    "OwnerReference",
    "ContainerPort",
    "Container",
    "ResourceRequirements",
    "Toleration",
    "Taint",
    "tolerations_tolerate_taint",
    "find_untolerated_taint",
    "NodeAffinity",
    "PodAffinityTerm",
    "WeightedPodAffinityTerm",
    "PodAffinity",
    "PodAntiAffinity",
    "Affinity",
    "TopologySpreadConstraint",
    "ContainerImage",
    "KubeObject",
    "Pod",
    "Node",
    "Namespace",
    "PriorityClass",
    "PodDisruptionBudget",
    "deterministic_uid",
    "DEFAULT_SCHEDULER_NAME",
    "PREEMPT_LOWER_PRIORITY",
    "PREEMPT_NEVER",
    "TAINT_EFFECT_NO_SCHEDULE",
    "TAINT_EFFECT_PREFER_NO_SCHEDULE",
    "TAINT_EFFECT_NO_EXECUTE",
    "LABEL_ZONE",
    "LABEL_REGION",
    "LABEL_HOSTNAME",
    "LABEL_METADATA_NAME",
]

DEFAULT_SCHEDULER_NAME = "default-scheduler"
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
PREEMPT_NEVER = "Never"
TAINT_EFFECT_NO_SCHEDULE = "NoSchedule"
TAINT_EFFECT_PREFER_NO_SCHEDULE = "PreferNoSchedule"
TAINT_EFFECT_NO_EXECUTE = "NoExecute"
LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"
LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_METADATA_NAME = "kubernetes.io/metadata.name"
_LABEL_ZONE_DEPRECATED = "failure-domain.beta.kubernetes.io/zone"
_LABEL_REGION_DEPRECATED = "failure-domain.beta.kubernetes.io/region"
_RESTART_POLICY_ALWAYS = "Always"
_BIND_ALL_HOST_IP = "0.0.0.0"
_DEFAULT_PROTOCOL = "TCP"


def _empty_map() -> Mapping[str, Any]:
    return EMPTY_MAP


def _read_only(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    """``mapping`` as a FrozenDict (copied unless it already is one)."""
    return mapping if type(mapping) is FrozenDict else FrozenDict(mapping)


# Namespace of the name-based UUIDs given to objects that come without metadata.uid.
_UID_NAMESPACE_BYTES = bytes.fromhex("6b0d5f8c2d8e5a1f9a3c6e2f1d4b7a90")


def deterministic_uid(kind: str, namespace: str, name: str) -> str:
    """A stable UID for an object without one: ``uuid5(namespace-uuid, "kind/namespace/name")``.

    Equal to ``str(uuid.uuid5(uuid.UUID(bytes=...), ...))``, computed without building UUID
    objects because loading many objects without UIDs calls this once per object.
    """
    digest = _sha1(_UID_NAMESPACE_BYTES + f"{kind}/{namespace}/{name}".encode()).hexdigest()
    # (the variant digit by table: int(..., 16) per call was a sixth of the function, which the
    # perf runner calls once per created pod)
    return f"{digest[:8]}-{digest[8:12]}-5{digest[13:16]}-{_UID_VARIANT[digest[16]]}{digest[17:20]}-{digest[20:32]}"


_sha1 = hashlib.sha1
#: RFC 4122's variant: the hex digit's two high bits set to 10
_UID_VARIANT = {c: "89ab"[int(c, 16) & 3] for c in "0123456789abcdef"}


# --------------------------------------------------------------------------------------------
# Small value types
# --------------------------------------------------------------------------------------------
@dataclass(slots=True, unsafe_hash=True)
class OwnerReference:
    kind: str
    name: str
    uid: str = ""
    controller: bool = False
    api_version: str = ""


@dataclass(slots=True, unsafe_hash=True)
class ContainerPort:
    """A container port; ``host_port`` 0 means the port is not exposed on the host."""

    container_port: int
    host_port: int = 0
    host_ip: str = ""
    protocol: str = _DEFAULT_PROTOCOL
    name: str = ""


def _nanos_of(amounts: Mapping[str, int]) -> dict[str, int]:
    return {name: nanos_from_amount(name, amount) for name, amount in amounts.items()}


@dataclass(slots=True, eq=True)
class Container:
    """A container (regular or init) with its resource amounts.

    :attr:`request_nanos` holds the requests in exact nano-units so that pod totals are summed
    before rounding, as upstream sums quantities. The loader passes them as
    ``exact_request_nanos``; otherwise they are derived from ``requests``.
    """

    name: str = ""
    image: str = ""
    requests: Mapping[str, int] = field(default_factory=_empty_map)
    limits: Mapping[str, int] = field(default_factory=_empty_map)
    ports: tuple[ContainerPort, ...] = ()
    restart_policy: str | None = None
    #: ``restartPolicyRules`` (raw ``{action, exitCodes}`` entries) and ``volumeMounts`` (raw
    #: entries): read by NodeDeclaredFeatures' inference (RestartAllContainersOnContainerExits,
    #: VolumeBindMountOptions)
    restart_policy_rules: tuple[Mapping[str, Any], ...] = ()
    volume_mounts: tuple[Mapping[str, Any], ...] = ()
    exact_request_nanos: InitVar[Mapping[str, int] | None] = None
    _request_nanos: Mapping[str, int] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self, exact_request_nanos: Mapping[str, int] | None) -> None:
        self.requests = _read_only(self.requests)
        self.limits = _read_only(self.limits)
        self._request_nanos = exact_request_nanos

    @property
    def request_nanos(self) -> Mapping[str, int]:
        """The requests in nano-units (cpu included: 1 core = 10**9)."""
        if self._request_nanos is None:
            self._request_nanos = _nanos_of(self.requests)
        return self._request_nanos

    @property
    def is_sidecar(self) -> bool:
        """True for a restartable init container (``restartPolicy: Always``).

        Only meaningful for init containers, where it marks a sidecar.
        """
        return self.restart_policy == _RESTART_POLICY_ALWAYS

    def replace(self, **changes: Any) -> "Container":
        """A copy with the given fields changed (exact request amounts kept if requests are)."""
        clone = dataclasses.replace(self, **changes)
        if "requests" not in changes:
            clone._request_nanos = self._request_nanos
        return clone

    def __hash__(self) -> int:
        # (the mounts' names too: pods that differ only in them, as the ServiceAccount admission's
        # ``kube-api-access-<random>`` mounts make every pod of a dump, would all collide, and the
        # scheduler's interning of equal specs (a dict of them) turned quadratic; a name that is
        # not a string counts as None, so that hashing never fails where equality would not)
        return hash((self.name, self.image,
                     tuple([n if type(n := m.get("name")) is str else None for m in self.volume_mounts])))


@dataclass(slots=True, eq=True)
class ResourceRequirements:
    """Pod-level ``spec.resources``: requests and limits as integer amounts (exact amounts as
    for :class:`Container`)."""

    requests: Mapping[str, int] = field(default_factory=_empty_map)
    limits: Mapping[str, int] = field(default_factory=_empty_map)
    exact_request_nanos: InitVar[Mapping[str, int] | None] = None
    _request_nanos: Mapping[str, int] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self, exact_request_nanos: Mapping[str, int] | None) -> None:
        self.requests = _read_only(self.requests)
        self.limits = _read_only(self.limits)
        self._request_nanos = exact_request_nanos

    @property
    def request_nanos(self) -> Mapping[str, int]:
        """The pod-level requests in nano-units."""
        if self._request_nanos is None:
            self._request_nanos = _nanos_of(self.requests)
        return self._request_nanos


@dataclass(slots=True, unsafe_hash=True)
class Taint:
    key: str
    value: str = ""
    effect: str = ""
    time_added: float | None = None


@dataclass(slots=True, unsafe_hash=True)
class Toleration:
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    def tolerates(self, taint: Taint) -> bool:
        """Upstream ``Toleration.ToleratesTaint`` (v1.34).

        The effect must be empty or equal; the key must be empty (any key) or equal; ``Exists``
        accepts any value, ``Equal`` (or empty) needs an equal value. Other operators tolerate
        nothing (Gt/Lt only exist behind a newer feature gate).
        """
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        operator = self.operator
        if operator == "Exists":
            return True
        if operator == "Equal" or not operator:
            return self.value == taint.value
        return False


def tolerations_tolerate_taint(tolerations: Iterable[Toleration], taint: Taint) -> bool:
    """Whether any of the tolerations tolerates the taint."""
    for toleration in tolerations:
        if toleration.tolerates(taint):
            return True
    return False


def find_untolerated_taint(taints: Iterable[Taint], tolerations: Iterable[Toleration],
                           effects: Iterable[str] | None = None) -> Taint | None:
    """The first taint (in node order) with an effect in ``effects`` that no toleration tolerates.

    ``effects`` None considers every taint. Mirrors ``FindMatchingUntoleratedTaint``.
    """
    wanted = None if effects is None else frozenset(effects)
    tolerations = tuple(tolerations)
    for taint in taints:
        if wanted is not None and taint.effect not in wanted:
            continue
        if not tolerations_tolerate_taint(tolerations, taint):
            return taint
    return None


@dataclass(slots=True, unsafe_hash=True)
class ContainerImage:
    """An image present on a node: all its names and its size."""

    names: tuple[str, ...] = ()
    size_bytes: int = 0


# --------------------------------------------------------------------------------------------
# Affinity and spreading
# --------------------------------------------------------------------------------------------
@dataclass(slots=True, unsafe_hash=True)
class NodeAffinity:
    """``required`` is None when the pod sets no required node affinity."""

    required: NodeSelector | None = None
    preferred: tuple[PreferredSchedulingTerm, ...] = ()


@dataclass(slots=True, unsafe_hash=True)
class PodAffinityTerm:
    """A pod (anti-)affinity term. ``label_selector`` and ``namespace_selector`` keep None (unset)
    distinct from an empty selector: upstream reads a nil selector as "nothing" and an empty one as
    "everything"."""

    topology_key: str = ""
    label_selector: LabelSelector | None = None
    namespaces: tuple[str, ...] = ()
    namespace_selector: LabelSelector | None = None
    match_label_keys: tuple[str, ...] = ()
    mismatch_label_keys: tuple[str, ...] = ()


@dataclass(slots=True, unsafe_hash=True)
class WeightedPodAffinityTerm:
    weight: int
    pod_affinity_term: PodAffinityTerm


@dataclass(slots=True, unsafe_hash=True)
class PodAffinity:
    """Pod affinity: required terms (all must hold) and weighted preferred terms."""

    required: tuple[PodAffinityTerm, ...] = ()
    preferred: tuple[WeightedPodAffinityTerm, ...] = ()


@dataclass(slots=True, unsafe_hash=True)
class PodAntiAffinity:
    """Pod anti-affinity: required terms and weighted preferred terms."""

    required: tuple[PodAffinityTerm, ...] = ()
    preferred: tuple[WeightedPodAffinityTerm, ...] = ()


@dataclass(slots=True, unsafe_hash=True)
class Affinity:
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAntiAffinity | None = None


@dataclass(slots=True, unsafe_hash=True)
class TopologySpreadConstraint:
    """A topology spread constraint; optional fields are None when unset (no defaulting here:
    upstream treats unset node_affinity_policy as Honor and node_taints_policy as Ignore)."""

    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: tuple[str, ...] = ()


# --------------------------------------------------------------------------------------------
# API objects
# --------------------------------------------------------------------------------------------
#: the loader behind ``KubeObject.from_manifest`` (:func:`fastsched.api.load.load_one`). The
#: loader decodes and validates into these classes, so it sits above this module; it registers
#: itself here when imported (``fastsched.api`` imports it, so it is set before any object can be
#: read) instead of this module importing it back.
_load_one: Callable[..., Any] | None = None


def register_loader(load_one: Callable[..., Any]) -> None:
    """Called once by :mod:`fastsched.api.load`: the function ``from_manifest`` reads with."""
    global _load_one
    _load_one = load_one


def _loader() -> Callable[..., Any]:
    if _load_one is None:  # only when this module is imported without its package (never in use)
        raise RuntimeError("fastsched.api.load is not imported: import fastsched.api first")
    return _load_one


@dataclass(slots=True, kw_only=True, eq=False)
class KubeObject:
    """Object metadata shared by every API object, plus the manifest it was read from.

    A missing ``uid`` is replaced by :func:`deterministic_uid` of kind, namespace and name.
    ``generate_name`` is ``metadata.generateName``: an object read with it and without a name gets
    its name when it is added to a :class:`~fastsched.Scheduler` (the API server's part).
    ``manifest`` is the input mapping as given (camelCase API form, or the snake_case dict of a
    kubernetes-client model); do not mutate it. It is empty for objects built in code.
    """

    KIND: ClassVar[str] = ""

    name: str = ""
    namespace: str = ""
    uid: str = ""
    generate_name: str = ""
    labels: Mapping[str, str] = field(default_factory=_empty_map)
    annotations: Mapping[str, str] = field(default_factory=_empty_map)
    creation_timestamp: float | None = None
    deletion_timestamp: float | None = None
    owner_references: tuple[OwnerReference, ...] = ()
    manifest: Mapping[str, Any] = field(default_factory=_empty_map, repr=False, compare=False)
    #: Whether the API server's part (validation) was done, or skipped on purpose (test objects):
    #: set by the loader and the Scheduler, reset by :meth:`replace`, so the Scheduler validates
    #: an object built or changed in code once.
    admitted: bool = field(default=False, init=False, repr=False, compare=False)
    #: How the loader decoded it: ``(gates, validate)``, the feature gates set away from v1.37.2's
    #: defaults (a frozenset of (name, value)) and whether it validated, and the document it was
    #: decoded from when that is not ``manifest`` (disabled gates' fields dropped from it). A
    #: Scheduler whose API server has other gates checks that they decode the object the same way
    #: (:func:`fastsched.api.load.check_decoded_gates`). None for objects built in code; kept by
    #: :meth:`replace` while the manifest is the same.
    decoded_under: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.uid and self.name:
            self.uid = deterministic_uid(self.KIND, self.namespace, self.name)
        self.labels = _read_only(self.labels)
        self.annotations = _read_only(self.annotations)

    @classmethod
    def from_manifest(cls, source: Any, *, strict: bool = False, validate: bool = True,
                      feature_gates: Mapping[str, bool] | None = None):
        """Build from a dict, YAML/JSON text, a file path, an API client's object (kubernetes
        client, lightkube, kr8s, pydantic), or an instance (returned as is); decoded and validated
        as the API server does (unknown fields: a warning, an error with ``strict``;
        ``validate=False`` skips validation, for test objects; ``feature_gates``: the API server's,
        v1.37.2's defaults when None). See :mod:`fastsched.api.load`."""
        return _loader()(cls, source, strict=strict, validate=validate, feature_gates=feature_gates)

    @property
    def key(self) -> str:
        """``namespace/name`` (just ``name`` for cluster-scoped objects)."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @property
    def is_terminating(self) -> bool:
        """Whether the object has a deletion timestamp."""
        return self.deletion_timestamp is not None

    def replace(self, **changes: Any):
        """A copy with the given fields changed (derived caches are recomputed lazily)."""
        return self._keep_decoded_under(dataclasses.replace(self, **changes), changes)

    def _keep_decoded_under(self, clone: Any, changes: Mapping[str, Any]) -> Any:
        # the copy's manifest is still decoded under the same gates: a Scheduler with others
        # checks it as the original (fastsched.api.load.check_decoded_gates)
        if "manifest" not in changes:
            clone.decoded_under = self.decoded_under
        return clone

    def _comparable_fields(self) -> tuple:
        return tuple(getattr(self, f.name) for f in dataclasses.fields(self) if f.compare)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._comparable_fields() == other._comparable_fields()

    def __hash__(self) -> int:
        return hash((self.KIND, self.uid))


@dataclass(frozen=True, slots=True)
class PodSchedulingGroup:
    """``spec.schedulingGroup`` of a pod (``core/v1`` ``PodSchedulingGroup``, a one-of with one
    member): ``podGroupName`` names a PodGroup of the pod's namespace (None when the manifest gives
    ``schedulingGroup: {}``, which validation refuses)."""

    pod_group_name: str | None = None


@dataclass(slots=True, kw_only=True, eq=False)
class Pod(KubeObject):
    """A pod as the scheduler reads it.

    ``priority`` is the raw ``spec.priority`` (None when unset); :attr:`effective_priority` is
    upstream's ``PodPriority``. ``node_selector`` is None when the manifest has none (upstream
    distinguishes a nil map from an empty one). ``volumes``, ``resource_claims`` and
    ``conditions`` are the raw manifest entries.
    """

    KIND: ClassVar[str] = "Pod"

    namespace: str = "default"
    # spec
    node_name: str = ""
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    priority: int | None = None
    priority_class_name: str = ""
    preemption_policy: str = PREEMPT_LOWER_PRIORITY
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    overhead: Mapping[str, int] = field(default_factory=_empty_map)
    resources: ResourceRequirements | None = None
    node_selector: Mapping[str, str] | None = None
    affinity: Affinity | None = None
    tolerations: tuple[Toleration, ...] = ()
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...] = ()
    scheduling_gates: tuple[str, ...] = ()
    #: ``spec.schedulingGroup`` (GenericWorkload; dropped on create with the gate off): the
    #: PodGroup the pod is scheduled with, see :attr:`pod_group_name`
    scheduling_group: PodSchedulingGroup | None = None
    volumes: tuple[Mapping[str, Any], ...] = ()
    resource_claims: tuple[Mapping[str, Any], ...] = ()
    host_network: bool = False
    #: ``spec.hostUsers`` (None when unset: the pod uses the host's user namespace)
    host_users: bool | None = None
    #: ``spec.ephemeralContainers``: never counted in requests; NodeDeclaredFeatures reads their mounts
    ephemeral_containers: tuple[Container, ...] = ()
    # status
    nominated_node_name: str = ""
    phase: str = ""
    start_time: float | None = None
    conditions: tuple[Mapping[str, Any], ...] = ()
    #: ``status.resourceClaimStatuses`` (raw ``{name, resourceClaimName}`` entries): the claims the
    #: resourceclaim controller created from templates
    resource_claim_statuses: tuple[Mapping[str, Any], ...] = ()
    #: ``status.nodeAllocatableResourceClaimStatuses`` summed per resource, in nano-units
    #: (DRANodeAllocatableResources: node-allocatable resources a DRA driver's devices stand for,
    #: ``addDRANodeAllocatableClaimResources``); counted in :attr:`requests`. Empty unless the gate
    #: is on: the status is dropped on create without it
    node_allocatable_claim_nanos: Mapping[str, int] = field(default_factory=_empty_map)
    # the overhead in exact nano-units, as the loader read it (see Container)
    exact_overhead_nanos: InitVar[Mapping[str, int] | None] = None
    _overhead_nanos: Mapping[str, int] | None = field(default=None, init=False, repr=False, compare=False)
    # lazily computed request totals
    _requests: Mapping[str, int] | None = field(default=None, init=False, repr=False, compare=False)
    _non_zero_requests: Mapping[str, int] | None = field(default=None, init=False, repr=False, compare=False)
    _scoring_requests: Mapping[str, int] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self, exact_overhead_nanos: Mapping[str, int] | None) -> None:
        KubeObject.__post_init__(self)
        self.overhead = _read_only(self.overhead)
        self.node_allocatable_claim_nanos = _read_only(self.node_allocatable_claim_nanos)
        self._overhead_nanos = exact_overhead_nanos
        if self.node_selector is not None:
            self.node_selector = _read_only(self.node_selector)

    @property
    def pod_group_name(self) -> str | None:
        """The PodGroup this pod belongs to (``spec.schedulingGroup.podGroupName``), or None."""
        group = self.scheduling_group
        return None if group is None else group.pod_group_name

    @property
    def overhead_nanos(self) -> Mapping[str, int]:
        """``spec.overhead`` in nano-units."""
        if self._overhead_nanos is None:
            self._overhead_nanos = _nanos_of(self.overhead)
        return self._overhead_nanos

    def replace(self, **changes: Any) -> "Pod":
        """A copy with the given fields changed; request totals are recomputed lazily."""
        clone = dataclasses.replace(self, **changes)
        if "overhead" not in changes:
            clone._overhead_nanos = self._overhead_nanos
        return self._keep_decoded_under(clone, changes)

    @property
    def effective_priority(self) -> int:
        """Upstream ``corev1helpers.PodPriority``: ``spec.priority``, or 0 when unset."""
        return 0 if self.priority is None else self.priority

    @property
    def requests(self) -> Mapping[str, int]:
        """Effective requests with overhead and without the non-zero defaults (cached).

        What NodeInfo adds to ``Requested`` and what NodeResourcesFit filters on.
        """
        if self._requests is None:
            self._requests = FrozenDict(pod_requests(self))
        return self._requests

    @property
    def non_zero_requests(self) -> Mapping[str, int]:
        """Requests with the scheduler's cpu/memory defaults for missing requests, with overhead
        (cached); the rule of NodeInfo's ``NonZeroRequested`` (see :func:`non_zero_pod_requests`)."""
        if self._non_zero_requests is None:
            self._non_zero_requests = FrozenDict(non_zero_pod_requests(self))
        return self._non_zero_requests

    @property
    def scoring_requests(self) -> Mapping[str, int]:
        """Requests as NodeResourcesFit scoring computes them for the incoming pod: defaults
        applied to every container missing cpu/memory, then pod-level overrides, with overhead
        (cached). Differs from :attr:`non_zero_requests` only when pod-level requests are set."""
        if self._scoring_requests is None:
            self._scoring_requests = FrozenDict(pod_requests(self, non_missing_defaults=True))
        return self._scoring_requests

    @property
    def images(self) -> tuple[str, ...]:
        """Container images, init containers first, one entry per container."""
        return tuple(c.image for c in self.init_containers) + tuple(c.image for c in self.containers)

    @property
    def host_ports(self) -> tuple[tuple[str, str, int], ...]:
        """``(host_ip, protocol, host_port)`` of every port with hostPort > 0 (upstream
        ``GetHostPorts``): sidecar init containers first, then regular containers; host_ip
        defaults to 0.0.0.0 and protocol to TCP."""
        ports: list[tuple[str, str, int]] = []
        for container in self.init_containers:
            if container.restart_policy == _RESTART_POLICY_ALWAYS:
                ports.extend(_host_ports(container))
        for container in self.containers:
            ports.extend(_host_ports(container))
        return tuple(ports)

    @property
    def has_pvc_or_ephemeral_volumes(self) -> bool:
        """Whether a volume is a persistentVolumeClaim or a generic ephemeral volume."""
        for volume in self.volumes:
            if (volume.get("persistentVolumeClaim") is not None or volume.get("ephemeral") is not None
                    or volume.get("persistent_volume_claim") is not None):
                return True
        return False

    def with_tolerations(self, tolerations: tuple["Toleration", ...]) -> "Pod":
        """A copy with ``spec.tolerations`` replaced (admission's DefaultTolerationSeconds); every
        other field, the cached request totals included, is shared with this pod (a field copy,
        as :meth:`with_node_name`). The manifest stays the one read."""
        clone = _field_copier(type(self))(self)
        clone.tolerations = tuple(tolerations)
        return clone

    def stamped(self, *, name: str, uid: str, node_name: str, creation_timestamp: float | None,
                manifest: Mapping[str, Any]) -> "Pod":
        """A pod of the same template (:mod:`fastsched.api.templates`): this pod's fields but its
        identity (``uid`` empty: the deterministic uid of the new name, as ``__post_init__`` makes
        it, or none without a name), node name, creation time and manifest. Every other field and the cached request totals
        are shared (a field copy, as :meth:`with_node_name`: ``replace`` would run ``__init__`` and
        re-wrap fields that are already read-only, a seventh of ``add_pods``)."""
        clone = _field_copier(type(self))(self)
        clone.name = name
        clone.uid = uid or (deterministic_uid(self.KIND, self.namespace, name) if name else "")
        clone.node_name = node_name
        clone.creation_timestamp = creation_timestamp
        clone.manifest = manifest
        return clone

    def with_status(self, **changes: Any) -> "Pod":
        """``replace(**changes)`` when every change is one of the status fields the scheduler's
        failure handler patches (``nominated_node_name``, ``conditions``: nothing ``__init__``
        normalizes, no cached total reads): a field copy as :meth:`with_node_name`, every other
        field, the cached request totals and the manifest shared (``replace`` ran ``__init__``
        over every field: ~3% of PreemptionBasic, one patch per failed attempt). Else ``replace``."""
        if not _PATCHED_STATUS_FIELDS.issuperset(changes):
            return self.replace(**changes)
        clone = _field_copier(type(self))(self)
        clone.admitted = False  # (as replace's __init__ leaves it)
        for name, value in changes.items():
            setattr(clone, name, value)
        return clone

    def with_resource_claim_statuses(self, statuses: tuple[Mapping[str, Any], ...],
                                     manifest: Mapping[str, Any]) -> "Pod":
        """The pod with ``status.resourceClaimStatuses`` written (the resourceclaim controller's
        claims from templates) and ``manifest``: what ``replace(resource_claim_statuses=...,
        manifest=...)`` gives (no ``decoded_under``: the manifest changed), ``admitted`` kept. A
        field copy sharing the cached request totals, which the statuses do not enter: ``replace``
        re-ran ``__init__`` and the queue's PodInfo then summed the requests again (~a fifth of
        adding a claim-template pod)."""
        clone = _field_copier(type(self))(self)
        clone.resource_claim_statuses = statuses
        clone.manifest = manifest
        clone.decoded_under = None
        return clone

    def with_node_name(self, node_name: str) -> "Pod":
        """A copy bound to ``node_name``; its manifest copy has ``spec.nodeName`` set too.

        Every other field, the cached request totals included, is shared with this pod: a field
        copy, without re-running ``__init__`` (this is on the scheduler's assume path)."""
        clone = _field_copier(type(self))(self)
        clone.node_name = node_name
        clone.manifest = _manifest_with_node_name(self.manifest, node_name)
        return clone


#: what :meth:`Pod.with_status` copies without ``replace``
_PATCHED_STATUS_FIELDS = frozenset({"nominated_node_name", "conditions"})


def _host_ports(container: Container) -> Iterable[tuple[str, str, int]]:
    for port in container.ports:
        if port.host_port > 0:
            yield (port.host_ip or _BIND_ALL_HOST_IP, port.protocol or _DEFAULT_PROTOCOL, port.host_port)


@functools.lru_cache(maxsize=None)
def _stored_fields(cls: type) -> tuple[str, ...]:
    """The names of every stored dataclass field of ``cls`` (init=False ones included)."""
    return tuple(f.name for f in dataclasses.fields(cls))


def _layout_is_fields(cls: type, names: tuple[str, ...]) -> bool:
    """Whether an instance of ``cls`` is its header and one object pointer per stored field and
    nothing else: every class of its MRO but ``object`` a Python class with ``__slots__`` naming
    exactly those fields, no ``__dict__``, no weak references, no variable part. Then
    ``_bind.copy_slots`` copies it as the generated copier does."""
    slots: list[str] = []
    for c in cls.__mro__[:-1]:
        declared = c.__dict__.get("__slots__")
        if declared is None or not c.__flags__ & _HEAP_TYPE:
            return False
        slots += [declared] if isinstance(declared, str) else list(declared)
    return (cls.__mro__[-1] is object and cls.__dictoffset__ == 0 and cls.__weakrefoffset__ == 0
            and cls.__itemsize__ == 0 and sorted(slots) == sorted(names)
            and cls.__basicsize__ == object.__basicsize__ + len(names) * _POINTER_SIZE)


_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement
_POINTER_SIZE = struct.calcsize("P")


@functools.lru_cache(maxsize=None)
def _make_field_copier(cls: type) -> Callable[[Any], Any]:
    """A function returning a field-for-field copy of a ``cls`` instance without calling
    ``__init__``: for a class whose layout is its fields' slots alone (``Pod``), the compiled
    slot copy (``_bind.copy_slots``; ``with_node_name`` ~1.4-1.9 -> ~0.8-1.1 µs a call at load ~8,
    on the assume path and the loader's stamp); else straight-line code, one attribute copy per stored field, generated once
    per class (about 3x faster than a getattr/setattr loop over the fields)."""
    names = _stored_fields(cls)
    if _layout_is_fields(cls, names):
        return _bind.copy_slots
    if not all(name.isidentifier() for name in names):  # pragma: no cover - dataclass fields always are
        raise TypeError(f"cannot generate a copier for {cls.__name__}")
    lines = ["def copy(self):", "    clone = new(cls)"]
    lines += [f"    clone.{name} = self.{name}" for name in names]
    lines.append("    return clone")
    namespace: dict[str, Any] = {"new": object.__new__, "cls": cls}
    exec("\n".join(lines), namespace)  # noqa: S102 - the source is built from field names only
    return namespace["copy"]


# the cache keyed by class, typed as taking any class: mypy checks a class object against
# lru_cache's Hashable by the class's own (unbound) ``__hash__`` and refuses Pod, which defines one
_field_copier: Callable[[type], Callable[[Any], Any]] = _make_field_copier


def _manifest_with_node_name(manifest: Mapping[str, Any], node_name: str) -> Mapping[str, Any]:
    if not manifest:
        return manifest
    updated = dict(manifest)
    spec = dict(manifest.get("spec") or {})
    snake_case = "node_name" in spec and "nodeName" not in spec
    spec["node_name" if snake_case else "nodeName"] = node_name
    updated["spec"] = spec
    return updated


@dataclass(slots=True, kw_only=True, eq=False)
class Node(KubeObject):
    """A node: labels, taints, schedulability and resources (integer amounts)."""

    KIND: ClassVar[str] = "Node"

    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    allocatable: Mapping[str, int] = field(default_factory=_empty_map)
    capacity: Mapping[str, int] = field(default_factory=_empty_map)
    images: tuple[ContainerImage, ...] = ()
    #: ``status.declaredFeatures`` (NodeDeclaredFeatures, GA in v1.37): the features the node's
    #: kubelet declares, kept in the node's order (the kubelet writes them sorted)
    declared_features: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        KubeObject.__post_init__(self)
        self.allocatable = _read_only(self.allocatable)
        self.capacity = _read_only(self.capacity)

    @property
    def zone(self) -> str:
        """``topology.kubernetes.io/zone`` (or the deprecated beta label), "" when unlabelled."""
        return self.labels.get(LABEL_ZONE) or self.labels.get(_LABEL_ZONE_DEPRECATED, "")

    @property
    def region(self) -> str:
        """``topology.kubernetes.io/region`` (or the deprecated beta label), "" when unlabelled."""
        return self.labels.get(LABEL_REGION) or self.labels.get(_LABEL_REGION_DEPRECATED, "")

    @property
    def allowed_pod_number(self) -> int:
        """``allocatable.pods`` (0 when absent)."""
        return self.allocatable.get("pods", 0)


@dataclass(slots=True, kw_only=True, eq=False)
class Namespace(KubeObject):
    """A namespace; its labels are what namespaceSelectors match.

    Like the API server, it always carries the ``kubernetes.io/metadata.name: <name>`` label.
    """

    KIND: ClassVar[str] = "Namespace"

    namespace: str = ""

    def __post_init__(self) -> None:
        KubeObject.__post_init__(self)
        if self.name and self.labels.get(LABEL_METADATA_NAME) != self.name:
            self.labels = FrozenDict({**self.labels, LABEL_METADATA_NAME: self.name})


@dataclass(slots=True, kw_only=True, eq=False)
class PriorityClass(KubeObject):
    KIND: ClassVar[str] = "PriorityClass"

    value: int = 0
    global_default: bool = False
    preemption_policy: str = PREEMPT_LOWER_PRIORITY
    description: str = ""


#: kube-apiserver's system PriorityClasses (pkg/apis/scheduling/v1 systemPriorityClasses), which it
#: creates when it starts (pkg/registry/scheduling/rest AddSystemPriorityClasses): they exist in
#: every cluster, added or not (see ``Cluster.priority_class``)
def _system_priority_class(name: str, value: int, description: str) -> PriorityClass:
    """A system PriorityClass as the API server serves it: created through its REST storage, so
    defaulted (``preemptionPolicy``), ``globalDefault`` false (omitted)."""
    return PriorityClass(name=name, value=value, description=description, manifest={
        "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
        "value": value, "description": description, "preemptionPolicy": PREEMPT_LOWER_PRIORITY})


SYSTEM_PRIORITY_CLASSES: Mapping[str, PriorityClass] = {
    pc.name: pc for pc in (
        _system_priority_class("system-node-critical", 2_000_001_000,
                               "Used for system critical pods that must not be moved from their current node."),
        _system_priority_class("system-cluster-critical", 2_000_000_000,
                               "Used for system critical pods that must run in the cluster, but can be moved to "
                               "another node if necessary."),
    )
}


@dataclass(slots=True, kw_only=True, eq=False)
class PodDisruptionBudget(KubeObject):
    """A policy/v1 PodDisruptionBudget.

    ``selector`` None selects no pods, an empty selector selects every pod of the namespace.
    ``min_available`` / ``max_unavailable`` are an int, a percentage string such as ``"50%"``,
    or None. ``disrupted_pods`` maps pod names to the time their eviction was processed.
    """

    KIND: ClassVar[str] = "PodDisruptionBudget"

    namespace: str = "default"
    selector: LabelSelector | None = None
    min_available: int | str | None = None
    max_unavailable: int | str | None = None
    disrupted_pods: Mapping[str, float | None] = field(default_factory=_empty_map)
    disruptions_allowed: int = 0
    current_healthy: int = 0
    desired_healthy: int = 0
    expected_pods: int = 0

    def __post_init__(self) -> None:
        KubeObject.__post_init__(self)
        self.disrupted_pods = _read_only(self.disrupted_pods)
