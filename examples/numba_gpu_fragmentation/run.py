"""Schedule a mix of GPU and cpu-only pods with and without GpuFragmentation and compare.

Run from the repository root:  python examples/numba_gpu_fragmentation/run.py
"""
from __future__ import annotations

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from gpu_fragmentation import GpuFragmentation  # noqa: E402

from fastsched import Scheduler, load_config  # noqa: E402
from fastsched.runtime import Registry  # noqa: E402
from fastsched.testing import make_node, make_pod  # noqa: E402


def cluster():
    """20 GPU nodes (32 cpu, 4 GPUs) and 20 cpu-only nodes (40 cpu)."""
    gpu = [make_node(f"gpu-{i}", cpu="32", memory="128Gi", extra={"nvidia.com/gpu": "4"}) for i in range(20)]
    cpu = [make_node(f"cpu-{i}", cpu="40", memory="128Gi") for i in range(20)]
    return gpu + cpu


def workload():
    """80 cpu-only pods (10 cpu) first, then 20 training pods (24 cpu, 4 GPUs): a
    fragmentation-blind scorer spreads the cpu pods over the GPU nodes too, leaving them too little
    cpu for the training pods, and strands their GPUs."""
    pods = [make_pod(f"web-{i}", cpu="10") for i in range(80)]
    pods += [make_pod(f"train-{i}", requests={"cpu": "24", "nvidia.com/gpu": "4"}) for i in range(20)]
    return pods


def run(config) -> tuple[int, int]:
    s = Scheduler(config, registry=Registry({"GpuFragmentation": GpuFragmentation}), seed=0)
    s.add_nodes(cluster())
    s.add_pods(workload())
    results = s.run()
    scheduled = sum(r.scheduled for r in results)
    gpu_pods = sum(r.scheduled for r in results if r.pod.name.startswith("train-"))
    return scheduled, gpu_pods


if __name__ == "__main__":
    for label, cfg in (("default profile", None),
                       ("with GpuFragmentation", load_config(HERE / "config.yaml", registry_names=["GpuFragmentation"]))):
        scheduled, gpu_pods = run(cfg)
        print(f"{label:>24}: {scheduled}/100 pods scheduled, {gpu_pods}/20 training pods")
