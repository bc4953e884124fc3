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
"""
from __future__ import annotations

from typing import Any, Iterable

from ..api.storage import (ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, NOT_SUPPORTED_PROVISIONER,
                           WAIT_FOR_FIRST_CONSUMER, PersistentVolume, PersistentVolumeClaim, claim_class,
                           parse_persistent_volume, pv_bound_to_claim, with_annotation, with_claim_ref,
                           with_phase, with_volume_name)
from ..plugins.volumebinding.binder import find_matching_volume

__all__ = ["bind_immediate_claims", "claim_is_unbound"]


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
        "metadata": {"name": name, "annotations": {"pv.kubernetes.io/provisioned-by": sc.provisioner}},
        "spec": spec, "status": {"phase": "Bound"}})


def claim_is_unbound(claim: PersistentVolumeClaim) -> bool:
    """Whether the PV controller still has to bind ``claim`` (or VolumeBinding, for a claim that
    waits for a consumer)."""
    if claim.deletion_timestamp is not None or claim.phase == "Bound":
        return False
    return not (claim.volume_name and ANN_BIND_COMPLETED in claim.annotations)


def bind_immediate_claims(client: Any, claims: Iterable[PersistentVolumeClaim]) -> int:
    """Bind (or provision for) those of ``claims`` (unbound ones, in the order they were added)
    that do not wait for a consumer, through ``client`` (the Scheduler: ``list_objects``,
    ``get_object``, ``add_object``, ``update_object``). Returns how many claims were bound."""
    claims = [c for c in claims if claim_is_unbound(c)]
    if not claims:
        return 0
    classes = {sc.name: sc for sc in client.list_objects("StorageClass")}
    volumes = client.list_objects("PersistentVolume")
    taken: set[str] = set()
    bound = 0
    for claim in claims:
        cls = claim_class(claim)
        sc = classes.get(cls) if cls else None
        if cls and sc is None:
            continue  # the class does not exist (yet): the claim stays pending
        if sc is not None and sc.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER:
            continue  # VolumeBinding binds it when a pod is scheduled
        if claim.volume_name:  # pre-bound by the user to a volume
            pv = client.get_object("PersistentVolume", claim.volume_name, "")
            if pv is None or (pv.claim_ref is not None and not pv_bound_to_claim(pv, claim)):
                continue
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

