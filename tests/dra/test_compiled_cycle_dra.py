"""Pods with resource claims take the compiled cycle (DynamicResources' CYCLE Filter form) and place
exactly as on the plugin-call path: same nodes, messages, claim allocations, round-robin index and
RNG state, with claim templates of several shapes, a shared claim, pods that do not fit and churn."""
import random

import pytest

from fastsched import Scheduler
from fastsched.sim.gpu import GPUNodePool, gpu_claim, gpu_claim_template, gpu_cluster, gpu_pods


def _run(seed: int, compiled: bool):
    rng = random.Random(seed)
    s = Scheduler(seed=seed)
    s.use_compiled_cycle = compiled
    s.add(gpu_cluster([GPUNodePool(rng.randint(3, 6), model="a100", gpus=8),
                       GPUNodePool(rng.randint(2, 4), model="h100", gpus=4),
                       GPUNodePool(rng.randint(1, 3), model="l4", gpus=2)]))
    s.add([gpu_claim_template("one", count=1),
           gpu_claim_template("two-a100", count=2, model="a100", match_attribute="numa"),
           gpu_claim_template("four", count=4),
           gpu_claim("shared", count=1, model="h100")])
    pods = []
    for prefix, template in (("a", "one"), ("b", "two-a100"), ("c", "four")):
        pods += gpu_pods(prefix, rng.randint(4, 12), template=template, cpu=rng.choice(["1", "4", "16"]))
    pods += gpu_pods("s", 3, claim="shared")
    rng.shuffle(pods)
    s.add(pods[: len(pods) // 2])
    first = s.run()
    placed = [r.pod for r in first if r.node_name]
    for p in rng.sample(placed, k=min(3, len(placed))):
        s.delete_pod(p)
    s.add(pods[len(pods) // 2:])
    second = s.run()
    outcome = [(r.pod.name, r.node_name, r.status, r.message, r.attempts) for r in (*first, *second)]
    claims = sorted((c["metadata"]["name"], repr(c.get("status", {}).get("allocation")))
                    for c in s.objects("ResourceClaim"))
    return s, (outcome, claims, s.next_start_node_index, s.rng.bit_generator.state)


@pytest.mark.parametrize("seed", range(4))
def test_pods_with_claims_place_as_on_the_plugin_call_path(seed):
    fused, fused_out = _run(seed, True)
    _, plain_out = _run(seed, False)
    assert fused_out == plain_out
    (fw,) = fused.profiles.values()
    assert fw.compiled_cycle.fused_cycles >= 10, (fw.compiled_cycle.fused_cycles, fw.compiled_cycle.declined_cycles)
