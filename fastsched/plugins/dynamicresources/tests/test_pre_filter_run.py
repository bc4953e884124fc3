"""``DynamicResources.pre_filter_run``: the PreFilter of a gang's run of identical members (one
spec, one pod group cycle; docs/dev/gang-runs.md section 5) leaves every member's CycleState and
the group state's ``pods_state_data`` as ``pre_filter`` called per member does: members without
claims (the shared Skip, each member's state built without the lookups), and members with a claim
(each through ``pre_filter``)."""
from __future__ import annotations

import pytest

from fastsched.framework.cycle_state import CycleState
from fastsched.plugins.dynamicresources import POD_GROUP_CYCLE_KEY, STATE_KEY, _StateData

from .test_dynamic_resources import claim, device_class, pod, ref, setup, worker_slice
from .test_pod_group_post_filter import member


def _states(n: int) -> tuple[CycleState, list[CycleState]]:
    group_state = CycleState()
    states = []
    for _ in range(n):
        state = CycleState()
        state.write(POD_GROUP_CYCLE_KEY, group_state)
        states.append(state)
    return group_state, states


def _fields(s: _StateData) -> dict:
    out = {}
    for name in _StateData.__slots__:
        v = getattr(s, name)
        out[name] = ("pod", v.uid) if name == "pod" and v is not None else (
            type(v).__name__ if name == "allocator" else v)
    return out


def _view(group_state: CycleState, states: list[CycleState]) -> tuple:
    data = group_state.get(STATE_KEY).pods_state_data
    return ([_fields(st.get(STATE_KEY)) for st in states], list(data),
            [data[key] is st.get(STATE_KEY) for key, st in zip(data, states)],
            [len({id(st.get(STATE_KEY)) for st in states})])


@pytest.mark.parametrize("claims", [False, True])
def test_a_run_leaves_the_states_of_pre_filter_per_member(claims):
    plugin, _, batch = setup([device_class(), claim(), worker_slice()], nodes=("worker",))
    template = member(pod(ref()) if claims else pod())
    pods = [template.replace(name=f"m-{i}", uid=f"uid-{i}") for i in range(5)]
    group_one, one = _states(len(pods))
    for state, p in zip(one, pods):
        plugin.pre_filter(state, p, list(batch))
    group_run, run = _states(len(pods))
    plugin.pre_filter_run(run, pods, list(batch))
    assert _view(group_run, run) == _view(group_one, one)
    assert len(group_run.get(STATE_KEY).pods_state_data) == len(pods)
