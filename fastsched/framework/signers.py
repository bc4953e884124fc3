"""Pod signatures for opportunistic batching (upstream ``kube-scheduler/framework/signers.go`` and
``interface.go``: ``SignFragment``, ``SignPlugin``).

A plugin that can say which parts of a pod its verdicts and scores depend on implements
``sign_pod(pod) -> (fragments, status)``: ``(((key, value), ...), None)`` to sign, ``(None,
Status(UNSCHEDULABLE, reason))`` to refuse (upstream Unschedulable), ``(None, Status(ERROR, ...))``
when signing failed. The framework combines the fragments of every PreFilter, Filter, PreScore and
Score plugin into the pod's signature (``Framework.sign_pod``); two pods with equal signatures
get the same verdicts and scores on the same nodes, which lets a later cycle reuse an earlier
one's scores (``fastsched.runtime.batch``).

Upstream compares the signatures as JSON bytes. Here a fragment's value is a hashable canonical
value (nested tuples), built so that two values are equal exactly when upstream's JSON would be:
sorted where upstream sorts, ``None`` where upstream writes ``null``, omitted-when-empty fields
treated alike. The keys are upstream's.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Hashable

if TYPE_CHECKING:  # pragma: no cover
    from ..api import Pod

__all__ = ["DYNAMIC_RESOURCES_SIGNER", "FEATURES_SIGNER", "HOST_PORTS_SIGNER", "IMAGE_NAMES_SIGNER",
           "LABELS_SIGNER", "NODE_AFFINITY_SIGNER", "NODE_NAME_SIGNER", "NODE_SELECTOR_SIGNER",
           "RESOURCES_SIGNER", "SCHEDULER_NAME_SIGNER", "TOLERATIONS_SIGNER", "VOLUMES_SIGNER",
           "Fragments", "host_ports_signer", "labels_signer", "node_affinity_signer", "node_selector_signer",
           "tolerations_signer", "volumes_signer"]

DYNAMIC_RESOURCES_SIGNER = "v1.Pod.Spec.DynamicResources"
IMAGE_NAMES_SIGNER = "v1.Pod.Spec.CanonicalImageNames()"
LABELS_SIGNER = "v1.Pod.Labels"
NODE_NAME_SIGNER = "v1.Pod.Spec.NodeName"
NODE_AFFINITY_SIGNER = "v1.Pod.Spec.Affinity.NodeAffinity"
NODE_SELECTOR_SIGNER = "v1.Pod.Spec.Affinity.NodeSelector"
HOST_PORTS_SIGNER = "v1.Pod.Spec.HostPorts()"
RESOURCES_SIGNER = "v1.Pod.Spec.ContainerRequestsAndOverheads()"
SCHEDULER_NAME_SIGNER = "v1.Pod.Spec.SchedulerName"
TOLERATIONS_SIGNER = "v1.Pod.Spec.Tolerations"
VOLUMES_SIGNER = "v1.Pod.Spec.Volumes.NonSyntheticSources()"
FEATURES_SIGNER = "v1.Pod.Spec.RequiredFeatures()"

#: what ``sign_pod`` returns on success: (key, canonical value) pairs
Fragments = tuple[tuple[str, Hashable], ...]


def host_ports_signer(pod: "Pod") -> tuple[int, ...]:
    """Upstream ``HostPortsSigner``: the distinct non-zero host ports of the containers and init
    containers, sorted (protocol and hostIP are not part of it)."""
    ports = {p.host_port for c in (*pod.containers, *pod.init_containers) for p in c.ports if p.host_port != 0}
    return tuple(sorted(ports))


def _requirement(req: Any) -> tuple:
    # json.Marshal(NodeSelectorRequirement) with Values sorted; values is omitempty (nil = empty)
    return (req.key, req.operator, tuple(sorted(req.values)))


def _term(term: Any) -> tuple:
    """Upstream ``NodeSelectorTermSigner``: matchExpressions and matchFields, each sorted."""
    return (tuple(sorted(_requirement(r) for r in term.match_expressions)),
            tuple(sorted(_requirement(r) for r in term.match_fields)))


def node_affinity_signer(pod: "Pod") -> tuple | None:
    """Upstream ``NodeAffinitySigner``: None without node affinity; else (required terms sorted,
    preferred (weight, term) sorted); a missing required selector signs as no terms."""
    affinity = pod.affinity
    if affinity is None or affinity.node_affinity is None:
        return None
    na = affinity.node_affinity
    required = tuple(sorted(_term(t) for t in na.required.terms)) if na.required is not None else ()
    preferred = tuple(sorted((p.weight, _term(p.preference)) for p in na.preferred))
    return (required, preferred)


def node_selector_signer(pod: "Pod") -> tuple | None:
    """``pod.Spec.NodeSelector`` as upstream signs it (the map itself: nil and empty differ)."""
    selector = pod.node_selector
    return None if selector is None else tuple(sorted(selector.items()))


def tolerations_signer(pod: "Pod") -> tuple:
    """Upstream ``TolerationsSigner``: the tolerations sorted by (key, value), whole. Upstream's
    ``sort.Slice`` is an insertion sort (stable) up to 12 elements; this sort is stable always."""
    tols = sorted(pod.tolerations, key=lambda t: (t.key, t.value))
    return tuple((t.key, t.operator, t.value, t.effect, t.toleration_seconds) for t in tols)


def volumes_signer(pod: "Pod") -> tuple[str, ...]:
    """Upstream ``VolumesSigner``: each volume's source (not its name) except ConfigMap and Secret
    sources, sorted. The source is the manifest's, serialized with sorted keys."""
    out = []
    for vol in pod.volumes:
        if vol.get("configMap") is not None or vol.get("secret") is not None:
            continue
        source = {k: v for k, v in vol.items() if k != "name"}
        out.append(json.dumps(source, sort_keys=True, separators=(",", ":"), default=str))
    return tuple(sorted(out))


def labels_signer(pod: "Pod") -> tuple:
    """``pod.Labels`` (the map, sorted)."""
    return tuple(sorted(pod.labels.items()))
