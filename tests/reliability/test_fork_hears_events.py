"""A fork that hears events after it was made decides as a Scheduler that heard the same history
without forking: pods with claims from templates (DRA) and ephemeral volumes added, a pod holding
a device deleted. (Forks kept reading the original's volumes through a closure, and could not
copy the DRA allocator's live views.)"""
from __future__ import annotations

import random

import pytest

from fastsched import Scheduler
from fastsched.sim.gpu import GPUNodePool, gpu_claim_template, gpu_cluster, gpu_pods
from fastsched.sim.storage import pod_with_claims, storage_class_manifest
from fastsched.testing import make_node


def _outcome(s: Scheduler) -> list:
    return sorted((r.pod.name, r.node_name or "", r.status, r.message) for r in s.results.values())


def _ephemeral_pod(name: str, size: str) -> dict:
    m = pod_with_claims(name)
    m["spec"]["volumes"] = [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteOnce"], "storageClassName": "standard",
        "resources": {"requests": {"storage": size}}}}}}]
    return m


@pytest.mark.parametrize("seed", range(4))
def test_a_fork_decides_as_the_same_history_without_a_fork(seed):
    rng = random.Random(seed)
    pool = GPUNodePool(rng.randint(1, 2), model="a100", gpus=rng.randint(0, 2), cpu="100", pods=100)
    early, late = rng.randint(0, 3), rng.randint(1, 3)
    sizes = [rng.choice(("1Gi", "10Gi")) for _ in range(rng.randint(1, 3))]
    delete_first = rng.random() < 0.7

    def history(s: Scheduler, *, fork: bool) -> Scheduler:
        s.add(gpu_cluster([pool]))
        s.add([make_node("disk-node"), gpu_claim_template("one-gpu"),
               storage_class_manifest("standard", binding_mode="WaitForFirstConsumer", provisioner="csi.example.com")])
        s.add(gpu_pods("early", early, template="one-gpu", cpu="100m", memory="1Mi"))
        s.run()
        if fork:
            s = s.fork()
        s.add(gpu_pods("late", late, template="one-gpu", cpu="100m", memory="1Mi"))
        s.add([_ephemeral_pod(f"job-{i}", size) for i, size in enumerate(sizes)])
        held = sorted(p.name for p in s.pods.values() if p.name.startswith("early") and p.node_name)
        if delete_first and held:
            s.delete_pod(s.get_pod("default", held[0]))
        s.run()
        return s

    forked = history(Scheduler(seed=seed), fork=True)
    straight = history(Scheduler(seed=seed), fork=False)
    assert _outcome(forked) == _outcome(straight)
    assert all(r.status == "Scheduled" for r in straight.results.values() if r.pod.name.startswith("job"))
