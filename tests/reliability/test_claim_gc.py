"""Forks of a Scheduler holding DRA allocator state."""
from __future__ import annotations

from fastsched import Scheduler
from fastsched.sim.gpu import GPUNodePool, gpu_claim_template, gpu_cluster, gpu_pods


def _status(s: Scheduler, name: str) -> str:
    return s.results[s.get_pod("default", name).uid].status


def test_explain_of_a_pod_waiting_for_a_device_forks_the_allocator_state():
    """explain's preemption part forks the Scheduler with the pod's cycle state, whose allocator
    holds live views (``dict.keys()``) of the allocated devices: the fork copies them as views of
    the copied mapping (it raised ``TypeError: object.__new__(dict_keys) is not safe``)."""
    s = Scheduler(seed=0)
    s.add(gpu_cluster([GPUNodePool(1, model="a100", gpus=1, cpu="100", pods=100)]))
    s.add(gpu_claim_template("one-gpu"))
    s.add(gpu_pods("first", 1, template="one-gpu", cpu="100m", memory="1Mi"))
    s.add(gpu_pods("second", 1, template="one-gpu", cpu="100m", memory="1Mi"))
    s.run()
    assert _status(s, "second-0") == "Unschedulable"
    e = s.explain(s.get_pod("default", "second-0"))
    assert e.feasible == [] and e.admission_error == ""
    assert _status(s, "first-0") == "Scheduled"
