"""The pods released at Permit bound in one compiled call (``use_gang_bind_run``:
``BindCommit.commit_run``, docs/dev/gang-runs.md step 4) end as ``_run_binding_cycle`` per pod
ends them.

The seeded gang clusters of ``test_podgroup_permit_run`` (deletions of members held for binding,
high-priority preemptors, runs past the 5-minute Permit timeout, one member's assume failing in
submit in some) run with the switch on and off; compared after every step: every pod's result,
the pods held at Permit, ``_waiting``, the assumed pods, the clock's live events, the queue (its
in-flight events in order), the pod group states (each set in order); in each bound callback the
scheduler as the callback sees it (the cache's count, the attempt metrics, the change count, the
table's version, the pods in flight, the group states, the in-flight events); at the end
``test_compiled_binding._full_state``. With Permit per member (WaitingPods signalled: the
Python path per pod inside the call) and in a fork and a rolled-back transaction too.
"""
from __future__ import annotations

import pytest

from fastsched import Scheduler, load_config
from fastsched.clock import VirtualClock

from .test_compiled_binding import _first_difference, _full_state
from .test_podgroup_compiled_cycle import _gates, scenario
from .test_podgroup_parked_rows import _table_digest
from .test_podgroup_permit_run import _CountedCommit, _group_states, _without, run

#: scenarios compared (few, for the suite's time; their gangs bind in runs; 4 and 22 hand held
#: members over at a failure)
COMPARED = (4, 14, 22)


def _same(on: tuple, off: tuple) -> None:
    on_steps, on_state, _ = on
    off_steps, off_state, _ = off
    for i, (a, b) in enumerate(zip(on_steps, off_steps)):
        assert a == b, (i, _first_difference(a, b))
    assert len(on_steps) == len(off_steps)
    for key in off_state:
        assert on_state[key] == off_state[key], (key, _first_difference(on_state[key], off_state[key]))


@pytest.mark.parametrize("seed", COMPARED)
def test_bind_run_binds_as_binding_cycles_per_pod(seed):
    on, off = run(seed, True), run(seed, True, False)
    assert off[2]["bound in run"] == 0
    _same(on, off)


def test_bind_run_with_permit_per_member():
    """Permit through WaitingPods (``use_gang_permit_run`` off): the signalled ones bind through
    the Python path at their turn inside the call, the same as without it."""
    on, off = run(4, False, True), run(4, False, False)
    _same(on, off)


def test_the_comparison_binds_in_runs():
    bound = sum(run(seed, True)[2]["bound in run"] for seed in COMPARED)
    assert bound > 50, bound


def _forked(seed: int, on: bool) -> tuple:
    """A fork taken while members are held for binding, run to the end; the origin runs inside a
    transaction rolled back, then to the end."""
    sc = scenario(seed)
    gates = _gates()
    s = Scheduler(load_config(None, feature_gates=gates), seed=seed, clock=VirtualClock(start=1e9),
                  feature_gates=gates)
    s.use_gang_bind_run = on
    runs = {"bound in run": 0}
    s._bind_commit = _CountedCommit(s._bind_commit, runs)
    s.add(sc["objects"])
    s.add(sc["nodes"])
    if sc["running"]:
        s.add(sc["running"])
    s.add(sc["incoming"])
    s.run(max_attempts=2)
    f = s.fork()
    seen_f: list = []
    f.bound_callbacks.append(lambda r: seen_f.append((r.pod.uid, _group_states(f), f._change_seq)))
    f.run(until=1e9 + 600)
    with s.transaction():
        s.run(max_attempts=3)
    seen: list = []
    s.bound_callbacks.append(lambda r: seen.append((r.pod.uid, _group_states(s), s._change_seq)))
    s.run(until=1e9 + 600)
    return _state(f, seen_f), _group_states(f), _state(s, seen), _group_states(s), runs


def _state(s: Scheduler, seen: list) -> dict:
    """``_full_state`` with the node table and the queue's memo by content (their canonical
    forms hold object ids, which differ between two schedulers)."""
    state = _full_state(s, seen)
    table = s.cache.snapshot.table
    state["table"] = (_table_digest(s), table.version, table.row_version.tolist(), table.pod_count.tolist())
    state["queue"] = _without(state["queue"], frozenset({"_gating_known"}))
    return state


def test_bind_run_in_forks_and_transactions():
    on, off = _forked(4, True), _forked(4, False)
    assert on[-1]["bound in run"] > 0 and off[-1]["bound in run"] == 0
    for a, b in zip(on[:-1], off[:-1]):
        if isinstance(a, dict):
            for key in b:
                assert a[key] == b[key], (key, _first_difference(a[key], b[key]))
        else:
            assert a == b, _first_difference(a, b)
