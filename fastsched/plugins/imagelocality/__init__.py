"""ImageLocality (upstream ``pkg/scheduler/framework/plugins/imagelocality/image_locality.go``, v1.34).

A Score plugin (no NormalizeScore) favouring nodes that already hold the pod's container images.
Each init and regular container whose image the node lists adds the image size scaled by its spread,
``int64(float64(size) * (float64(numNodesWithImage) / float64(totalNumNodes)))``; the sum is clamped
to ``[23 MiB, 1000 MiB * numContainers]`` and mapped linearly onto [0, 100] with integer division.

Image names: only the pod's image is normalized (``:latest`` appended when it has no tag); the
node's names are used as the kubelet reported them, exactly as upstream's scheduler cache stores
them (``addNodeImageStates`` does not normalize). So a node listing the bare name ``busybox``
never matches a pod image ``busybox`` (looked up as ``busybox:latest``), as upstream.
"""
from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ...framework import protocols as fwk
from ...framework.vectorized import VectorizedScorePlugin
from ...framework.columns import NODES, ColumnForm
from ...framework.cycle_state import CycleState
from ...framework.status import MAX_NODE_SCORE, Status

if TYPE_CHECKING:  # pragma: no cover
    from ...api import Pod
    from ...framework.protocols import NodeTable

NAME = "ImageLocality"
#: Score reads only the nodes' images and the number of nodes; no normalization.
_COLUMN_FORM = ColumnForm(score=NODES)

MB = 1024 * 1024
#: below this sum the score is 0
MIN_THRESHOLD = 23 * MB
#: per container: a sum of ``MAX_CONTAINER_THRESHOLD * numContainers`` or more scores 100
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    """Upstream ``normalizedImageName``: append ``:latest`` when the last ':' is not after the last '/'."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def scaled_image_score(size: int, num_nodes: int, total_num_nodes: int) -> int:
    """The image size scaled by its spread (upstream ``scaledImageScore``; float64, truncated)."""
    spread = float(num_nodes) / float(total_num_nodes)
    return int(float(size) * spread)


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """Upstream ``calculatePriority``: clamp, then ``100 * (sum - min) / (max - min)`` truncated."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    num, den = MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD), max_threshold - MIN_THRESHOLD
    # Go's truncating division (den < 0 only for a pod without containers, where num == 0)
    q = abs(num) // abs(den)
    return q if (num >= 0) == (den > 0) else -q


#: Distinct pod image lists whose normalized names are kept.
_IMAGES_CACHE_SIZE = 256


class ImageLocality(VectorizedScorePlugin):
    """Scores nodes by the (spread-scaled) size of the pod's images they already hold."""

    def __init__(self, handle: fwk.Handle | None = None):
        self._handle = handle
        # pod image list -> normalized name -> containers using it
        self._images: dict[tuple[str, ...], Counter] = {}

    def _normalized_images(self, images: Sequence[str]) -> Counter:
        key = tuple(images)
        counts = self._images.get(key)
        if counts is None:
            if len(self._images) >= _IMAGES_CACHE_SIZE:
                self._images.clear()
            counts = self._images[key] = Counter(normalized_image_name(img) for img in key)
        return counts

    def name(self) -> str:
        return NAME

    #: the pod spec fields its column form and plan parts read (fastsched.framework.columns)
    column_reads = ("containers", "init_containers")

    def column_form(self, pod: Pod, table: NodeTable) -> ColumnForm:
        """The fused cycle's form: the score reads only the nodes' images and the node count."""
        return _COLUMN_FORM

    # -- per node ---------------------------------------------------------------------------------
    def _total_num_nodes(self) -> int | None:
        lister = self._handle.snapshot_shared_lister() if self._handle is not None else None
        if lister is None:
            return None
        return len(lister.node_infos().list())

    def score(self, state: CycleState, pod: Pod, node_info: fwk.NodeInfo) -> tuple[int, Status | None]:
        total = self._total_num_nodes()
        if total is None:
            return 0, Status.from_error("getting all nodes from Snapshot: no snapshot shared lister")
        image_states = node_info.image_states
        sum_scores = 0
        if total > 0:
            for container in (*pod.init_containers, *pod.containers):
                st = image_states.get(normalized_image_name(container.image))
                if st is not None:
                    sum_scores += scaled_image_score(st.size, st.num_nodes, total)
        return calculate_priority(sum_scores, len(pod.init_containers) + len(pod.containers)), None

    def score_extensions(self) -> None:
        return None

    # -- batch ------------------------------------------------------------------------------------
    def score_vectorized(self, state: CycleState, pod: Pod, nodes: fwk.NodeBatch) -> tuple[np.ndarray, Status | None]:
        table = nodes.table
        rows = nodes.rows                                   # (n,) int64 table rows
        n = len(rows)
        num_containers = len(pod.init_containers) + len(pod.containers)
        total = len(table)                                  # live nodes in the snapshot
        if num_containers == 0:
            return np.zeros(n, dtype=np.int64), None
        images = self._normalized_images(pod.images)
        if total == 0 or not any(name in table.image_rows for name in images):
            # no candidate holds any of the images: every sum is 0, below the threshold
            return np.zeros(n, dtype=np.int64), None
        sums = np.zeros(n, dtype=np.int64)
        # position of each table row in this batch, -1 for rows outside it: (C,) int64
        position = np.full(table.capacity, -1, dtype=np.int64)
        position[rows] = np.arange(n, dtype=np.int64)
        for name, count in images.items():
            sizes_by_row = table.image_rows.get(name)
            if not sizes_by_row:
                continue
            k = len(sizes_by_row)
            spread = float(k) / float(total)
            image_rows = np.fromiter(sizes_by_row.keys(), dtype=np.int64, count=k)      # (k,)
            sizes = np.fromiter(sizes_by_row.values(), dtype=np.int64, count=k)          # (k,)
            # same float64 operations as the per-node path, truncated toward zero
            scaled = (sizes.astype(np.float64) * spread).astype(np.int64)                # (k,)
            pos = position[image_rows]
            hit = pos >= 0
            # rows are unique per image, so plain fancy-index addition is exact
            sums[pos[hit]] += scaled[hit] * count
        max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
        clamped = np.minimum(np.maximum(sums, MIN_THRESHOLD), max_threshold)
        scores = (MAX_NODE_SCORE * (clamped - MIN_THRESHOLD)) // (max_threshold - MIN_THRESHOLD)
        return scores.astype(np.int64, copy=False), None


def new(args: Any, handle: fwk.Handle) -> ImageLocality:
    """Upstream ``New``: the plugin takes no args."""
    return ImageLocality(handle)


__all__ = ["NAME", "ImageLocality", "new", "normalized_image_name", "scaled_image_score",
           "calculate_priority", "MIN_THRESHOLD", "MAX_CONTAINER_THRESHOLD", "MB"]
