"""The ReplicaSet controller's sync (upstream ``pkg/controller/replicaset/replica_set.go``), which
also serves ReplicationControllers (``pkg/controller/replication``) as upstream's does.

``syncReplicaSet``: list the namespace's pods, keep the active ones (``FilterActivePods``: not
Succeeded/Failed, no deletion timestamp), claim them (owned ones whose labels still match, orphans
whose labels match: adopted; owned ones that no longer match: released), then ``manageReplicas``:

* fewer than ``replicas``: create the difference from the template, ``generateName: <name>-``
  (``getPodsPrefix``), controller reference ``{apiVersion: apps/v1 (v1 for an RC), kind, name,
  uid, controller: true, blockOwnerDeletion: true}``. A template without labels creates nothing
  (upstream's pod control refuses: "unable to create pods, no labels").
* more: delete the difference, picked by ``getPodsToDelete``: ranked by ``ActivePodsWithRanks``
  where a pod's rank is the number of active pods on its node selected by any ReplicaSet with the
  same controller (``getIndirectlyRelatedPods``), with ``Now`` = the reconcile's ``now``.

A ReplicaSet being deleted does nothing. Upstream's ``burstReplicas`` (500 per sync) applies only
with ``ControllerOptions.per_sync_limits``; creation is not split into slow-start batches (they
only matter when creations fail).
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from ..api import KubeObject, Pod
from ..api.workloads import ReplicaSet, ReplicationController
from .common import (
    Changes,
    Context,
    claim,
    claim_candidates,
    controller_of,
    is_pod_active,
    pod_from_template,
    selector_match,
    sort_active_pods_with_ranks,
)

__all__ = ["reconcile_replica_set", "reconcile_replication_controller", "BURST_REPLICAS", "pods_to_delete"]

#: ``BurstReplicas`` of kube-controller-manager's ReplicaSet and ReplicationController controllers.
BURST_REPLICAS = 500


def _owner_match(owner: KubeObject) -> Callable[[KubeObject], bool]:
    if isinstance(owner, ReplicationController):
        selector = owner.selector or {}
        # labels.Set(rc.Spec.Selector).AsSelectorPreValidated(): an empty map selects everything
        return lambda obj: all(obj.labels.get(key) == value for key, value in selector.items())
    return selector_match(owner.selector)  # type: ignore[attr-defined]


def reconcile_replica_set(rs: ReplicaSet, ctx: Context) -> Changes:
    """What ``syncReplicaSet`` does for ``rs`` now."""
    return _sync(rs, rs.replicas, rs.template, ctx)


def reconcile_replication_controller(rc: ReplicationController, ctx: Context) -> Changes:
    """What the ReplicationController controller (the ReplicaSet controller with the v1 kind)
    does for ``rc`` now."""
    return _sync(rc, rc.replicas, rc.template, ctx)


def _sync(owner: KubeObject, replicas: int, template: Mapping[str, Any] | None, ctx: Context) -> Changes:
    changes = Changes()
    if owner.deletion_timestamp is not None:
        return changes
    match = _owner_match(owner)
    active = [pod for pod in claim_candidates(ctx.view, "Pod", owner) if is_pod_active(pod)]
    claimed, adopted, released = claim(owner, match, active)
    changes.adopt_pods.extend(adopted)
    changes.release_pods.extend(released)
    diff = len(claimed) - replicas
    limit = BURST_REPLICAS if ctx.options.per_sync_limits else None
    if diff < 0:
        count = -diff if limit is None else min(-diff, limit)
        if template is None or not ((template.get("metadata") or {}).get("labels")):
            return changes
        for _ in range(count):
            manifest = pod_from_template(template, owner)
            metadata = manifest["metadata"]
            metadata["name"] = ctx.generate("Pod", owner.namespace, metadata["generateName"])
            changes.create_pods.append(manifest)
    elif diff > 0:
        count = diff if limit is None else min(diff, limit)
        related = _indirectly_related_pods(owner, ctx)
        changes.delete_pods.extend(pods_to_delete(claimed, related, count, ctx.now))
    return changes


def _indirectly_related_pods(owner: KubeObject, ctx: Context) -> list[Pod]:
    """``getIndirectlyRelatedPods``: the pods selected by every ReplicaSet that has the same
    controller as ``owner`` (none when ``owner`` has no controller)."""
    reference = controller_of(owner)
    if reference is None:
        return []
    siblings = [owner]
    for other in ctx.view.objects(owner.KIND, owner.namespace):
        other_reference = controller_of(other)
        if other.uid != owner.uid and other_reference is not None and other_reference.uid == reference.uid:
            siblings.append(other)
    pods = list(ctx.view.pods(owner.namespace))
    seen: set[str] = set()
    related: list[Pod] = []
    for sibling in siblings:
        match = _owner_match(sibling)
        if isinstance(sibling, ReplicaSet) and sibling.selector is None:
            continue  # LabelSelectorAsSelector fails on nothing here, but nil selects no pod
        for pod in pods:
            if pod.uid not in seen and match(pod):
                seen.add(pod.uid)
                related.append(pod)
    return related


def pods_to_delete(filtered: Sequence[Pod], related: Sequence[Pod], diff: int, now: float) -> list[Pod]:
    """``getPodsToDelete``: all of ``filtered`` when ``diff`` covers them, otherwise the first
    ``diff`` by ``ActivePodsWithRanks`` (rank: active related pods on the same node)."""
    pods = list(filtered)
    if diff < len(pods):
        on_node: dict[str, int] = {}
        for pod in related:
            if is_pod_active(pod):
                on_node[pod.node_name] = on_node.get(pod.node_name, 0) + 1
        ranks = [on_node.get(pod.node_name, 0) for pod in pods]
        pods = sort_active_pods_with_ranks(pods, ranks, now)
    return pods[:diff]

