"""A gang's runs of identical members placed by one kernel call each end exactly as one by one.

``Scheduler.use_gang_runs`` (docs/dev/gang-runs.md section 4): the group algorithm places the
members from the third of a run on (the previous member's compiled cycle, same spec) with
``CompiledCycle.place_run`` (``FusedPlan.place_run``: the table's sums written between members,
``NodeTable.add_run``, ``Cache.assume_run``) and finishes each member's cycle after it. Seeded
random gang clusters (8: those of ``test_podgroup_compiled_cycle``, plus gangs whose members alternate
two specs, clusters of identical nodes whose ties the kernel draws, and nodes filling up mid-run)
run both ways; after every group cycle the whole scheduler state is compared (the full-state
comparison of ``test_compiled_binding``: every pod's result, the cache's entries and fingerprint,
the node table attribute by attribute and byte by byte with each record's pod, the queue, the
metric series' counts, ``_cycles``, the next start index, the RNG's state, the clock), and each
group algorithm's members (node, evaluated and feasible counts, status).
"""
from __future__ import annotations

import random

import pytest

from fastsched import Scheduler, load_config
from fastsched.clock import VirtualClock

from .test_compiled_binding import _full_state
from .test_podgroup_compiled_cycle import SEEDS, _gates, _node, run_scenario, scenario


def _variant(seed: int) -> dict:
    """``scenario(seed)`` reshaped by the seed: members alternating two specs (every third one
    asks for more cpu), identical nodes (score ties), or few small nodes (runs end at a full
    cluster)."""
    sc = scenario(seed)
    rng = random.Random(seed * 31 + 5)
    kind = seed % 4
    if kind == 1:
        for p in sc["incoming"]:
            name = p["metadata"]["name"]
            if p["spec"].get("schedulingGroup") and int(name.rsplit("-", 1)[1]) % 3 == 2:
                p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "300m"
    elif kind == 2:
        same = random.Random(0)
        sc["nodes"] = [_node(i, same) for i in range(rng.randint(8, 24))]
        for n in sc["nodes"]:
            n["metadata"]["labels"] = {"kubernetes.io/hostname": n["metadata"]["name"],
                                       "topology.kubernetes.io/zone": "zone-a"}
            n["spec"] = {}
            n["status"] = {"capacity": {"cpu": "8", "memory": "16Gi", "pods": "110"},
                           "allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}}
        sc["running"] = []
        for p in sc["incoming"]:  # members without CYCLE parts (which would not make runs)
            for key in ("topologySpreadConstraints", "affinity", "nodeSelector"):
                p["spec"].pop(key, None)
    elif kind == 3:
        sc["nodes"] = sc["nodes"][:max(2, len(sc["nodes"]) // 4)]
        names = {n["metadata"]["name"] for n in sc["nodes"]}
        sc["running"] = [p for p in sc["running"] if p["spec"]["nodeName"] in names]
    return sc


def _key(value):
    """A dict key of ``_canon``'s with object ids (memos keyed by ``id()``, which differ between
    two schedulers whatever the path) replaced by a placeholder."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 1 << 40:
        return "id"
    if isinstance(value, (tuple, list)):
        return type(value)(_key(v) for v in value)
    return value


def _without_ids(value):
    if isinstance(value, dict):
        return {k: _without_ids(v) for k, v in value.items()}
    if isinstance(value, tuple):
        if len(value) == 2 and value[0] == "dict" and isinstance(value[1], list):
            return ("dict", sorted([(_key(k), _without_ids(v)) for k, v in value[1]], key=repr))
        return tuple(_without_ids(v) for v in value)
    if isinstance(value, list):
        return [_without_ids(v) for v in value]
    return value


def _state(s, seen) -> dict:
    return _without_ids(_full_state(s, seen))


def _table_digest(s: Scheduler) -> tuple:
    """The node table's records in order on each row, its sums and versions, the free-record
    stack (cheaper than the full state: taken after each group algorithm)."""
    table = s.cache.snapshot.table
    rows = tuple((name, tuple((rec, table.pod_names[rec]) for rec in table.pod_records(row)))
                 for name, row in sorted(table.row_of.items()))
    return (rows, table.requested.tobytes(), table.nonzero_requested.tobytes(), table.pod_count.tobytes(),
            table.row_version.tobytes(), table.version, tuple(table._freed_records), table._next_record)


def run(sc: dict, runs: bool, capture: bool = True) -> tuple[list, list, int]:
    """``capture``: the states compared (else only the outcomes and the members runs placed)."""
    gates = _gates()
    s = Scheduler(load_config(None, feature_gates=gates), seed=sc["seed"], clock=VirtualClock(start=1e9),
                  feature_gates=gates)
    s.use_gang_runs = runs
    seen: list = []
    states: list = []
    run_placed = [0]
    algorithm = s._run_root_scheduling_algorithm
    cycle = s._pod_group_cycle
    place_run = s._place_run

    def members(fw, group_state, pg_info, park=False):
        result = algorithm(fw, group_state, pg_info, park)
        cache = s.cache
        states.append(([(r.pinfo.pod.name, r.result.suggested_host, r.result.evaluated_nodes,
                         r.result.feasible_nodes, None if r.status is None else (r.status.code(), r.status.message()))
                        for r in result.pod_results],
                       _table_digest(s), sorted((uid, st.node_name, st.assumed) for uid, st in cache._pods.items()),
                       cache.assumed_fingerprint, list(cache._parked), s._cycles, s.next_start_node_index,
                       s.rng.bit_generator.state))
        return result

    def observed(fw, group_state, pg_info, started):
        cycle(fw, group_state, pg_info, started)
        states.append(_state(s, seen))

    def counted(*args):
        out = place_run(*args)
        run_placed[0] += len(out or ())
        return out

    if capture:
        s._run_root_scheduling_algorithm = members
        s._pod_group_cycle = observed
    s._place_run = counted
    pods, conditions = run_scenario(s, sc)
    if capture:
        states.append(_state(s, seen))
    return states, [pods, conditions], run_placed[0]


@pytest.mark.parametrize("seed", SEEDS[:8])
def test_gang_runs_end_as_members_one_by_one(seed):
    sc = _variant(seed)
    reference, ref_out, none = run(sc, runs=False)
    states, out, _ = run(sc, runs=True)
    assert none == 0
    assert out == ref_out
    assert len(states) == len(reference)
    for i, (a, b) in enumerate(zip(states, reference)):
        assert a == b, f"state {i} differs"


def test_the_comparison_places_runs():
    """The comparison compares something: members placed by runs, in each reshaping (runs
    interrupted by a second spec, ties drawn in the kernel, runs ended by a full cluster)."""
    placed = {0: 0, 1: 0, 2: 0, 3: 0}
    failed = 0
    for seed in SEEDS[:8]:
        sc = _variant(seed)
        _, (pods, _), n = run(sc, runs=True, capture=False)
        placed[seed % 4] += n
        failed += sum(1 for p in pods if p[1] != "Scheduled" and "/gang-" in p[0])
    assert all(n >= 10 for n in placed.values()) and failed > 0, (placed, failed)


def _selector_variant(seed: int) -> dict:
    """``scenario(seed)`` with every third member of a gang selecting ``disk: ssd`` nodes and
    its requests unchanged: members that derive the same accounting data as the run's but have
    other spec objects, so that only the run's spec test (``place_run``'s identity of the spec
    objects) ends the run there."""
    sc = scenario(seed)
    for p in sc["incoming"]:
        name = p["metadata"]["name"]
        if p["spec"].get("schedulingGroup") and int(name.rsplit("-", 1)[1]) % 3 == 2:
            p["spec"]["nodeSelector"] = {"disk": "ssd"}
        elif p["spec"].get("schedulingGroup"):
            p["spec"].pop("nodeSelector", None)
    return sc


@pytest.mark.parametrize("seed", [0, 5])
def test_gang_runs_end_at_another_spec_with_the_same_requests(seed):
    sc = _selector_variant(seed)
    reference, ref_out, _ = run(sc, runs=False, capture=False)
    _, out, placed = run(sc, runs=True, capture=False)
    assert placed > 0
    assert out == ref_out


def _forked(sc: dict, runs: bool) -> tuple:
    """A fork taken between two group cycles (its table's columns shared copy on write), then
    the fork and the origin run to the end; inside a transaction rolled back, a second fork."""
    gates = _gates()
    s = Scheduler(load_config(None, feature_gates=gates), seed=sc["seed"], clock=VirtualClock(start=1e9),
                  feature_gates=gates)
    s.use_gang_runs = runs
    s.add(sc["objects"])
    s.add(sc["nodes"])
    if sc["running"]:
        s.add(sc["running"])
    s.add(sc["incoming"])
    s.run(max_attempts=2)
    f = s.fork()
    f.run(until=1e9 + 600)
    with s.transaction():
        s.run(max_attempts=3)
    s.run(until=1e9 + 600)
    return _state(f, []), _state(s, [])


@pytest.mark.parametrize("seed", [3])
def test_gang_runs_in_forks_and_transactions(seed):
    sc = _variant(seed)
    assert _forked(sc, runs=True) == _forked(sc, runs=False)
