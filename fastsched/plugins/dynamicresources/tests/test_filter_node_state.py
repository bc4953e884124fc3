"""``DynamicResources.filter_records_node_state`` (``framework.columns.NodeDependentFilterState``):
True exactly when this cycle's Filter can record a claim unavailable on some node, which PostFilter
then deallocates; the compiled cycle leaves such cycles to the plugin-call path, since it asks its
CYCLE Filters about every node of a window and upstream only about the nodes the earlier Filters
passed (tests/oracle/test_fast_paths_differential.py holds the gang case that showed it)."""
from __future__ import annotations

import pytest

from .test_dynamic_resources import allocation_on, claim, device_class, pod, ref, run_cycle, setup, worker_slice


def _unavailable_after_filter(objects) -> tuple[bool, set[int]]:
    plugin, _, batch = setup(objects)  # nodes worker and worker-2
    out = run_cycle(plugin, pod(ref()), batch)
    assert out["pre_filter"] is None or out["pre_filter"].is_success()
    from fastsched.plugins.dynamicresources import STATE_KEY
    return plugin.filter_records_node_state(out["state"]), set(out["state"].read(STATE_KEY).unavailable_claims)


@pytest.mark.parametrize("name,objects,records", [
    # allocated on worker: unavailable on worker-2, so which nodes Filter saw matters
    ("allocated-on-one-node", [device_class(), claim(allocation=allocation_on("worker")), worker_slice()], True),
    # not allocated yet: Filter allocates per node and records nothing for PostFilter
    ("unallocated", [device_class(), claim(), worker_slice()], False),
])
def test_answer_follows_what_filter_can_record(name, objects, records):
    answer, unavailable = _unavailable_after_filter(objects)
    assert answer is records
    # the answer is a promise about Filter: with True it did record here (worker-2), with False not
    assert bool(unavailable) is records


def test_no_state_answers_false():
    from fastsched.framework.cycle_state import CycleState
    plugin, _, _ = setup([device_class()])
    assert plugin.filter_records_node_state(CycleState()) is False

