"""NodeResourcesBalancedAllocation: upstream's balanced_allocation_test.go cases, the best-effort
Skip, args validation, float agreement of the two paths, and the randomized equivalence."""
from __future__ import annotations

import random
from types import SimpleNamespace

import numpy as np
import pytest

from fastsched.config.args import NodeResourcesBalancedAllocationArgs, NodeResourcesFitArgs, ResourceSpec
from fastsched.api.resource import parse_device_class, parse_resource_slice
from fastsched.config.errors import ConfigError
from fastsched.framework import CycleState
from fastsched.framework.objects import ObjectStore
from fastsched.framework.status import Code
from fastsched.plugins.helper.tests.support import single_plugin_framework
from fastsched.plugins.noderesources import BALANCED_ALLOCATION_NAME, FACTORIES, BalancedAllocation
from fastsched.plugins.noderesources.scorers import BalancedScorer
from fastsched.testing import assert_paths_equivalent, random_pod, random_snapshot

from .common import node, pod, random_resource_pod, requests, run_score

GPU = "nvidia.com/gpu"
CPU_AND_MEMORY = [requests(1000, 2000), requests(2000, 3000)]          # 3000m, 5000 bytes
CPU_ONLY = [requests(1000, 0), requests(2000, 0)]                      # 3000m, explicit 0 memory
CPU_AND_MEMORY_AND_GPU = [requests(1000, 2000), requests(2000, 3000, {GPU: 3})]


def spec_pod(name: str, containers: list[dict], node_name: str | None = None):
    return pod(name, containers[0], more=containers[1:], node_name=node_name)


def balanced_args(resources: list[str] | None) -> NodeResourcesBalancedAllocationArgs | None:
    return None if resources is None else NodeResourcesBalancedAllocationArgs([ResourceSpec(r, 1) for r in resources])


def new_balanced(resources: list[str] | None = None) -> BalancedAllocation:
    return FACTORIES[BALANCED_ALLOCATION_NAME](balanced_args(resources), None)


def scores(plugin, nodes, existing, incoming, pre_score=True):
    got, status = run_score(plugin, nodes, existing, incoming, pre_score=pre_score)
    assert status is None
    return got


# Upstream v1.37.2 balanced_allocation_test.go, TestNodeResourcesBalancedAllocation: the score is
# 50 + (50 + with - without) / 2 of the balance int64((1 - std) * 100) with and without the pod.
# (Its two DRA-backed extended resource rows are at the end of this table, below.)

def test_differently_sized_nodes():
    # node1: cpu 0 -> 3000/4000, memory 0 -> 5000/10000: 100 -> 87 -> 68
    # node2: cpu 0 -> 3000/6000, memory 0 -> 5000/10000: 100 -> 100 -> 75
    nodes = [node("node1", 4000, 10000), node("node2", 6000, 10000)]
    assert scores(new_balanced(), nodes, [], spec_pod("p", CPU_AND_MEMORY)) == {"node1": 68, "node2": 75}


@pytest.mark.parametrize("pre_score", [True, False])
def test_pods_scheduled_with_resources(pre_score):
    # node1: cpu 3000 -> 6000/10000, memory 0 -> 5000/20000: 85 -> 82 -> 73
    # node2: cpu 3000 -> 6000/10000, memory 5000 -> 10000/20000: 97 -> 95 -> 74
    nodes = [node("node1", 10000, 20000), node("node2", 10000, 20000)]
    existing = [spec_pod("a", CPU_ONLY, "node1"), spec_pod("b", CPU_AND_MEMORY, "node2")]
    got = scores(new_balanced(), nodes, existing, spec_pod("p", CPU_AND_MEMORY), pre_score=pre_score)
    assert got == {"node1": 73, "node2": 74}
    # node2 with 50000 memory: cpu 30% -> 60%, memory 10% -> 20%: 90 -> 80 -> 70
    nodes = [node("node1", 10000, 20000), node("node2", 10000, 50000)]
    assert scores(new_balanced(), nodes, existing, spec_pod("p", CPU_AND_MEMORY)) == {"node1": 73, "node2": 70}


def test_nodes_reach_min_and_max_score():
    # node1: cpu 3000/3000 both, memory 0 -> 5000/5000: 50 -> 100 -> 100
    # node2: cpu 0/3000 both, memory 0 -> 5000/5000: 100 -> 50 -> 50
    nodes = [node("node1", 3000, 5000), node("node2", 3000, 5000)]
    existing = [spec_pod("a", CPU_ONLY, "node1")]
    incoming = spec_pod("p", [requests(memory=2000), requests(memory=3000)])
    assert scores(new_balanced(), nodes, existing, incoming) == {"node1": 100, "node2": 50}


def test_requested_at_node_capacity():
    # node1: cpu 3000 -> 6000/6000, memory 0 (actual requests, no defaults): 75 -> 50 -> 62
    # node2: cpu 3000 -> 6000/6000, memory 5000/10000 both: 100 -> 75 -> 62
    nodes = [node("node1", 6000, 10000), node("node2", 6000, 10000)]
    existing = [spec_pod("a", CPU_ONLY, "node1"), spec_pod("b", CPU_AND_MEMORY, "node2")]
    incoming = spec_pod("p", [requests(1000), requests(2000)])
    assert scores(new_balanced(), nodes, existing, incoming) == {"node1": 62, "node2": 62}


def test_scalar_resource_three_fractions():
    resources = ["cpu", "memory", GPU]
    nodes = [node("node1", 3500, 40000, extra={GPU: 8}), node("node2", 3500, 40000, extra={GPU: 8})]
    existing = [spec_pod("a", CPU_AND_MEMORY, "node2"), spec_pod("b", CPU_AND_MEMORY_AND_GPU, "node1")]
    incoming = pod("p", {"cpu": "0", "memory": "0", GPU: "1"})
    # node1: .857, .125, 3/8 -> 4/8: 69 -> 70 -> 75; node2: .857, .125, 0 -> 1/8: 62 -> 65 -> 76
    assert scores(new_balanced(resources), nodes, existing, incoming) == {"node1": 75, "node2": 76}


def test_scalar_resource_not_requested_is_left_out():
    resources = ["cpu", "memory", GPU]
    nodes = [node("node1", 3500, 40000, extra={GPU: 8}), node("node2", 3500, 40000)]
    # 0, 0 -> .857, .125 on both nodes: 100 -> 63 -> 56
    assert scores(new_balanced(resources), nodes, [], spec_pod("p", CPU_AND_MEMORY)) == {"node1": 56, "node2": 56}


def test_fractions_are_capped_at_one():
    # cpu 0 -> 8000/4000 (capped at 1), memory 0 -> 5000/10000: 100 -> 75 -> 62
    assert scores(new_balanced(), [node("n", 4000, 10000)], [], pod("p", requests(8000, 5000))) == {"n": 62}


def test_one_counted_resource_has_no_deviation():
    # memory allocatable 0 is skipped: one fraction left -> std 0 with and without: 100 -> 100 -> 75
    assert scores(new_balanced(), [node("n", 4000, 0)], [], pod("p", requests(1000, 5))) == {"n": 75}


def test_score_rounds_toward_zero():
    # with - without odd: node: cpu 1000 -> 2000/4000, memory 0 -> 1000/10000:
    # without: .25, 0 -> std .125 -> 87; with: .5, .1 -> std .2 -> 80; 50 + (50 + 80 - 87) / 2 = 50 + 43/2 = 71
    nodes = [node("n", 4000, 10000)]
    existing = [pod("a", requests(1000), node_name="n")]
    assert scores(new_balanced(), nodes, existing, pod("p", requests(1000, 1000))) == {"n": 71}


# Upstream v1.37.2 balanced_allocation_test.go, TestNodeResourcesBalancedAllocation, the two rows
# with draObjects (DRAExtendedResource on, GA in fastsched): a DeviceClass maps the extended
# resource name and node1 has a ResourceSlice of 8 devices (st.MakeResourceSlice: pool and slice of
# node1, driver test-driver); the DRA manager is the handle's client.
DRA_ERN = "extended.resource.dra.io/something"  # upstream extendedResourceName


def dra_handle() -> SimpleNamespace:
    device_class = parse_device_class({"metadata": {"name": "device-class-name"},
                                       "spec": {"extendedResourceName": DRA_ERN}})
    slice_ = parse_resource_slice({"metadata": {"name": "node1-test-driver"}, "spec": {
        "driver": "test-driver", "nodeName": "node1", "pool": {"name": "node1", "resourceSliceCount": 1},
        "devices": [{"name": f"device-{i}"} for i in range(1, 9)]}})
    return SimpleNamespace(client=ObjectStore([device_class, slice_]))


@pytest.mark.parametrize("name,pre_score", [
    ("include DRA resource on a node for balanced resource allocation", True),
    ("include DRA resource on a node for balanced resource allocation if PreScore not called", False),
])
def test_dra_extended_resource(name, pre_score):
    # node1: cpu 3000/3500 both, memory 0/40000 both, DRA 0 -> 1/8: 60 -> 62 -> 76
    # node2: cpu 3000/3500 both, memory 5000/40000 both, DRA unsatisfiable (no devices): 63 -> 63 -> 75
    plugin = FACTORIES[BALANCED_ALLOCATION_NAME](balanced_args(["cpu", "memory", DRA_ERN]), dra_handle())
    nodes = [node("node1", 3500, 40000), node("node2", 3500, 40000)]
    existing = [spec_pod("a", CPU_ONLY, "node1"), spec_pod("b", CPU_AND_MEMORY, "node2")]
    incoming = pod("p", {DRA_ERN: "1"})
    assert scores(plugin, nodes, existing, incoming, pre_score=pre_score) == {"node1": 76, "node2": 75}


def test_best_effort_pod_is_skipped():
    nodes = [node("node1", 4000, 10000), node("node2", 4000, 10000)]
    got, status = run_score(new_balanced(), nodes, [], pod())
    assert got == {} and status is not None and status.code() == Code.SKIP
    # best effort with respect to the configured resources only
    got, status = run_score(new_balanced(), nodes, [], pod("p", requests(extra={GPU: 1})))
    assert status is not None and status.code() == Code.SKIP
    # no resources at all: every pod is best effort
    got, status = run_score(new_balanced([]), nodes, [], spec_pod("p", CPU_AND_MEMORY))
    assert status is not None and status.code() == Code.SKIP
    # without PreScore state, Score gives a best-effort pod 0
    assert scores(new_balanced(), nodes, [], pod(), pre_score=False) == {"node1": 0, "node2": 0}


def test_framework_skips_score_after_pre_score_skip():
    fw = single_plugin_framework(BALANCED_ALLOCATION_NAME)
    summary = assert_paths_equivalent(fw, random_snapshot(1, 30, 60), pod())
    assert summary["scored"] and summary["feasible"] == 30
    state = CycleState()
    batch = random_snapshot(1, 30, 60).batch()
    assert fw.run_pre_score_plugins(state, pod(), batch) is None
    assert BALANCED_ALLOCATION_NAME in state.skip_score_plugins


def test_args_validation():
    with pytest.raises(ConfigError) as e:
        FACTORIES[BALANCED_ALLOCATION_NAME](NodeResourcesBalancedAllocationArgs([ResourceSpec("cpu", 2)]), None)
    assert str(e.value) == "resources[0].weight: Invalid value: 2: must be 1"
    with pytest.raises(ConfigError) as e:
        FACTORIES[BALANCED_ALLOCATION_NAME](
            NodeResourcesBalancedAllocationArgs([ResourceSpec("cpu", 1), ResourceSpec("cpu", 1)]), None)
    assert str(e.value) == 'resources[1].name: Duplicate value: "cpu"'
    with pytest.raises(ValueError, match=r"^want args to be of type NodeResourcesBalancedAllocationArgs, got "
                                         r"\*config.NodeResourcesFitArgs$"):
        FACTORIES[BALANCED_ALLOCATION_NAME](NodeResourcesFitArgs(), None)
    assert isinstance(FACTORIES[BALANCED_ALLOCATION_NAME](None, None), BalancedAllocation)


def test_scorer_forms_agree_bit_for_bit():
    """Random fractions near the truncation boundaries: both forms give the same integers."""
    rng = np.random.default_rng(7)
    for n_resources in (1, 2, 3, 4, 6):
        alloc = rng.integers(0, 5, size=(n_resources, 4000)) * rng.integers(1, 10**12, size=(n_resources, 4000))
        req = (alloc * rng.uniform(0, 1.3, size=alloc.shape)).astype(np.int64)
        req[:, ::7] = alloc[:, ::7] // 3  # exact thirds and other repeating fractions
        allocated = (req * rng.uniform(0, 1, size=alloc.shape)).astype(np.int64)
        allocated[:, ::5] = alloc[:, ::5] // 7
        allocated = np.minimum(allocated, req)
        batch = BalancedScorer.score_many(req, allocated, alloc)
        one = [BalancedScorer.score_one(req[:, i].tolist(), allocated[:, i].tolist(), alloc[:, i].tolist())
               for i in range(alloc.shape[1])]
        assert batch.tolist() == one
        assert set(one) <= set(range(50, 101))


def test_random_equivalence():
    configs = [None, ["cpu", "memory", GPU, "ephemeral-storage", "hugepages-2Mi", "example.com/foo", "pods"]]
    scored = nonzero_spread = 0
    for k, resources in enumerate(configs):
        fw = single_plugin_framework(BALANCED_ALLOCATION_NAME, args=balanced_args(resources))
        for seed in range(10):
            snapshot = random_snapshot(seed, 250, 500)
            rng = random.Random(100 * k + seed)
            for incoming in [random_pod(rng, 0), random_resource_pod(rng, 1), random_resource_pod(rng, 2)]:
                summary = assert_paths_equivalent(fw, snapshot, incoming)
                state = CycleState()
                batch = snapshot.batch()
                plugin = fw.plugin(BALANCED_ALLOCATION_NAME)
                if plugin.pre_score(state, incoming, batch) is None:
                    scored += summary["scored"]
                    values = plugin.score_vectorized(state, incoming, batch)[0]
                    nonzero_spread += len(set(values.tolist())) > 10
    assert scored >= 40 and nonzero_spread >= 30, (scored, nonzero_spread)
