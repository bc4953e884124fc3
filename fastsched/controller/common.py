"""Pieces shared by the controllers (upstream ``pkg/controller/controller_utils.go``,
``controller_ref_manager.go``, ``pkg/api/v1/pod/util.go``).

* :class:`Changes`, :class:`ClusterView`, :class:`ControllerOptions` and the per-reconcile
  :class:`Context` (name generation that skips names already taken or created in this pass);
* owner references (``metav1.NewControllerRef``) and ownership claims
  (``BaseControllerRefManager.ClaimObject``: keep owned matching objects, adopt matching orphans,
  release owned objects whose labels no longer match);
* ``GetPodFromTemplate`` / ``getPodsPrefix`` as manifest builders;
* pod predicates (``IsPodActive``, ``IsPodReady``, ``IsPodAvailable``) and the two orderings the
  controllers use to pick pods to delete (``ActivePods`` and ``ActivePodsWithRanks``);
* ``ComputeHash`` (see :func:`compute_hash` for how it differs from upstream's).
"""
from __future__ import annotations

import copy
import functools
import json
import math
import re
import struct
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Literal, Mapping, Protocol, Sequence, TypeVar, cast, overload

from ..api import KubeObject, Node, OwnerReference, Pod
from ..api._manifest import as_timestamp, get_field
from ..api.labels import LabelSelector
from ..api.names import NameGenerator, safe_encode_string
from ..api.workloads import WORKLOAD_API_VERSIONS, WORKLOAD_PARSERS

__all__ = [
    "Changes",
    "ClusterView",
    "ControllerOptions",
    "Context",
    "controller_ref",
    "controller_of",
    "pods_prefix",
    "pod_from_template",
    "is_pod_active",
    "is_pod_terminal",
    "is_pod_ready",
    "is_pod_available",
    "claim",
    "with_owner_references",
    "sort_active_pods",
    "sort_active_pods_with_ranks",
    "compute_hash",
    "fnv32",
    "fnv32a",
    "scaled_value",
]

POD_SUCCEEDED = "Succeeded"
POD_FAILED = "Failed"
POD_RUNNING = "Running"
POD_PENDING = "Pending"
POD_UNKNOWN = "Unknown"
#: ``core.PodDeletionCost``.
ANNOTATION_POD_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"


# --------------------------------------------------------------------------------------------
# Interface
# --------------------------------------------------------------------------------------------
@dataclass
class Changes:
    """What one reconcile pass would do.

    * ``create_pods``: complete pod manifests (camelCase): ``metadata.name``, ``generateName``,
      ``namespace``, ``labels``, ``annotations``, ``finalizers`` (when any), ``ownerReferences``
      and the ``spec`` from the template; no ``uid`` and no ``status``.
    * ``delete_pods``: pods the controller deletes (scale down, pods on nodes that no longer
      qualify, finished StatefulSet pods, ...).
    * ``adopt_pods`` / ``release_pods``: existing pods whose ownerReferences the controller
      patches (orphans adopted, owned pods that no longer match released), given as they are
      *after* the patch: replace the stored pod with the same uid.
    * ``create_objects``: child workloads (a Deployment's ReplicaSet, a CronJob's Job), built
      with this module's parsers, manifests included.
    * ``update_objects``: workloads changed in place (ReplicaSets scaled, adopted or released),
      as they are after the change.
    * ``delete_objects``: workloads the controller deletes (a CronJob's running Jobs under
      ``concurrencyPolicy: Replace``).
    * ``create_manifests``: objects of kinds fastsched does not model, as raw manifests (a
      StatefulSet's PersistentVolumeClaims).
    """

    create_pods: list[dict] = field(default_factory=list)
    delete_pods: list[Pod] = field(default_factory=list)
    create_objects: list[KubeObject] = field(default_factory=list)
    update_objects: list[KubeObject] = field(default_factory=list)
    adopt_pods: list[Pod] = field(default_factory=list)
    release_pods: list[Pod] = field(default_factory=list)
    delete_objects: list[KubeObject] = field(default_factory=list)
    create_manifests: list[dict] = field(default_factory=list)

    def extend(self, other: "Changes") -> "Changes":
        """Append every list of ``other`` to this one's (returns self)."""
        self.create_pods.extend(other.create_pods)
        self.delete_pods.extend(other.delete_pods)
        self.create_objects.extend(other.create_objects)
        self.update_objects.extend(other.update_objects)
        self.adopt_pods.extend(other.adopt_pods)
        self.release_pods.extend(other.release_pods)
        self.delete_objects.extend(other.delete_objects)
        self.create_manifests.extend(other.create_manifests)
        return self

    def is_empty(self) -> bool:
        return not (self.create_pods or self.delete_pods or self.create_objects or self.update_objects
                    or self.adopt_pods or self.release_pods or self.delete_objects or self.create_manifests)


class ClusterView(Protocol):
    """What a controller reads of the cluster."""

    def pods(self, namespace: str) -> Iterable[Pod]:
        """Every pod of the namespace, terminal and terminating ones included."""

    def nodes(self) -> Iterable[Node]:
        """Every node."""

    def objects(self, kind: str, namespace: str) -> Iterable[KubeObject]:
        """The workloads of a kind in a namespace (e.g. the ReplicaSets of a namespace)."""

    def name_taken(self, kind: str, namespace: str, name: str) -> bool:
        """Whether an object of that kind and name exists (any kind name, "PersistentVolumeClaim"
        included)."""


@dataclass(frozen=True)
class ControllerOptions:
    """Knobs for behaviour that a one-shot reconcile cannot reproduce literally.

    * ``per_sync_limits``: apply upstream's per-sync caps (ReplicaSet/ReplicationController
      ``burstReplicas`` 500, Job ``MaxPodCreateDeletePerSync`` 500, DaemonSet ``burstReplicas``
      250); off by default, since the caps only spread the same end state over several syncs.
    * ``strict_ordered_ready``: StatefulSets with ``podManagementPolicy: OrderedReady`` behave as
      upstream's monotonic mode: one pod created per pass, and only once every lower ordinal is
      Running and Ready (and available for ``minReadySeconds``); condemned pods are deleted one at a
      time from the highest ordinal. Off by default: fastsched does not run pods, so they never
      become Ready and the set would never grow past its first pod; then OrderedReady sets are
      handled like Parallel ones (every missing pod at once, lowest ordinal first).
    """

    per_sync_limits: bool = False
    strict_ordered_ready: bool = False


class Context:
    """One reconcile pass: the view, the name generator, ``now``, the names it has handed out and
    kube-controller-manager's feature gates (gate names to bools, missing ones at v1.37.2's
    defaults; None: the defaults), which the Job controller reads (WorkloadWithJob)."""

    __slots__ = ("view", "names", "now", "options", "feature_gates", "_pending")

    def __init__(self, view: ClusterView, names: NameGenerator, now: float,
                 options: ControllerOptions | None = None, feature_gates: Mapping[str, bool] | None = None):
        self.view = view
        self.names = names
        self.now = now
        self.options = options if options is not None else ControllerOptions()
        self.feature_gates = feature_gates
        self._pending: set[tuple[str, str, str]] = set()

    def taken(self, kind: str, namespace: str, name: str) -> bool:
        return (kind, namespace, name) in self._pending or self.view.name_taken(kind, namespace, name)

    def reserve(self, kind: str, namespace: str, name: str) -> None:
        self._pending.add((kind, namespace, name))

    def generate(self, kind: str, namespace: str, base: str) -> str:
        """``metadata.generateName`` resolved as the API server does, skipping taken names."""
        while True:
            name = self.names.generate(base)
            if not self.taken(kind, namespace, name):
                self.reserve(kind, namespace, name)
                return name


# --------------------------------------------------------------------------------------------
# Owner references
# --------------------------------------------------------------------------------------------
def controller_ref(owner: KubeObject) -> dict[str, Any]:
    """``metav1.NewControllerRef(owner, gvk)`` as a manifest dict."""
    return {
        "apiVersion": WORKLOAD_API_VERSIONS[owner.KIND],
        "kind": owner.KIND,
        "name": owner.name,
        "uid": owner.uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


@overload
def claim_candidates(view: "ClusterView", kind: Literal["Pod"], owner: KubeObject) -> Iterable[Pod]: ...
@overload
def claim_candidates(view: "ClusterView", kind: str, owner: KubeObject) -> Iterable[KubeObject]: ...
def claim_candidates(view: "ClusterView", kind: str, owner: KubeObject) -> Iterable[KubeObject]:
    """What ``claim`` needs to see for ``owner``: the objects of ``kind`` in its namespace that it
    controls or that no controller owns, in the view's order. Objects another controller owns are
    skipped by ``claim`` anyway, so a view with an ownership index (``controlled_or_orphans``)
    answers this without reading the whole namespace (which made a dump of N Deployments cost
    O(N^2)); any other view is read in full."""
    indexed = getattr(view, "controlled_or_orphans", None)
    if indexed is not None:
        return indexed(kind, owner.namespace, owner.uid)
    return view.pods(owner.namespace) if kind == "Pod" else view.objects(kind, owner.namespace)


def controller_of(obj: KubeObject) -> OwnerReference | None:
    """``metav1.GetControllerOf``: the first owner reference with ``controller: true``."""
    for reference in obj.owner_references:
        if reference.controller:
            return reference
    return None


def _reference_manifest(reference: OwnerReference) -> dict[str, Any]:
    entry: dict[str, Any] = {"apiVersion": reference.api_version, "kind": reference.kind, "name": reference.name,
                             "uid": reference.uid}
    if reference.controller:
        entry["controller"] = True
    return entry


def _owner_references_of(obj: KubeObject) -> list[dict[str, Any]]:
    meta = obj.manifest.get("metadata") if obj.manifest else None
    raw = get_field(meta, "ownerReferences") if isinstance(meta, Mapping) else None
    if raw is not None and len(raw) == len(obj.owner_references):
        return [dict(entry) for entry in raw]
    return [_reference_manifest(reference) for reference in obj.owner_references]


_Owned = TypeVar("_Owned", bound=KubeObject)


def with_owner_references(obj: _Owned, references: list[dict[str, Any]]) -> _Owned:
    """``obj`` with ``metadata.ownerReferences`` replaced (typed field and manifest alike)."""
    typed = tuple(OwnerReference(kind=ref.get("kind", ""), name=ref.get("name", ""), uid=ref.get("uid", ""),
                                 controller=bool(ref.get("controller")), api_version=ref.get("apiVersion", ""))
                  for ref in references)
    if not obj.manifest:
        return obj.replace(owner_references=typed)
    manifest = dict(obj.manifest)
    metadata = dict(manifest.get("metadata") or {})
    metadata.pop("owner_references", None)
    if references:
        metadata["ownerReferences"] = references
    else:
        metadata.pop("ownerReferences", None)
    manifest["metadata"] = metadata
    parser = WORKLOAD_PARSERS.get(obj.KIND)
    if parser is not None:
        return cast(_Owned, parser(manifest))  # the parser of obj's own kind: an object of obj's type
    return obj.replace(owner_references=typed, manifest=manifest)


def _adopted(obj: _Owned, owner: KubeObject) -> _Owned:
    return with_owner_references(obj, _owner_references_of(obj) + [controller_ref(owner)])


def _released(obj: _Owned, owner: KubeObject) -> _Owned:
    return with_owner_references(obj, [ref for ref in _owner_references_of(obj) if ref.get("uid") != owner.uid])


def claim(owner: KubeObject, match: Callable[[_Owned], bool], candidates: Iterable[_Owned],
          ) -> tuple[list[_Owned], list[_Owned], list[_Owned]]:
    """``ClaimObject`` over ``candidates``: ``(claimed, adopted, released)``.

    ``claimed`` holds the objects the owner controls after the pass, adopted ones included (as
    they are after adoption). An object controlled by someone else is ignored; one controlled by
    ``owner`` is kept while ``match`` holds and released otherwise (unless the owner is being
    deleted); a matching orphan is adopted unless the owner or the orphan is being deleted.
    """
    claimed: list[_Owned] = []
    adopted: list[_Owned] = []
    released: list[_Owned] = []
    owner_deleting = owner.deletion_timestamp is not None
    for obj in candidates:
        reference = controller_of(obj)
        if reference is not None:
            if reference.uid != owner.uid:
                continue
            if match(obj):
                claimed.append(obj)
            elif not owner_deleting:
                released.append(_released(obj, owner))
            continue
        if owner_deleting or not match(obj) or obj.deletion_timestamp is not None:
            continue
        if owner.namespace and owner.namespace != obj.namespace:
            continue
        new = _adopted(obj, owner)
        adopted.append(new)
        claimed.append(new)
    return claimed, adopted, released


def selector_match(selector: LabelSelector | None) -> Callable[[KubeObject], bool]:
    """``LabelSelectorAsSelector(selector).Matches(labels)``; a nil selector matches nothing."""
    if selector is None:
        return lambda obj: False
    return lambda obj: selector.matches(obj.labels)


# --------------------------------------------------------------------------------------------
# Pods from templates
# --------------------------------------------------------------------------------------------
_DNS1123_SUBDOMAIN_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def _valid_pod_name_prefix(prefix: str) -> bool:
    """``ValidatePodName(prefix, true)`` is empty: ``NameIsDNSSubdomain`` after ``maskTrailingDash``."""
    name = prefix
    if len(name) > 1 and name.endswith("-"):
        name = name[:-2] + "a"  # upstream's maskTrailingDash drops two characters and appends one
    return len(name) <= 253 and _DNS1123_SUBDOMAIN_RE.fullmatch(name) is not None


def pods_prefix(controller_name: str) -> str:
    """``getPodsPrefix``: ``<name>-``, or the bare name if that is not a valid name prefix."""
    prefix = f"{controller_name}-"
    return prefix if _valid_pod_name_prefix(prefix) else controller_name


def pod_from_template(template: Mapping[str, Any], owner: KubeObject, *, generate_name: str | None = None,
                      name: str = "") -> dict[str, Any]:
    """``GetPodFromTemplate`` as a manifest: labels, annotations and finalizers copied from the
    template, ``generateName`` from :func:`pods_prefix` (or ``generate_name``), the owner's
    controller reference, a deep copy of the template spec. ``metadata.name`` is ``name`` (""
    until the caller fills a generated name in)."""
    template_meta = template.get("metadata") or {}
    metadata: dict[str, Any] = {"name": name}
    metadata["generateName"] = pods_prefix(owner.name) if generate_name is None else generate_name
    metadata["namespace"] = owner.namespace
    metadata["labels"] = dict(template_meta.get("labels") or {})
    metadata["annotations"] = dict(template_meta.get("annotations") or {})
    finalizers = template_meta.get("finalizers")
    if finalizers:
        metadata["finalizers"] = list(finalizers)
    metadata["ownerReferences"] = [controller_ref(owner)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
            "spec": copy.deepcopy(dict(template.get("spec") or {}))}


# --------------------------------------------------------------------------------------------
# Pod predicates
# --------------------------------------------------------------------------------------------
def is_pod_terminal(pod: Pod) -> bool:
    return pod.phase in (POD_SUCCEEDED, POD_FAILED)


def is_pod_active(pod: Pod) -> bool:
    """``IsPodActive``: not Succeeded, not Failed, no deletion timestamp."""
    return pod.phase not in (POD_SUCCEEDED, POD_FAILED) and pod.deletion_timestamp is None


def _ready_condition(pod: Pod) -> Mapping[str, Any] | None:
    for condition in pod.conditions:
        if condition.get("type") == "Ready":
            return condition
    return None


def is_pod_ready(pod: Pod) -> bool:
    """``IsPodReady``: the Ready condition is True."""
    condition = _ready_condition(pod)
    return condition is not None and condition.get("status") == "True"


def _ready_time(pod: Pod) -> float | None:
    """``podReadyTime``: the Ready condition's lastTransitionTime when ready (None: zero time)."""
    if not is_pod_ready(pod):
        return None
    condition = _ready_condition(pod)
    value = get_field(condition, "lastTransitionTime") if condition is not None else None
    try:
        return as_timestamp(value, "lastTransitionTime")
    except ValueError:
        return None


def is_pod_available(pod: Pod, min_ready_seconds: int, now: float) -> bool:
    """``IsPodAvailable``: ready, and ready for at least ``min_ready_seconds`` before ``now``."""
    if not is_pod_ready(pod):
        return False
    if min_ready_seconds == 0:
        return True
    ready = _ready_time(pod)
    return ready is not None and ready + min_ready_seconds < now


def _max_container_restarts(pod: Pod) -> int:
    status = pod.manifest.get("status") if pod.manifest else None
    if not isinstance(status, Mapping):
        return 0
    restarts = 0
    for key in ("containerStatuses",):
        for entry in get_field(status, key) or ():
            if isinstance(entry, Mapping):
                count = get_field(entry, "restartCount")
                if type(count) is int:
                    restarts = max(restarts, count)
    return restarts


def _deletion_cost(pod: Pod) -> int:
    """``GetDeletionCostFromPodAnnotations`` (0 when absent or invalid)."""
    value = pod.annotations.get(ANNOTATION_POD_DELETION_COST)
    if value is None or not value:
        return 0
    if not (value[0] == "-" or value == "0" or "1" <= value[0] <= "9"):
        return 0
    try:
        cost = int(value, 10)
    except ValueError:
        return 0
    return cost if -2**31 <= cost < 2**31 else 0


_PHASE_ORDINAL = {POD_PENDING: 0, POD_UNKNOWN: 1, POD_RUNNING: 2}


def _after_or_zero(t1: float | None, t2: float | None) -> bool:
    """``afterOrZero``: t1 after t2, a zero time counting as after any other."""
    if t1 is None or t2 is None:
        return t1 is None
    return t1 > t2


def _log_rank_diff(t1: float, t2: float, now: float) -> int:
    """``logarithmicRankDiff`` on nanosecond durations."""
    def rank(t: float) -> int:
        nanos = round((now - t) * 1e9)
        return int(math.log2(nanos)) if nanos > 0 else -1
    return rank(t1) - rank(t2)


def _less(a: Pod, b: Pod, rank_a: int | None, rank_b: int | None, now: float | None) -> bool:
    """``ActivePods.Less`` (ranks None) or ``ActivePodsWithRanks.Less`` (with PodDeletionCost and
    LogarithmicScaleDown, both on in v1.34): True when ``a`` should be deleted before ``b``."""
    if a.node_name != b.node_name and (not a.node_name or not b.node_name):
        return not a.node_name
    phase_a, phase_b = _PHASE_ORDINAL.get(a.phase, 0), _PHASE_ORDINAL.get(b.phase, 0)
    if phase_a != phase_b:
        return phase_a < phase_b
    ready_a, ready_b = is_pod_ready(a), is_pod_ready(b)
    if ready_a != ready_b:
        return not ready_a
    ranked = rank_a is not None and rank_b is not None
    if ranked:
        cost_a, cost_b = _deletion_cost(a), _deletion_cost(b)
        if cost_a != cost_b:
            return cost_a < cost_b
        if rank_a != rank_b:
            return rank_a > rank_b  # type: ignore[operator]
    if ready_a and ready_b:
        time_a, time_b = _ready_time(a), _ready_time(b)
        if time_a != time_b:
            return _newer_first(a, b, time_a, time_b, ranked, now)
    restarts_a, restarts_b = _max_container_restarts(a), _max_container_restarts(b)
    if restarts_a != restarts_b:
        return restarts_a > restarts_b
    created_a, created_b = a.creation_timestamp, b.creation_timestamp
    if created_a != created_b:
        return _newer_first(a, b, created_a, created_b, ranked, now)
    return False


def _newer_first(a: Pod, b: Pod, time_a: float | None, time_b: float | None, ranked: bool,
                 now: float | None) -> bool:
    """The time step of ``Less`` (different times): the later first, compared on upstream's
    logarithmic scale when ranked (LogarithmicScaleDown), the uid breaking a tie there."""
    if not ranked or now is None or time_a is None or time_b is None:
        return _after_or_zero(time_a, time_b)
    diff = _log_rank_diff(time_a, time_b, now)
    if diff == 0:
        return a.uid < b.uid
    return diff < 0


def sort_active_pods(pods: Sequence[Pod]) -> list[Pod]:
    """Pods sorted by ``controller.ActivePods`` (preferred for deletion first). Go's sort.Sort is
    not stable; here ties keep their input order."""
    def compare(a: Pod, b: Pod) -> int:
        return -1 if _less(a, b, None, None, None) else (1 if _less(b, a, None, None, None) else 0)
    return sorted(pods, key=functools.cmp_to_key(compare))


def sort_active_pods_with_ranks(pods: Sequence[Pod], ranks: Sequence[int], now: float) -> list[Pod]:
    """Pods sorted by ``controller.ActivePodsWithRanks`` with ``Now = now`` (ties keep input order)."""
    entries = list(zip(pods, ranks))

    def compare(x: tuple[Pod, int], y: tuple[Pod, int]) -> int:
        if _less(x[0], y[0], x[1], y[1], now):
            return -1
        return 1 if _less(y[0], x[0], y[1], x[1], now) else 0
    return [pod for pod, _ in sorted(entries, key=functools.cmp_to_key(compare))]


# --------------------------------------------------------------------------------------------
# Hashes and scaled values
# --------------------------------------------------------------------------------------------
_FNV32_OFFSET = 0x811C9DC5
_FNV32_PRIME = 0x01000193


def fnv32a(data: bytes) -> int:
    """FNV-1a, 32 bits (Go's ``hash/fnv.New32a``)."""
    value = _FNV32_OFFSET
    for byte in data:
        value = ((value ^ byte) * _FNV32_PRIME) & 0xFFFFFFFF
    return value


def fnv32(data: bytes) -> int:
    """FNV-1, 32 bits (Go's ``hash/fnv.New32``)."""
    value = _FNV32_OFFSET
    for byte in data:
        value = ((value * _FNV32_PRIME) & 0xFFFFFFFF) ^ byte
    return value


def canonical_json(value: Any) -> bytes:
    """Sorted-keys, compact JSON (UTF-8), the byte string the hashes here are taken over."""
    return json.dumps(_plain(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def compute_hash(template: Mapping[str, Any], collision_count: int | None) -> str:
    """``controller.ComputeHash`` with a portable input: FNV-32a over :func:`canonical_json` of the
    pod template (upstream hashes a spew dump of the Go struct, which only Go reproduces), then,
    as upstream, the collision count as 8 little-endian bytes (uint32 + 4 zero bytes) when set,
    the sum printed in decimal and passed through ``SafeEncodeString``: 1 to 10 characters of
    ``bcdfghjklmnpqrstvwxz2456789`` (in fact of ``456789bcdf``)."""
    data = canonical_json(template)
    if collision_count is not None:
        data += struct.pack("<I", collision_count & 0xFFFFFFFF) + b"\0\0\0\0"
    return safe_encode_string(str(fnv32a(data)))


def scaled_value(value: int | str | None, total: int, round_up: bool) -> int:
    """``intstr.GetScaledValueFromIntOrPercent`` (an invalid value counts as 0)."""
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    if not value.endswith("%"):
        try:
            return int(value)
        except ValueError:
            return 0
    try:
        percent = int(value[:-1])
    except ValueError:
        return 0
    scaled = percent * total
    return -(-scaled // 100) if round_up else scaled // 100


def template_labels(template: Mapping[str, Any] | None) -> Mapping[str, str]:
    if not template:
        return {}
    return (template.get("metadata") or {}).get("labels") or {}


def semantic_equal(a: Any, b: Any) -> bool:
    """``equality.Semantic.DeepEqual`` approximated on manifests: nil and empty maps/lists equal."""
    return _normalized(a) == _normalized(b)


def _normalized(value: Any) -> Any:
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            item = _normalized(item)
            if item is None or item == {} or item == []:
                continue
            out[key] = item
        return out
    if isinstance(value, (list, tuple)):
        return [_normalized(item) for item in value]
    return value
