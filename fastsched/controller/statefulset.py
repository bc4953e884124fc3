"""The StatefulSet controller's sync (upstream ``pkg/controller/statefulset``:
``stateful_set_control.go`` ``updateStatefulSet``/``processReplica``/``processCondemned``,
``stateful_set_utils.go``, ``stateful_pod_control.go``).

Pods are claimed like a ReplicaSet's, restricted to members of the set (``isMemberOf``: the name
is ``<set>-<ordinal>``). Ordinals ``start .. start+replicas-1`` (``spec.ordinals.start``) are the
replicas; other members are condemned. For each missing replica a pod is created
(``newStatefulSetPod``):

* name ``<set>-<ordinal>`` (``generateName: <set>-`` kept, as ``GetPodFromTemplate`` sets it);
* labels: the template's plus ``statefulset.kubernetes.io/pod-name``,
  ``apps.kubernetes.io/pod-index`` (PodIndexLabel) and ``controller-revision-hash: <revision>``;
* ``spec.hostname: <pod>``, ``spec.subdomain: <serviceName>``;
* each volumeClaimTemplate ``T`` becomes the volume ``T`` with ``persistentVolumeClaim.claimName:
  <T>-<set>-<ordinal>`` (replacing a template volume of the same name; claim volumes first, in
  template order: upstream iterates a Go map here, so its order varies);
* the claims themselves, when no PersistentVolumeClaim of that name exists, are returned as raw
  manifests in ``Changes.create_manifests`` (fastsched does not model PVCs): the template's
  metadata with the name, the namespace and the labels merged with the set's
  ``selector.matchLabels``; an ownerReference to the set when
  ``persistentVolumeClaimRetentionPolicy.whenDeleted`` is Delete.

Terminal (Succeeded/Failed) replicas are deleted (recreated on a later pass, as upstream). With
``podManagementPolicy: Parallel`` everything happens at once and condemned pods are all deleted.
``OrderedReady`` is upstream's monotonic mode only with ``ControllerOptions.strict_ordered_ready``
(see there); by default it is handled like Parallel.

Deviations: the revision (``<set>-<hash>``) hashes Go's ``json.Marshal`` of
``{"spec":{"template":<template + "$patch":"replace">}}`` with FNV-32 as upstream does, but over the
template as given: upstream's bytes are the API server's fully defaulted template, so the digits
match only for templates taken from a live cluster (and even then Go's encoder may order fields
differently). Existing pods of an older revision are not rolled (as with ``OnDelete``); PVC
``whenScaled`` owner references are not set.
"""
from __future__ import annotations

import copy
import re
from typing import Any

from ..api import Pod
from ..api.names import safe_encode_string
from ..api.workloads import (
    DELETE,
    LABEL_CONTROLLER_REVISION_HASH,
    LABEL_POD_INDEX,
    LABEL_STATEFULSET_POD_NAME,
    PARALLEL,
    StatefulSet,
)
from ..util.field import go_json
from .common import (
    Changes,
    Context,
    claim,
    claim_candidates,
    fnv32,
    is_pod_available,
    is_pod_ready,
    is_pod_terminal,
    pod_from_template,
    selector_match,
)

__all__ = ["reconcile_stateful_set", "revision_name", "pod_ordinal"]

_STATEFUL_POD_RE = re.compile(r"(.*)-([0-9]+)$")


def _parent_and_ordinal(pod: Pod) -> tuple[str, int]:
    """``getParentNameAndOrdinal``: ("", -1) when the name has no ``-<number>`` suffix."""
    match = _STATEFUL_POD_RE.fullmatch(pod.name)
    if match is None:
        return "", -1
    ordinal = int(match.group(2))
    return (match.group(1), ordinal) if ordinal < 2**31 else (match.group(1), -1)


def pod_ordinal(pod: Pod) -> int:
    return _parent_and_ordinal(pod)[1]


def revision_name(sts: StatefulSet) -> str:
    """``ControllerRevisionName(set.Name, HashControllerRevision(newRevision(set)))``."""
    template = copy.deepcopy(dict(sts.template))
    template["$patch"] = "replace"
    data = go_json({"spec": {"template": template}}).encode("utf-8")
    if sts.collision_count is not None:
        data += str(sts.collision_count).encode()
    prefix = sts.name[:223]
    return f"{prefix}-{safe_encode_string(str(fnv32(data)))}"


def _is_running_and_ready(pod: Pod) -> bool:
    return pod.phase == "Running" and is_pod_ready(pod)


def _is_healthy(pod: Pod) -> bool:
    return _is_running_and_ready(pod) and pod.deletion_timestamp is None


def reconcile_stateful_set(sts: StatefulSet, ctx: Context) -> Changes:
    """What ``updateStatefulSet`` does for ``sts`` now; see the module docstring."""
    changes = Changes()
    if sts.deletion_timestamp is not None:
        return changes
    selects = selector_match(sts.selector)
    claimed, adopted, released = claim(
        sts, lambda pod: selects(pod) and _parent_and_ordinal(pod)[0] == sts.name,
        claim_candidates(ctx.view, "Pod", sts))
    changes.adopt_pods.extend(adopted)
    changes.release_pods.extend(released)
    start = sts.ordinals_start
    end = start + sts.replicas - 1
    replicas: dict[int, Pod] = {}
    condemned: list[Pod] = []
    pod: Pod | None  # claimed pods below, then the replica of an ordinal, which may be missing
    for pod in claimed:
        ordinal = pod_ordinal(pod)
        if start <= ordinal <= end:
            replicas[ordinal] = pod
        elif ordinal >= 0:
            condemned.append(pod)
    condemned.sort(key=pod_ordinal, reverse=True)
    monotonic = ctx.options.strict_ordered_ready and sts.pod_management_policy != PARALLEL
    revision = revision_name(sts)

    first_unhealthy: Pod | None = None
    for ordinal in range(start, end + 1):
        pod = replicas.get(ordinal)
        if pod is None or not _is_healthy(pod):
            first_unhealthy = pod
            break
    if first_unhealthy is None:
        for pod in reversed(condemned):
            if not _is_healthy(pod):
                first_unhealthy = pod
                break

    for ordinal in range(start, end + 1):
        pod = replicas.get(ordinal)
        if pod is None:
            created = _create(sts, ordinal, revision, ctx, changes)
            if monotonic and created:
                return changes
            if not created:
                return changes  # the name is taken by a pod the set does not own: upstream errors out
            continue
        if is_pod_terminal(pod):
            if pod.deletion_timestamp is None:
                changes.delete_pods.append(pod)
            if monotonic:
                return changes
            continue
        if monotonic and (pod.deletion_timestamp is not None or not _is_running_and_ready(pod)
                          or not is_pod_available(pod, sts.min_ready_seconds, ctx.now)):
            return changes

    for pod in condemned:
        if pod.deletion_timestamp is not None:
            if monotonic:
                return changes
            continue
        if monotonic and pod is not first_unhealthy and (
                not _is_running_and_ready(pod) or not is_pod_available(pod, sts.min_ready_seconds, ctx.now)):
            return changes
        changes.delete_pods.append(pod)
        if monotonic:
            return changes
    return changes


def _create(sts: StatefulSet, ordinal: int, revision: str, ctx: Context, changes: Changes) -> bool:
    """``CreateStatefulPod``: the claims that do not exist yet, then the pod. False (nothing
    created) when the pod's name is already taken."""
    name = f"{sts.name}-{ordinal}"
    if ctx.taken("Pod", sts.namespace, name):
        return False
    ctx.reserve("Pod", sts.namespace, name)
    manifest = pod_from_template(sts.template, sts, name=name)
    metadata = manifest["metadata"]
    labels = metadata["labels"]
    labels[LABEL_STATEFULSET_POD_NAME] = name
    labels[LABEL_POD_INDEX] = str(ordinal)
    labels[LABEL_CONTROLLER_REVISION_HASH] = revision
    spec = manifest["spec"]
    spec["hostname"] = name
    if sts.service_name:  # Subdomain = ServiceName; "" is omitted from the JSON
        spec["subdomain"] = sts.service_name
    claims = _claims(sts, ordinal)
    if claims or spec.get("volumes"):
        volumes: list[dict[str, Any]] = [
            {"name": template_name, "persistentVolumeClaim": {"claimName": claim["metadata"]["name"]}}
            for template_name, claim in claims]
        claimed_names = {template_name for template_name, _ in claims}
        volumes.extend(volume for volume in spec.get("volumes") or () if volume.get("name") not in claimed_names)
        spec["volumes"] = volumes
    for _, claim_manifest in claims:
        claim_name = claim_manifest["metadata"]["name"]
        if not ctx.taken("PersistentVolumeClaim", sts.namespace, claim_name):
            ctx.reserve("PersistentVolumeClaim", sts.namespace, claim_name)
            changes.create_manifests.append(claim_manifest)
    changes.create_pods.append(manifest)
    return True


def _claims(sts: StatefulSet, ordinal: int) -> list[tuple[str, dict[str, Any]]]:
    """``getPersistentVolumeClaims``: (template name, claim manifest) in template order."""
    match_labels = dict((sts.selector_spec or {}).get("matchLabels") or {})
    claims = []
    for template in sts.volume_claim_templates:
        template_metadata = dict(template.get("metadata") or {})
        template_name = template_metadata.get("name", "")
        metadata = copy.deepcopy(template_metadata)
        metadata["name"] = f"{template_name}-{sts.name}-{ordinal}"
        metadata["namespace"] = sts.namespace
        if metadata.get("labels") is not None:
            metadata["labels"] = {**metadata["labels"], **match_labels}
        else:
            metadata["labels"] = match_labels
        if sts.pvc_retention_when_deleted == DELETE:
            metadata["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": sts.name,
                                            "uid": sts.uid}]
        claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": metadata,
                 "spec": copy.deepcopy(dict(template.get("spec") or {}))}
        claims.append((template_name, claim))
    return claims
