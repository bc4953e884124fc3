"""ImageLocality (upstream ``pkg/scheduler/framework/plugins/imagelocality/image_locality.go``, v1.37).

A Score plugin (no NormalizeScore) favouring nodes that already hold the pod's images: those of its
init and regular containers and, since v1.37 (``sumImageScores``), of its image volumes
(``volumes[].image.reference``; ImageVolume is GA). Each whose image the node lists adds the image
size scaled by its spread,
``int64(float64(size) * (float64(numNodesWithImage) / float64(totalNumNodes)))``; the sum is clamped
to ``[23 MiB, 1000 MiB * imageCount]`` (imageCount: containers, init containers and image volumes)
and mapped linearly onto [0, 100] with integer division.

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
from ...framework import signers
from ...framework.status import MAX_NODE_SCORE, Status

if TYPE_CHECKING:  # pragma: no cover
    from ...api import Pod
    from ...framework.protocols import NodeTable

NAME = "ImageLocality"
#: Score reads only the nodes' images and the number of nodes; no normalization. Pods without image
#: volumes: the score reads only the containers (pods differing in other volumes share a plan).
_COLUMN_FORM = ColumnForm(score=NODES)
_COLUMN_FORM_CONTAINERS = ColumnForm(score=NODES, reads=("containers", "init_containers"))

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


def calculate_priority(sum_scores: int, image_count: int) -> int:
    """Upstream ``calculatePriority``: clamp, then ``100 * (sum - min) / (max - min)`` truncated."""
    max_threshold = MAX_CONTAINER_THRESHOLD * image_count
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    num, den = MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD), max_threshold - MIN_THRESHOLD
    # Go's truncating division (den < 0 only for a pod without containers, where num == 0)
    q = abs(num) // abs(den)
    return q if (num >= 0) == (den > 0) else -q


def image_volume_references(pod: "Pod") -> tuple[str, ...]:
    """``volumes[].image.reference`` of the pod's image volumes, in spec order (a missing reference
    is "", as upstream reads the empty string)."""
    refs = []
    for v in pod.volumes:
        image = v.get("image")
        if image is not None:
            refs.append(str((image or {}).get("reference") or ""))
    return tuple(refs)


def pod_images(pod: "Pod") -> tuple[str, ...]:
    """Every image the pod counts (upstream v1.37 ``sumImageScores``): init containers, containers,
    image volumes; one entry per source, so ``len`` is the image count."""
    return pod.images + image_volume_references(pod)


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

    # -- opportunistic batching ---------------------------------------------------------------------
    def sign_pod(self, pod: Pod) -> tuple[signers.Fragments | None, Status | None]:
        """Upstream ``SignPod``: the normalized images of the containers and init containers, as a
        sorted set (image volumes reach the signature through the volumes)."""
        names = {normalized_image_name(c.image) for c in (*pod.containers, *pod.init_containers)}
        return ((signers.IMAGE_NAMES_SIGNER, tuple(sorted(names))),), None

    #: the pod spec fields its column form and plan parts read (fastsched.framework.columns)
    column_reads = ("containers", "init_containers", "volumes")
    #: its column form and plan parts read no container's ``volume_mounts`` (compiled_cycle shares a plan
    #: between pods whose mounts alone differ)
    column_reads_mounts = False

    def column_named_resources(self, pod: "Pod") -> frozenset[str]:
        """None of the pod's resources by name: it reads the containers, not their resources."""
        return frozenset()

    def column_form(self, pod: Pod, table: NodeTable) -> ColumnForm:
        """The fused cycle's form: the score reads only the nodes' images and the node count (and
        of the pod's volumes only the image volumes)."""
        return _COLUMN_FORM if image_volume_references(pod) else _COLUMN_FORM_CONTAINERS

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
        images = pod_images(pod)
        sum_scores = 0
        if total > 0:
            for image in images:
                st = image_states.get(normalized_image_name(image))
                if st is not None:
                    sum_scores += scaled_image_score(st.size, st.num_nodes, total)
        return calculate_priority(sum_scores, len(images)), None

    def score_extensions(self) -> None:
        return None

    # -- batch ------------------------------------------------------------------------------------
    def score_vectorized(self, state: CycleState, pod: Pod, nodes: fwk.NodeBatch) -> tuple[np.ndarray, Status | None]:
        table = nodes.table
        rows = nodes.rows                                   # (n,) int64 table rows
        n = len(rows)
        all_images = pod_images(pod)
        num_images = len(all_images)
        total = len(table)                                  # live nodes in the snapshot
        if num_images == 0:
            return np.zeros(n, dtype=np.int64), None
        images = self._normalized_images(all_images)
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
        max_threshold = MAX_CONTAINER_THRESHOLD * num_images
        clamped = np.minimum(np.maximum(sums, MIN_THRESHOLD), max_threshold)
        scores = (MAX_NODE_SCORE * (clamped - MIN_THRESHOLD)) // (max_threshold - MIN_THRESHOLD)
        return scores.astype(np.int64, copy=False), None


def new(args: Any, handle: fwk.Handle) -> ImageLocality:
    """Upstream ``New``: the plugin takes no args."""
    return ImageLocality(handle)


__all__ = ["NAME", "ImageLocality", "new", "normalized_image_name", "scaled_image_score", "image_volume_references",
           "pod_images",
           "calculate_priority", "MIN_THRESHOLD", "MAX_CONTAINER_THRESHOLD", "MB"]
