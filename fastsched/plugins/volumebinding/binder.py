"""The volume binder (upstream ``volumebinding/binder.go`` and ``assume_cache.go``, v1.34), over
``handle.client``.

* :class:`AssumeCache`: claims and volumes as the API has them, overlaid with the ones the binder
  assumed at Reserve (``Assume`` / ``Restore``); an assumed object is dropped once the API object it
  was assumed over changes (upstream replaces it on a newer informer version).
* :meth:`VolumeBinder.pod_volume_claims` (``GetPodVolumeClaims``), :meth:`find_pod_volumes`
  (``FindPodVolumes``: bound claims' PV node affinity, WaitForFirstConsumer claims matched to
  static PVs smallest first, dynamic provisioning through the class's allowedTopologies and
  CSIStorageCapacity), :meth:`assume_pod_volumes`, :meth:`revert_assumed_pod_volumes` and
  :meth:`bind_pod_volumes`.
* Binding plays the PV controller's and the provisioner's part at once (fastsched runs no
  controllers for volumes): a static binding writes the PV's claimRef and phase Bound, then the
  claim's ``volumeName``, ``pv.kubernetes.io/bind-completed`` and phase Bound; a provisioned claim
  gets its ``selected-node`` annotation, then a new PV ``pvc-<claim uid>`` of the class, sized to
  the request, with node affinity from the node's topology (the CSINode driver's topology keys, else
  the class's allowedTopologies keys, with the node's values) and the claim is bound to it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Container, Iterable, Mapping, TypeGuard

from ...api.labels import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from ...api.storage import (ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, ANN_PROVISIONED_BY, ANN_SELECTED_NODE,
                            WAIT_FOR_FIRST_CONSUMER, NOT_SUPPORTED_PROVISIONER, CSINode, PersistentVolume,
                            PersistentVolumeClaim, StorageClass, check_node_affinity, claim_class,
                            claim_name_of_volume, parse_persistent_volume, pv_bound_to_claim, volume_class,
                            volume_is_for_pod, with_annotation, with_claim_ref, with_phase, with_volume_name)
from .storage_view import (CSI_DRIVER_OF_PLUGIN, CSI_ZONE_KEY_OF_PLUGIN, PORTWORX_PLUGIN, MigrationInfo, StorageLister,
                           plugin_migrated_on_node, plugin_of_source)

# upstream's ConflictReasons, in the order FindPodVolumes appends them
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
_GA_ZONE = "topology.kubernetes.io/zone"
_GA_REGION = "topology.kubernetes.io/region"


class BinderError(Exception):
    """An error FindPodVolumes / AssumePodVolumes / BindPodVolumes return (Status Error)."""


@dataclass(slots=True)
class BindingInfo:
    """A claim matched to a static PV (``pv`` is the assumed PV after Reserve)."""

    pv: PersistentVolume
    pvc: PersistentVolumeClaim

    def storage_class_name(self) -> str:
        return volume_class(self.pv)

    def storage_resource(self) -> tuple[int, int]:
        """``StorageResource``: (the claim's requested bytes, the volume's capacity bytes)."""
        return (self.pvc.request.value() if self.pvc.request is not None else 0,
                self.pv.capacity.value() if self.pv.capacity is not None else 0)


@dataclass(slots=True)
class PodVolumes:
    """What FindPodVolumes found for one node (None: empty, as upstream normalizes).
    ``provision_capacities[i]`` is the CSIStorageCapacity that had room for
    ``dynamic_provisions[i]`` (upstream ``DynamicProvision.NodeCapacity``; None when the driver
    does not track capacity)."""

    static_bindings: list[BindingInfo] | None = None
    dynamic_provisions: list[PersistentVolumeClaim] | None = None
    provision_capacities: list[Any] | None = None

    def copy(self) -> "PodVolumes":
        return PodVolumes(None if self.static_bindings is None else list(self.static_bindings),
                          None if self.dynamic_provisions is None else list(self.dynamic_provisions),
                          None if self.provision_capacities is None else list(self.provision_capacities))


@dataclass(slots=True)
class PodVolumeClaims:
    """Upstream ``PodVolumeClaims``: bound claims, WaitForFirstConsumer claims to bind, the PVs of
    their classes, and unbound Immediate claims."""

    bound_claims: list[PersistentVolumeClaim] = field(default_factory=list)
    unbound_claims_delay_binding: list[PersistentVolumeClaim] = field(default_factory=list)
    unbound_claims_immediate: list[PersistentVolumeClaim] = field(default_factory=list)
    unbound_volumes_delay_binding: dict[str, list[PersistentVolume]] = field(default_factory=dict)


class AssumeCache:
    """The claims or volumes of the API with the binder's assumed versions on top."""

    def __init__(self, kind: str):
        self.kind = kind
        self._assumed: dict[str, tuple[Any, Any]] = {}   # key -> (assumed, the API object it was assumed over)

    @staticmethod
    def key(obj: Any) -> str:
        return f"{obj.namespace}/{obj.name}" if obj.namespace else obj.name

    def get(self, lister: StorageLister, key: str) -> Any:
        api = self.get_api(lister, key)
        entry = self._assumed.get(key)
        if entry is not None:
            if entry[1] is api:
                return entry[0]
            del self._assumed[key]  # the API object changed since: it wins
        return api

    def get_api(self, lister: StorageLister, key: str) -> Any:
        if self.kind == "PersistentVolume":
            return lister.pv(key)
        namespace, _, name = key.partition("/")
        return lister.pvc(namespace, name)

    def assume(self, lister: StorageLister, obj: Any) -> None:
        key = self.key(obj)
        api = self.get_api(lister, key)
        if api is None:
            raise BinderError(_not_found(self.kind, key))
        self._assumed[key] = (obj, api)

    def restore(self, key: str) -> None:
        self._assumed.pop(key, None)

    def list_pvs(self, lister: StorageLister, class_name: str) -> list[PersistentVolume]:
        """``ListPVs(storageClassName)``: the PVs of a class, assumed versions included, in the
        order the API holds them."""
        out = []
        for pv in lister.list("PersistentVolume"):
            entry = self._assumed.get(pv.name)
            if entry is not None:
                if entry[1] is pv:
                    pv = entry[0]
                else:
                    del self._assumed[pv.name]
            if volume_class(pv) == class_name:
                out.append(pv)
        return out


def _not_found(kind: str, key: str) -> str:
    """The v1.37 assume caches' NotFound error (volumebinding/passive_assume_cache.go GetAPIObj:
    ``apierrors.NewNotFound`` of the resource); v1.34's said ``could not find v1.<Kind> "<key>"``."""
    resource = {"PersistentVolume": "persistentvolumes", "PersistentVolumeClaim": "persistentvolumeclaims"}[kind]
    return f'{resource} "{key}" not found'


# -- CSI migration of PVs (tryTranslatePVToCSI) ---------------------------------------------------------
def _migration_on_for_plugin(plugin: str) -> bool:
    """``isCSIMigrationOnForPlugin`` (v1.34 gates: AWS, GCE, Azure Disk, Cinder GA; Portworx on)."""
    return plugin in ("kubernetes.io/aws-ebs", "kubernetes.io/gce-pd", "kubernetes.io/azure-disk",
                      "kubernetes.io/cinder", PORTWORX_PLUGIN)


def without_affinity(pv: PersistentVolume) -> bool:
    """Whether the PV's checked affinity is None on every node, migrated or not: it has none and
    no zone label for the translation to add one from (the scheduler_perf PVs: a new PV a pod)."""
    return pv.node_affinity is None and _GA_ZONE not in pv.labels and _BETA_ZONE not in pv.labels


def translated_node_affinity(pv: PersistentVolume, csi_node: MigrationInfo | None) -> NodeSelector | None:
    """The node affinity the binder checks: the PV's own, or that of its CSI translation when its
    in-tree plugin is migrated on the node (``translateTopologyFromInTreeToCSI``: the zone key
    replaced by the driver's, or added from the PV's zone label; a beta region key made GA)."""
    if without_affinity(pv):
        return None   # (every branch below returns the PV's None: no key to replace, no label to add)
    found = plugin_of_source({pv.source: pv.source_spec}) if pv.source and pv.source != "csi" else None
    if found is None:
        return pv.node_affinity
    plugin = found[0]
    if not _migration_on_for_plugin(plugin) or not plugin_migrated_on_node(csi_node, plugin):
        return pv.node_affinity
    csi_key = CSI_ZONE_KEY_OF_PLUGIN.get(plugin)
    if csi_key is None:
        return pv.node_affinity
    beta = _BETA_ZONE in pv.labels or _has_key(pv.node_affinity, _BETA_ZONE)
    zone_key, region_key = (_BETA_ZONE, _BETA_REGION) if beta else (_GA_ZONE, _GA_REGION)
    affinity = pv.node_affinity
    if _has_key(affinity, zone_key):
        affinity = _replace_key(affinity, zone_key, csi_key)
    elif zone_key in pv.labels:
        zones = tuple(pv.labels[zone_key].split("__"))
        affinity = _add_requirement(affinity, NodeSelectorRequirement(csi_key, "In", zones))
    if region_key == _BETA_REGION and _has_key(affinity, _BETA_REGION):
        affinity = _replace_key(affinity, _BETA_REGION, _GA_REGION)
    return affinity


def _has_key(selector: NodeSelector | None, key: str) -> TypeGuard[NodeSelector]:
    return selector is not None and any(r.key == key for t in selector.terms for r in t.match_expressions)


def _replace_key(selector: NodeSelector, old: str, new: str) -> NodeSelector:
    return NodeSelector(NodeSelectorTerm([NodeSelectorRequirement(new if r.key == old else r.key, r.operator, r.values)
                                          for r in t.match_expressions], t.match_fields) for t in selector.terms)


def _add_requirement(selector: NodeSelector | None, req: NodeSelectorRequirement) -> NodeSelector:
    if selector is None or not selector.terms:
        return NodeSelector([NodeSelectorTerm([req])])
    return NodeSelector(NodeSelectorTerm([*t.match_expressions, req], t.match_fields) for t in selector.terms)


def migration_dependent(pv: PersistentVolume) -> str | None:
    """The in-tree plugin whose per-node migration changes this PV's checked affinity, or None."""
    if not pv.source or pv.source == "csi":
        return None
    found = plugin_of_source({pv.source: pv.source_spec})
    if found is None or not _migration_on_for_plugin(found[0]) or found[0] not in CSI_ZONE_KEY_OF_PLUGIN:
        return None
    return found[0]


# -- FindMatchingVolume ---------------------------------------------------------------------------------
def _nanos(q: Any) -> int:
    return 0 if q is None else q.nano_value()


def find_matching_volume(claim: PersistentVolumeClaim, volumes: Iterable[PersistentVolume],
                         node_labels: Mapping[str, str] | None, excluded: Container[str],
                         csi_node: CSINode | None = None) -> PersistentVolume | None:
    """``volume.FindMatchingVolume`` (VolumeAttributesClass on): a PV pre-bound to the claim (no
    match if its affinity fails), else the smallest Available PV of the claim's class and
    attributes class whose labels the claim's selector matches, with room, the volume mode and
    every access mode, admitting the node. The scheduler path gives the node's labels; the PV
    controller's (``node_labels`` None: no node) does not check node affinity, as upstream with a
    nil node."""
    requested = _nanos(claim.request)
    requested_class = claim_class(claim)
    smallest: PersistentVolume | None = None
    smallest_qty = 0
    for pv in volumes:
        if pv.name in excluded:
            continue
        if pv.claim_ref is not None and not pv_bound_to_claim(pv, claim):
            continue
        qty = _nanos(pv.capacity)
        if qty < requested:
            continue
        if (claim.volume_mode or "Filesystem") != (pv.volume_mode or "Filesystem"):
            continue
        if pv.deletion_timestamp is not None:
            continue
        affinity_ok = node_labels is None or check_node_affinity(translated_node_affinity(pv, csi_node),
                                                                 node_labels)
        if pv_bound_to_claim(pv, claim):
            return pv if affinity_ok else None
        if pv.phase != "Available":
            continue
        if claim.selector is not None and not claim.selector.matches(pv.labels):
            continue
        if volume_class(pv) != requested_class:
            continue
        if not affinity_ok:
            continue
        if (pv.volume_attributes_class_name or "") != (claim.volume_attributes_class_name or ""):
            continue
        if any(mode not in pv.access_modes for mode in claim.access_modes):
            continue
        if smallest is None or smallest_qty > qty:
            smallest, smallest_qty = pv, qty
    return smallest


def match_topology_terms(terms: tuple, labels: Mapping[str, str]) -> bool:
    """``MatchTopologySelectorTerms``: no terms match every node; terms are ORed, a term's
    expressions ANDed (the node's value for the key among the values)."""
    if not terms:
        return True
    for term in terms:
        if all(labels.get(key) is not None and labels.get(key) in values for key, values in term):
            return True
    return False


class VolumeBinder:
    """Upstream ``volumeBinder`` over a :class:`StorageLister`."""

    def __init__(self, client_of: Any):
        self._client_of = client_of   # () -> client (the handle's, read late)
        self.pv_cache = AssumeCache("PersistentVolume")
        self.pvc_cache = AssumeCache("PersistentVolumeClaim")

    @property
    def lister(self) -> StorageLister:
        return StorageLister(self._client_of())

    # -- claims of a pod ------------------------------------------------------------------------------
    def is_pvc_fully_bound(self, pvc: PersistentVolumeClaim) -> bool:
        return bool(pvc.volume_name) and ANN_BIND_COMPLETED in pvc.annotations

    def _claim_of(self, lister: StorageLister, pod: Any, vol: Mapping[str, Any]) -> tuple[bool, Any]:
        """``isVolumeBound``: (bound, claim); claim None for a volume without one."""
        claim = claim_name_of_volume(pod, vol)
        if claim is None:
            return True, None
        name, ephemeral = claim
        key = f"{pod.namespace}/{name}"
        pvc = self.pvc_cache.get(lister, key)
        if pvc is None:
            raise BinderError(f'error getting PVC "{key}": {_not_found("PersistentVolumeClaim", key)}')
        if ephemeral:
            problem = volume_is_for_pod(pod, pvc)
            if problem is not None:
                raise BinderError(problem)
        return self.is_pvc_fully_bound(pvc), pvc

    def pod_volume_claims(self, pod: Any) -> PodVolumeClaims:
        """``GetPodVolumeClaims``."""
        lister = self.lister
        out = PodVolumeClaims()
        for vol in pod.volumes:
            bound, pvc = self._claim_of(lister, pod, vol)
            if pvc is None:
                continue
            if bound:
                out.bound_claims.append(pvc)
                continue
            delay = self._is_delay_binding_mode(lister, pvc)
            if delay and not pvc.volume_name:
                out.unbound_claims_delay_binding.append(pvc)
            else:
                out.unbound_claims_immediate.append(pvc)
        for pvc in out.unbound_claims_delay_binding:
            cls = claim_class(pvc)
            out.unbound_volumes_delay_binding[cls] = self.pv_cache.list_pvs(lister, cls)
        return out

    @staticmethod
    def _is_delay_binding_mode(lister: StorageLister, pvc: PersistentVolumeClaim) -> bool:
        cls = claim_class(pvc)
        if not cls:
            return False
        sc = lister.storage_class(cls)
        if sc is None:
            return False
        if sc.volume_binding_mode is None:
            raise BinderError(f'VolumeBindingMode not set for StorageClass "{cls}"')
        return sc.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER

    # -- FindPodVolumes -------------------------------------------------------------------------------
    def find_pod_volumes(self, pod: Any, claims: PodVolumeClaims, node_name: str, node_labels: Mapping[str, str],
                         csi_node: CSINode | None) -> tuple[PodVolumes, list[str]]:
        """``FindPodVolumes`` for one node: (what to bind or provision, conflict reasons); raises
        BinderError."""
        lister = self.lister
        unbound_ok = bound_ok = sufficient = pvs_found = True
        static: list[BindingInfo] = []
        dynamic: list[PersistentVolumeClaim] = []
        capacities: list[Any] = []
        done = False
        if claims.bound_claims:
            bound_ok, pvs_found = self._check_bound_claims(lister, claims.bound_claims, node_labels, csi_node)
        to_bind = claims.unbound_claims_delay_binding
        if to_bind:
            find_matching: list[PersistentVolumeClaim] = []
            provision: list[PersistentVolumeClaim] = []
            for claim in to_bind:
                selected = claim.annotations.get(ANN_SELECTED_NODE)
                if selected is not None:
                    if selected != node_name:
                        unbound_ok = False
                        done = True
                        break
                    provision.append(claim)
                else:
                    find_matching.append(claim)
            if not done:
                if find_matching:
                    unbound_ok, static, unmatched = self._find_matching_volumes(
                        claims, find_matching, node_labels, csi_node)
                    provision.extend(unmatched)
                if provision:
                    unbound_ok, sufficient, dynamic, capacities = self._check_volume_provisions(
                        lister, provision, node_labels)
        reasons = []
        if not bound_ok:
            reasons.append(ERR_REASON_NODE_CONFLICT)
        if not unbound_ok:
            reasons.append(ERR_REASON_BIND_CONFLICT)
        if not sufficient:
            reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
        if not pvs_found:
            reasons.append(ERR_REASON_PV_NOT_EXIST)
        return PodVolumes(static or None, dynamic or None, capacities or None), reasons

    def _check_bound_claims(self, lister: StorageLister, bound: list[PersistentVolumeClaim],
                            node_labels: Mapping[str, str], csi_node: CSINode | None) -> tuple[bool, bool]:
        for pvc in bound:
            pv = self.pv_cache.get(lister, pvc.volume_name)
            if pv is None:
                return True, False
            if not check_node_affinity(translated_node_affinity(pv, csi_node), node_labels):
                return False, True
        return True, True

    def _find_matching_volumes(self, claims: PodVolumeClaims, to_bind: list[PersistentVolumeClaim],
                               node_labels: Mapping[str, str], csi_node: CSINode | None
                               ) -> tuple[bool, list[BindingInfo], list[PersistentVolumeClaim]]:
        ordered = sorted(to_bind, key=lambda c: _nanos(c.request))  # byPVCSize
        chosen: dict[str, PersistentVolume] = {}
        found = True
        bindings: list[BindingInfo] = []
        unbound: list[PersistentVolumeClaim] = []
        for pvc in ordered:
            pvs = claims.unbound_volumes_delay_binding.get(claim_class(pvc), [])
            pv = find_matching_volume(pvc, pvs, node_labels, chosen, csi_node)
            if pv is None:
                unbound.append(pvc)
                found = False
                continue
            chosen[pv.name] = pv
            bindings.append(BindingInfo(pv, pvc))
        return found, bindings, unbound

    def _check_volume_provisions(self, lister: StorageLister, claims: list[PersistentVolumeClaim],
                                 node_labels: Mapping[str, str]
                                 ) -> tuple[bool, bool, list[PersistentVolumeClaim], list[Any]]:
        provisions = []
        capacities = []
        for claim in claims:
            cls_name = claim_class(claim)
            if not cls_name:
                raise BinderError(f'no class for claim "{claim.namespace}/{claim.name}"')
            sc = lister.storage_class(cls_name)
            if sc is None:
                raise BinderError(f'failed to find storage class "{cls_name}"')
            if not sc.provisioner or sc.provisioner == NOT_SUPPORTED_PROVISIONER:
                return False, True, [], []
            if not match_topology_terms(sc.allowed_topologies, node_labels):
                return False, True, [], []
            sufficient, capacity = self._has_enough_capacity(lister, sc, claim, node_labels)
            if not sufficient:
                return True, False, [], []
            provisions.append(claim)
            capacities.append(capacity)
        return True, True, provisions, capacities

    @staticmethod
    def _has_enough_capacity(lister: StorageLister, sc: StorageClass, claim: PersistentVolumeClaim,
                             node_labels: Mapping[str, str]) -> tuple[bool, Any]:
        """``hasEnoughCapacity``: (enough room, the CSIStorageCapacity that has it or None)."""
        if claim.request is None:
            return True, None
        driver = lister.csi_driver(sc.provisioner)
        if driver is None or not driver.storage_capacity:
            return True, None
        size = claim.request.value()
        for cap in lister.capacities():
            if cap.storage_class_name != sc.name:
                continue
            limit = cap.maximum_volume_size if cap.maximum_volume_size is not None else cap.capacity
            if limit is None or limit.value() < size:
                continue
            if cap.node_topology is not None and cap.node_topology.matches(node_labels):
                return True, cap
        return False, None

    # -- Reserve / Unreserve --------------------------------------------------------------------------
    def are_pod_volumes_bound(self, pod: Any) -> bool:
        lister = self.lister
        for vol in pod.volumes:
            try:
                bound, _ = self._claim_of(lister, pod, vol)
            except BinderError:
                return False
            if not bound:
                return False
        return True

    def assume_pod_volumes(self, pod: Any, node_name: str, volumes: PodVolumes) -> bool:
        """``AssumePodVolumes``: True when every volume is already bound; raises BinderError."""
        if self.are_pod_volumes_bound(pod):
            return True
        lister = self.lister
        new_bindings: list[BindingInfo] = []
        for b in volumes.static_bindings or ():
            pre_bound = pv_bound_to_claim(b.pv, b.pvc)
            new_pv = b.pv
            if not (pre_bound and b.pv.claim_ref is not None and b.pv.claim_ref.uid == b.pvc.uid):
                new_pv = with_claim_ref(b.pv, b.pvc, bound_by_controller=not pre_bound)
            try:
                self.pv_cache.assume(lister, new_pv)
            except BinderError:
                self._revert_pvs(new_bindings)
                raise
            new_bindings.append(BindingInfo(new_pv, b.pvc))
        new_claims: list[PersistentVolumeClaim] = []
        for claim in volumes.dynamic_provisions or ():
            clone = with_annotation(claim, ANN_SELECTED_NODE, node_name)
            try:
                self.pvc_cache.assume(lister, clone)
            except BinderError:
                self._revert_pvs(new_bindings)
                self._revert_pvcs(new_claims)
                raise
            new_claims.append(clone)
        volumes.static_bindings = new_bindings
        volumes.dynamic_provisions = new_claims
        return False

    def revert_assumed_pod_volumes(self, volumes: PodVolumes) -> None:
        self._revert_pvs(volumes.static_bindings or ())
        self._revert_pvcs(volumes.dynamic_provisions or ())

    def _revert_pvs(self, bindings: Iterable[BindingInfo]) -> None:
        for b in bindings:
            self.pv_cache.restore(b.pv.name)

    def _revert_pvcs(self, claims: Iterable[PersistentVolumeClaim]) -> None:
        for c in claims:
            self.pvc_cache.restore(f"{c.namespace}/{c.name}")

    # -- PreBind --------------------------------------------------------------------------------------
    def bind_pod_volumes(self, pod: Any, node_name: str, volumes: PodVolumes) -> None:
        """``BindPodVolumes``: write the PVs and claims, then (as the PV controller and the
        provisioner would) complete the bindings; raises BinderError."""
        client = self._client_of()
        if client is None:
            raise BinderError("binding volumes: no API client")
        lister = self.lister
        bindings = list(volumes.static_bindings or ())
        claims = list(volumes.dynamic_provisions or ())
        try:
            for b in bindings:
                pv = with_phase(b.pv, "Bound")
                client.update_object(pv)
                self.pv_cache.restore(pv.name)
                current = lister.pvc(b.pvc.namespace, b.pvc.name) or b.pvc
                bound = with_volume_name(current, pv.name)
                bound = with_annotation(bound, ANN_BIND_COMPLETED, "yes")
                if ANN_BOUND_BY_CONTROLLER in pv.annotations:
                    bound = with_annotation(bound, ANN_BOUND_BY_CONTROLLER, "yes")
                client.update_object(with_phase(bound, "Bound"))
            for claim in claims:
                client.update_object(claim)
                self.pvc_cache.restore(f"{claim.namespace}/{claim.name}")
                self._provision(client, lister, claim, node_name)
        except BinderError:
            raise
        except Exception as e:  # noqa: BLE001 - an API write failing fails the binding
            raise BinderError(f"binding volumes: {e}") from None
        finally:
            self._revert_pvs(bindings)
            self._revert_pvcs(claims)

    def _provision(self, client: Any, lister: StorageLister, claim: PersistentVolumeClaim, node_name: str) -> None:
        """The external provisioner: a PV for the claim, reachable from the node's topology."""
        sc = lister.storage_class(claim_class(claim))
        node = client.get_object("Node", node_name, "")
        labels = dict(getattr(node, "labels", {}) or {})
        csi_node = lister.csi_node(node_name)
        driver = CSI_DRIVER_OF_PLUGIN.get(sc.provisioner, sc.provisioner) if sc is not None else ""
        keys: tuple[str, ...] = ()
        if csi_node is not None:
            for d in csi_node.drivers:
                if d.name == driver:
                    keys = d.topology_keys
        if not keys and sc is not None and sc.allowed_topologies:
            keys = tuple(dict.fromkeys(k for term in sc.allowed_topologies for k, _ in term))
        expressions = [{"key": k, "operator": "In", "values": [labels[k]]} for k in keys if k in labels]
        name = f"pvc-{claim.uid}"
        spec: dict[str, Any] = {
            "capacity": {"storage": str(claim.request) if claim.request is not None else "0"},
            "accessModes": list(claim.access_modes),
            "storageClassName": claim_class(claim),
            "persistentVolumeReclaimPolicy": sc.reclaim_policy if sc is not None else "Delete",
            "volumeMode": claim.volume_mode or "Filesystem",
            "csi": {"driver": driver or "unknown", "volumeHandle": name},
            "claimRef": {"kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": claim.namespace,
                         "name": claim.name, "uid": claim.uid},
        }
        if expressions:
            spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": expressions}]}}
        manifest = {"apiVersion": "v1", "kind": "PersistentVolume",
                    "metadata": {"name": name, "annotations": {ANN_PROVISIONED_BY: driver}},
                    "spec": spec, "status": {"phase": "Bound"}}
        pv = parse_persistent_volume(manifest)
        client.add_object(pv)
        current = lister.pvc(claim.namespace, claim.name) or claim
        bound = with_annotation(with_volume_name(current, name), ANN_BIND_COMPLETED, "yes")
        bound = with_annotation(bound, ANN_BOUND_BY_CONTROLLER, "yes")
        client.update_object(with_phase(bound, "Bound"))


def pod_claim_names(pod: Any) -> list[str]:
    """The names of the claims a pod's volumes use (claim and generic ephemeral volumes)."""
    out = []
    for v in pod.volumes:
        c = claim_name_of_volume(pod, v)
        if c is not None:
            out.append(c[0])
    return out

