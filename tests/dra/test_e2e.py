"""End to end: a training job (pods with claim templates asking for 2 GPUs of one model that
share a NUMA node) on a mixed GPU cluster, through the Scheduler."""
from __future__ import annotations

import warnings
from collections import Counter

from fastsched import Scheduler
from fastsched.sim.gpu import GPUNodePool, gpu_claim, gpu_claim_template, gpu_cluster, gpu_pods


def _cluster(sched: Scheduler) -> None:
    sched.add(gpu_cluster([GPUNodePool(3, model="a100", gpus=8, numa_nodes=2),
                           GPUNodePool(2, model="h100", gpus=4, numa_nodes=2),
                           GPUNodePool(2, model="a100", gpus=2, numa_nodes=2, prefix="small-a100")]))


def _devices_by_node(sched: Scheduler) -> dict[str, dict[str, dict]]:
    out: dict[str, dict[str, dict]] = {}
    for s in sched.objects("ResourceSlice"):
        out[s["spec"]["nodeName"]] = {d["name"]: d for d in s["spec"]["devices"]}
    return out


def test_training_job_on_mixed_gpu_cluster():
    sched = Scheduler(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the generated manifests decode without unknown fields
        _cluster(sched)
        sched.add(gpu_claim_template("two-a100", count=2, model="a100", match_attribute="numa"))
        sched.add(gpu_pods("train", 14, template="two-a100"))
    results = {r.pod.name: r for r in sched.run()}
    scheduled = {n: r for n, r in results.items() if r.status == "Scheduled"}
    # 3 nodes x 2 NUMA nodes x 2 pairs = 12 pairs on the big a100 nodes; the small a100 nodes have
    # one GPU per NUMA node, so no pair fits there; h100 nodes do not match the model
    assert len(scheduled) == 12
    for r in results.values():
        if r.status != "Scheduled":
            assert "cannot allocate all claims" in r.message

    pods = {p["metadata"]["name"]: p for p in sched.objects("Pod")}
    devices = _devices_by_node(sched)
    used = Counter()
    claims = {c["metadata"]["name"]: c for c in sched.objects("ResourceClaim")}
    assert len(claims) == 14  # one per pod, created from the template
    for name, pod in pods.items():
        status = pod["status"]["resourceClaimStatuses"]
        claim_name = status[0]["resourceClaimName"]
        assert claim_name.startswith(f"{name}-gpus-") and len(claim_name) == len(name) + len("-gpus-") + 5
        claim = claims[claim_name]
        owner = claim["metadata"]["ownerReferences"][0]
        assert (owner["kind"], owner["name"], owner["controller"]) == ("Pod", name, True)
        assert claim["metadata"]["annotations"]["resource.kubernetes.io/pod-claim-name"] == "gpus"
        if name not in scheduled:
            assert "allocation" not in claim.get("status", {})
            continue
        node = pod["spec"]["nodeName"]
        allocation = claim["status"]["allocation"]
        assert allocation["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == [node]
        assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": name, "uid": pod["metadata"]["uid"]}]
        results_ = allocation["devices"]["results"]
        assert len(results_) == 2
        numas = set()
        for res in results_:
            assert res["pool"] == node and res["driver"] == "gpu.example.com"
            device = devices[node][res["device"]]
            assert device["attributes"]["model"]["string"] == "a100"
            numas.add(device["attributes"]["numa"]["int"])
            used[(node, res["device"])] += 1
        assert len(numas) == 1
    assert used and max(used.values()) == 1  # no device given twice


def test_pods_wait_for_their_template_then_schedule():
    sched = Scheduler(seed=1)
    _cluster(sched)
    sched.add(gpu_pods("late", 2, template="one-h100"))
    first = {r.pod.name: r for r in sched.run()}
    assert all(r.status != "Scheduled" for r in first.values())
    sched.add(gpu_claim_template("one-h100", count=1, model="h100"))
    second = {r.pod.name: r for r in sched.run()}
    assert all(r.status == "Scheduled" for r in second.values())
    assert all(r.node_name.startswith("gpu-h100-") for r in second.values())


def test_shared_claim_is_allocated_once_and_reserved_by_all():
    sched = Scheduler(seed=2)
    _cluster(sched)
    sched.add(gpu_claim("shared", count=1, model="h100"))
    sched.add(gpu_pods("user", 3, claim="shared"))
    results = list(sched.run())
    assert {r.status for r in results} == {"Scheduled"}
    assert len({r.node_name for r in results}) == 1  # the allocation pins every user to its node
    (claim,) = sched.objects("ResourceClaim")
    assert len(claim["status"]["allocation"]["devices"]["results"]) == 1
    assert sorted(r["name"] for r in claim["status"]["reservedFor"]) == ["user-0", "user-1", "user-2"]


def test_deleting_a_pod_frees_its_devices():
    sched = Scheduler(seed=3)
    sched.add(gpu_cluster([GPUNodePool(1, model="l4", gpus=1)]))
    sched.add(gpu_claim_template("one", count=1))
    sched.add(gpu_pods("a", 1, template="one"))
    assert {r.pod.name: r.status for r in sched.run()} == {"a-0": "Scheduled"}
    sched.add(gpu_pods("b", 1, template="one"))
    assert {r.pod.name: r.status for r in sched.run()}["b-0"] == "Unschedulable"
    pod_a = next(p for p in sched.pods.values() if p.name == "a-0")
    sched.delete_pod(pod_a)
    assert len(sched.objects("ResourceClaim")) == 1  # a-0's generated claim went with it
    assert {r.pod.name: r.status for r in sched.run()}["b-0"] == "Scheduled"


def test_generated_claim_equals_its_manifest_read_back():
    from fastsched.api.resource import parse_resource_claim
    sched = Scheduler(seed=4)
    sched.add(gpu_cluster([GPUNodePool(1)]))
    sched.add(gpu_claim_template("t", count=1, match_attribute="numa"))
    sched.add(gpu_pods("p", 1, template="t"))
    (claim,) = sched.list_objects("ResourceClaim")
    again = parse_resource_claim(claim.manifest)
    assert claim == again and claim.uid == again.uid


def test_preemption_for_a_pod_with_claims_runs_the_per_node_dry_run():
    # DynamicResources is no registered node-only / additive filter, so the vectorized dry run
    # declines (fastsched.runtime.nominated.nominated_filters) and the per-node one runs
    sched = Scheduler(seed=5)
    sched.add(gpu_cluster([GPUNodePool(1, model="l4", gpus=2, cpu="2")]))
    sched.add({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
               "value": 1000})
    sched.add({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "filler"},
               "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "2"}}}]}})
    assert {r.pod.name: r.status for r in sched.run()} == {"filler": "Scheduled"}
    sched.add(gpu_claim_template("one", count=1))
    (trainer,) = gpu_pods("trainer", 1, template="one", cpu="1")
    trainer["spec"]["priorityClassName"] = "high"
    sched.add(trainer)
    results = {r.pod.name: r for r in sched.run()}
    assert results["trainer-0"].status == "Scheduled"
    assert (results["filler"].status, results["filler"].message) == ("Deleted",
                                                                     "preempted by default/trainer-0 on node gpu-l4-0")


def test_no_devices_means_preemption_is_not_helpful():
    sched = Scheduler(seed=6)
    sched.add(gpu_cluster([GPUNodePool(1, model="l4", gpus=1)]))
    sched.add(gpu_claim_template("two", count=2))
    sched.add(gpu_pods("big", 1, template="two"))
    (r,) = list(sched.run())
    assert r.status == "Unschedulable"
    assert r.message == ("0/1 nodes are available: 1 cannot allocate all claims. preemption: "
                         "0/1 nodes are available: 1 Preemption is not helpful for scheduling.")


def test_explain_takes_dra_objects():
    from fastsched import explain
    from fastsched.sim.gpu import gpu_claim
    objects = gpu_cluster([GPUNodePool(2, model="l4", gpus=1)])
    nodes = [o for o in objects if o["kind"] == "Node"]
    others = [o for o in objects if o["kind"] != "Node"] + [gpu_claim("c", count=1)]
    (pod,) = gpu_pods("p", 1, claim="c")
    e = explain(pod, nodes, objects=others)
    assert e.filter["gpu-l4-0"]["DynamicResources"] is None
    assert e.best_nodes


def test_forks_and_transactions_keep_their_own_device_state():
    sched = Scheduler(seed=7)
    sched.add(gpu_cluster([GPUNodePool(1, model="l4", gpus=2)]))
    sched.add(gpu_claim_template("one", count=1))
    sched.add(gpu_pods("a", 1, template="one"))
    sched.run()
    fork = sched.fork()
    fork.add(gpu_pods("b", 2, template="one"))
    assert {r.pod.name: r.status for r in fork.run()} == {"a-0": "Scheduled", "b-0": "Scheduled",
                                                          "b-1": "Unschedulable"}
    with sched.transaction():
        sched.add(gpu_pods("t", 1, template="one"))
        assert {r.pod.name: r.status for r in sched.run()}["t-0"] == "Scheduled"
    sched.add(gpu_pods("c", 1, template="one"))  # the fork's and the reverted pods hold nothing here
    assert {r.pod.name: r.status for r in sched.run()}["c-0"] == "Scheduled"


def test_a_scheduler_that_used_dra_is_freed_with_its_last_reference():
    """The DRA manager shared by a Scheduler's plugins must not outlive it (a module-level table
    once kept every such Scheduler, its cluster and its pods alive to the end of the process)."""
    import gc
    import weakref

    from fastsched.plugins.dynamicresources.manager import manager_for

    sched = Scheduler(seed=0)
    _cluster(sched)
    sched.add(gpu_claim_template("two-a100", count=2, model="a100", match_attribute="numa"))
    sched.add(gpu_pods("train", 2, template="two-a100"))
    assert all(r.status == "Scheduled" for r in sched.run())
    manager = manager_for(sched.cluster)
    assert manager_for(sched.cluster) is manager  # one manager per client, shared by the plugins
    gone = weakref.ref(sched), weakref.ref(sched.cluster), weakref.ref(manager)
    del sched, manager
    gc.collect()
    assert [ref() for ref in gone] == [None, None, None]
