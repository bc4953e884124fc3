"""The Deployment controller's sync (upstream ``pkg/controller/deployment``: ``sync.go``,
``deployment_controller.go``, ``util/deployment_util.go``), reduced to the end state of a rollout.

What is ported:

* ReplicaSets are claimed like pods: controlled by the Deployment and matching its selector (kept),
  orphans matching it (adopted: returned in ``update_objects`` with the controller reference added),
  controlled but no longer matching (released, likewise). A Deployment whose selector is empty
  ("selecting all pods") or that is being deleted does nothing.
* The new ReplicaSet is the oldest claimed one whose template equals the Deployment's ignoring the
  ``pod-template-hash`` label (``FindNewReplicaSet`` / ``EqualIgnoreHash``; equality is the
  manifests' with nil and empty maps/lists alike, close to ``Semantic.DeepEqual``).
* Without one, a ReplicaSet ``<deployment>-<hash>`` is created (``getNewReplicaSet``): template and
  selector get ``pod-template-hash: <hash>``, labels = the new template's labels, controller
  reference to the Deployment, the Deployment's annotations (minus upstream's skip list) plus
  ``deployment.kubernetes.io/revision`` (max of the old ones + 1), ``desired-replicas`` and
  ``max-replicas`` (replicas + maxSurge). A name taken by another object bumps the collision count
  and recomputes the hash, as upstream does across retries (the Deployment with its new
  ``status.collisionCount`` is then in ``update_objects``).

Deviations (documented simplifications):

* The hash is :func:`~fastsched.controller.common.compute_hash` (FNV-32a of the template's sorted
  JSON), not upstream's hash of a Go spew dump: same shape (1-10 characters of ``456789bcdf``),
  stable across runs, different digits.
* No rolling update is modelled: the new ReplicaSet gets ``spec.replicas`` at once and every older
  one is scaled to 0 (their pods deleted in the same pass), i.e. the rollout's end state
  (``Recreate`` without waiting for old pods to go). A fresh Deployment gets exactly what upstream
  gives it.
* A paused Deployment does nothing (upstream still scales its ReplicaSets proportionally).
* Revision history cleanup and status updates are not produced.

The ReplicaSets' pods are part of the result: every ReplicaSet created, scaled or already present
is reconciled with :func:`~fastsched.controller.replicaset.reconcile_replica_set` in the same pass,
so a Deployment's ``Changes`` hold its pods (``<deployment>-<hash>-<5 random>``) too.
"""
from __future__ import annotations

import copy
from typing import Any

from ..api import KubeObject
from ..api.workloads import (
    LABEL_POD_TEMPLATE_HASH,
    ROLLING_UPDATE,
    Deployment,
    ReplicaSet,
    parse_deployment,
    parse_replica_set,
)
from .common import (
    Changes,
    Context,
    claim,
    claim_candidates,
    compute_hash,
    controller_ref,
    scaled_value,
    selector_match,
    semantic_equal,
)
from .replicaset import reconcile_replica_set

__all__ = ["reconcile_deployment", "ANNOTATION_REVISION", "ANNOTATION_DESIRED_REPLICAS", "ANNOTATION_MAX_REPLICAS"]

ANNOTATION_REVISION = "deployment.kubernetes.io/revision"
ANNOTATION_REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
ANNOTATION_DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
ANNOTATION_MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
#: ``annotationsToSkip`` of deployment_util.go: not copied from the Deployment to its ReplicaSets.
_ANNOTATIONS_TO_SKIP = frozenset({
    "kubectl.kubernetes.io/last-applied-configuration",
    ANNOTATION_REVISION,
    ANNOTATION_REVISION_HISTORY,
    ANNOTATION_DESIRED_REPLICAS,
    ANNOTATION_MAX_REPLICAS,
    "deprecated.deployment.rollback.to",
})


def reconcile_deployment(d: Deployment, ctx: Context) -> Changes:
    """What the Deployment controller (and, for the ReplicaSets, the ReplicaSet controller) does
    for ``d`` now; see the module docstring."""
    changes = Changes()
    if d.deletion_timestamp is not None:
        return changes
    if d.selector is not None and d.selector.is_empty():
        return changes  # "This deployment is selecting all pods. A non-empty selector is required."
    candidates = list(claim_candidates(ctx.view, ReplicaSet.KIND, d))
    claimed, adopted, released = claim(d, selector_match(d.selector), candidates)
    changes.update_objects.extend(adopted)
    changes.update_objects.extend(released)
    if d.paused:
        return changes
    replica_sets: list[ReplicaSet] = [rs for rs in claimed if isinstance(rs, ReplicaSet)]
    new_rs = _find_new_replica_set(d, replica_sets)
    old = [rs for rs in replica_sets if rs is not new_rs]
    max_replicas = d.replicas + _max_surge(d)
    if new_rs is None:
        new_rs = _new_replica_set(d, old, ctx, changes)
        changes.create_objects.append(new_rs)
    elif new_rs.replicas != d.replicas:
        new_rs = _scaled(new_rs, d.replicas, d.replicas, max_replicas)
        changes.update_objects.append(new_rs)
    changes.extend(reconcile_replica_set(new_rs, ctx))
    for rs in old:
        if rs.replicas != 0:
            rs = _scaled(rs, 0, d.replicas, max_replicas)
            changes.update_objects.append(rs)
        changes.extend(reconcile_replica_set(rs, ctx))
    latest: dict[str, KubeObject] = {}
    for obj in changes.update_objects:  # an adopted ReplicaSet may also be scaled: keep its final state
        latest[obj.uid] = obj
    changes.update_objects = list(latest.values())
    return changes


def _without_hash(template: Any) -> Any:
    template = copy.deepcopy(dict(template or {}))
    metadata = dict(template.get("metadata") or {})
    labels = dict(metadata.get("labels") or {})
    labels.pop(LABEL_POD_TEMPLATE_HASH, None)
    metadata["labels"] = labels
    template["metadata"] = metadata
    return template


def equal_ignore_hash(a: Any, b: Any) -> bool:
    """``EqualIgnoreHash``: templates equal once ``pod-template-hash`` is removed from both."""
    return semantic_equal(_without_hash(a), _without_hash(b))


def _creation_key(rs: KubeObject) -> tuple:
    created = rs.creation_timestamp
    return (float("-inf") if created is None else created, rs.name)


def _find_new_replica_set(d: Deployment, replica_sets: list[ReplicaSet]) -> ReplicaSet | None:
    """``FindNewReplicaSet``: the oldest ReplicaSet (creation time, then name) with the template."""
    for rs in sorted(replica_sets, key=_creation_key):
        if equal_ignore_hash(rs.template, d.template):
            return rs
    return None


def _max_surge(d: Deployment) -> int:
    """``MaxSurge``: 0 unless RollingUpdate; ``ResolveFenceposts`` surge rounded up."""
    if d.strategy_type != ROLLING_UPDATE:
        return 0
    return scaled_value(d.max_surge, d.replicas, True)


def _revision(rs: KubeObject) -> int:
    try:
        return int(rs.annotations.get(ANNOTATION_REVISION, "0"))
    except ValueError:
        return 0


def _new_replica_set(d: Deployment, old: list[ReplicaSet], ctx: Context, changes: Changes) -> ReplicaSet:
    collision_count = d.collision_count
    while True:
        pod_template_hash = compute_hash(d.template, collision_count)
        name = f"{d.name}-{pod_template_hash}"
        if not ctx.taken(ReplicaSet.KIND, d.namespace, name):
            break
        collision_count = (collision_count or 0) + 1
    ctx.reserve(ReplicaSet.KIND, d.namespace, name)
    if collision_count != d.collision_count:
        changes.update_objects.append(_with_collision_count(d, collision_count))
    template = copy.deepcopy(dict(d.template))
    metadata = dict(template.get("metadata") or {})
    labels = dict(metadata.get("labels") or {})
    labels[LABEL_POD_TEMPLATE_HASH] = pod_template_hash
    metadata["labels"] = labels
    template["metadata"] = metadata
    selector = copy.deepcopy(dict(d.selector_spec or {}))
    selector["matchLabels"] = {**(selector.get("matchLabels") or {}), LABEL_POD_TEMPLATE_HASH: pod_template_hash}
    annotations = {key: value for key, value in d.annotations.items() if key not in _ANNOTATIONS_TO_SKIP}
    annotations[ANNOTATION_REVISION] = str(max((_revision(rs) for rs in old), default=0) + 1)
    annotations[ANNOTATION_DESIRED_REPLICAS] = str(d.replicas)
    annotations[ANNOTATION_MAX_REPLICAS] = str(d.replicas + _max_surge(d))
    manifest = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": name,
            "namespace": d.namespace,
            "labels": dict(labels),
            "annotations": annotations,
            "ownerReferences": [controller_ref(d)],
        },
        "spec": {
            "replicas": d.replicas,
            "minReadySeconds": d.min_ready_seconds,
            "selector": selector,
            "template": template,
        },
    }
    return parse_replica_set(manifest)


def _scaled(rs: ReplicaSet, replicas: int, desired: int, max_replicas: int) -> ReplicaSet:
    """``scaleReplicaSet``: ``spec.replicas`` and the replicas annotations updated."""
    annotations = {**rs.annotations, ANNOTATION_DESIRED_REPLICAS: str(desired),
                   ANNOTATION_MAX_REPLICAS: str(max_replicas)}
    if not rs.manifest:
        return rs.replace(replicas=replicas, annotations=annotations)
    manifest = dict(rs.manifest)
    manifest["spec"] = {**dict(manifest.get("spec") or {}), "replicas": replicas}
    manifest["metadata"] = {**dict(manifest.get("metadata") or {}), "annotations": annotations}
    return parse_replica_set(manifest)


def _with_collision_count(d: Deployment, collision_count: int | None) -> Deployment:
    if not d.manifest:
        return d.replace(collision_count=collision_count)
    manifest = dict(d.manifest)
    manifest["status"] = {**dict(manifest.get("status") or {}), "collisionCount": collision_count}
    return parse_deployment(manifest)
