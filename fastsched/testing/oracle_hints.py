"""Class ``hints``: the scheduling queue's queueing hints against upstream's.

Whether ``run()`` tries a pod again after a cluster change is decided by the queueing hints:
the events each plugin registers (``EventsToRegister``: a resource, action type bits and a
QueueingHintFn) and what each QueueingHintFn answers (Queue, QueueSkip or an error, which the
queue takes as Queue) for a pod the plugin rejected and the change (old object, new object). A
wrong hint strands a pod that upstream retries, or retries one upstream leaves waiting; the other
classes compare scheduling attempts and never reach them.

A ``hints`` scenario is a cluster from another class's generator (:data:`BASE_CLASSES`, by seed)
and cases drawn on it (:func:`generate_hints`): targeted changes of its objects (a node's label,
taint, ``unschedulable``, allocatable, Ready condition, annotations, images or declared features
changed, a node added or deleted, a bound pod added (often with the labels the rejected pod's
required terms select), deleted, relabelled or resized, the rejected pod's own update: labels,
tolerations, gates, requests, a template's claim named in its status; another pending pod added,
updated, nominated or deleted; PVCs, PVs, StorageClasses, CSINodes, CSIDrivers,
CSIStorageCapacities, ResourceClaims (allocated, deallocated, reservation released), ResourceSlices
and DeviceClasses added, changed or deleted), each update drawn in either direction (a taint
added, read backwards, is a taint removed), each with a pending pod of the cluster as the
rejected pod (for a claim or a PVC, often one that names it; for a pod change, often one with pod
affinity or spread constraints). ``hints-gangs`` draws the same on the class ``gangs``' clusters
with GenericWorkload on both sides, PodGroups added and their ``minCount`` changed besides
(GangScheduling's hints; CompositePodGroup's hierarchy is not drawn: its hints read the cache's
pod group tree, which the oracle's hints scenarios do not fill). The cluster of the
scenario is the cluster *after* every case's change (the cases touch distinct objects): upstream's
event handlers run once the informer's store holds the change, and some hints read the listers.

Each side answers (:func:`run_fastsched_hints`; the oracle's ``hints.go``), for the first profile:
every plugin's registrations, and per case the cluster events the change is (the event handlers'
classification: ``NodeSchedulingPropertiesChange``, ``PodSchedulingPropertiesChange``, the
generic ``<resource>/Add|Update|Delete``) and, for each event, every registration that matches it
(``MatchClusterEvents``) with its QueueingHintFn's answer for the pod (as if every plugin had
rejected it: the queue asks the pod's rejector plugins). :func:`compare_hints` compares the
registrations per plugin (resource, action bits, with or without a function) and per case the
events and the answers (hint, and error or not: the texts are Go's and Python's), as multisets.

Run only when named: ``fastsched differential --class hints`` (and ``--class hints-gangs``), each
against an oracle of its own at v1.37's default gates. A difference names the case (its change and
pod) with both answers, written with the case alone and the cluster shrunk (:func:`shrink_case`).
The one difference understood and left is :data:`KNOWN_REGISTRATIONS`.
"""
from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any, Callable

from .oracle_scenarios import DECLARED_FEATURES, NODE_LABELS, TAINTS, generate

__all__ = ["BASE_CLASSES", "HINTS_CLASS", "HINTS_CLASSES", "HINTS_GANGS_CLASS", "HINTS_ORACLE_GATES",
           "KNOWN_REGISTRATIONS", "check_hints", "compare_hints", "differential_hints", "generate_hints",
           "run_fastsched_hints", "shrink_case"]

HINTS_CLASS = "hints"
#: the same on pod groups' clusters (:func:`fastsched.testing.oracle_groups.generate_gangs`) with
#: GenericWorkload on both sides: GangScheduling's registrations and hints (PodGroups added, their
#: minCount or policy changed, members added)
HINTS_GANGS_CLASS = "hints-gangs"
#: class -> the gates both sides set on top of v1.37's defaults
HINTS_CLASSES = {HINTS_CLASS: "", HINTS_GANGS_CLASS: "GenericWorkload=true"}
#: the classes whose clusters the cases are drawn on (seed modulo their number)
BASE_CLASSES = ("taints", "affinity", "podaffinity", "spread", "ports", "resources", "volumes", "dra", "mixed",
                "preenqueue", "volumes", "dra", "podaffinity", "spread")
#: the oracle's gates for this class: v1.37's defaults (the oracle otherwise turns
#: SchedulerAsyncPreemption off for the plain classes, see oracle/main.go's main)
HINTS_ORACLE_GATES = "SchedulerAsyncPreemption=true"
#: cases per scenario (at most: a kind without objects draws nothing)
CASES = 16

_CLUSTER_SCOPED = {"Node", "PersistentVolume", "StorageClass", "CSINode", "CSIDriver", "ResourceSlice", "DeviceClass",
                   "Namespace", "PriorityClass", "RuntimeClass", "DeviceTaintRule", "VolumeAttachment"}
#: kinds whose changes are drawn (other objects stay as the cluster's background)
_OBJECT_KINDS = ("PersistentVolumeClaim", "PersistentVolume", "StorageClass", "CSINode", "CSIDriver",
                 "CSIStorageCapacity", "ResourceClaim", "ResourceSlice", "DeviceClass", "PodGroup")


def _key(m: dict) -> tuple[str, str, str]:
    meta = m["metadata"]
    ns = "" if m["kind"] in _CLUSTER_SCOPED else meta.get("namespace", "default")
    return m["kind"], ns, meta["name"]


def _pod_key(m: dict) -> str:
    return f"{m['metadata'].get('namespace', 'default')}/{m['metadata']['name']}"


# ------------------------------------------------------------------------------------------------
# generation
# ------------------------------------------------------------------------------------------------
class _Cases:
    """The cluster (manifests by key, in order) and the cases drawn on it."""

    def __init__(self, base: dict, rng: random.Random):
        self.rng = rng
        self.state: dict[tuple[str, str, str], dict] = {}
        for m in [*base["objects"], *base["nodes"], *base["pods"]]:
            self.state[_key(m)] = m
        for m in base["incoming"]:  # a later entry of a pod (its update) or an object created later
            k = _key(m)
            if k in self.state and m["kind"] == "Pod":
                continue
            self.state[k] = m
        self.touched: set[tuple[str, str, str]] = set()
        self.cases: list[dict] = []
        self._n = 0

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def of_kind(self, kind: str, *, bound: bool | None = None, free: bool = True) -> list[dict]:
        out = []
        for k, m in self.state.items():
            if k[0] != kind or (free and k in self.touched):
                continue
            if bound is not None and bool(m.get("spec", {}).get("nodeName")) != bound:
                continue
            out.append(m)
        return out

    def pending_pod(self, refers: Callable[[dict], bool] | None = None) -> dict | None:
        """A pending pod of the cluster not changed by a case (one ``refers`` likes, most often)."""
        pods = self.of_kind("Pod", bound=False)
        if not pods:
            return None
        if refers is not None:
            liked = [p for p in pods if refers(p)]
            if liked and self.chance(0.7):
                return self.rng.choice(liked)
        return self.rng.choice(pods)

    def fresh(self, stem: str) -> str:
        self._n += 1
        return f"{stem}-h{self._n}"

    def add_case(self, kind: str, op: str, old: dict | None, new: dict | None, *, target: bool = False,
                 pod: dict | None = None, what: str = "") -> None:
        """Record a case and apply its change to the cluster (add/update: the new object stored;
        delete: the old one gone). None when there is no pending pod to ask about."""
        if pod is None and not target:
            return
        k = _key(new if new is not None else old)  # type: ignore[arg-type]
        self.touched.add(k)
        if op == "delete":
            self.state.pop(k, None)
        else:
            self.state[k] = new  # type: ignore[assignment]
        case: dict[str, Any] = {"kind": kind, "op": op, "what": what}
        if old is not None:
            case["old"] = old
        if new is not None:
            case["new"] = new
        if target:
            case["target"] = True
        elif pod is not None:
            case["pod"] = pod
        self.cases.append(case)

    def changed(self, m: dict, mutate: Callable[[dict], str]) -> tuple[dict, dict, str] | None:
        """(old, new, what) of an update of ``m`` by ``mutate`` (which says what it did, "" for
        nothing), in either direction: the mutated copy as the new object, or as the old one (a
        taint added read backwards is a taint removed)."""
        other = copy.deepcopy(m)
        what = mutate(other)
        if not what or other == m:
            return None
        if self.chance(0.5):
            return m, other, what
        return other, m, f"{what} (reversed)"

    def scenario(self, base: dict, seed: int) -> dict:
        nodes = [m for k, m in self.state.items() if k[0] == "Node"]
        pods = [m for k, m in self.state.items() if k[0] == "Pod" and m["spec"].get("nodeName")]
        incoming = [m for k, m in self.state.items() if k[0] == "Pod" and not m["spec"].get("nodeName")]
        objects = [m for k, m in self.state.items() if k[0] not in ("Node", "Pod")]
        cls = HINTS_GANGS_CLASS if base["class"].startswith("gangs") else HINTS_CLASS
        return {"id": f"{cls}-{seed}", "class": cls, "seed": seed, "base": base["class"],
                "config": base["config"], "nodes": nodes, "pods": pods, "objects": objects, "incoming": incoming,
                "hints": self.cases}


# -- mutations, by kind ----------------------------------------------------------------------------
def _node_mutation(c: _Cases) -> Callable[[dict], str]:
    def mutate(n: dict) -> str:
        labels = n["metadata"].setdefault("labels", {})
        spec, status = n.setdefault("spec", {}), n.setdefault("status", {})
        choice = c.rng.choice(("label", "label", "zone", "taint-add", "taint-remove", "unschedulable", "allocatable",
                               "allocatable", "annotation", "images", "two", "condition", "features"))
        if choice == "condition":  # (the kubelet's heartbeat: UpdateNodeCondition upstream)
            ready = c.rng.choice(("True", "False", "Unknown"))
            status["conditions"] = [{"type": "Ready", "status": ready, "reason": "KubeletReady"}]
            return f"condition Ready={ready}"
        if choice == "features":
            feats = sorted(c.rng.sample(DECLARED_FEATURES, c.rng.randint(0, 3)))
            if feats == sorted(status.get("declaredFeatures") or []):
                return ""
            status["declaredFeatures"] = feats
            return f"declared features {feats}"
        if choice == "two":
            return "; ".join(filter(None, (_node_mutation(c)(n), _node_mutation(c)(n))))
        if choice == "label":
            key = c.rng.choice(sorted(NODE_LABELS))
            if key in labels and c.chance(0.4):
                del labels[key]
                return f"label {key} removed"
            labels[key] = c.rng.choice(NODE_LABELS[key])
            return f"label {key}={labels[key]}"
        if choice == "zone":
            labels["topology.kubernetes.io/zone"] = c.rng.choice(("zone-a", "zone-b", "zone-c", "zone-d"))
            return f"zone {labels['topology.kubernetes.io/zone']}"
        if choice == "taint-add":
            t = dict(c.rng.choice(TAINTS))
            taints = spec.setdefault("taints", [])
            if any(x["key"] == t["key"] and x["effect"] == t["effect"] for x in taints):
                return ""
            taints.append(t)
            return f"taint {t['key']}:{t['effect']} added"
        if choice == "taint-remove":
            taints = spec.get("taints") or []
            if not taints:
                return ""
            gone = taints.pop(c.rng.randrange(len(taints)))
            if not taints:
                spec.pop("taints")
            return f"taint {gone['key']}:{gone['effect']} removed"
        if choice == "unschedulable":
            if spec.get("unschedulable"):
                spec.pop("unschedulable")
                return "schedulable again"
            spec["unschedulable"] = True
            return "unschedulable"
        if choice == "allocatable":
            alloc = status.setdefault("allocatable", {})
            res = c.rng.choice(("cpu", "memory", "pods", "example.com/foo", "ephemeral-storage"))
            value = {"cpu": ("1", "2", "8", "16", "100m"), "memory": ("1Gi", "4Gi", "16Gi", "128Gi"),
                     "pods": ("0", "1", "3", "110"), "example.com/foo": ("0", "1", "4"),
                     "ephemeral-storage": ("1Gi", "100Gi")}[res]
            if res in alloc and c.chance(0.2) and res not in ("cpu", "memory", "pods"):
                del alloc[res]
                status.setdefault("capacity", {}).pop(res, None)
                return f"allocatable {res} removed"
            alloc[res] = c.rng.choice(value)
            status.setdefault("capacity", {})[res] = alloc[res]
            return f"allocatable {res}={alloc[res]}"
        if choice == "annotation":
            n["metadata"].setdefault("annotations", {})["example.com/note"] = c.rng.choice(("a", "b"))
            return "annotation"
        status["images"] = [{"names": ["nginx:1.25"], "sizeBytes": 62914560}] if not status.get("images") else []
        return "images"
    return mutate


def _pod_labels_mutation(c: _Cases) -> Callable[[dict], str]:
    def mutate(p: dict) -> str:
        labels = p["metadata"].setdefault("labels", {})
        key = c.rng.choice(("app", "team", "color", "tier"))
        if key in labels and c.chance(0.4):
            del labels[key]
            return f"label {key} removed"
        labels[key] = c.rng.choice(("web", "db", "cache", "batch", "a", "b", "green"))
        return f"label {key}={labels[key]}"
    return mutate


def _pod_requests_mutation(c: _Cases) -> Callable[[dict], str]:
    def mutate(p: dict) -> str:
        if p["spec"].get("resources"):  # pod-level resources bound the containers' (validation)
            return ""
        ctr = p["spec"]["containers"][0]
        req = ctr.setdefault("resources", {}).setdefault("requests", {})
        res = c.rng.choice(("cpu", "memory"))
        if res in req and c.chance(0.3) and not _hugepages_left_alone(ctr["resources"], res):
            del req[res]
            if not req:
                ctr["resources"].pop("requests")
                if not ctr["resources"]:
                    ctr.pop("resources")
            return f"request {res} removed"
        req[res] = c.rng.choice({"cpu": ("50m", "100m", "1", "3"), "memory": ("64Mi", "1Gi", "6Gi")}[res])
        limits = ctr["resources"].get("limits")
        if limits and res in limits:
            limits[res] = req[res]
        return f"request {res}={req[res]}"
    return mutate


def _hugepages_left_alone(resources: dict, res: str) -> bool:
    """Whether removing the request ``res`` would leave a container's hugepages without any cpu or
    memory request or limit: the API server refuses such a pod ("HugePages require cpu or
    memory"), so no real update makes one (the request is changed instead)."""
    requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
    if not any(k.startswith("hugepages-") for k in (*requests, *limits)):
        return False
    return not any(k in ("cpu", "memory") for k in (*(k for k in requests if k != res), *limits))


def _target_mutation(c: _Cases) -> Callable[[dict], str]:
    def mutate(p: dict) -> str:
        spec = p["spec"]
        choice = c.rng.choice(("labels", "toleration", "gates", "requests", "annotation", "claim-status", "nominated"))
        if choice == "claim-status":  # the resourceclaim controller names a template's claim
            templated = [r for r in spec.get("resourceClaims") or () if r.get("resourceClaimTemplateName")]
            if not templated:
                return ""
            r = c.rng.choice(templated)
            p.setdefault("status", {})["resourceClaimStatuses"] = [
                {"name": r["name"], "resourceClaimName": f"{p['metadata']['name']}-{r['name']}-x1"}]
            return "generated claim named"
        if choice == "nominated":
            p.setdefault("status", {})["nominatedNodeName"] = c.rng.choice(("node-0", "node-1"))
            return "nominated"
        if choice == "labels":
            return _pod_labels_mutation(c)(p)
        if choice == "toleration":
            t = dict(c.rng.choice(TAINTS))
            t["operator"] = "Equal"
            t.setdefault("value", "")
            spec.setdefault("tolerations", []).append(t)
            return f"toleration {t['key']} added"
        if choice == "gates":
            if spec.get("schedulingGates"):
                gates = spec["schedulingGates"]
                if len(gates) > 1 and c.chance(0.5):
                    gates.pop()
                    return "a gate removed"
                spec.pop("schedulingGates")
                return "gates removed"
            spec["schedulingGates"] = [{"name": "example.com/wait"}]
            return "gate added"
        if choice == "requests":
            return _pod_requests_mutation(c)(p)
        p["metadata"].setdefault("annotations", {})["example.com/note"] = "x"
        return "annotation"
    return mutate


def _object_mutation(c: _Cases, kind: str) -> Callable[[dict], str]:
    def mutate(o: dict) -> str:
        meta = o["metadata"]
        if kind == "PersistentVolumeClaim":
            spec, status = o.setdefault("spec", {}), o.setdefault("status", {})
            if spec.get("volumeName") and c.chance(0.6):
                spec.pop("volumeName")
                o["status"] = {"phase": "Pending"}
                meta.get("annotations", {}).pop("pv.kubernetes.io/bind-completed", None)
                return "unbound"
            if c.chance(0.5):
                spec["storageClassName"] = c.rng.choice(("wait", "now", "provisioned", "other"))
                return f"class {spec['storageClassName']}"
            status["phase"] = c.rng.choice(("Pending", "Lost"))
            return f"phase {status['phase']}"
        if kind == "PersistentVolume":
            spec = o.setdefault("spec", {})
            labels = meta.setdefault("labels", {})
            ch = c.rng.choice(("zone", "affinity", "claimRef", "phase"))
            if ch == "zone":
                labels["topology.kubernetes.io/zone"] = c.rng.choice(("zone-a", "zone-b", "zone-d"))
                return "zone label"
            if ch == "affinity" and spec.get("nodeAffinity") and not spec.get("local"):  # (local needs it)
                spec.pop("nodeAffinity")
                return "node affinity removed"
            if ch == "claimRef" and spec.get("claimRef"):
                spec.pop("claimRef")
                o["status"] = {"phase": "Available"}
                return "released"
            o["status"] = {"phase": c.rng.choice(("Available", "Released", "Bound"))}
            return f"phase {o['status']['phase']}"
        if kind == "StorageClass":
            if c.chance(0.5):
                o["allowedTopologies"] = [{"matchLabelExpressions": [
                    {"key": "topology.kubernetes.io/zone", "values": [c.rng.choice(("zone-a", "zone-b"))]}]}]
                return "allowed topologies"
            meta.setdefault("labels", {})["example.com/x"] = "y"
            return "label"
        if kind == "CSINode":
            drivers = o["spec"].get("drivers") or []
            if drivers and c.chance(0.3):
                drivers.pop(c.rng.randrange(len(drivers)))
                return "driver removed"
            if not drivers:
                return ""
            d = c.rng.choice(drivers)
            d["allocatable"] = {"count": c.rng.randint(0, 4)}
            return f"driver {d['name']} count {d['allocatable']['count']}"
        if kind == "CSIDriver":
            spec = o.setdefault("spec", {})
            ch = c.rng.choice(("storageCapacity", "attachRequired"))
            spec[ch] = not spec.get(ch, ch == "attachRequired")
            return f"{ch} {spec[ch]}"
        if kind == "CSIStorageCapacity":
            if c.chance(0.7):
                o["capacity"] = c.rng.choice(("0", "1Gi", "5Gi", "50Gi"))
                return f"capacity {o['capacity']}"
            o["maximumVolumeSize"] = c.rng.choice(("1Gi", "40Gi"))
            return "maximum volume size"
        if kind == "ResourceClaim":
            status = o.setdefault("status", {})
            if not status.get("allocation") and c.chance(0.6):
                return _allocate(c, o)
            if status.get("reservedFor") and c.chance(0.5):
                status["reservedFor"].pop()
                if not status["reservedFor"]:
                    status.pop("reservedFor")
                return "reservation released"
            if status.get("allocation") and c.chance(0.6):
                status.pop("allocation")
                status.pop("reservedFor", None)
                status.pop("devices", None)
                return "deallocated"
            meta.setdefault("labels", {})["example.com/x"] = "y"
            return "label"
        if kind == "ResourceSlice":
            devices = o["spec"].get("devices") or []
            if len(devices) > 1 and c.chance(0.6):
                devices.pop()
                return "a device removed"
            meta.setdefault("labels", {})["example.com/x"] = "y"
            return "label"
        if kind == "PodGroup":
            policy = o["spec"].setdefault("schedulingPolicy", {})
            if "gang" in policy and c.chance(0.8):
                old_count = policy["gang"].get("minCount", 1)
                policy["gang"]["minCount"] = max(1, old_count + c.rng.choice((-2, -1, 1, 2)))
                return "" if policy["gang"]["minCount"] == old_count else f"minCount {policy['gang']['minCount']}"
            meta.setdefault("labels", {})["example.com/x"] = "y"
            return "label"
        if kind == "DeviceClass":
            spec = o.setdefault("spec", {})
            if c.chance(0.5):
                if spec.get("extendedResourceName"):
                    spec.pop("extendedResourceName")
                    return "extended resource name removed"
                spec["extendedResourceName"] = "example.com/gpu"
                return "extended resource name"
            meta.setdefault("labels", {})["example.com/x"] = "y"
            return "label"
        return ""
    return mutate


def _allocate(c: _Cases, claim: dict) -> str:
    """Allocate ``claim`` as the scheduler's PreBind writes it: a device of a node's slice per
    request (exact requests only), the node in the allocation's selector, reserved for a pending
    pod that names it when there is one; "" when it cannot be."""
    requests = claim["spec"].get("devices", {}).get("requests") or []
    slices = [s for s in c.of_kind("ResourceSlice", free=False) if s["spec"].get("nodeName") and s["spec"].get("devices")]
    if not requests or any("exactly" not in r for r in requests) or not slices:
        return ""
    sl = c.rng.choice(slices)
    devices = sl["spec"]["devices"]
    results = [{"request": r["name"], "driver": sl["spec"]["driver"], "pool": sl["spec"]["pool"]["name"],
                "device": devices[i % len(devices)]["name"]} for i, r in enumerate(requests)]
    status = claim.setdefault("status", {})
    status["allocation"] = {"devices": {"results": results}, "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": [sl["spec"]["nodeName"]]}]}]}}
    users = [p for p in c.of_kind("Pod", bound=False, free=False) if _names_claim(claim)(p)]
    if users and c.chance(0.7):
        p = c.rng.choice(users)
        status["reservedFor"] = [{"resource": "pods", "name": p["metadata"]["name"], "uid": p["metadata"]["uid"]}]
    return f"allocated on {sl['spec']['nodeName']}"


def _term_labels(p: dict) -> dict:
    """matchLabels of one of the pod's pod affinity, anti-affinity or spread selectors ({} for none)."""
    aff = p["spec"].get("affinity") or {}
    selectors = []
    for kind in ("podAffinity", "podAntiAffinity"):
        for field, terms in (aff.get(kind) or {}).items():
            for t in terms:
                selectors.append((t.get("podAffinityTerm") or t).get("labelSelector") or {})
    selectors += [t.get("labelSelector") or {} for t in p["spec"].get("topologySpreadConstraints") or ()]
    required = [t.get("labelSelector") or {} for t in
                (aff.get("podAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or ()]
    if required:  # (all of them: InterPodAffinity's hint wants a pod matching every required term)
        out: dict = {}
        for sel in required:
            out.update(sel.get("matchLabels") or {})
        return out
    labels = [s["matchLabels"] for s in selectors if s.get("matchLabels")]
    return dict(labels[0]) if labels else {}


def _names_claim(claim: dict) -> Callable[[dict], bool]:
    name, ns = claim["metadata"]["name"], claim["metadata"].get("namespace", "default")

    def refers(p: dict) -> bool:
        if p["metadata"].get("namespace", "default") != ns:
            return False
        spec = p["spec"]
        return any(r.get("resourceClaimName") == name for r in spec.get("resourceClaims", ())) or any(
            (v.get("persistentVolumeClaim") or {}).get("claimName") == name for v in spec.get("volumes", ()))
    return refers


def _in_group(group: dict) -> Callable[[dict], bool]:
    name, ns = group["metadata"]["name"], group["metadata"].get("namespace", "default")
    return lambda p: (p["metadata"].get("namespace", "default") == ns
                      and (p["spec"].get("schedulingGroup") or {}).get("podGroupName") == name)


def _has_claims(p: dict) -> bool:
    return bool(p["spec"].get("volumes") or p["spec"].get("resourceClaims"))


def _has_pod_terms(p: dict) -> bool:
    """The pod's Filter reads other pods (inter-pod affinity, topology spread)."""
    aff = p["spec"].get("affinity") or {}
    return bool(aff.get("podAffinity") or aff.get("podAntiAffinity") or p["spec"].get("topologySpreadConstraints"))


def _draw_case(c: _Cases) -> None:
    # the volume and DRA objects, where the cluster has some, as often as nodes
    objects = any(c.of_kind(k) for k in _OBJECT_KINDS)
    kind = c.rng.choice(("Node", "Node", "Node", "AssignedPod", "AssignedPod", "TargetPod", "TargetPod",
                         "UnscheduledPod") + (("Object",) * 4 if objects else ()))
    if kind == "Node":
        nodes = c.of_kind("Node")
        if not nodes:
            return
        n = c.rng.choice(nodes)
        op = c.rng.choice(("update", "update", "update", "add", "delete"))
        if op == "add":
            if c.chance(0.5):
                new = copy.deepcopy(n)
                name = c.fresh(n["metadata"]["name"])
                new["metadata"]["name"] = name
                new["metadata"].setdefault("labels", {})["kubernetes.io/hostname"] = name
                _node_mutation(c)(new)
                c.add_case("Node", "add", None, new, pod=c.pending_pod(), what="new node")
            else:
                c.add_case("Node", "add", None, n, pod=c.pending_pod(), what="node added")
            return
        if op == "delete":
            name = n["metadata"]["name"]
            if any(p["spec"].get("nodeName") == name for p in c.of_kind("Pod", bound=True, free=False)):
                return  # (its pods would dangle)
            c.add_case("Node", "delete", n, None, pod=c.pending_pod(), what="node deleted")
            return
        ch = c.changed(n, _node_mutation(c))
        if ch:
            c.add_case("Node", "update", ch[0], ch[1], pod=c.pending_pod(), what=ch[2])
        return
    if kind == "AssignedPod":
        bound = c.of_kind("Pod", bound=True)
        op = c.rng.choice(("add", "delete", "update", "update"))
        if op == "add" or not bound:
            pending = c.of_kind("Pod", bound=False)
            nodes = c.of_kind("Node", free=False)
            if bound and c.chance(0.5):
                p = c.rng.choice(bound)
                c.add_case("Pod", "add", None, p, pod=c.pending_pod(_has_pod_terms), what="bound pod added")
                return
            if not pending or not nodes:
                return
            # a pod like a pending one (often the rejected pod: its namespace), bound (another
            # replica started elsewhere)
            rejected = c.pending_pod(_has_pod_terms)
            p = copy.deepcopy(rejected if rejected is not None and c.chance(0.5) else c.rng.choice(pending))
            name = c.fresh(p["metadata"]["name"])
            p["metadata"]["name"] = name
            p["metadata"]["uid"] = f"uid-{p['metadata'].get('namespace', 'default')}-{name}"
            p["spec"].pop("schedulingGates", None)
            p["spec"].pop("resourceClaims", None)
            p["spec"].pop("volumes", None)
            p["spec"]["nodeName"] = c.rng.choice(nodes)["metadata"]["name"]
            p["status"] = {"phase": "Running", "startTime": "2026-01-01T01:00:00Z"}
            p["spec"].pop("affinity", None)
            if rejected is not None and c.chance(0.6):  # labels the rejected pod's terms select
                p["metadata"].setdefault("labels", {}).update(_term_labels(rejected))
            c.add_case("Pod", "add", None, p, pod=rejected, what="a pending pod's twin bound")
            return
        p = c.rng.choice(bound)
        if op == "delete":
            wanted = c.rng.choice((_has_claims, _has_pod_terms))
            c.add_case("Pod", "delete", p, None, pod=c.pending_pod(wanted), what="bound pod deleted")
            return
        ch = c.changed(p, c.rng.choice((_pod_labels_mutation, _pod_requests_mutation))(c))
        if ch:
            c.add_case("Pod", "update", ch[0], ch[1], pod=c.pending_pod(_has_pod_terms), what=ch[2])
        return
    if kind in ("TargetPod", "UnscheduledPod"):
        pending = c.of_kind("Pod", bound=False)
        if not pending:
            return
        p = c.rng.choice(pending)
        if kind == "TargetPod":
            ch = c.changed(p, _target_mutation(c))
            if ch:
                c.add_case("Pod", "update", ch[0], ch[1], target=True, what=ch[2])
            return
        op = c.rng.choice(("add", "update", "delete"))
        c.touched.add(_key(p))  # (not the rejected pod as well)
        other = c.pending_pod()
        if other is None:
            return
        if op == "update":
            ch = c.changed(p, _target_mutation(c))
            if ch:
                c.add_case("Pod", "update", ch[0], ch[1], pod=other, what=f"another pending pod: {ch[2]}")
        elif op == "add":
            c.add_case("Pod", "add", None, p, pod=other, what="another pending pod added")
        else:
            c.add_case("Pod", "delete", p, None, pod=other, what="another pending pod deleted")
        return
    kinds = [k for k in _OBJECT_KINDS if c.of_kind(k)]
    if not kinds:
        return
    # claims (DRA's and volumes') most often: their hints read the most of the cluster
    okind = c.rng.choice(kinds + [k for k in kinds if k in ("ResourceClaim", "PersistentVolumeClaim")] * 2)
    o = c.rng.choice(c.of_kind(okind))
    op = c.rng.choice(("update", "update", "add", "delete"))
    refers = (_names_claim(o) if okind in ("PersistentVolumeClaim", "ResourceClaim")
              else _in_group(o) if okind == "PodGroup" else _has_claims)
    if op == "add":
        c.add_case(okind, "add", None, o, pod=c.pending_pod(refers), what=f"{okind} added")
    elif op == "delete":
        c.add_case(okind, "delete", o, None, pod=c.pending_pod(refers), what=f"{okind} deleted")
    else:
        ch = c.changed(o, _object_mutation(c, okind))
        if ch:
            c.add_case(okind, "update", ch[0], ch[1], pod=c.pending_pod(refers), what=ch[2])


def generate_hints(seed: int, cls: str = HINTS_CLASS) -> dict:
    """The ``hints`` (or ``hints-gangs``) scenario of ``seed`` (deterministic): a cluster of a
    :data:`BASE_CLASSES` class (or the class ``gangs``; the same seed) and up to :data:`CASES`
    cases on it, the cluster holding their changes."""
    if cls == HINTS_GANGS_CLASS:
        from .oracle_groups import generate_gangs

        base = generate_gangs(seed)
    else:
        # (without the ServiceAccount token volumes the volumes and mixed classes' pods got since:
        # the recorded hint scenarios were drawn without them)
        base = generate(BASE_CLASSES[seed % len(BASE_CLASSES)], seed, service_account_tokens=False)
    c = _Cases(base, random.Random(f"{cls}:{seed}"))
    for _ in range(CASES * 3):
        if len(c.cases) >= CASES:
            break
        _draw_case(c)
    sc = json.loads(json.dumps(c.scenario(base, seed)))
    # the uid the API server gives every object: the generators leave it to the harness, where the
    # oracle's fake clientset gives none, so that two claims without one would be the same claim to
    # DynamicResources' hint (claim.UID == modifiedClaim.UID)
    for m in [*sc["nodes"], *sc["pods"], *sc["objects"], *sc["incoming"],
              *(x for case in sc["hints"] for x in (case.get("old"), case.get("new"), case.get("pod")) if x)]:
        k = _key(m)
        m["metadata"].setdefault("uid", f"uid-{k[0].lower()}-{k[1]}-{k[2]}")
    return sc


# ------------------------------------------------------------------------------------------------
# the fastsched side
# ------------------------------------------------------------------------------------------------
def _resource(r: Any) -> str:
    return str(getattr(r, "value", r))


def _typed(sched: Any, kind: str, manifest: dict | None) -> Any:
    """A case's object as fastsched's event handlers hand it to the queue: decoded and admitted as
    the Cluster admits an object it is given (a pod through the API server's admission too)."""
    if manifest is None:
        return None
    obj = sched.cluster._admitted_any(copy.deepcopy(manifest))
    if kind == "Pod":
        obj, _ = sched.cluster._admit(obj)
    return obj


def _case_events(case: dict, old: Any, new: Any) -> list:
    """The cluster events of a case's change, as fastsched's event handlers classify it."""
    from ..framework.events import (EVENT_ASSIGNED_POD_ADD, EVENT_ASSIGNED_POD_DELETE, EVENT_UNSCHEDULED_POD_ADD,
                                    EVENT_UNSCHEDULED_POD_DELETE, node_scheduling_properties_change,
                                    pod_scheduling_properties_change)
    from ..framework.interface import ActionType, ClusterEvent, EventResource
    from ..framework.objects import EVENT_RESOURCE_OF_KIND

    kind, op = case["kind"], case["op"]
    action = {"add": ActionType.ADD, "update": ActionType.UPDATE, "delete": ActionType.DELETE}[op]
    if kind == "Node":
        if op == "update":
            return node_scheduling_properties_change(new, old)
        return [ClusterEvent(EventResource.NODE, action)]
    if kind == "Pod":
        if op == "update":
            return pod_scheduling_properties_change(new, old, bool(case.get("target")))
        pod = new if new is not None else old
        if op == "add":
            return [EVENT_ASSIGNED_POD_ADD if pod.node_name else EVENT_UNSCHEDULED_POD_ADD]
        return [EVENT_ASSIGNED_POD_DELETE if pod.node_name else EVENT_UNSCHEDULED_POD_DELETE]
    # (PodGroups' events come from their own handler: eventhandlers._pod_group_event)
    resource = {"PodGroup": EventResource.POD_GROUP,
                "CompositePodGroup": EventResource.COMPOSITE_POD_GROUP}.get(kind) or EVENT_RESOURCE_OF_KIND[kind]
    return [ClusterEvent(resource, action)]


def run_fastsched_hints(scenario: dict, feature_gates: Any = None) -> dict:
    """fastsched's answer to a ``hints`` scenario, in the oracle's shape: ``{"registered": [...],
    "hints": [{"events": [...], "hints": [...]} per case]}``."""
    from ..clock import VirtualClock
    from ..framework.events import match_cluster_events
    from ..framework.interface import QueueingHint
    from ..scheduler import Scheduler
    from .oracle import NOW_EPOCH, informer_order

    sched = Scheduler(scenario["config"], seed=int(scenario.get("seed", 0)), clock=VirtualClock(start=NOW_EPOCH),
                      feature_gates=feature_gates or None)
    sched.add(informer_order(scenario.get("objects")))
    sched.add(list(scenario["nodes"]))
    if scenario.get("pods"):
        sched.add(list(scenario["pods"]))
    if scenario.get("incoming"):
        sched.add(list(scenario["incoming"]))
    fw = next(iter(sched.profiles.values()))
    registered: list[dict] = []
    by_plugin: list[tuple[str, list]] = []
    for ext in fw.enqueue_extensions():
        regs = list(ext.events_to_register() or ())
        by_plugin.append((ext.name(), regs))
        for reg in regs:
            registered.append({"plugin": ext.name(), "resource": _resource(reg.event.resource),
                               "action": int(reg.event.action_type), "hint": reg.queueing_hint_fn is not None})
    answers = []
    for case in scenario["hints"]:
        try:
            old, new = _typed(sched, case["kind"], case.get("old")), _typed(sched, case["kind"], case.get("new"))
            pod = new if case.get("target") else _typed(sched, "Pod", case["pod"])
            events = _case_events(case, old, new)
        except Exception as exc:  # noqa: BLE001 - reported as the case's error
            answers.append({"events": [], "hints": [], "error": f"{type(exc).__name__}: {exc}"})
            continue
        a: dict[str, Any] = {"events": [], "hints": []}
        for ev in events:
            text = f"{_resource(ev.resource)}/{int(ev.action_type)}"
            a["events"].append(text)
            for name, regs in by_plugin:
                for reg in regs:
                    if not match_cluster_events(reg.event, ev):
                        continue
                    r = {"event": text, "plugin": name, "resource": _resource(reg.event.resource),
                         "action": int(reg.event.action_type), "hint": "Queue"}
                    fn = reg.queueing_hint_fn
                    if fn is not None:
                        try:
                            result = fn(pod, old, new)
                        except Exception as exc:  # noqa: BLE001 - the queue takes it as an error
                            result = (QueueingHint.QUEUE, exc)
                        hint, err = (result + (None,))[:2] if isinstance(result, tuple) else (result, None)
                        if err is not None:
                            r["error"] = f"{type(err).__name__}: {err}" if isinstance(err, BaseException) else str(err)
                        elif hint == QueueingHint.QUEUE_SKIP:
                            r["hint"] = "QueueSkip"
                    a["hints"].append(r)
        answers.append(a)
    return {"registered": registered, "hints": answers}


# ------------------------------------------------------------------------------------------------
# comparison
# ------------------------------------------------------------------------------------------------
#: registrations compared without whether they have a QueueingHintFn: (plugin, resource) -> why.
#: Differences understood and left (``compare_hints(known=False)`` counts them).
KNOWN_REGISTRATIONS = {
    ("NodeVolumeLimits", "storage.k8s.io/VolumeAttachment"):
        "upstream's VolumeAttachment/Delete has isSchedulableAfterVolumeAttachmentDeleted (csi.go); fastsched "
        "has no VolumeAttachment kind (nodevolumelimits' module docstring), so the event never comes and the "
        "registration has no function",
}


def _reg_rows(registered: list[dict], known: bool = True) -> dict[str, list]:
    out: dict[str, list] = {}
    for r in registered or ():
        hint = None if known and (r["plugin"], r["resource"]) in KNOWN_REGISTRATIONS else bool(r.get("hint"))
        out.setdefault(r["plugin"], []).append((r["resource"], int(r["action"]), hint))
    return {k: sorted(v, key=repr) for k, v in out.items()}


def _hint_rows(a: dict) -> list:
    """A case's answers as a sorted multiset: (event, plugin, registration, hint, an error or not).
    An error is compared as an error (the queue takes it as Queue whatever the answer)."""
    return sorted((h["event"], h["plugin"], h["resource"], int(h["action"]),
                   "error" if h.get("error") else h["hint"]) for h in a.get("hints") or ())


def _describe(case: dict) -> str:
    obj = case.get("new") or case.get("old") or {}
    name = obj.get("metadata", {}).get("name", "?")
    pod = "itself" if case.get("target") else _pod_key(case["pod"]) if case.get("pod") else "-"
    return f"{case['kind']} {name} {case['op']} ({case.get('what', '')}), pod {pod}"


def compare_hints(scenario: dict, mine: dict, theirs: dict, *, known: bool = True) -> list[dict]:
    """The differences between fastsched's and the oracle's answers: ``registered`` (one per
    plugin whose registrations differ; :data:`KNOWN_REGISTRATIONS` normalized unless ``known`` is
    False), then per case ``events`` and ``hints`` (the first that differs), each with both
    sides' values and the case's index."""
    diffs: list[dict] = []
    ours = _reg_rows(mine.get("registered") or [], known)
    upstream = _reg_rows(theirs.get("registered") or [], known)
    for plugin in sorted(set(ours) | set(upstream)):
        if ours.get(plugin) != upstream.get(plugin):
            diffs.append({"case": None, "pod": None, "field": f"registered:{plugin}",
                          "fastsched": ours.get(plugin), "oracle": upstream.get(plugin)})
    for i, case in enumerate(scenario["hints"]):
        m, t = mine["hints"][i], (theirs.get("hints") or [{}] * len(scenario["hints"]))[i]
        if bool(m.get("error")) != bool(t.get("error")):
            diffs.append({"case": i, "pod": _describe(case), "field": "case error",
                          "fastsched": m.get("error"), "oracle": t.get("error")})
            continue
        if sorted(m.get("events") or ()) != sorted(t.get("events") or ()):
            diffs.append({"case": i, "pod": _describe(case), "field": "events",
                          "fastsched": m.get("events"), "oracle": t.get("events")})
            continue
        mr, tr = _hint_rows(m), _hint_rows(t)
        if mr != tr:
            diffs.append({"case": i, "pod": _describe(case), "field": "hints",
                          "fastsched": [list(x) for x in mr if x not in tr],
                          "oracle": [list(x) for x in tr if x not in mr],
                          "errors": {"fastsched": [h.get("error") for h in m.get("hints") or () if h.get("error")],
                                     "oracle": [h.get("error") for h in t.get("hints") or () if h.get("error")]}})
    return diffs


def check_hints(scenario: dict, oracle: Any, feature_gates: Any = None) -> tuple[list[dict], dict, dict]:
    """Both sides on one ``hints`` scenario: (differences, fastsched's answer, the oracle's)."""
    mine = run_fastsched_hints(scenario, feature_gates)
    theirs = oracle.ask(scenario, [])
    if theirs.get("error"):
        return [{"case": None, "pod": None, "field": "oracle error", "fastsched": None,
                 "oracle": theirs["error"]}], mine, theirs
    return compare_hints(scenario, mine, theirs), mine, theirs


def shrink_case(scenario: dict, index: int, still_differs: Callable[[dict], bool], *, budget: int = 120) -> dict:
    """The scenario with case ``index`` alone, then its cluster shrunk (nodes, pods and objects
    dropped one at a time while ``still_differs``; the case's own objects kept)."""
    from .oracle import shrink

    one = {**scenario, "hints": [scenario["hints"][index]]}
    if not still_differs(one):
        return one
    return {**shrink(one, still_differs, budget=budget), "hints": one["hints"]}


def differential_hints(scenarios: int, seed: int, out: str | Path | None, *, oracle: Any,
                       record: str | Path | None = None, log: Callable[[str], None] | None = None,
                       feature_gates: Any = None, shrink_budget: int = 120, cls: str = HINTS_CLASS) -> Any:
    """Run ``scenarios`` ``hints`` scenarios (seeds ``seed``, ``seed + 1``, ...) on both sides; the
    summary counts cases as ``pods``. Each difference goes, shrunk, to ``<out>/hints-<seed>.json``;
    with ``record``, the agreeing scenarios and the oracle's answers to ``<record>/hints.jsonl.gz``."""
    import time

    from .oracle import ClassSummary, _short, write_recorded

    if (getattr(oracle, "version", None) or {}).get("protocol", 0) < 4:
        raise RuntimeError("the oracle answers no hints scenarios (protocol < 4): rebuild it (build_oracle())")
    s = ClassSummary()
    recorded: list[dict] = []
    t0 = time.perf_counter()
    for k in range(scenarios):
        sc = generate_hints(seed + k, cls)
        try:
            diffs, mine, theirs = check_hints(sc, oracle, feature_gates)
        except Exception as exc:  # noqa: BLE001 - fastsched refused the scenario: a difference too
            diffs, mine, theirs = [{"case": None, "pod": None, "field": "fastsched exception",
                                    "fastsched": f"{type(exc).__name__}: {exc}", "oracle": None}], {}, {}
        s.scenarios += 1
        s.pods += len(sc["hints"])
        if diffs:
            s.differences += 1
            if log:
                d = diffs[0]
                log(f"  {sc['id']}: {d['pod']} {d['field']}: fastsched {_short(d['fastsched'])} "
                    f"oracle {_short(d['oracle'])}")
            if out is not None:
                _write_reproducer(Path(out), sc, diffs, oracle, feature_gates, shrink_budget)
            continue
        if record is not None:
            recorded.append({"scenario": sc, "answer": {"registered": theirs.get("registered") or [],
                                                        "hints": theirs.get("hints") or []}})
    s.seconds = time.perf_counter() - t0
    if record is not None:
        write_recorded(Path(record) / f"{cls}.jsonl.gz", recorded)
    return s


def _write_reproducer(outdir: Path, sc: dict, diffs: list[dict], oracle: Any, feature_gates: Any,
                      budget: int) -> None:
    first = next((d for d in diffs if d.get("case") is not None), None)
    small = sc
    if first is not None:
        field = first["field"]

        def still(cand: dict) -> bool:
            got, _, _ = check_hints(cand, oracle, feature_gates)
            return any(d["field"] == field and d.get("case") == 0 for d in got)

        try:
            small = shrink_case(sc, first["case"], still, budget=budget)
        except Exception:  # noqa: BLE001 - the unshrunk scenario then
            small = sc
    try:
        d2, mine, theirs = check_hints(small, oracle, feature_gates)
    except Exception as exc:  # noqa: BLE001
        small, d2, mine, theirs = sc, diffs, {}, {"error": repr(exc)}
    outdir.mkdir(parents=True, exist_ok=True)
    doc = {"id": sc["id"], "differences": d2 or diffs, "scenario": small, "fastsched": mine.get("hints"),
           "oracle": theirs.get("hints"), "registered": {"fastsched": mine.get("registered"),
                                                         "oracle": theirs.get("registered")},
           "original_size": {k: len(sc.get(k, ())) for k in ("nodes", "pods", "objects", "incoming", "hints")}}
    (outdir / f"{sc['id']}.json").write_text(json.dumps(doc, indent=1, sort_keys=True))
