"""A GPU fragmentation-aware Score plugin written as a numba kernel (after the FGD paper).

Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation
Gradient Descent" (USENIX ATC '23) score a node by how much placing the pod *changes* its GPU
fragmentation, measured against the cluster's typical tasks. Here, with whole GPUs (the node
table's ``nvidia.com/gpu`` column): a node's free GPUs are fragmented for a task type when that
task cannot use them (it asks for no GPU, or for more GPUs or more cpu than the node has free);
the node's fragmentation is the popularity-weighted sum over the task types. Placing a pod that
lowers the fragmentation scores above 50, one that raises it (a cpu-only pod eating the cpu that
the node's GPUs need) below::

    frag(cpu, gpu) = sum_k weight_k * (gpu if gpu > 0 and (gpu_k == 0 or gpu < gpu_k or cpu < cpu_k) else 0)
    score = clamp(50 + 50 * (frag(before) - frag(after)) // (sum_k weight_k * allocatable_gpu), 0, 100)

a node without GPUs scores 50. Three forms of the same score live here:

* :class:`GpuFragmentation`: the numba plugin (``fastsched.numba_plugins``), the one to use;
* :class:`GpuFragmentationPython`: the same score written the upstream way, one node at a time in
  plain Python (what a user would write without numba; the benchmark's baseline);
* :class:`MostAllocatedNumba`: NodeResourcesFit's MostAllocated scorer (cpu and memory, weights 1)
  as a numba plugin, equal to the in-tree compiled kernel: the benchmark's like-for-like comparison.

Configuration (see ``config.yaml``)::

    pluginConfig:
      - name: GpuFragmentation
        args:
          taskTypes:                       # the typical tasks: cpu in millicores, whole GPUs
            - {cpuMillis: 8000, gpus: 1, weight: 50}
            - {cpuMillis: 16000, gpus: 4, weight: 30}
            - {cpuMillis: 2000, gpus: 0, weight: 20}
"""
from __future__ import annotations

import numba
import numpy as np

from fastsched.framework import ScorePlugin
from fastsched.numba_plugins import NumbaScorePlugin

GPU = "nvidia.com/gpu"
NAME = "GpuFragmentation"
#: used when the configuration gives no ``taskTypes``
DEFAULT_TASK_TYPES = ({"cpuMillis": 8000, "gpus": 1, "weight": 50},
                      {"cpuMillis": 16000, "gpus": 4, "weight": 30},
                      {"cpuMillis": 2000, "gpus": 0, "weight": 20})
NEUTRAL = 50


@numba.njit(cache=True)
def fragmentation(free_cpu, free_gpu, task_cpu, task_gpu, task_weight):
    """Popularity-weighted free GPUs that the task types cannot use (int64)."""
    total = 0
    if free_gpu <= 0:
        return total
    for k in range(task_weight.shape[0]):
        if task_gpu[k] == 0 or free_gpu < task_gpu[k] or free_cpu < task_cpu[k]:
            total += task_weight[k] * free_gpu
    return total


@numba.njit(cache=True)
def gpu_fragmentation_kernel(rows, alloc, requested, gpu_col, pod_cpu, pod_gpu,
                             task_cpu, task_gpu, task_weight, out):
    """Score kernel. ``rows`` (n,) int64; ``alloc`` / ``requested`` (C, R) int64 table columns;
    ``gpu_col`` the GPU resource column (-1: no node has GPUs); ``pod_cpu`` (millicores) and
    ``pod_gpu`` the pod's requests; ``task_*`` (K,) int64 the task types; ``out`` (n,) int64."""
    weight_sum = 0
    for k in range(task_weight.shape[0]):
        weight_sum += task_weight[k]
    for i in range(rows.shape[0]):
        r = rows[i]
        alloc_gpu = alloc[r, gpu_col] if gpu_col >= 0 else 0
        if alloc_gpu <= 0 or weight_sum <= 0:
            out[i] = NEUTRAL
            continue
        free_cpu = alloc[r, 0] - requested[r, 0]
        free_gpu = alloc_gpu - requested[r, gpu_col]
        before = fragmentation(free_cpu, free_gpu, task_cpu, task_gpu, task_weight)
        after = fragmentation(free_cpu - pod_cpu, free_gpu - pod_gpu, task_cpu, task_gpu, task_weight)
        score = NEUTRAL + NEUTRAL * (before - after) // (weight_sum * alloc_gpu)
        out[i] = min(max(score, 0), 100)


def task_type_arrays(args: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``taskTypes`` of the plugin args as three (K,) int64 arrays: cpu (millicores), GPUs, weight."""
    types = args.get("taskTypes") or DEFAULT_TASK_TYPES
    for i, t in enumerate(types):
        for key in ("cpuMillis", "gpus", "weight"):
            if not isinstance(t.get(key), int) or t[key] < 0:
                raise ValueError(f"{NAME} args: taskTypes[{i}].{key}: must be a non-negative integer, got {t.get(key)!r}")
    return tuple(np.array([int(t[key]) for t in types], dtype=np.int64)
                 for key in ("cpuMillis", "gpus", "weight"))


class GpuFragmentation(NumbaScorePlugin):
    """FGD-style score, compiled: see the module docstring."""

    NAME = NAME
    kernel = gpu_fragmentation_kernel
    columns = ("alloc", "requested")

    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
        self.task_cpu, self.task_gpu, self.task_weight = task_type_arrays(self.args)

    def pod_scalars(self, pod, table):
        requests = pod.requests
        return (table.resource_index.get(GPU, -1), int(requests.get("cpu", 0)), int(requests.get(GPU, 0)),
                self.task_cpu, self.task_gpu, self.task_weight)


class GpuFragmentationPython(ScorePlugin):
    """The same score, one node at a time in plain Python (no numba, no table columns)."""

    def __init__(self, args=None, handle=None):
        args = dict(args or {})
        cpu, gpu, weight = task_type_arrays(args)
        self.task_types = list(zip(cpu.tolist(), gpu.tolist(), weight.tolist()))

    def name(self):
        return NAME

    def _fragmentation(self, free_cpu, free_gpu):
        if free_gpu <= 0:
            return 0
        return sum(w * free_gpu for c, g, w in self.task_types if g == 0 or free_gpu < g or free_cpu < c)

    def score(self, state, pod, node_info):
        alloc, requested = node_info.allocatable, node_info.requested
        alloc_gpu = alloc.scalar_resources.get(GPU, 0)
        weight_sum = sum(w for _, _, w in self.task_types)
        if alloc_gpu <= 0 or weight_sum <= 0:
            return NEUTRAL, None
        free_cpu = alloc.milli_cpu - requested.milli_cpu
        free_gpu = alloc_gpu - requested.scalar_resources.get(GPU, 0)
        pod_cpu, pod_gpu = int(pod.requests.get("cpu", 0)), int(pod.requests.get(GPU, 0))
        before = self._fragmentation(free_cpu, free_gpu)
        after = self._fragmentation(free_cpu - pod_cpu, free_gpu - pod_gpu)
        score = NEUTRAL + NEUTRAL * (before - after) // (weight_sum * alloc_gpu)
        return min(max(score, 0), 100), None


@numba.njit(cache=True)
def most_allocated_kernel(rows, alloc, nonzero_requested, pod_cpu, pod_memory, out):
    """NodeResourcesFit's MostAllocated over cpu and memory (weights 1), as upstream computes it:
    per resource ``min(used + request, allocatable) * 100 // allocatable`` (skipped when the
    allocatable is 0), averaged over the counted resources."""
    for i in range(rows.shape[0]):
        r = rows[i]
        total = 0
        counted = 0
        for res in range(2):
            capacity = alloc[r, res]
            if capacity == 0:
                continue
            used = nonzero_requested[r, res] + (pod_cpu if res == 0 else pod_memory)
            if used > capacity:
                used = capacity
            total += used * 100 // capacity
            counted += 1
        out[i] = total // counted if counted else 0


class MostAllocatedNumba(NumbaScorePlugin):
    """MostAllocated (cpu, memory) as a numba plugin; equal to NodeResourcesFit's in-tree scorer."""

    NAME = "MostAllocatedNumba"
    kernel = most_allocated_kernel
    columns = ("alloc", "nonzero_requested")

    def pod_scalars(self, pod, table):
        requests = pod.scoring_requests  # with upstream's non-zero cpu / memory defaults
        return int(requests.get("cpu", 0)), int(requests.get("memory", 0))
