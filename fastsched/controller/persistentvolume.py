"""The PV controller's binding of claims that do not wait for a consumer (``pkg/controller/volume/
persistentvolume``, ``syncUnboundClaim``), and the external provisioner's part for them.

A claim whose class binds ``Immediate`` (or that names no class) is bound by the PV controller as
soon as a matching volume exists, before any pod uses it: VolumeBinding's PreFilter rejects a pod
whose such claims are still unbound ("pod has unbound immediate PersistentVolumeClaims") and waits
for that binding. fastsched runs no PV controller, so the Scheduler calls :func:`bind_immediate_claims`
whenever a claim, a volume or a class is added or changed:

* a claim that names a volume (``spec.volumeName``) is bound to it when it exists and is free or
  pre-bound to the claim;
* any other claim gets the smallest Available volume of its class that its selector, volume mode,
  access modes and size admit (``FindMatchingVolume`` with no node: node affinity not checked);
* failing that, a claim of a class with a provisioner gets a provisioned volume (no node affinity,
  or the class's first ``allowedTopologies`` term: the external provisioner picks one of the
  allowed topologies, fastsched the first).

Claims of a ``WaitForFirstConsumer`` class are left to VolumeBinding, as upstream; claims of a class
that does not exist stay pending, as the PV controller leaves them.

The default StorageClass (``storageclass.kubernetes.io/is-default-class: "true"``, or the beta
annotation; with several, the newest by ``creationTimestamp`` at the API server's one-second
resolution, then the first by name: ``util.GetDefaultClass``) is given

* by the **DefaultStorageClass admission plugin** (``plugin/pkg/admission/storage/storageclass/
  setdefault``, :func:`admit_claim`) to a claim created without a class (``spec.storageClassName``
  unset, not ``""``, and no beta class annotation);
* **retroactively** by the PV controller (``assignDefaultStorageClass`` in ``syncUnboundClaim``) to
  such an unbound claim for which no classless volume matches, when a default class exists by then.

When a claim is deleted, the volume bound to it is **reclaimed** (``reclaimVolume``,
:func:`reclaim_volumes`) by its ``persistentVolumeReclaimPolicy``: ``Retain`` makes it ``Released``
(no claim binds it again); ``Delete`` deletes a provisioned volume (``pv.kubernetes.io/provisioned-by``:
the external provisioner deletes it) and fails any other (``Failed``: no in-tree deleter);
``Recycle`` makes an NFS or hostPath volume ``Available`` again (claimRef cleared: the recycler
scrubbed it) and fails any other. (The garbage collector's part, deleting the claims a deleted pod
controls, i.e. its generic ephemeral volumes' claims, is the Scheduler's ``delete_pod``.)
"""
from __future__ import annotations

import math
from typing import Any, Iterable

from ..api.storage import (ANN_BETA_STORAGE_CLASS, ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, ANN_PROVISIONED_BY,
                           NOT_SUPPORTED_PROVISIONER, WAIT_FOR_FIRST_CONSUMER, PersistentVolume,
                           PersistentVolumeClaim, StorageClass, _with_manifest, claim_class,
                           parse_persistent_volume, pv_bound_to_claim, with_annotation, with_claim_ref,
                           with_phase, with_volume_name)
from ..plugins.volumebinding.binder import find_matching_volume

__all__ = ["bind_immediate_claims", "claim_is_unbound", "default_storage_class", "is_default_class",
           "claim_has_class", "admit_claim", "with_storage_class", "reclaim_volumes",
           "stamp_creation", "admitted", "ANN_DEFAULT_CLASS", "ANN_BETA_DEFAULT_CLASS", "ANN_PROVISIONED_BY"]

#: ``storageclass.kubernetes.io/is-default-class``: "true" marks the default StorageClass
ANN_DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
#: the beta spelling, still honoured upstream
ANN_BETA_DEFAULT_CLASS = "storageclass.beta.kubernetes.io/is-default-class"
#: the volume sources the in-tree recycler scrubs (``Recycle`` reclaim policy)
_RECYCLABLE_SOURCES = frozenset({"nfs", "hostPath"})


def is_default_class(sc: StorageClass) -> bool:
    """``util.IsDefaultAnnotation``: the GA or beta is-default-class annotation is "true"."""
    return sc.annotations.get(ANN_DEFAULT_CLASS) == "true" or sc.annotations.get(ANN_BETA_DEFAULT_CLASS) == "true"


def default_storage_class(classes: Iterable[StorageClass]) -> StorageClass | None:
    """``util.GetDefaultClass``: among the default classes, the newest by creationTimestamp (at
    one-second resolution, as the API server stores it), then the first by name; None when no
    class is marked default. A class without a creationTimestamp counts as the oldest."""
    defaults = [sc for sc in classes if is_default_class(sc)]
    if not defaults:
        return None

    def created(sc: StorageClass) -> float:
        ts = sc.creation_timestamp
        return -math.inf if ts is None else math.floor(ts)

    return min(defaults, key=lambda sc: (-created(sc), sc.name))


def claim_has_class(claim: PersistentVolumeClaim) -> bool:
    """``PersistentVolumeClaimHasClass``: the beta class annotation, or ``spec.storageClassName``
    set (``""`` included)."""
    return ANN_BETA_STORAGE_CLASS in claim.annotations or claim.storage_class_name is not None


def with_storage_class(claim: PersistentVolumeClaim, name: str) -> PersistentVolumeClaim:
    """The claim with ``spec.storageClassName`` set."""
    return _with_manifest(claim, lambda m: m.setdefault("spec", {}).__setitem__("storageClassName", name),
                          storage_class_name=name)


def admit_claim(claim: PersistentVolumeClaim, classes: Iterable[StorageClass]) -> PersistentVolumeClaim:
    """The DefaultStorageClass admission plugin on a claim's creation: a claim without a class gets
    the default class's name (unchanged when it has a class or no class is default). A claim whose
    ``status.phase`` is already ``Bound`` comes from a cluster dump: it was admitted when it was
    created, and is kept as it is."""
    if claim_has_class(claim) or claim.phase == "Bound":
        return claim
    default = default_storage_class(classes)
    return claim if default is None else with_storage_class(claim, default.name)


def stamp_creation(obj: Any, now: float) -> Any:
    """The API server's ``metadata.creationTimestamp`` on create, for an object given without one
    (the default StorageClass is chosen by it)."""
    if obj.creation_timestamp is not None:
        return obj
    return _with_manifest(obj, lambda m: None, creation_timestamp=float(now))


def admitted(obj: Any, classes: Iterable[StorageClass], now: float) -> Any:
    """What the API server's storage admission does to a new claim or class: a class gets its
    ``creationTimestamp`` (when not given), a claim the default class (:func:`admit_claim`)."""
    if isinstance(obj, PersistentVolumeClaim):
        return admit_claim(obj, classes)
    if isinstance(obj, StorageClass):
        return stamp_creation(obj, now)
    return obj


def reclaim_volumes(client: Any, claim: PersistentVolumeClaim) -> list[str]:
    """The PV controller after ``claim`` was deleted (``syncVolume`` of its volume: the claim is
    gone, ``reclaimVolume``): the volume bound to it is released, deleted or recycled by its
    reclaim policy (module docstring). Returns the names of the volumes deleted."""
    deleted: list[str] = []
    pv = client.get_object("PersistentVolume", claim.volume_name, "") if claim.volume_name else None
    for pv in [pv] if pv is not None else []:   # a claim without spec.volumeName holds no volume
        ref = pv.claim_ref
        if ref is None or ref.name != claim.name or ref.namespace != claim.namespace:
            continue
        if (ref.uid and ref.uid != claim.uid) or (not ref.uid and pv.phase != "Bound"):
            continue  # bound to an earlier claim of that name, or pre-bound by name and waiting
        policy = pv.reclaim_policy
        if policy == "Delete" and pv.annotations.get(ANN_PROVISIONED_BY):
            client.delete_object("PersistentVolume", pv.name, "")
            deleted.append(pv.name)
        elif policy == "Recycle" and pv.source in _RECYCLABLE_SOURCES:
            client.update_object(with_phase(_without_claim_ref(pv), "Available"))
        elif policy in ("Delete", "Recycle"):
            client.update_object(with_phase(pv, "Failed"))
        else:
            client.update_object(with_phase(pv, "Released"))
    return deleted


def _without_claim_ref(pv: PersistentVolume) -> PersistentVolume:
    annotations = {k: v for k, v in pv.annotations.items() if k != ANN_BOUND_BY_CONTROLLER}

    def mutate(m: dict) -> None:
        (m.get("spec") or {}).pop("claimRef", None)
        (m.get("metadata") or {}).get("annotations", {}).pop(ANN_BOUND_BY_CONTROLLER, None)

    return _with_manifest(pv, mutate, claim_ref=None, annotations=annotations)


def _bound_claim(claim: PersistentVolumeClaim, pv_name: str) -> PersistentVolumeClaim:
    bound = with_volume_name(claim, pv_name)
    bound = with_annotation(bound, ANN_BIND_COMPLETED, "yes")
    bound = with_annotation(bound, ANN_BOUND_BY_CONTROLLER, "yes")
    return with_phase(bound, "Bound")


def _provisioned_volume(claim: PersistentVolumeClaim, sc: Any) -> PersistentVolume:
    name = f"pvc-{claim.uid}"
    spec: dict[str, Any] = {
        "capacity": {"storage": str(claim.request) if claim.request is not None else "0"},
        "accessModes": list(claim.access_modes),
        "storageClassName": claim_class(claim),
        "persistentVolumeReclaimPolicy": sc.reclaim_policy,
        "volumeMode": claim.volume_mode or "Filesystem",
        "csi": {"driver": sc.provisioner, "volumeHandle": name},
        "claimRef": {"kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": claim.namespace,
                     "name": claim.name, "uid": claim.uid},
    }
    if sc.allowed_topologies:
        term = sc.allowed_topologies[0]
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": key, "operator": "In", "values": list(values)} for key, values in term]}]}}
    return parse_persistent_volume({
        "apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": name, "annotations": {ANN_PROVISIONED_BY: sc.provisioner}},
        "spec": spec, "status": {"phase": "Bound"}})


def claim_is_unbound(claim: PersistentVolumeClaim) -> bool:
    """Whether the PV controller still has to bind ``claim`` (or VolumeBinding, for a claim that
    waits for a consumer): ``syncClaim`` keys off the ``pv.kubernetes.io/bind-completed``
    annotation, not the phase, so a claim written ``Bound`` without it (a hand-made or trimmed
    dump) goes through ``syncUnboundClaim``, which completes the binding to its ``volumeName``."""
    if claim.deletion_timestamp is not None:
        return False
    return ANN_BIND_COMPLETED not in claim.annotations


def bind_immediate_claims(client: Any, claims: Iterable[PersistentVolumeClaim]) -> int:
    """Bind (or provision for) those of ``claims`` (unbound ones, in the order they were added)
    that do not wait for a consumer, through ``client`` (the Scheduler: ``list_objects``,
    ``get_object``, ``add_object``, ``update_object``). Returns how many claims were bound."""
    claims = [c for c in claims if claim_is_unbound(c)]
    if not claims:
        return 0
    class_list = client.list_objects("StorageClass")
    classes = {sc.name: sc for sc in class_list}
    volumes = client.list_objects("PersistentVolume")
    taken: set[str] = set()
    bound = 0
    default: list[StorageClass | None] = []   # looked up once, when first needed
    for claim in claims:
        if not claim_has_class(claim) and not claim.volume_name:
            pv = find_matching_volume(claim, volumes, None, taken)
            if pv is None:
                # no classless volume: the retroactive default class (assignDefaultStorageClass)
                if not default:
                    default.append(default_storage_class(class_list))
                if default[0] is not None:
                    claim = with_storage_class(claim, default[0].name)
                    client.update_object(claim)   # then synced again with its class
        cls = claim_class(claim)
        sc = classes.get(cls) if cls else None
        if claim.volume_name:
            # pre-bound by the user to a volume, whatever the class and its binding mode
            # (syncUnboundClaim's VolumeName branch): bound when the volume exists and is free
            # or already claimed by this claim, which completes a binding written without the
            # bind-completed annotation
            pv = client.get_object("PersistentVolume", claim.volume_name, "")
            if pv is None or (pv.claim_ref is not None and not pv_bound_to_claim(pv, claim)):
                continue
        elif cls and sc is None:
            continue  # the class does not exist (yet): the claim stays pending
        elif sc is not None and sc.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER:
            continue  # VolumeBinding binds it when a pod is scheduled
        else:
            pv = find_matching_volume(claim, volumes, None, taken)  # no node: affinity not checked
        if pv is not None:
            taken.add(pv.name)
            pre_bound = pv.claim_ref is not None
            client.update_object(with_phase(with_claim_ref(pv, claim, bound_by_controller=not pre_bound), "Bound"))
            client.update_object(_bound_claim(claim, pv.name))
            bound += 1
        elif sc is not None and sc.provisioner and sc.provisioner != NOT_SUPPORTED_PROVISIONER:
            pv = _provisioned_volume(claim, sc)
            client.add_object(pv)
            client.update_object(_bound_claim(claim, pv.name))
            bound += 1
    return bound

