"""User kernels in numba: the GpuFragmentation example and the kernel plugin classes."""
from __future__ import annotations

import importlib.util
import pathlib
import random
import sys

import numba
import numpy as np
import pytest

from fastsched import load_config
from fastsched.framework import Code, CycleState, NodeInfo
from fastsched.numba_plugins import TABLE_COLUMNS, NumbaFilterPlugin, NumbaScorePlugin, one_row_columns
from fastsched.plugins import in_tree_registry
from fastsched.runtime import Registry, new_framework
from fastsched.snapshot import build_snapshot
from fastsched.testing import (assert_paths_equivalent, check_plugin, make_node, make_pod, random_pod,
                               random_snapshot, single_plugin_profile)

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "numba_gpu_fragmentation"
sys.path.insert(0, str(EXAMPLE))
import gpu_fragmentation as fgd  # noqa: E402

sys.path.remove(str(EXAMPLE))


def _framework(name, factory, snapshot, args=None):
    registry = Registry({name: factory})
    for other in ("PrioritySort", "DefaultBinder"):
        registry.register(other, in_tree_registry()[other])
    return new_framework(registry, single_plugin_profile(name, args=args), snapshot_shared_lister=snapshot)


def _gpu_pods(seed, n=8):
    rng = random.Random(seed)
    pods = [random_pod(rng, i) for i in range(n)]
    pods.append(make_pod("cpu-only", cpu="3"))
    pods.append(make_pod("gpu-two", requests={"cpu": "2", "nvidia.com/gpu": "2"}))
    return pods


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kernel_scores_equal_the_per_node_python_plugin(seed):
    snapshot = random_snapshot(seed, n_nodes=150, n_pods=300)
    batch = snapshot.batch()
    numba_plugin = fgd.GpuFragmentation({}, None)
    python_plugin = fgd.GpuFragmentationPython({}, None)
    scored_gpu_nodes = 0
    for pod in _gpu_pods(seed):
        got, status = numba_plugin.score_vectorized(CycleState(), pod, batch)
        assert status is None and got.dtype == np.int64 and got.shape == (len(batch),)
        want = [python_plugin.score(CycleState(), pod, view)[0] for view in batch]
        assert got.tolist() == want
        assert ((got >= 0) & (got <= 100)).all()
        scored_gpu_nodes += int(np.count_nonzero(got != fgd.NEUTRAL))
    assert scored_gpu_nodes > 0  # the GPU nodes were really scored, not all neutral


@pytest.mark.parametrize("seed", [3, 4])
def test_paths_equivalent_through_the_framework(seed):
    snapshot = random_snapshot(seed, n_nodes=120, n_pods=240)
    fw = _framework(fgd.NAME, fgd.GpuFragmentation, snapshot,
                    args={"taskTypes": [{"cpuMillis": 4000, "gpus": 1, "weight": 3},
                                        {"cpuMillis": 1000, "gpus": 0, "weight": 1}]})
    scored = 0
    for pod in _gpu_pods(seed):
        summary = assert_paths_equivalent(fw, snapshot, pod)
        scored += summary.get("scored", False)
    assert scored > 0


def test_check_plugin_accepts_the_example():
    summary = check_plugin(fgd.GpuFragmentation, seeds=(0, 1), pods=6, nodes=40, running=60)
    assert summary["plugin"] == fgd.NAME
    assert summary["scored"] > 0
    assert "score_vectorized" in summary["vectorized"]


@pytest.mark.parametrize("seed", [0, 5])
def test_numba_most_allocated_equals_the_in_tree_kernel(seed):
    snapshot = random_snapshot(seed, n_nodes=150, n_pods=300)
    batch = snapshot.batch()
    config = load_config("""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    pluginConfig:
      - name: NodeResourcesFit
        args:
          scoringStrategy:
            type: MostAllocated
            resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]
""")
    fw = new_framework(in_tree_registry(), config.profiles[0], snapshot_shared_lister=snapshot)
    in_tree = fw.plugins_map["NodeResourcesFit"]
    mine = fgd.MostAllocatedNumba({}, None)
    for pod in _gpu_pods(seed):
        state = CycleState()
        in_tree.pre_score(state, pod, batch)
        want, _ = in_tree.score_vectorized(state, pod, batch)
        got, _ = mine.score_vectorized(CycleState(), pod, batch)
        assert got.tolist() == want.tolist()


def test_detached_node_info_runs_the_same_kernel():
    snapshot = random_snapshot(7, n_nodes=60, n_pods=120)
    fw = _framework(fgd.NAME, fgd.GpuFragmentation, snapshot)
    plugin = fw.plugins_map[fgd.NAME]
    pod = make_pod("g", requests={"cpu": "1", "nvidia.com/gpu": "1"})
    for view in snapshot.batch():
        detached = view.snapshot()
        assert isinstance(detached, NodeInfo)
        assert plugin.score(CycleState(), pod, detached) == plugin.score(CycleState(), pod, view)


def test_one_row_columns_match_the_table_row():
    snapshot = random_snapshot(8, n_nodes=40, n_pods=90)
    table = snapshot.table
    names = [n for n in TABLE_COLUMNS if not n.startswith("label:")] + ["label:topology.kubernetes.io/zone"]
    for view in snapshot.batch():
        cols = one_row_columns(view.snapshot(), table, names)
        for name, col in zip(names, cols):
            full = table.label_codes_for(name[6:]) if name.startswith("label:") else getattr(table, name)
            assert col.dtype == full.dtype, name
            assert np.array_equal(col[0], full[view.row]), (name, view.name)


# -- a Filter plugin from a kernel ------------------------------------------------------------------
@numba.njit(cache=True)
def _room_kernel(rows, allowed_pods, pod_count, unschedulable, min_free, out):
    for i in range(rows.shape[0]):
        r = rows[i]
        if unschedulable[r]:
            out[i] = 2
        elif allowed_pods[r] - pod_count[r] < min_free:
            out[i] = 1
        else:
            out[i] = 0


class PodRoom(NumbaFilterPlugin):
    """Passes nodes with at least ``minFree`` free pod slots."""

    NAME = "PodRoom"
    kernel = _room_kernel
    columns = ("allowed_pods", "pod_count", "unschedulable")
    reasons = ("too few free pod slots", "node is unschedulable")

    def pod_scalars(self, pod, table):
        return (int(self.args.get("minFree", 1)),)


def test_filter_kernel_verdicts_and_reasons():
    nodes = [make_node("full", pods="2"), make_node("roomy", pods="50"), make_node("cordoned", unschedulable=True)]
    running = [make_pod(f"r{i}", node_name="full") for i in range(2)]
    snapshot = build_snapshot(nodes, running)
    fw = _framework("PodRoom", PodRoom, snapshot, args={"minFree": 1})
    pod = make_pod("p")
    verdicts = fw.run_filter_plugins_vectorized(CycleState(), pod, snapshot.batch())
    by_name = {view.name: verdicts.status(i) for i, view in enumerate(snapshot.batch())}
    assert by_name["roomy"] is None
    assert by_name["full"].code() == Code.UNSCHEDULABLE
    assert by_name["full"].reasons() == ["too few free pod slots"]
    assert by_name["cordoned"].reasons() == ["node is unschedulable"]
    assert assert_paths_equivalent(fw, snapshot, pod)["feasible"] == 1


def test_filter_kernel_reason_out_of_range_is_an_error():
    @numba.njit
    def bad(rows, pod_count, out):
        for i in range(rows.shape[0]):
            out[i] = 7

    class Bad(NumbaFilterPlugin):
        NAME = "Bad"
        kernel = bad
        columns = ("pod_count",)
        reasons = ("one",)

    snapshot = build_snapshot([make_node("a")])
    with pytest.raises(ValueError, match="wrote 7"):
        Bad({}, None).filter_vectorized(CycleState(), make_pod("p"), snapshot.batch())


def test_unknown_column_and_missing_kernel_are_refused():
    class Typo(NumbaScorePlugin):
        kernel = fgd.most_allocated_kernel
        columns = ("alocatable",)

    with pytest.raises(ValueError, match="unknown node-table column 'alocatable'"):
        Typo({}, None)

    class NoKernel(NumbaScorePlugin):
        columns = ("alloc",)

    with pytest.raises(TypeError, match="has no kernel"):
        NoKernel({}, None)


def test_scheduler_runs_the_yaml_configured_plugin_and_avoids_fragmentation():
    spec = importlib.util.spec_from_file_location("numba_gpu_fragmentation_run", EXAMPLE / "run.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    config = load_config(EXAMPLE / "config.yaml", registry_names=[fgd.NAME])
    assert example.run(None) == (80, 0)          # fragmentation-blind: the GPU nodes' cpu is used up
    assert example.run(config) == (100, 20)      # every training pod finds a whole GPU node


def test_kernels_are_cached_on_disk():
    # cache=True: a sweep's worker processes load the compiled kernel instead of compiling it
    snapshot = build_snapshot([make_node("g", extra={"nvidia.com/gpu": "4"})])
    fgd.GpuFragmentation({}, None).score_vectorized(CycleState(), make_pod("p", cpu="1"), snapshot.batch())
    kernel = fgd.gpu_fragmentation_kernel
    assert kernel._cache.__class__.__name__ == "FunctionCache"
    index = pathlib.Path(kernel._cache._cache_path) / kernel._cache._cache_file._index_name
    assert index.is_file()


# -- node-only kernels join the compiled cycle ------------------------------------------------------
@numba.njit(cache=True)
def _big_nodes_kernel(rows, alloc, out):
    for i in range(rows.shape[0]):
        out[i] = alloc[rows[i], 0] // 1000  # allocatable cores


class BigNodes(NumbaScorePlugin):
    """Prefers nodes with more cores (normalized: the biggest node gets 100)."""

    NAME = "BigNodes"
    kernel = _big_nodes_kernel
    columns = ("alloc",)
    normalize = "default"


@numba.njit(cache=True)
def _avoid_zone_kernel(rows, zone, unschedulable, avoided, out):
    for i in range(rows.shape[0]):
        r = rows[i]
        out[i] = 1 if (avoided >= 0 and zone[r] == avoided) else (2 if unschedulable[r] else 0)


class AvoidZone(NumbaFilterPlugin):
    NAME = "AvoidZone"
    kernel = _avoid_zone_kernel
    columns = ("label:topology.kubernetes.io/zone", "unschedulable")
    reasons = ("node is in the avoided zone", "node is cordoned")

    def pod_scalars(self, pod, table):
        return (table.label_code("topology.kubernetes.io/zone", self.args.get("zone", "zone-a")),)


@pytest.mark.parametrize("factory, name", [(BigNodes, "BigNodes"), (AvoidZone, "AvoidZone")])
def test_node_only_kernels_join_the_compiled_cycle(factory, name):
    summary = check_plugin(factory, seeds=(0, 1), pods=6, nodes=40, running=60)
    assert summary["plugin"] == name
    assert summary["fused_cycles"] > 0  # the column form ran, and placed as the plugin calls do


def test_pod_dependent_columns_take_the_plugin_call_path():
    snapshot = random_snapshot(9, n_nodes=30, n_pods=40)
    pod = make_pod("p", cpu="1")
    assert fgd.GpuFragmentation({}, None).column_form(pod, snapshot.table) is None  # reads requested
    assert BigNodes({}, None).column_form(pod, snapshot.table).score == "nodes"

    class NotSpecOnly(BigNodes):
        spec_only_scalars = False

    assert NotSpecOnly({}, None).column_form(pod, snapshot.table) is None


class AvoidRack(AvoidZone):
    NAME = "AvoidRack"
    columns = ("label:example.com/rack", "unschedulable")

    def pod_scalars(self, pod, table):
        return (table.label_code("example.com/rack", "r1"),)


def test_a_label_no_node_has_reads_as_all_missing_and_leaves_the_table_alone():
    snapshot = random_snapshot(4, n_nodes=30, n_pods=20)
    table = snapshot.table
    assert table.label_column("example.com/rack") is None
    version = table.version
    verdicts = AvoidRack({}, None).filter_vectorized(CycleState(), make_pod("p", cpu="1"), snapshot.batch())
    cordoned = np.asarray(table.unschedulable)[snapshot.batch().rows]
    # no node is in the rack: only the cordoned nodes fail, with the second reason
    assert (np.asarray(verdicts.codes) != 0).tolist() == cordoned.tolist()
    assert table.label_column("example.com/rack") is None and table.version == version  # read, not written
