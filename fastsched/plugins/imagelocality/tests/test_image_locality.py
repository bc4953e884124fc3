"""ImageLocality: upstream's test table, name normalization, and batch-vs-per-node equivalence."""
from __future__ import annotations

import hashlib
import random
from typing import cast

import numpy as np
import pytest

from fastsched.api import Container, ContainerImage, Node, Pod
from fastsched.framework import protocols as fwk
from fastsched.framework.cycle_state import CycleState
from fastsched.plugins import in_tree_registry
from fastsched.plugins.imagelocality import (MB, NAME, ImageLocality, calculate_priority, new,
                                             normalized_image_name, scaled_image_score)
from fastsched.runtime.framework import new_framework
from fastsched.snapshot import build_snapshot
from fastsched.snapshot.snapshot import NodeBatch
from fastsched.testing import assert_paths_equivalent, random_pod, random_snapshot, single_plugin_profile


def image_node(name: str, *images: tuple[tuple[str, ...], int]) -> Node:
    """A node whose status lists ``images`` as (names, size in MiB)."""
    return Node(name=name, allocatable={"cpu": 4000, "memory": 8 * 2**30, "pods": 110},
                images=tuple(ContainerImage(names=names, size_bytes=size * MB) for names, size in images))


def image_pod(*images: str, init: tuple[str, ...] = (), image_volumes: tuple[str, ...] = ()) -> Pod:
    return Pod(name="p", containers=tuple(Container(name=f"c{i}", image=img) for i, img in enumerate(images)),
               init_containers=tuple(Container(name=f"i{i}", image=img) for i, img in enumerate(init)),
               volumes=tuple({"name": f"v{i}", "image": {"reference": ref}} for i, ref in enumerate(image_volumes)))


class _Handle:
    def __init__(self, snapshot):
        self._snapshot = snapshot

    def snapshot_shared_lister(self):
        return self._snapshot


def scores_both_ways(pod: Pod, nodes: list[Node]) -> list[int]:
    """Per-node scores in node order, checked equal to the batch path's."""
    snapshot = build_snapshot(nodes)
    # a partial Handle double: ImageLocality calls only snapshot_shared_lister
    plugin = new(None, cast(fwk.Handle, _Handle(snapshot)))
    state = CycleState()
    per_node = []
    for n in nodes:
        score, status = plugin.score(state, pod, snapshot.get(n.name))
        assert status is None
        per_node.append(score)
    rows = np.array([snapshot.table.row_of[n.name] for n in nodes], dtype=np.int64)
    batch, status = plugin.score_vectorized(state, pod, NodeBatch(snapshot.table, rows))
    assert status is None
    assert batch.dtype == np.int64
    assert batch.tolist() == per_node
    return per_node


# Node statuses of upstream's image_locality_test.go.
NODE_40_300_2000 = ((("gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"), 40),
                    (("gcr.io/300:latest", "gcr.io/300:v1"), 300), (("gcr.io/2000:latest",), 2000))
NODE_250_10 = ((("gcr.io/250:latest",), 250), (("gcr.io/10:latest", "gcr.io/10:v1"), 10))
NODE_600_40_900 = ((("gcr.io/600:latest",), 600), (("gcr.io/40:latest",), 40), (("gcr.io/900:latest",), 900))
NODE_300_600_900 = ((("gcr.io/300:latest",), 300), (("gcr.io/600:latest",), 600), (("gcr.io/900:latest",), 900))
NODE_4000_30 = ((("gcr.io/4000:latest",), 4000), (("gcr.io/30:latest",), 30))
NODE_20_30_40 = ((("gcr.io/20:latest",), 20), (("gcr.io/30:latest",), 30), (("gcr.io/40:latest",), 40))
NO_IMAGES = ()

UPSTREAM_TABLE = [
    # 100 * (250M/2 - 23M) / (1000M*2 - 23M) = 5
    ("two images spread on two nodes, prefer the larger image one",
     image_pod("gcr.io/40", "gcr.io/250"), [NODE_40_300_2000, NODE_250_10], [0, 5]),
    # 100 * ((40M + 300M)/2 - 23M) / (1000M*2 - 23M) = 7
    ("two images on one node, prefer this node",
     image_pod("gcr.io/40", "gcr.io/300"), [NODE_40_300_2000, NODE_250_10], [7, 0]),
    # 4000M/2 >= 1000M*2: max threshold
    ("if exceed limit, use limit",
     image_pod("gcr.io/10", "gcr.io/4000"), [NODE_4000_30, NODE_250_10], [100, 0]),
    # 100 * (4000M/3 - 23M) / (1000M*2 - 23M) = 66
    ("if exceed limit, use limit (with node which has no images present)",
     image_pod("gcr.io/10", "gcr.io/4000"), [NODE_4000_30, NODE_250_10, NO_IMAGES], [66, 0, 0]),
    # node1: 100 * (600M*2/3 + 900M*2/3 - 23M) / (1000M*3 - 23M) = 32; node2 adds 300M/3: 36
    ("pod with multiple large images, node2 is preferred",
     image_pod("gcr.io/300", "gcr.io/600", "gcr.io/900"), [NODE_600_40_900, NODE_300_600_900, NO_IMAGES],
     [32, 36, 0]),
    # 100 * (30M + 40M/2 - 23M) / (1000M*2 - 23M) = 1
    ("pod with multiple small images",
     image_pod("gcr.io/30", "gcr.io/40"), [NODE_20_30_40, NODE_4000_30], [1, 0]),
    # 100 * (300M/2 - 23M) / (1000M*2 - 23M) = 6
    # v1.37: image volumes count as images (sumImageScores): 100 * (300M/2 - 23M) / (1000M*2 - 23M) = 6
    ("pod with ImageVolume",
     image_pod("gcr.io/30", image_volumes=("gcr.io/300",)), [NODE_300_600_900, NODE_4000_30], [6, 0]),
    ("same images as ImageVolume pod but as regular container images",
     image_pod("gcr.io/30", "gcr.io/300"), [NODE_300_600_900, NODE_4000_30], [6, 0]),
    ("include InitContainers: two images spread on two nodes, prefer the larger image one",
     image_pod("gcr.io/30", init=("gcr.io/300",)), [NODE_40_300_2000, NODE_20_30_40], [6, 0]),
]


@pytest.mark.parametrize("name,pod,statuses,expected", UPSTREAM_TABLE, ids=[c[0] for c in UPSTREAM_TABLE])
def test_upstream_table(name, pod, statuses, expected):
    nodes = [image_node(f"node{i + 1}", *images) for i, images in enumerate(statuses)]
    assert scores_both_ways(pod, nodes) == expected


def test_normalized_image_name():
    digest = "sha256:" + hashlib.sha256(b"root").hexdigest()
    assert normalized_image_name("root") == "root:latest"
    assert normalized_image_name("gcr.io:5000/root") == "gcr.io:5000/root:latest"
    assert normalized_image_name("root:tag") == "root:tag"
    assert normalized_image_name("root@" + digest) == "root@" + digest


def test_node_image_names_are_not_normalized():
    # Upstream's cache stores the node's names as reported: a bare "busybox" on the node never
    # matches the pod's "busybox" (looked up as "busybox:latest"); "busybox:latest" does.
    nodes = [image_node("bare", (("busybox",), 2000)), image_node("tagged", (("busybox:latest",), 2000))]
    # tagged: 2000M * 1/2 = 1000M >= max threshold of one container
    assert scores_both_ways(image_pod("busybox"), nodes) == [0, 100]
    # the pod's tagged name matches the node's bare-name entry only literally
    assert scores_both_ways(image_pod("busybox:latest"), nodes) == [0, 100]


def test_every_name_of_an_image_matches_and_duplicates_count_twice():
    digest = "gcr.io/app@sha256:" + "ab" * 32
    nodes = [image_node("n1", (("gcr.io/app:v1", digest), 600)), image_node("n2", (("x:1",), 1))]
    # one container by digest: 600M * 1/2 = 300M -> 100 * (300M - 23M) / (1000M - 23M) = 28
    assert scores_both_ways(image_pod(digest), nodes) == [28, 0]
    # the same image in two containers counts twice: 600M -> 100 * (600M - 23M) / (2000M - 23M) = 29
    assert scores_both_ways(image_pod("gcr.io/app:v1", digest), nodes) == [29, 0]
    # an init container alone: same as one regular container
    assert scores_both_ways(image_pod(init=("gcr.io/app:v1",)), nodes) == [28, 0]


def test_per_node_sizes_and_subset_batches_use_all_nodes():
    # Spread counts every node in the snapshot, not only the scored ones.
    nodes = [image_node(f"n{i}", (("img:1",), 900)) for i in range(3)] + [image_node("n3")]
    snapshot = build_snapshot(nodes)
    plugin = ImageLocality(_Handle(snapshot))
    batch = snapshot.batch()
    sub = batch.select(np.array([i for i, n in enumerate(batch.names) if n in ("n1", "n3")]))
    scores, _ = plugin.score_vectorized(CycleState(), image_pod("img:1"), sub)
    # 900M * 3/4 = 675M -> 100 * (675M - 23M) / (1000M - 23M) = 66
    expected = {"n1": 66, "n3": 0}
    assert scores.tolist() == [expected[n] for n in sub.names]
    assert [plugin.score(CycleState(), image_pod("img:1"), v)[0] for v in sub] == scores.tolist()


def test_spread_is_computed_before_scaling():
    # int64(float64(size) * (13.0/17.0)); multiplying first would give 3595353463.
    assert scaled_image_score(4701616067, 13, 17) == 3595353462
    assert int(float(4701616067) * 13.0 / 17.0) == 3595353463


def test_calculate_priority_edges():
    assert calculate_priority(0, 1) == 0
    assert calculate_priority(23 * MB, 1) == 0
    assert calculate_priority(1000 * MB, 1) == 100
    assert calculate_priority(10**15, 2) == 100
    assert calculate_priority(0, 0) == 0  # a pod without containers


def test_no_lister_is_an_error_and_no_args():
    plugin = new(None, None)
    score, status = plugin.score(CycleState(), image_pod("a"), None)
    assert score == 0 and status.code().name == "ERROR"
    assert plugin.score_extensions() is None
    assert plugin.name() == NAME


# ------------------------------------------------------------------------------------------------
# randomized equivalence
# ------------------------------------------------------------------------------------------------
_POOL = (
    (("docker.io/library/nginx:1.25", "nginx:1.25"), 60),
    (("busybox:latest", "docker.io/library/busybox:latest", "busybox"), 2),
    (("gcr.io/big:v1", "gcr.io/big@sha256:" + "cd" * 32), 2500),
    (("localhost:5000/app:latest",), 300),
    (("quay.io/team/tool:2",), 45),
)
_POD_IMAGES = ("nginx:1.25", "busybox", "gcr.io/big@sha256:" + "cd" * 32, "gcr.io/big:v1",
               "localhost:5000/app", "quay.io/team/tool:2", "unknown/image")


def _targeted_snapshot(seed: int, n_nodes: int = 250):
    """Nodes listing multi-name images, with per-node size jitter for the same image."""
    rng = random.Random(seed)
    nodes = []
    for i in range(n_nodes):
        picks = rng.sample(_POOL, k=rng.randint(0, 4))
        nodes.append(Node(name=f"t-{i:04d}", allocatable={"cpu": 4000, "pods": 110},
                          images=tuple(ContainerImage(names=names, size_bytes=size * MB + rng.randint(0, 3 * MB))
                                       for names, size in picks)))
    return build_snapshot(nodes)


def _targeted_pod(rng: random.Random, i: int) -> Pod:
    images = [rng.choice(_POD_IMAGES) for _ in range(rng.randint(1, 3))]
    init = tuple(rng.choice(_POD_IMAGES) for _ in range(rng.choice((0, 0, 1, 2))))
    image_volumes = tuple(rng.choice(_POD_IMAGES) for _ in range(rng.choice((0, 0, 1, 2))))
    return Pod(name=f"t{i}", containers=tuple(Container(name=f"c{k}", image=img) for k, img in enumerate(images)),
               init_containers=tuple(Container(name=f"i{k}", image=img) for k, img in enumerate(init)),
               volumes=tuple({"name": f"v{k}", "image": {"reference": ref}} for k, ref in enumerate(image_volumes))
               + ({"name": "scratch", "emptyDir": {}},))


def test_random_equivalence():
    fw = new_framework(in_tree_registry(), single_plugin_profile(NAME))
    plugin = fw.plugin(NAME)
    nonzero = distinct = cases = 0
    for seed in range(10):
        rng = random.Random(1000 + seed)
        for snapshot, make_pod in ((random_snapshot(seed, 220, 440), random_pod),
                                   (_targeted_snapshot(seed), _targeted_pod)):
            fw.set_snapshot_shared_lister(snapshot)
            for i in range(4):
                pod = make_pod(rng, i)
                summary = assert_paths_equivalent(fw, snapshot, pod)
                assert summary["scored"]
                scores, _ = plugin.score_vectorized(CycleState(), pod, snapshot.batch())
                nonzero += int(np.count_nonzero(scores))
                distinct += len(set(scores.tolist()))
                cases += 1
    assert cases == 80
    assert nonzero > 3000, nonzero  # the cases really score (5350 at the time of writing)
    assert distinct > 150, distinct  # with varied, non-trivial values (190 at the time of writing)


def test_image_volumes_count_in_the_image_count_and_only_they_are_read():
    """A missing image on the node still counts in imageCount (so lowers the score), and pods whose
    other volumes differ share the containers-only column form."""
    nodes = [image_node("node1", *NODE_300_600_900)]
    with_volume = scores_both_ways(image_pod("gcr.io/300", image_volumes=("gcr.io/nope",)), nodes)
    without = scores_both_ways(image_pod("gcr.io/300"), nodes)
    assert with_volume == [14] and without == [28]   # 300M over a max of 2000M (1000M without the volume)
    plugin = new(None, cast(fwk.Handle, _Handle(build_snapshot(nodes))))
    plain = plugin.column_form(image_pod("gcr.io/300"), None)
    assert plain.reads == ("containers", "init_containers")
    assert plugin.column_form(image_pod("gcr.io/300", image_volumes=("x",)), None).reads is None
