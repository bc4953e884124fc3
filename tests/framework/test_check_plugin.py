"""The typed plugin contract (fastsched.framework.protocols) and fastsched.testing.check_plugin.

Every in-tree plugin passes check_plugin; deliberately broken plugins fail it, each with an
AssertionError naming the plugin, the check, the pod and (where there is one) the node.
"""
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from fastsched.framework import Code, FilterPlugin, NodeInfo, ScorePlugin, Status, is_node_batch
from fastsched.framework import protocols as fwk
from fastsched.framework.columns import FILTER_ON_NODES
from fastsched.framework.interface import PreFilterPlugin
from fastsched.framework.vectorized import FilterVerdicts, VectorizedFilterPlugin
from fastsched.plugins import in_tree_registry
from fastsched.runtime import Registry, new_framework
from fastsched.snapshot import NodeInfoView, Snapshot
from fastsched.plugins.volumezone import VolumeZone
from fastsched.testing import (check_plugin, device_check_scenario, random_snapshot, single_plugin_profile,
                               storage_check_scenario)

IN_TREE = in_tree_registry()
#: plugins whose PreFilter answers Skip for pods without volumes or claims: checked on clusters
#: with PersistentVolumes, claims, classes and CSINodes, or with ResourceSlices and claims
def _declared_features_scenario(seed):
    """Nodes declaring features (status.declaredFeatures) and pods that need some: NodeDeclaredFeatures
    answers Skip for pods that need none, as the random check pods do."""
    import random

    from fastsched.api import Pod
    from fastsched.testing import CheckScenario, check_cluster

    rng = random.Random(seed)
    nodes, running = check_cluster(seed, 40, 60, None)
    features = ("RestartAllContainersOnContainerExits", "UserNamespacesHostNetworkSupport")
    nodes = [n.replace(declared_features=tuple(sorted(rng.sample(features, rng.randint(0, 2))))) for n in nodes]
    pods = []
    for i in range(32):
        spec: dict = {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "100m"}}}]}
        if i % 3 == 0:
            spec["containers"][0]["restartPolicyRules"] = [{"action": "RestartAllContainers", "exitCodes": {
                "operator": "In", "values": [1]}}]
        elif i % 3 == 1:
            spec.update(hostNetwork=True, hostUsers=False)
        pods.append(Pod.from_manifest({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "uid": f"p{i}"},
                                       "spec": spec}, validate=False))
    return CheckScenario(nodes, running, pods, [])


_SCENARIOS = {"NodeVolumeLimits": storage_check_scenario, "VolumeBinding": storage_check_scenario,
              "VolumeRestrictions": storage_check_scenario, "VolumeZone": storage_check_scenario,
              "DynamicResources": device_check_scenario, "NodeDeclaredFeatures": _declared_features_scenario}
#: VolumeBinding scores only with StorageCapacityScoring (alpha, off by default in v1.34)
_GATES = {"VolumeBinding": {"StorageCapacityScoring": True}}


# ------------------------------------------------------------------------------------------------
# the protocols
# ------------------------------------------------------------------------------------------------
def test_the_implementations_satisfy_the_protocols():
    snapshot = random_snapshot(3, 20, 40)
    batch = snapshot.batch()
    view = batch[0]
    fw = new_framework(IN_TREE, single_plugin_profile("NodeAffinity"), snapshot_shared_lister=snapshot)
    assert isinstance(view, NodeInfoView) and isinstance(view, fwk.NodeInfo)
    assert isinstance(view.snapshot(), NodeInfo) and isinstance(view.snapshot(), fwk.NodeInfo)
    assert isinstance(batch, fwk.NodeBatch) and isinstance(batch[1:3], fwk.NodeBatch)
    assert isinstance(fw, fwk.Handle)
    assert isinstance(snapshot, Snapshot) and isinstance(snapshot.node_infos().get(view.name), fwk.NodeInfo)
    assert is_node_batch(batch) and is_node_batch(batch.select(np.array([0, 2])))
    assert not is_node_batch(list(batch)) and not is_node_batch(view)


_CONFORMANCE = textwrap.dedent('''
    from __future__ import annotations

    from fastsched.framework import protocols as fwk
    from fastsched.framework.listers import NodeInfoSnapshot
    from fastsched.framework.types import NodeInfo
    from fastsched.runtime.framework import Framework
    from fastsched.runtime.nominated import ShadowTable
    from fastsched.scheduler.cluster import Cluster
    from fastsched.snapshot.snapshot import NodeBatch, NodeInfoView, Snapshot
    from fastsched.snapshot.table import NodeTable


    def conforms(view: NodeInfoView, ni: NodeInfo, batch: NodeBatch, fw: Framework, snap: Snapshot,
                 plain: NodeInfoSnapshot, table: NodeTable, shadow: ShadowTable, cluster: Cluster) -> None:
        a: fwk.NodeInfo = view
        b: fwk.NodeInfo = ni
        c: fwk.NodeBatch = batch
        d: fwk.TableRows = batch
        e: fwk.Handle = fw
        f: fwk.SharedLister = snap
        g: fwk.NodeInfoLister = snap.node_infos()
        h: fwk.SharedLister = plain
        i: fwk.NodeTable = table
        j: fwk.NodeTable = shadow
        k: fwk.Client = cluster
''')


def test_the_implementations_satisfy_the_protocols_statically(tmp_path):
    """mypy agrees: the snapshot's view and batch, the Framework, the listers, the node table (and
    the runtime's shadow of it) and the Cluster (the Scheduler's handle.client) are the protocols."""
    pytest.importorskip("mypy.api")
    probe = tmp_path / "conformance.py"
    probe.write_text(_CONFORMANCE)
    # in a process of its own: mypy.api.run in this one left ~1.3 M of mypy's objects alive for the
    # rest of the suite, and every later full collection (scheduler_perf's runtime.GC() in the perf
    # tests above all) walked them: the suite ran at a third of its speed after this test
    done = subprocess.run([sys.executable, "-m", "mypy", str(probe), "--follow-imports=silent",
                           "--ignore-missing-imports", "--cache-dir", str(tmp_path / "cache"), "--no-error-summary"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


# ------------------------------------------------------------------------------------------------
# every in-tree plugin passes check_plugin
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(IN_TREE))
def test_in_tree_plugin_passes_check_plugin(name):
    summary = check_plugin(IN_TREE[name], scenario=_SCENARIOS.get(name), feature_gates=_GATES.get(name))
    assert summary["plugin"] == name and summary["pods"] >= 30
    plugin = new_framework(Registry(), None)
    plugin = IN_TREE[name](None, plugin)
    # the checks exercised the plugin, not only its Skips
    if isinstance(plugin, FilterPlugin):
        assert summary["filtered"] > 0, summary
    if isinstance(plugin, ScorePlugin):
        assert summary["scored"] > 0, summary
    if callable(getattr(plugin, "column_form", None)):
        assert summary["fused_cycles"] > 0, summary


def test_check_plugin_takes_a_plugin_object_written_the_upstream_way():
    """A per-node plugin (no vectorized methods, no column form) passes; an object works as well
    as a factory."""

    class PreferSSD(FilterPlugin, ScorePlugin):
        def name(self):
            return "PreferSSD"

        def filter(self, state, pod, node_info):
            if node_info.node().labels.get("disktype") == "hdd":
                return Status(Code.UNSCHEDULABLE, "node(s) had spinning disks")
            return None

        def score(self, state, pod, node_info):
            return (100 if node_info.node().labels.get("disktype") == "ssd" else 0), None

    summary = check_plugin(PreferSSD(), seeds=(4,))
    assert summary["filtered"] > 0 and summary["scored"] > 0 and summary["vectorized"] == []


# ------------------------------------------------------------------------------------------------
# deliberately broken plugins
# ------------------------------------------------------------------------------------------------
def _disktype(node_info):
    return node_info.node().labels.get("disktype")


class VectorizedDisagrees(VectorizedFilterPlugin):
    """Its vectorized Filter also rejects nvme nodes; its per-node Filter does not."""

    def name(self):
        return "VectorizedDisagrees"

    def filter(self, state, pod, node_info):
        return Status(Code.UNSCHEDULABLE, "no ssd") if _disktype(node_info) == "ssd" else None

    def filter_vectorized(self, state, pod, nodes):
        fail = np.array([_disktype(ni) in ("ssd", "nvme") for ni in nodes], dtype=bool)
        return FilterVerdicts.from_mask(fail, Code.UNSCHEDULABLE, "no ssd")


class FloatScore(ScorePlugin):
    """Returns a float score, which the framework does not take."""

    def name(self):
        return "FloatScore"

    def score(self, state, pod, node_info):
        return 50.5, None


class ShortVerdicts(VectorizedDisagrees):
    """Its vectorized Filter returns one verdict too many."""

    def name(self):
        return "ShortVerdicts"

    def filter(self, state, pod, node_info):
        return None

    def filter_vectorized(self, state, pod, nodes):
        return FilterVerdicts(np.zeros(len(nodes) + 1, dtype=np.int8))


class ViewOnly(FilterPlugin):
    """Reads the table row, which only the snapshot's view has: breaks on a detached NodeInfo."""

    def name(self):
        return "ViewOnly"

    def filter(self, state, pod, node_info):
        return None if node_info.row >= 0 else Status(Code.UNSCHEDULABLE, "negative row")


class OutOfRange(ScorePlugin):
    """Its NormalizeScore scales past 100."""

    def name(self):
        return "OutOfRange"

    def score(self, state, pod, node_info):
        return 10, None

    def score_extensions(self):
        return self

    def normalize_score(self, state, pod, scores):
        for s in scores:
            s.score *= 20
        return None


class StaleColumnForm(VectorizedFilterPlugin):
    """Rejects the nodes already running a pod of the incoming pod's app, but claims a column form
    that depends only on the nodes: the fused cycle's plan, kept for a workload's replicas, goes
    stale once the first replica is placed."""

    def name(self):
        return "StaleColumnForm"

    def column_form(self, pod, table):
        return FILTER_ON_NODES

    def filter(self, state, pod, node_info):
        app = pod.labels.get("app")
        if any(pi.pod.labels.get("app") == app for pi in node_info.pods):
            return Status(Code.UNSCHEDULABLE, "node runs that app already")
        return None

    def filter_vectorized(self, state, pod, nodes):
        return FilterVerdicts.from_statuses([self.filter(state, pod, ni) for ni in nodes])


_POD = r"pod [a-z]+/[a-z0-9-]+"
_NODE = r"node node-\d{5}"


@pytest.mark.parametrize("plugin, message", [
    (VectorizedDisagrees(),
     rf"check_plugin\(VectorizedDisagrees\), seed \d+: check 'vectorized' failed for {_POD}: filter on {_NODE}: "
     r"batch gave Unschedulable \['no ssd'\] \(VectorizedDisagrees\), per-node gave Success \[\] \(\)"),
    (FloatScore(),
     rf"check_plugin\(FloatScore\), seed \d+: check 'returns' failed for {_POD} on {_NODE}: score returned "
     r"\(50\.5, None\), expected an \(int, Status or None\) pair"),
    (ShortVerdicts(),
     rf"check_plugin\(ShortVerdicts\), seed \d+: check 'returns' failed for {_POD}: filter_vectorized returned "
     r"FilterVerdicts\(codes=ndarray\(shape=\(61,\), dtype=int8\).*expected a FilterVerdicts with 60 valid verdicts"),
    (ViewOnly(),
     rf"check_plugin\(ViewOnly\), seed \d+: check 'NodeInfo implementations' failed for {_POD} on {_NODE}: filter "
     r"raised AttributeError: 'NodeInfo' object has no attribute 'row'"),
    (OutOfRange(),
     rf"check_plugin\(OutOfRange\), seed \d+: check 'score range' failed for {_POD} on {_NODE}: normalize_score "
     r"left 200, outside \[0, 100\]"),
    (StaleColumnForm(),
     rf"check_plugin\(StaleColumnForm\), seed \d+: check 'column form' failed for {_POD}: the fused cycle placed "
     r"it on node-\d{5} \(Scheduled\), the plugin calls on node-\d{5} \(Scheduled\)"),
], ids=lambda v: type(v).__name__ if not isinstance(v, str) else "")
def test_check_plugin_catches_a_broken_plugin(plugin, message):
    with pytest.raises(AssertionError) as info:
        check_plugin(plugin)
    assert re.match(message, str(info.value)), str(info.value)


class VolumeZoneVectorizedPassesAll(VolumeZone):
    """VolumeZone whose vectorized Filter forgets the PVs' zones."""

    def name(self):
        return "VolumeZoneVectorizedPassesAll"

    def filter_vectorized(self, state, pod, nodes):
        return FilterVerdicts.all_pass(len(nodes))


def test_check_plugin_catches_a_broken_plugin_that_reads_cluster_objects():
    """With a scenario, the checks reach a volume plugin's Filter (no Skip) and see it disagree."""
    with pytest.raises(AssertionError, match=rf"check_plugin\(VolumeZoneVectorizedPassesAll\), seed \d+: check "
                                             rf"'vectorized' failed for {_POD}: filter on node node-\d+: batch gave "
                                             r"Success \[\] \(\), per-node gave UnschedulableAndUnresolvable"):
        check_plugin(lambda args, handle: VolumeZoneVectorizedPassesAll(handle), scenario=storage_check_scenario)
    # without one, every pod is a Skip and the same plugin passes
    assert check_plugin(lambda args, handle: VolumeZoneVectorizedPassesAll(handle))["filtered"] == 0


def test_check_plugin_names_the_check_when_a_plugin_raises():
    class Raises(PreFilterPlugin, FilterPlugin):
        def name(self):
            return "Raises"

        def pre_filter(self, state, pod, nodes):
            return None, None

        def filter(self, state, pod, node_info):
            raise RuntimeError("boom")

    with pytest.raises(AssertionError, match=rf"check_plugin\(Raises\), seed 0: check 'returns' failed for {_POD} "
                                             rf"on {_NODE}: filter raised RuntimeError: boom"):
        check_plugin(Raises())
