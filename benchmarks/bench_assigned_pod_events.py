"""The scheduling queue under a stream of bound pods with many unschedulable pods waiting.

Every bound pod is an AssignedPodAdd event for the queue (upstream: MoveAllToActiveOrBackoffQueue
once per scheduled pod). The default profile's queue, as ``Scheduler`` builds it, holds
``--fit`` pods rejected by NodeResourcesFit (which does not register AssignedPod/Add), ``--spread``
pods rejected by PodTopologySpread and ``--affinity`` pods rejected by InterPodAffinity (both
register it, their hints answering QueueSkip: the bound pods match neither their selectors nor
their terms); then ``--bound`` bound pods arrive. Prints the process CPU time of the stream and
checks that every pod is still waiting.

    python benchmarks/bench_assigned_pod_events.py [--fit 5000 --spread 500 --affinity 500 --bound 3000]

Run it from two trees (``PYTHONPATH=<tree>``) for an A/B comparison.
"""
from __future__ import annotations

import argparse
import gc
import time

from fastsched.scheduler import Scheduler
from fastsched.testing import make_pod


def _spread_pod(i: int):
    return make_pod(f"spread-{i}", labels={"app": "spread"}, topologySpreadConstraints=[
        {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
         "labelSelector": {"matchLabels": {"app": "spread"}}}])


def _affinity_pod(i: int):
    return make_pod(f"affinity-{i}", affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "peer"}}, "topologyKey": "kubernetes.io/hostname"}]}})


def build(n_fit: int, n_spread: int, n_affinity: int):
    s = Scheduler(seed=0)
    q = s.queue
    pods = [(make_pod(f"fit-{i}", cpu="64"), "NodeResourcesFit") for i in range(n_fit)]
    pods += [(_spread_pod(i), "PodTopologySpread") for i in range(n_spread)]
    pods += [(_affinity_pod(i), "InterPodAffinity") for i in range(n_affinity)]
    for pod, plugin in pods:
        q.add(pod)
        pinfo = q.pop()
        assert pinfo is not None and pinfo.pod.uid == pod.uid
        pinfo.unschedulable_plugins = {plugin}
        assert q.add_unschedulable_if_not_present(pinfo, q.scheduling_cycle()) is None
    assert q.num_unschedulable() == len(pods)
    return q


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--fit", type=int, default=5000)
    ap.add_argument("--spread", type=int, default=500)
    ap.add_argument("--affinity", type=int, default=500)
    ap.add_argument("--bound", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    bound = [make_pod(f"bound-{i}", labels={"app": "stream"}, node_name=f"node-{i % 100}") for i in range(args.bound)]
    times = []
    for _ in range(args.rounds):
        q = build(args.fit, args.spread, args.affinity)
        gc.collect()
        c0 = time.process_time()
        for pod in bound:
            q.assigned_pod_added(pod)
        times.append(time.process_time() - c0)
        assert q.num_unschedulable() == args.fit + args.spread + args.affinity, "a pod moved"
    per_bind_us = [t / args.bound * 1e6 for t in times]
    print(f"fit={args.fit} spread={args.spread} affinity={args.affinity} bound={args.bound}: "
          f"CPU s per stream {['%.3f' % t for t in times]}, best {min(per_bind_us):.1f} us/bind")


if __name__ == "__main__":
    main()
