"""End to end on input as users have it: ``add_pods`` of one manifest per pod, then ``run()``.

upstream scheduler_perf's SchedulingBasic shape: 5,000 nodes already running 5,000 pods, 3,000
measured pods rendered one manifest (a dict) each from the pod-default template, as a cluster dump
or a workload file hands them over; the default profile. Unlike ``common.py``'s convention, the
timing includes ``add_pods`` (decoding, validation, admission, queueing: issue 29's "end to end").
extra_info records, per round, the µs per pod of ``add_pods`` and of ``run()`` and the end-to-end
pods/s (process CPU); every pod must be scheduled (asserted).

Shapes of the manifests: ``named`` (a name and a uid each: a workload file), ``dump`` (also a
resourceVersion, a creationTimestamp and a Pending status with its PodScheduled condition each, as
``kubectl get pods -o yaml`` hands pending pods over), ``generate`` (``generateName`` only: the
Scheduler names each pod) and ``labelled`` (named, with a label of its own each, as a
StatefulSet's ``statefulset.kubernetes.io/pod-name``). ``deployments`` and ``interleaved`` are dumps
of the pods of ``DEPLOYMENTS`` Deployments in the namespace, each with a spec of its own (image,
requests, labels, its ReplicaSet as controller), as a cluster dump hands them over (the dump
shape's per-pod fields, names ``<deployment>-<pod-template-hash>-<5 characters>``): ``deployments``
in name order, as ``kubectl get pods -o yaml`` lists them (the API server lists by namespace and
name, so a ReplicaSet's pods come one after another), ``interleaved`` in creation order, as a watch,
``kubectl get pods --sort-by=.metadata.creationTimestamp`` or a listing node by node hands over
pods of Deployments scaled up together (issue 29: each pod's template differs from the previous
one's). ``satoken`` is the dump shape as a real cluster's dump holds it: each pod also has the
ServiceAccount admission's token volume ``kube-api-access-<5 characters>`` (a name of its own,
seeded) and a mount of it in every container, and the ``managedFields`` the API server writes
(the controller's create and the scheduler's condition, at the pod's own time). ``statefulset`` and
``indexedjob`` are the satoken shape as those controllers' pods hold it (issue 29: each pod's own
fields besides its name, so each was a template of its own): a StatefulSet's pods
(``newStatefulSetPod``: ``db-<ordinal>``, ``generateName: db-``, the pod-name, pod-index and
revision labels, ``spec.hostname`` its name, ``spec.subdomain``, a volume ``data`` of the claim
``data-db-<ordinal>``, each claim bound to a PV that any node reaches, added with the cluster),
and an Indexed Job's (``train-<index>-<5 characters>``, ``generateName: train-<index>-``, the
completion index as annotation and label, ``spec.hostname: train-<index>``, the
``JOB_COMPLETION_INDEX`` variable).

Issue 29 also sets targets at 50,000 and 1,000,000 nodes (the named shape, init pods as many as
nodes): those sizes run with ``FASTSCHED_BENCH_LARGE=1`` (about a minute of set-up at 1,000,000
nodes). Above ``CHUNK`` nodes the cluster is built and added ``CHUNK`` nodes (and their bound pods)
at a time, as a loader streaming a cluster dump would add it, so that the set-up's input objects
(~1.5 GB of Node and Pod objects at 1,000,000 nodes, more than the scheduler's own memory) never
all live at once: the same nodes and pods, named and bound as ``WORKLOADS["SchedulingBasic"].build``
names and binds them. extra_info has the peak RSS (``peak_rss_mib``: the process's peak since the
case began, from ``VmHWM`` reset at its start where Linux allows it, else the peak of the whole
pytest process so far, an upper bound) and the RSS after the measured pods (``rss_mib``).

    python -m pytest benchmarks/bench_end_to_end.py --benchmark-only
    FASTSCHED_BENCH_LARGE=1 python -m pytest benchmarks/bench_end_to_end.py --benchmark-only  # + 50k, 1M nodes
"""
import copy
import gc
import os
import random
import resource
import statistics
import time
import uuid

import pytest

from fastsched.scheduler import Scheduler
from fastsched.sim.generators import upstream_nodes
from fastsched.sim.workloads import TEMPLATES, WORKLOADS, _factory, prebind_pods, template_manifest
from fastsched.testing import NAME_ALPHABET, add_service_account_token

NODES, INIT_PODS, MEASURED = 5000, 5000, 3000
#: (nodes, shape) of each case: every shape at 5,000 nodes; named pods at issue 29's large sizes
#: on request (init pods as many as nodes; fewer measured pods at 1,000,000, where a pod's cycle
#: scores 50,000 nodes)
CASES = [(NODES, shape) for shape in ("named", "dump", "generate", "labelled", "deployments", "interleaved",
                                      "satoken", "statefulset", "indexedjob")]
if os.environ.get("FASTSCHED_BENCH_LARGE"):
    CASES += [(50_000, "named"), (1_000_000, "named")]


#: Deployments of the ``deployments`` and ``interleaved`` shapes (all in the measured namespace)
DEPLOYMENTS = 12
#: the characters of generated names (k8s.io/apiserver's names.SimpleNameGenerator, via
#: k8s.io/apimachinery/pkg/util/rand.String), and of a ReplicaSet's pod-template-hash (rand.SafeEncodeString)
_NAME_ALPHABET = NAME_ALPHABET

#: above this many nodes the cluster is built and added this many nodes (and pods) at a time
CHUNK = 100_000


def _prepared(shape: str = "named", nodes: int = NODES, chunk: int = CHUNK):
    w = WORKLOADS["SchedulingBasic"]
    init_pods = INIT_PODS if nodes == NODES else nodes
    measured = MEASURED if nodes < 1_000_000 else 1000
    chunked = nodes > chunk
    # chunked: the measured pods, config and namespaces of the build; the cluster below
    inst = w.build(nodes=0 if chunked else nodes, init_pods=0 if chunked else init_pods, measured_pods=measured,
                   prebind=True)
    s = Scheduler(inst.config, seed=0)
    s.add(inst.namespaces)
    s.add(inst.priority_classes)
    if chunked:
        _add_cluster_in_chunks(s, w, nodes, chunk)
    else:
        s.add_nodes(inst.nodes)
        s.add_pods(inst.init_pods)
    if shape in ("deployments", "interleaved"):
        manifests = _deployment_pods(w.measured_op.template, inst.measured_pods, by_name=shape == "deployments")
        gc.collect()
        return s, manifests
    manifests = []
    rng = random.Random(32)  # (the satoken shape's volume names)
    for i, p in enumerate(inst.measured_pods):
        m = template_manifest(w.measured_op.template, p.name, p.namespace)
        if shape == "generate":
            del m["metadata"]["name"]
        else:
            m["metadata"].pop("generateName", None)
            m["metadata"]["uid"] = p.uid
        if shape == "labelled":  # a StatefulSet's pods: a label of their own each
            m["metadata"].setdefault("labels", {})["statefulset.kubernetes.io/pod-name"] = p.name
        if shape in ("dump", "satoken", "statefulset", "indexedjob"):
            _dump_fields(m, i)
        if shape in ("satoken", "statefulset", "indexedjob"):
            add_service_account_token(m, rng)
            _managed_fields(m)
        if shape == "statefulset":
            _statefulset_pod(m, i)
        elif shape == "indexedjob":
            _indexed_job_pod(m, i, rng)
        manifests.append(m)
    if shape == "statefulset":
        s.add(_bound_claims(manifests))
    gc.collect()
    return s, manifests


def _dump_fields(m: dict, i: int) -> None:
    """The per-pod fields of the ``i``-th pod of a dump of pending pods (see the ``dump`` shape)."""
    created = "2026-11-02T09:%02d:%02dZ" % (i // 60 % 60, i % 60)
    m["metadata"].update(resourceVersion=str(100000 + i), creationTimestamp=created)
    m["status"] = {"phase": "Pending", "qosClass": "Guaranteed",
                   "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                   "lastTransitionTime": created}]}


def _managed_fields(m: dict) -> None:
    """``metadata.managedFields`` as the API server writes them for a pending pod of a ReplicaSet
    (what a dump read from the API, or ``kubectl get -o yaml --show-managed-fields``, holds): the
    controller's create and the scheduler's PodScheduled condition, each at the pod's own time."""
    meta, spec = m["metadata"], m["spec"]
    created = meta["creationTimestamp"]
    containers = {f'k:{{"name":"{c["name"]}"}}': {".": {}, "f:image": {}, "f:imagePullPolicy": {}, "f:name": {},
                                                  "f:resources": {".": {}, "f:limits": {}, "f:requests": {}},
                                                  "f:terminationMessagePath": {}, "f:terminationMessagePolicy": {}}
                  for c in spec["containers"]}
    meta["managedFields"] = [
        {"apiVersion": "v1", "fieldsType": "FieldsV1",
         "fieldsV1": {"f:metadata": {"f:generateName": {}},
                      "f:spec": {"f:containers": containers, "f:dnsPolicy": {}, "f:enableServiceLinks": {},
                                 "f:restartPolicy": {}, "f:schedulerName": {}, "f:securityContext": {},
                                 "f:terminationGracePeriodSeconds": {}}},
         "manager": "kube-controller-manager", "operation": "Update", "time": created},
        {"apiVersion": "v1", "fieldsType": "FieldsV1",
         "fieldsV1": {"f:status": {"f:conditions": {".": {}, 'k:{"type":"PodScheduled"}': {
             ".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:message": {}, "f:reason": {},
             "f:status": {}, "f:type": {}}}}},
         "manager": "kube-scheduler", "operation": "Update", "subresource": "status", "time": created},
    ]


def _statefulset_pod(m: dict, ordinal: int) -> None:
    """The pod ``db-<ordinal>`` of a StatefulSet ``db`` with a volumeClaimTemplate ``data``
    (``newStatefulSetPod``, ``updateIdentity``, ``updateStorage``)."""
    meta, spec = m["metadata"], m["spec"]
    name = meta["name"] = f"db-{ordinal}"
    meta["generateName"] = "db-"
    meta["labels"] = {**(meta.get("labels") or {}), "app": "db", "controller-revision-hash": "db-5f8d6c9b7",
                      "statefulset.kubernetes.io/pod-name": name, "apps.kubernetes.io/pod-index": str(ordinal)}
    meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db",
                                "uid": "6f1c2a7e-1d1b-4c55-9a3e-2f0d9f6b8a11", "controller": True,
                                "blockOwnerDeletion": True}]
    spec["hostname"] = name
    spec["subdomain"] = "db"
    spec["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": f"data-{name}"}}, *spec["volumes"]]
    for container in spec["containers"]:
        container["volumeMounts"].insert(0, {"mountPath": "/data", "name": "data"})


def _bound_claims(manifests: list[dict]) -> list[dict]:
    """For each claim of the statefulset shape's pods, the claim bound to a PV of its own (no node
    affinity: every node reaches it), as the cluster holds them."""
    from fastsched.sim.storage import pv_manifest, pvc_manifest
    out = []
    for m in manifests:
        namespace = m["metadata"]["namespace"]
        claim = m["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"]
        out.append(pv_manifest(f"pv-{claim}", capacity="10Gi", storage_class="standard", claim=(namespace, claim),
                               phase="Bound"))
        out.append(pvc_manifest(claim, namespace=namespace, request="10Gi", storage_class="standard",
                                volume_name=f"pv-{claim}", bound=True))
    return out


def _indexed_job_pod(m: dict, index: int, rng: random.Random) -> None:
    """The pod of index ``index`` of an Indexed Job ``train`` whose template has a subdomain
    (``manageJob``: ``podGenerateNameWithIndex``, ``addCompletionIndexAnnotation``, the label, the
    hostname, ``addCompletionIndexEnvVariables``), named by the API server."""
    meta, spec = m["metadata"], m["spec"]
    key = "batch.kubernetes.io/job-completion-index"
    meta["generateName"] = f"train-{index}-"
    meta["name"] = meta["generateName"] + "".join(rng.choice(_NAME_ALPHABET) for _ in range(5))
    meta["labels"] = {**(meta.get("labels") or {}), "job-name": "train", "batch.kubernetes.io/job-name": "train",
                      key: str(index)}
    meta["annotations"] = {key: str(index)}
    meta["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": "train",
                                "uid": "0c4e8f0a-5b7d-4f3e-8a2c-7e9d1b3a5c20", "controller": True,
                                "blockOwnerDeletion": True}]
    meta["finalizers"] = ["batch.kubernetes.io/job-tracking"]
    spec["hostname"] = f"train-{index}"
    spec["subdomain"] = "train"
    for container in spec["containers"]:
        container["env"] = [{"name": "JOB_COMPLETION_INDEX", "valueFrom": {
            "fieldRef": {"apiVersion": "v1", "fieldPath": f"metadata.labels['{key}']"}}}]


def _deployment_pods(template: str, pods, *, by_name: bool) -> list[dict]:
    """The ``deployments`` (``by_name``) or ``interleaved`` shape: ``pods``' namespaces and uids as
    the pods of ``DEPLOYMENTS`` Deployments, each with its own spec, in creation order (the
    Deployment of each pod drawn at random, as ReplicaSets scaled up together create them) or in
    name order. Deterministic (a seeded generator)."""
    rng = random.Random(29)
    names = ["api", "auth", "billing", "cart", "checkout", "db-proxy", "frontend", "mail", "metrics", "orders",
             "search", "web", "worker", "gateway", "reports", "ledger", "notify", "cache", "queue", "admin"]
    deployments = []
    for d, name in enumerate(names[:DEPLOYMENTS]):
        pod_template_hash = "".join(rng.choice(_NAME_ALPHABET) for _ in range(10))
        m = template_manifest(template, None, pods[0].namespace)
        meta, container = m["metadata"], m["spec"]["containers"][0]
        del meta["name"]
        meta["generateName"] = f"{name}-{pod_template_hash}-"
        meta["labels"] = {"app": name, "pod-template-hash": pod_template_hash}
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"{name}-{pod_template_hash}",
                                    "uid": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                                    "controller": True, "blockOwnerDeletion": True}]
        container.update(name=name, image=f"registry.example.com/team/{name}:1.{d}.0")
        quantities = {"cpu": f"{50 + 10 * d}m", "memory": f"{128 + 32 * d}Mi"}
        container["resources"] = {"requests": dict(quantities), "limits": dict(quantities)}
        deployments.append(m)
    manifests = []
    for i, p in enumerate(pods):
        m = copy.deepcopy(rng.choice(deployments))
        meta = m["metadata"]
        meta["name"] = meta["generateName"] + "".join(rng.choice(_NAME_ALPHABET) for _ in range(5))
        meta["uid"] = p.uid
        _dump_fields(m, i)
        manifests.append(m)
    if by_name:
        manifests.sort(key=lambda m: m["metadata"]["name"])
    return manifests


def _add_cluster_in_chunks(s, w, nodes: int, chunk: int) -> None:
    """SchedulingBasic's nodes and as many init pods, bound round-robin (pod i on node i), as
    ``w.build(nodes=nodes, init_pods=nodes, prebind=True)`` makes them, added ``chunk`` nodes and
    their pods at a time."""
    (op,) = w.init_ops
    factory = _factory(op.template)
    prefix = f"{TEMPLATES[op.template]['metadata']['generateName']}{op.op_index}-"
    width = max(5, len(str(nodes - 1)))  # as _make_pods names nodes-many pods
    for start in range(0, nodes, chunk):
        count = min(chunk, nodes - start)
        batch = upstream_nodes(count, start=start, total=nodes)
        pods = prebind_pods([factory.make(f"{prefix}{i:0{width}d}", op.namespace) for i in range(start, start + count)],
                            batch)
        s.add_nodes(batch)
        s.add_pods(pods)
        del batch, pods


def _reset_peak_rss() -> bool:
    """Reset the process's peak RSS (Linux >= 4.0: ``VmHWM``); False where that is not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _rss_mib(field: str) -> int:
    """``VmHWM`` (peak) or ``VmRSS`` of this process in MiB, from /proc/self/status."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) // 1024
    raise LookupError(field)


def _end_to_end(s, manifests):
    c0 = time.process_time()
    s.add_pods(manifests)
    c1 = time.process_time()
    results = s.run()
    c2 = time.process_time()
    assert sum(r.status == "Scheduled" for r in results) == len(manifests)
    n = len(manifests)
    return {"add_pods_us": 1e6 * (c1 - c0) / n, "run_us": 1e6 * (c2 - c1) / n, "pods_per_second": n / (c2 - c0)}


@pytest.mark.parametrize("nodes,shape", CASES, ids=[shape if n == NODES else f"{shape}-{n}-nodes" for n, shape in CASES])
def test_scheduling_basic_single_manifest_pods_end_to_end(benchmark, nodes, shape):
    runs: list[dict] = []
    gc.collect()
    own_peak = _reset_peak_rss()
    benchmark.pedantic(lambda s, m: runs.append(_end_to_end(s, m)), setup=lambda: (_prepared(shape, nodes), {}),
                       rounds=3 if nodes <= 50_000 else 1, iterations=1)
    benchmark.extra_info.update(
        nodes=nodes, rss_mib=_rss_mib("VmRSS"),
        peak_rss_mib=_rss_mib("VmHWM") if own_peak else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
        add_pods_us_best=round(min(r["add_pods_us"] for r in runs), 1),
        run_us_best=round(min(r["run_us"] for r in runs), 1),
        cpu_pods_per_second_best=round(max(r["pods_per_second"] for r in runs)),
        cpu_pods_per_second_median=round(statistics.median(r["pods_per_second"] for r in runs)))
