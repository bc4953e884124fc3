"""The resourceclaim controller's part (upstream ``pkg/controller/resourceclaim/controller.go``):
claims created from a pod's ``resourceClaimTemplateName`` entries, and the clean-up when a pod
goes away.

:func:`pod_added` runs when a pod is added to a :class:`~fastsched.Scheduler` (before it is
queued): for each ``spec.resourceClaims`` entry with a template and no
``status.resourceClaimStatuses`` entry yet, it creates the claim as the controller does --
``generateName`` ``<pod>-<claim>-`` (both parts shortened proportionally when longer than 57
characters), so the name is ``<pod>-<claim>-<5 random characters>``; the template's labels and
annotations plus ``resource.kubernetes.io/pod-claim-name: <claim>``; an owner reference to the pod
(controller, blockOwnerDeletion); the template's ``spec.spec`` -- and records it in the pod's
``status.resourceClaimStatuses``. A missing template leaves the entry out (the controller retries;
DynamicResources' PreEnqueue keeps the pod waiting with ``ResourceClaim not created yet``) until
:func:`template_added` sees it.

In a cluster the controller does this asynchronously, shortly after the pod is created; doing it
before the pod is queued gives the same outcome without the first, failing attempt.

:func:`pod_removed` is the controller's handling of a deleted pod (``syncClaim``), with the
garbage collector's: the pod is removed from the ``reservedFor`` of every claim it names that is
reserved for it, a claim left without consumers is deallocated if it carries the controller's
finalizer (every allocation the scheduler writes adds it) and loses the finalizer once
unallocated, and the claims only the pod owns (generated from its templates) are deleted.

PodGroups (DRAWorkloadResourceClaims; without the gate the API server drops a PodGroup's
``spec.resourceClaims``, so none of this happens): :func:`pod_group_added` creates the claims of a
PodGroup's template entries -- ``generateName`` ``<podgroup>-<claim>-``, owned by the PodGroup
(``scheduling.k8s.io/v1beta1``) -- and records them in its ``status.resourceClaimStatuses``. A
member pod's entry equal to one of the group's (``resourceclaim.BindTo``) resolves to the group's
claim (the PodGroup-owned claim annotated with the entry's name) instead of getting one of its own;
until the group's claim exists the entry waits, as the controller's retry. A member whose PodGroup
does not exist yet gets none of its claims (upstream's ``syncPod`` fails on the PodGroup lookup
and retries); :func:`pod_group_added` and :func:`template_added` then give the waiting members
theirs. :func:`pod_group_removed` drops a deleted group from the ``reservedFor`` of the claims it
names (deallocating claims left without consumers, as for a pod); the garbage collector deletes the claims it
owns.
"""
from __future__ import annotations

from typing import Any

from ..api.decode import SUPPORTED_KINDS
from ..api.objects import OwnerReference
from ..api.resource import FINALIZER, RESOURCE_API_VERSION, ResourceClaim, claim_with_status

__all__ = ["pod_added", "pod_removed", "owner_removed", "collect", "template_added", "pod_group_added", "has_unresolved_templates", "pod_group_removed", "pod_group_members_ready",
           "POD_CLAIM_NAME_ANNOTATION", "generate_name_base"]

#: ``schedulingapi.SchemeGroupVersion``: the API version of a PodGroup owner reference
POD_GROUP_API_VERSION = "scheduling.k8s.io/v1beta1"
#: ``schedulingapi.GroupName``: a PodGroup's ``reservedFor`` entry's ``apiGroup``
SCHEDULING_GROUP = "scheduling.k8s.io"

#: ``resourceclaim.podResourceClaimAnnotation``
POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
#: leave room for "-" and 5 random characters in a 63-character name
_MAX_BASE_LEN = 57


def generate_name_base(pod_name: str, claim_name: str) -> str:
    """The controller's ``generateName`` for a claim of ``pod_name`` from template entry
    ``claim_name``."""
    generate_name = f"{pod_name}-{claim_name}-"
    if len(generate_name) > _MAX_BASE_LEN:
        n = len(generate_name)
        generate_name = pod_name[:len(pod_name) * _MAX_BASE_LEN // n] + "-" + \
            claim_name[:len(claim_name) * _MAX_BASE_LEN // n]
    return generate_name


def _status_names(pod: Any) -> set[str]:
    return {s.get("name") for s in pod.resource_claim_statuses}


def _template_entries(pod: Any) -> list[tuple[str, str]]:
    out = []
    for entry in pod.resource_claims:
        template = entry.get("resourceClaimTemplateName") or entry.get("resource_claim_template_name")
        if template and not (entry.get("resourceClaimName") or entry.get("resource_claim_name")):
            out.append((entry.get("name", ""), template))
    return out


def has_unresolved_templates(pod: Any) -> bool:
    """Some template entry of ``pod`` has no ``status.resourceClaimStatuses`` entry yet."""
    have = _status_names(pod)
    return any(name not in have for name, _ in _template_entries(pod))


def _group_entry(pod_group: Any, entry: Any) -> bool:
    """``BindTo`` names the PodGroup: the group has an entry with the pod entry's name, claim
    name and template name."""
    name = entry.get("name", "")
    claim = entry.get("resourceClaimName") or entry.get("resource_claim_name")
    template = entry.get("resourceClaimTemplateName") or entry.get("resource_claim_template_name")
    return any(g.name == name and g.resource_claim_name == claim and g.resource_claim_template_name == template
               for g in pod_group.resource_claims)


def _pod_group_claim(client: Any, pod_group: Any, claim_name: str) -> Any:
    """``findPodGroupResourceClaim``: the claim controlled by the PodGroup and annotated with the
    group's claim entry name, or None."""
    for claim in client.list_objects("ResourceClaim", pod_group.namespace):
        if (_controlled_by(claim, pod_group)
                and (claim.annotations or {}).get(POD_CLAIM_NAME_ANNOTATION) == claim_name):
            return claim
    return None


def pod_added(client: Any, pod: Any) -> Any:
    """Create the pod's claims from its templates (see the module doc); the pod with its
    ``status.resourceClaimStatuses`` (the same object when nothing was created)."""
    entries = _template_entries(pod)
    if not entries:
        return pod
    pod_group = None
    group_name = pod.pod_group_name
    if group_name is not None:
        # getPodGroup: a member whose PodGroup is not there yet waits for it, every claim of it
        pod_group = client.get_object("PodGroup", group_name, pod.namespace)
        if pod_group is None:
            return pod
    have = _status_names(pod)
    statuses = list(pod.resource_claim_statuses)
    by_name = {e.get("name", ""): e for e in pod.resource_claims}
    for claim_name, template_name in entries:
        if claim_name in have:
            continue
        if pod_group is not None and _group_entry(pod_group, by_name[claim_name]):
            # the group's claim (handleClaim: findPodGroupResourceClaim); none yet: wait for it
            claim = _pod_group_claim(client, pod_group, claim_name)
            if claim is not None:
                statuses.append({"name": claim_name, "resourceClaimName": claim.name})
            continue
        # (a new pod owns no claim yet, so the controller's lookup of an existing generated claim
        # is skipped: it would scan every claim of the namespace for each pod)
        template = client.get_object("ResourceClaimTemplate", template_name, pod.namespace)
        if template is None:
            continue  # the controller retries when the template appears
        claim = _create_claim(client, pod, claim_name, template)
        statuses.append({"name": claim_name, "resourceClaimName": claim.name})
    if len(statuses) == len(pod.resource_claim_statuses):
        return pod
    manifest = dict(pod.manifest) if pod.manifest else {}
    if manifest:
        manifest["status"] = {**(manifest.get("status") or {}),
                              "resourceClaimStatuses": [dict(s) for s in statuses]}
    return pod.with_resource_claim_statuses(tuple(statuses), manifest)


def _controlled_by(obj: Any, owner: Any) -> bool:
    return any(ref.controller and ref.uid == owner.uid for ref in obj.owner_references)


def _create_claim(client: Any, pod: Any, claim_name: str, template: Any) -> ResourceClaim:
    """The claim for ``pod``'s entry ``claim_name`` -- or, ``pod`` a PodGroup, for the group's
    entry (owned by the group)."""
    base = generate_name_base(pod.name, claim_name)
    if pod.KIND == "PodGroup":
        owner_api_version, owner_kind = POD_GROUP_API_VERSION, "PodGroup"
    else:
        owner_api_version, owner_kind = "v1", "Pod"
    names = getattr(client, "names", None)
    while True:
        if names is not None:
            name = names.generate(base)
        else:  # an ObjectStore: a deterministic suffix
            name = f"{base[:58]}{len(client.list_objects('ResourceClaim')):05d}"[:63]
        if client.get_object("ResourceClaim", name, pod.namespace) is None:
            break
    metadata = dict(template.claim_metadata)
    annotations = dict(metadata.get("annotations") or {})
    annotations[POD_CLAIM_NAME_ANNOTATION] = claim_name
    manifest = {
        "apiVersion": RESOURCE_API_VERSION,
        "kind": "ResourceClaim",
        "metadata": {
            "name": name,
            "generateName": base,
            "namespace": pod.namespace,
            "annotations": annotations,
            "ownerReferences": [{"apiVersion": owner_api_version, "kind": owner_kind, "name": pod.name,
                                 "uid": pod.uid, "controller": True, "blockOwnerDeletion": True}],
        },
        "spec": template.claim_spec,  # shared, as parsed objects never change their manifest
    }
    if metadata.get("labels"):
        manifest["metadata"]["labels"] = dict(metadata["labels"])
    # the spec is the template's, which the API server validated; the generated name and the
    # metadata are valid by construction, so the claim is admitted without a second validation
    claim = ResourceClaim(name=name, namespace=pod.namespace, generate_name=base,
                          labels=manifest["metadata"].get("labels") or {}, annotations=annotations,
                          owner_references=(OwnerReference(kind=owner_kind, name=pod.name, uid=pod.uid,
                                                           controller=True, api_version=owner_api_version),),
                          requests=template.requests, constraints=template.constraints, config=template.config,
                          manifest=manifest)
    claim.admitted = True
    client.add_object(claim)
    return claim


def template_added(client: Any, template: Any, pending_pods: Any) -> list:
    """Pods among ``pending_pods`` that reference ``template`` and now got their claims: a list
    of (old pod, new pod) for the caller to update. (PodGroups referencing it: the caller's
    :func:`pod_group_added` over them.)"""
    out = []
    for pod in pending_pods:
        if pod.namespace != template.namespace:
            continue
        if any(t == template.name for _, t in _template_entries(pod)):
            new = pod_added(client, pod)
            if new is not pod:
                out.append((pod, new))
    return out


def _group_template_entries(pod_group: Any) -> list[tuple[str, str]]:
    return [(e.name, e.resource_claim_template_name) for e in pod_group.resource_claims
            if e.resource_claim_template_name is not None and e.resource_claim_name is None]


def pod_group_added(client: Any, pod_group: Any) -> Any:
    """``syncPodGroup``: create the claims of the group's template entries that have no
    ``status.resourceClaimStatuses`` entry yet (a missing template: retried when it appears);
    the PodGroup with its statuses (the same object when nothing was created)."""
    entries = _group_template_entries(pod_group)
    if not entries or pod_group.deletion_timestamp is not None:
        return pod_group
    have = _status_names(pod_group)
    statuses = list(pod_group.resource_claim_statuses)
    for claim_name, template_name in entries:
        if claim_name in have:
            continue
        # (a claim the group already owns: created before its status was written)
        claim = _pod_group_claim(client, pod_group, claim_name)
        if claim is None:
            template = client.get_object("ResourceClaimTemplate", template_name, pod_group.namespace)
            if template is None:
                continue
            claim = _create_claim(client, pod_group, claim_name, template)
        statuses.append({"name": claim_name, "resourceClaimName": claim.name})
    if len(statuses) == len(pod_group.resource_claim_statuses):
        return pod_group
    manifest = dict(pod_group.manifest) if pod_group.manifest else {}
    if manifest:
        manifest["status"] = {**(manifest.get("status") or {}),
                              "resourceClaimStatuses": [dict(s) for s in statuses]}
    new = pod_group.replace(resource_claim_statuses=tuple(statuses), manifest=manifest)
    new.admitted = pod_group.admitted
    return new


def pod_group_members_ready(client: Any, pod_group: Any, pending_pods: Any) -> list:
    """The PodGroup appeared or got its claims: its waiting members (among ``pending_pods``)
    that now get theirs, as (old pod, new pod) for the caller to update."""
    out = []
    for pod in pending_pods:
        if pod.namespace != pod_group.namespace or pod.pod_group_name != pod_group.name:
            continue
        new = pod_added(client, pod)
        if new is not pod:
            out.append((pod, new))
    return out


def pod_group_removed(client: Any, pod_group: Any) -> None:
    """A PodGroup was deleted (``syncClaim`` for the claims reserved for it): its entry leaves
    the ``reservedFor`` of the claims its ``spec.resourceClaims`` name (see :func:`_release`). The
    claims it owns go with it (the garbage collector)."""
    names = [e.resource_claim_name for e in pod_group.resource_claims if e.resource_claim_name]
    for name in dict.fromkeys(names):
        claim = client.get_object("ResourceClaim", name, pod_group.namespace)
        if claim is not None:
            _release(client, claim, pod_group.uid, SCHEDULING_GROUP, "podgroups")


def pod_removed(client: Any, pod: Any) -> None:
    """A pod was deleted: the claims it names (``resourceclaim.PodClaims``) that it alone owns
    are deleted (the garbage collector: the claims generated from its templates); from the others
    it is released (see :func:`_release`)."""
    names = []
    for entry in pod.resource_claims:
        name = entry.get("resourceClaimName") or entry.get("resource_claim_name")
        if name:
            names.append(name)
    names += [s.get("resourceClaimName") for s in pod.resource_claim_statuses if s.get("resourceClaimName")]
    for name in dict.fromkeys(names):
        claim = client.get_object("ResourceClaim", name, pod.namespace)
        if claim is not None:
            owner_removed(client, claim, pod.uid)


def owner_removed(client: Any, claim: ResourceClaim, pod_uid: str) -> None:
    """A pod that names or owns ``claim`` (controlling it or not, naming it or not) was deleted:
    ``syncClaim`` releases it (see :func:`_release`), then, when the pod was the claim's only
    owner (generated from its template, or DynamicResources' claim for its extended resources), the garbage collector
    deletes the claim (:func:`collect`) once every owner is gone: the garbage collector looks
    each owner up (``classifyReferences``), and a reference to an object that does not exist,
    or exists under another uid, is dangling: a claim co-owned by a pod deleted earlier goes with
    the last owner."""
    _release(client, claim, pod_uid, "", "pods")
    if claim.owner_references and all(ref.uid == pod_uid or _owner_absent(client, ref, claim.namespace)
                                      for ref in claim.owner_references):
        current = client.get_object("ResourceClaim", claim.name, claim.namespace)
        if current is not None:
            collect(client, current)


def _owner_absent(client: Any, ref: Any, namespace: str) -> bool:
    """The garbage collector's lookup of an owner (``isDangling``): absent when no object of its
    kind has its name in the claim's namespace (or cluster-wide, for a cluster-scoped kind), or
    the one that does has another uid. An owner of a kind fastsched does not model is not absent:
    upstream resolves the kind through the API's discovery first, and one the API server does
    not serve is an error (the claim is retried, never deleted) while one it serves may exist
    (fastsched skips objects of such kinds when loading); a manifest of such a kind a controller
    created here is looked up like the others."""
    if ref.kind not in SUPPORTED_KINDS:  # (a rare path: objects() copies the manifests)
        created = client.objects(ref.kind) if hasattr(client, "objects") else ()  # (an ObjectStore: none)
        return bool(created) and not any((m.get("metadata") or {}).get("name") == ref.name
                                         and (m["metadata"].get("namespace") or "default") == namespace
                                         and m["metadata"].get("uid") == ref.uid for m in created)
    owner = client.get_object(ref.kind, ref.name, namespace)
    return owner is None or owner.uid != ref.uid


def collect(client: Any, claim: ResourceClaim) -> None:
    """The garbage collector deletes ``claim``, every owner of which is gone. With no finalizer it
    goes at once; otherwise the API server marks it terminating (``deletionTimestamp``) and it
    stays -- allocated while another consumer still reserves it, which the scheduler then
    refuses to new pods (``is being deleted``) -- until the finalizers go: ``syncClaim``'s
    branch for a deleted claim no one reserves deallocates it and drops the resourceclaim
    controller's finalizer at once; a consumer's later release does the same (see
    :func:`_release`)."""
    if claim.deletion_timestamp is None and claim.finalizers:
        clock = getattr(client, "clock", None)
        claim = _terminating(claim, clock.now() if clock is not None else 0.0)
        client.update_object(claim)
    if FINALIZER in claim.finalizers and not claim.reserved_for:
        claim = claim_with_status(claim, allocation=None,
                                  finalizers=[f for f in claim.finalizers if f != FINALIZER])
        client.update_object(claim)
    if not claim.finalizers:
        client.delete_object("ResourceClaim", claim.name, claim.namespace)


def _terminating(claim: ResourceClaim, now: float) -> ResourceClaim:
    """``claim`` with ``metadata.deletionTimestamp`` set (its manifest too)."""
    from datetime import datetime, timezone

    manifest = dict(claim.manifest or {})
    manifest["metadata"] = {**(manifest.get("metadata") or {}), "deletionTimestamp": datetime.fromtimestamp(
        int(now), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    new = claim.replace(deletion_timestamp=now, manifest=manifest)
    new.admitted = True  # (the API server's write: the object was admitted when created)
    return new


def _release(client: Any, claim: ResourceClaim, uid: str, api_group: str, resource: str) -> None:
    """``syncClaim`` for a claim reserved for a deleted consumer: the consumer leaves
    ``reservedFor``; a claim left with no consumer is deallocated if it has the controller's
    finalizer (upstream's sanity check: every allocation the scheduler writes adds it; one
    without it keeps its allocation), then the finalizer goes once the claim is unallocated."""
    def mine(ref: Any) -> bool:
        return ref.get("uid") == uid and (ref.get("apiGroup") or "") == api_group and ref.get("resource") == resource
    if not any(mine(r) for r in claim.reserved_for):
        return
    reserved = [r for r in claim.reserved_for if not mine(r)]
    changes: dict[str, Any] = {"reserved_for": reserved}
    if not reserved and FINALIZER in claim.finalizers and claim.allocation is not None:
        changes["allocation"] = None
    if FINALIZER in claim.finalizers and (claim.allocation is None or "allocation" in changes):
        changes["finalizers"] = [f for f in claim.finalizers if f != FINALIZER]
    claim = claim_with_status(claim, **changes)
    client.update_object(claim)
    if claim.deletion_timestamp is not None:  # terminating (collect): gone with its last finalizer
        collect(client, claim)
