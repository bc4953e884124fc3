"""The DaemonSet controller's ``manage`` (upstream ``pkg/controller/daemon/daemon_controller.go``
and ``util/daemonset_util.go``).

* Pods of the namespace are claimed by the DaemonSet's selector (adoption/release as for a
  ReplicaSet) and grouped by target node (``spec.nodeName``, or the ``metadata.name In [node]``
  matchFields term of a pending pod); terminal pods that are also being deleted are ignored.
* For every node, ``NodeShouldRunDaemonPod`` on a pod built from the template for that node, with
  the DaemonSet tolerations added (``NewPod``): the template's ``nodeName`` (if any) must be the
  node, its nodeSelector and required node affinity must match the node
  (:func:`~fastsched.api.labels.required_node_affinity_matches`), and no NoSchedule/NoExecute taint
  may be untolerated (``shouldRun``); a node with only untolerated NoSchedule taints keeps its
  existing pods (``shouldContinueRunning``).
* ``podsShouldBeOnNode``: create where the pod should run and there is none; delete failed and
  succeeded pods; keep the oldest of several running pods (with ``maxSurge``, upstream's surge rule:
  one pod of the current hash and one older ready one); delete every pod on a node where the pod
  should not continue running; delete pending pods aimed at nodes that no longer exist.
* New pods (``syncNodes``): ``CreatePodTemplate`` (tolerations ``node.kubernetes.io/not-ready`` and
  ``unreachable`` NoExecute; ``disk-pressure``, ``memory-pressure``, ``pid-pressure``,
  ``unschedulable`` NoSchedule; ``network-unavailable`` NoSchedule for hostNetwork pods; each
  ``operator: Exists`` and added unless present, a same key/operator/value/effect toleration being
  replaced) with labels ``pod-template-generation`` and ``controller-revision-hash``; the required
  node affinity is replaced by the single term ``matchFields: [{key: metadata.name, operator: In,
  values: [<node>]}]`` (preferred terms kept); ``generateName: <ds>-``, controller reference.

Deviations: the ``controller-revision-hash`` value is
:func:`~fastsched.controller.common.compute_hash` of the template (upstream: ``ComputeHash`` of a Go
dump, same alphabet); the failed-pod deletion backoff is not modelled; pods of an older template are
not rolled (``rollingUpdate`` is not run, as with ``OnDelete``); ``burstReplicas`` (250) applies only
with ``ControllerOptions.per_sync_limits``.
"""
from __future__ import annotations

import copy
from typing import Any, Mapping

from ..api import (
    TAINT_EFFECT_NO_EXECUTE,
    TAINT_EFFECT_NO_SCHEDULE,
    Node,
    Pod,
    find_untolerated_taint,
)
from ..api.labels import required_node_affinity_matches
from ..api.decode import parse_pod
from ..api.workloads import (
    LABEL_CONTROLLER_REVISION_HASH,
    LABEL_POD_TEMPLATE_GENERATION,
    ROLLING_UPDATE,
    DaemonSet,
)
from .common import (
    Changes,
    Context,
    claim,
    claim_candidates,
    compute_hash,
    is_pod_available,
    is_pod_ready,
    is_pod_terminal,
    pod_from_template,
    scaled_value,
    selector_match,
)

__all__ = ["reconcile_daemon_set", "node_should_run_daemon_pod", "daemon_pod_tolerations", "BURST_REPLICAS",
           "replace_node_name_node_affinity", "target_node_name"]

#: kube-controller-manager's ``ConcurrentDaemonSetSyncs``-independent ``BurstReplicas`` for DaemonSets.
BURST_REPLICAS = 250

_NODE_NAME_FIELD = "metadata.name"
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"


def _toleration(key: str, effect: str) -> dict[str, Any]:
    return {"key": key, "operator": "Exists", "effect": effect}


def _same_toleration(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """``Toleration.MatchToleration``: key, operator, value and effect all equal."""
    return all((a.get(name) or "") == (b.get(name) or "") for name in ("key", "operator", "value", "effect"))


def _add_or_update_toleration(tolerations: list[dict[str, Any]], toleration: dict[str, Any]) -> list[dict[str, Any]]:
    """``AddOrUpdateTolerationInPodSpec``."""
    result = []
    updated = False
    for existing in tolerations:
        if _same_toleration(toleration, existing):
            if existing.get("tolerationSeconds") is None:
                return tolerations  # semantically equal: unchanged
            result.append(dict(toleration))
            updated = True
            continue
        result.append(existing)
    if not updated:
        result.append(dict(toleration))
    return result


def daemon_pod_tolerations(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``AddOrUpdateDaemonPodTolerations``: the spec's tolerations with the DaemonSet ones."""
    tolerations = [dict(t) for t in spec.get("tolerations") or ()]
    wanted = [
        _toleration("node.kubernetes.io/not-ready", TAINT_EFFECT_NO_EXECUTE),
        _toleration("node.kubernetes.io/unreachable", TAINT_EFFECT_NO_EXECUTE),
        _toleration("node.kubernetes.io/disk-pressure", TAINT_EFFECT_NO_SCHEDULE),
        _toleration("node.kubernetes.io/memory-pressure", TAINT_EFFECT_NO_SCHEDULE),
        _toleration("node.kubernetes.io/pid-pressure", TAINT_EFFECT_NO_SCHEDULE),
        _toleration("node.kubernetes.io/unschedulable", TAINT_EFFECT_NO_SCHEDULE),
    ]
    if spec.get("hostNetwork"):
        wanted.append(_toleration("node.kubernetes.io/network-unavailable", TAINT_EFFECT_NO_SCHEDULE))
    for toleration in wanted:
        tolerations = _add_or_update_toleration(tolerations, toleration)
    return tolerations


def _template_with_tolerations(ds: DaemonSet) -> dict[str, Any]:
    template = copy.deepcopy(dict(ds.template))
    spec = dict(template.get("spec") or {})
    spec["tolerations"] = daemon_pod_tolerations(spec)
    template["spec"] = spec
    return template


def _new_pod(ds: DaemonSet) -> Pod:
    """``NewPod`` without the node name: the template's pod with the DaemonSet tolerations."""
    template = _template_with_tolerations(ds)
    metadata = dict(template.get("metadata") or {})
    metadata["name"] = ds.name
    metadata["namespace"] = ds.namespace
    return parse_pod({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": template.get("spec") or {}})


def node_should_run_daemon_pod(node: Node, ds: DaemonSet, pod: Pod | None = None) -> tuple[bool, bool]:
    """``NodeShouldRunDaemonPod``: ``(shouldRun, shouldContinueRunning)``. ``pod`` is the
    DaemonSet's pod (:func:`_new_pod`), built when not given."""
    if pod is None:
        pod = _new_pod(ds)
    template_node = (ds.template.get("spec") or {}).get("nodeName") or ""
    if template_node and template_node != node.name:
        return False, False
    if not required_node_affinity_matches(pod, node):
        return False, False
    if find_untolerated_taint(node.taints, pod.tolerations, (TAINT_EFFECT_NO_SCHEDULE, TAINT_EFFECT_NO_EXECUTE)):
        no_execute = find_untolerated_taint(node.taints, pod.tolerations, (TAINT_EFFECT_NO_EXECUTE,))
        return False, no_execute is None
    return True, True


def target_node_name(pod: Pod) -> str | None:
    """``GetTargetNodeName``: ``spec.nodeName``, else the first ``metadata.name In [x]``
    matchFields value of the required node affinity (None if there is none or several values)."""
    if pod.node_name:
        return pod.node_name
    affinity = pod.affinity
    if affinity is None or affinity.node_affinity is None or affinity.node_affinity.required is None:
        return None
    for term in affinity.node_affinity.required.terms:
        for requirement in term.match_fields:
            if requirement.key == _NODE_NAME_FIELD and requirement.operator == "In":
                return requirement.values[0] if len(requirement.values) == 1 else None
    return None


def replace_node_name_node_affinity(spec: dict[str, Any], node_name: str) -> None:
    """``ReplaceDaemonSetPodNodeNameNodeAffinity`` on a pod spec dict (in place)."""
    term = {"matchFields": [{"key": _NODE_NAME_FIELD, "operator": "In", "values": [node_name]}]}
    affinity = spec.get("affinity")
    if affinity is None:
        spec["affinity"] = {"nodeAffinity": {_REQUIRED: {"nodeSelectorTerms": [term]}}}
        return
    node_affinity = affinity.get("nodeAffinity")
    if node_affinity is None:
        affinity["nodeAffinity"] = {_REQUIRED: {"nodeSelectorTerms": [term]}}
        return
    required = node_affinity.get(_REQUIRED)
    if required is None:
        node_affinity[_REQUIRED] = {"nodeSelectorTerms": [term]}
        return
    required["nodeSelectorTerms"] = [term]


def _by_creation_and_phase(pods: list[Pod]) -> list[Pod]:
    """``podByCreationTimestampAndPhase``: scheduled first, then oldest, then by name."""
    return sorted(pods, key=lambda p: (not p.node_name,
                                       float("-inf") if p.creation_timestamp is None else p.creation_timestamp,
                                       p.name))


def _allows_surge(ds: DaemonSet) -> bool:
    return ds.update_strategy_type == ROLLING_UPDATE and scaled_value(ds.max_surge, 1, True) > 0


def reconcile_daemon_set(ds: DaemonSet, ctx: Context) -> Changes:
    """What ``manage`` does for ``ds`` now; see the module docstring."""
    changes = Changes()
    if ds.deletion_timestamp is not None:
        return changes
    if ds.selector is not None and ds.selector.is_empty():
        return changes  # "This daemon set is selecting all pods. A non-empty selector is required."
    pod_template_hash = compute_hash(ds.template, ds.collision_count)
    daemon_pod = _new_pod(ds)
    claimed, adopted, released = claim(ds, selector_match(ds.selector), claim_candidates(ctx.view, "Pod", ds))
    changes.adopt_pods.extend(adopted)
    changes.release_pods.extend(released)
    node_to_pods: dict[str, list[Pod]] = {}
    for pod in claimed:
        if is_pod_terminal(pod) and pod.deletion_timestamp is not None:
            continue
        target = target_node_name(pod)
        if target is not None:
            node_to_pods.setdefault(target, []).append(pod)

    nodes = list(ctx.view.nodes())
    needing: list[str] = []
    to_delete: list[Pod] = []
    surge = _allows_surge(ds)
    for node in nodes:
        should_run, should_continue = node_should_run_daemon_pod(node, ds, daemon_pod)
        exists = node.name in node_to_pods
        pods = node_to_pods.get(node.name, [])
        if should_run and not exists:
            needing.append(node.name)
        elif should_continue:
            running = []
            for pod in pods:
                if pod.deletion_timestamp is not None:
                    continue
                if pod.phase in ("Failed", "Succeeded"):
                    to_delete.append(pod)
                else:
                    running.append(pod)
            if not surge:
                if len(running) > 1:
                    to_delete.extend(_by_creation_and_phase(running)[1:])
                continue
            if len(running) <= 1:
                if not running and should_run:
                    needing.append(node.name)
                continue
            oldest_new = oldest_old = None
            for pod in _by_creation_and_phase(running):
                if pod.labels.get(LABEL_CONTROLLER_REVISION_HASH) == pod_template_hash:
                    if oldest_new is None:
                        oldest_new = pod
                        continue
                elif oldest_old is None:
                    oldest_old = pod
                    continue
                to_delete.append(pod)
            if oldest_new is not None and oldest_old is not None:
                if not is_pod_ready(oldest_old) or is_pod_available(oldest_new, ds.min_ready_seconds, ctx.now):
                    to_delete.append(oldest_old)
        elif exists:
            to_delete.extend(pod for pod in pods if pod.deletion_timestamp is None)
    node_names = {node.name for node in nodes}
    for name, pods in node_to_pods.items():
        if name not in node_names:
            to_delete.extend(pod for pod in pods if not pod.node_name)

    if ctx.options.per_sync_limits:
        needing = needing[:BURST_REPLICAS]
        to_delete = to_delete[:BURST_REPLICAS]
    template = _template_with_tolerations(ds)
    metadata = dict(template.get("metadata") or {})
    labels = dict(metadata.get("labels") or {})
    if ds.template_generation is not None:
        labels[LABEL_POD_TEMPLATE_GENERATION] = str(ds.template_generation)
    labels[LABEL_CONTROLLER_REVISION_HASH] = pod_template_hash
    metadata["labels"] = labels
    template["metadata"] = metadata
    for node_name in needing:
        manifest = pod_from_template(template, ds)
        replace_node_name_node_affinity(manifest["spec"], node_name)
        meta = manifest["metadata"]
        meta["name"] = ctx.generate("Pod", ds.namespace, meta["generateName"])
        changes.create_pods.append(manifest)
    changes.delete_pods.extend(to_delete)
    return changes
