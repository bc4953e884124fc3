"""The compiled binding path (issue 29, ``docs/dev/compiled-binding-path.md``) against the idle and
the generic binding paths: each scenario runs five times (``use_compiled_binding`` on: with the
commit made from the placement, from the binding cycle (``use_placed_commit`` off), without
``use_bind_commit``; off with ``use_idle_binding`` on; both off) and the runs must leave
the same **full** state: every
column and index of the node table (numpy arrays byte for byte, records allocated identically),
the cache's entries, the queue's internals, the results, the cluster's pods, the metric series'
counts, the loop's counters, the RNG and the clock, and what each bound callback saw when it ran.

Scenarios: seeded random clusters with pods the path serves mixed with pods it must not (ports,
gates, preemption nominations, pod affinity, claims and volumes); a Permit plugin and a failing
binder in custom profiles; ``run(until=...)``; bound callbacks that add and delete pods and nodes
and activate pods mid-run; a ``fork()`` mid-run, run on both sides and compared with an unforked
twin; a transaction rolled back mid-run then continued; decision records switched on for part of
the run.

``use_compiled_binding`` switches the compiled path (steps 2-3 of the doc, in Python:
``_collapsed_binding_cycle``); ``use_bind_commit`` its success's bookkeeping in one Cython call
(step 4: ``_kernels/_bind.pyx``; every scenario but the failing stock binder's must commit some
pods through it, counted by replacing ``Scheduler._bind_commit``). Planted mutants
of the idle path this test fails on (each tried, then reverted; "path only": the mutant changes
what the idle path leaves after ``_pod_bound``, since the generic path shares ``_pod_bound``):

* ``queue.done`` skipped (queue: pods left in flight);
* ``_failures`` not popped (loop);
* ``_changed()`` skipped (results: pods the change would have let in stay unschedulable);
* a bound row's ``row_version`` not bumped (table, byte comparison);
* the cache entry left ``assumed=True`` (results);
* ``queue.assigned_pod_added`` not called (results: attempts of the unschedulable pods it moves);
* the Permit point's Success observation dropped (metrics);
* the sampled Reserve plugin series dropped (metrics);
* the bound callbacks called before the result is written (results, bound).

Mutants of the compiled path (steps 1-3 of the doc):

* step 1, a plan's ``stateless_binding`` always set (test_plans_whose_state_is_read_...: the
  non-idle Reserve plugin finds no state) or never set (test_default_plans_skip_...);
* step 2, the fingerprint XOR-ed once after the insert (cache); ``queue.done`` skipped (queue);
  the entry left assumed (results); no assume before a failed Bind's handling
  (test_the_stock_binder_failing: table versions);
* step 3, the Bind point's observation dropped (metrics); DefaultBinder's sampled series dropped
  (metrics); an instance's ``cluster.bind`` ignored by the inlined check
  (test_the_stock_binder_failing: results);
* step 4 (``BindCommit.commit``; each fails a test of this file): ``_change_seq`` not bumped;
  the signature's ``{row: count}`` not updated; its count subscriptions not bumped; the Bind
  observation dropped; the sampled DefaultBinder series dropped; ``table.version`` not stored;
  ``queue.assigned_pod_added`` never called; the row's built PodInfo list not appended to; a
  fork's shared columns written without ``_own_accounts`` (test_fork_mid_run); a new record
  instead of a freed one; ``_failures`` not popped; ``res.bound_at`` not set;
  ``total_pods_with_affinity`` not bumped; the nomination not deleted; the sampled Reserve
  plugin series dropped; the Reserve or the Permit point's observation dropped; the pre-flights'
  Skip set not left in the state (test_post_bind_sees_the_pre_bind_skip_set); without the
  pre-flights, the sampled PreBind plugin series dropped (test_without_the_pre_flights).

* step 5 (``_commit_placed``): the next start index passed unmoved
  (test_more_nodes_than_the_feasible_nodes_to_find: results); OpportunisticBatching's
  ``store_unsigned`` not made by the commit (no batch part passed, or the kernel's call dropped)
  or given no feasible-node count (test_opportunistic_batching_stores_the_unsigned_pods: bound).

Survives: step 4's ``_in_flight_events.clear()`` dropped when the pod was the only one in flight
(equivalent in a run: events are recorded only while a pod is in flight, none arrives during a
committed pod's cycle, and the last ``done`` before it cleared them). The compiled cycle's
state PreFilters skipped for every plan (``_placed``): the plans whose state plugins have work
(claims, volumes) run them as CYCLE parts, so no scenario here has a plan with state plugins that
is not idle; the absolute checks in the storage and device tests
(pods with claims bound) are there for a scenario that has one.
"""
import contextlib
import random

import numpy as np
import pytest

from fastsched import Scheduler, load_config
from fastsched.api.objects import Pod
from fastsched.framework import Code, PostBindPlugin, ReservePlugin, Status
from fastsched.runtime import Registry
from fastsched.testing import (RANDOM_RUNTIME_CLASS, device_check_scenario, make_node, make_pod, random_cluster, random_pod,
                               storage_check_scenario)

from .test_idle_binding import FlakyBinder, Waiter  # the same misbehaving plugins

pytestmark = pytest.mark.filterwarnings("ignore:pod .* is bound to node")

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}

#: the paths: (use_compiled_binding, use_idle_binding, use_bind_commit, use_placed_commit);
#: "committed" is the compiled path with its commit made from the binding cycle (step 4), not from
#: the placement (step 5); "collapsed" the compiled path without its compiled commit (steps 2-3 in
#: Python)
PATHS = {"compiled": (True, True, True, True), "committed": (True, True, True, False),
         "collapsed": (True, True, False, True), "idle": (False, True, True, True),
         "generic": (False, False, True, True)}

#: attributes that hold memos keyed by object ids, timings or back references: they differ between
#: two runs of the same path, and nothing reads them as state
_SKIP_ATTRS = {"_derived", "_last_derived", "_spec_memo", "_idle_observers", "_point_observers", "snapshot",
               "table", "cluster", "cache", "_scheduler", "scheduler", "_handler", "metrics", "clock",
               "_capsule", "_capsule_rng", "_subs", "framework", "fw", "_fw", "profiles", "_sched",
               "_pod_infos", "nominator", "_node_objs", "_last_pop", "uid",
               "_matching", "_event_of_interest_by_id", "_key_interest"}


def _canon(obj, depth=3, seen=None):
    """A comparable value for ``obj``: arrays by dtype, shape and bytes; containers element by
    element; pods by their fields; other objects by their attributes (``depth`` levels)."""
    if obj is None or isinstance(obj, (bool, int, float, str, bytes)):
        return obj
    if isinstance(obj, np.ndarray):
        if obj.dtype == object:
            return ("ndarray", obj.shape, [_canon(v, depth, seen) for v in obj.ravel().tolist()])
        return ("ndarray", obj.dtype.str, obj.shape, obj.tobytes())
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, Pod):
        return ("Pod", obj.uid, obj.node_name, obj.nominated_node_name, obj.start_time, obj.manifest_text()
                if hasattr(obj, "manifest_text") else repr(sorted(obj.manifest.get("spec", {}).items()))[:2000])
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return "<cycle>"
    seen = seen | {id(obj)}
    if isinstance(obj, dict):
        items = [(_canon(k, depth, seen), _canon(v, depth, seen)) for k, v in obj.items()]
        return ("dict", sorted(items, key=repr))
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [_canon(v, depth, seen) for v in obj])
    if isinstance(obj, (set, frozenset)):
        return ("set", sorted((_canon(v, depth, seen) for v in obj), key=repr))
    if callable(obj) and not hasattr(obj, "__dict__"):
        return ("fn", getattr(obj, "__qualname__", type(obj).__name__))
    if depth <= 0:
        return type(obj).__name__
    attrs = {}
    names = list(getattr(obj, "__dict__", {}))
    for cls in type(obj).__mro__:
        names += [n for n in getattr(cls, "__slots__", ()) if n not in ("__dict__", "__weakref__")]
    for name in names:
        if name in _SKIP_ATTRS or name.startswith("__") or name.endswith("_by_id"):
            continue
        try:
            value = getattr(obj, name)
        except AttributeError:
            continue
        if callable(value) and not isinstance(value, (dict, list, np.ndarray)) and not hasattr(value, "__dict__"):
            continue
        attrs[name] = _canon(value, depth - 1, seen)
    return (type(obj).__name__, sorted(attrs.items()))


def _first_difference(a, b, path=""):
    """Where two canonical states first differ (for the assertion message)."""
    if a == b:
        return None
    if type(a) is type(b) and isinstance(a, (tuple, list)) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            named = isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], str)
            found = _first_difference(x, y, path + ("." + x[0] if named else f"[{i}]"))
            if found is not None:
                return found
    return f"{path}: {repr(a)[:300]} != {repr(b)[:300]}"


def _stats(series):
    return sorted((k, v.count) for k, v in series.items())


def _table_state(s):
    """The node table: every attribute (columns byte for byte, indexes), the PodInfos by record."""
    table = s.snapshot.table
    state = _canon(table, depth=2)
    infos = sorted((rec, info.pod.uid, info.pod.node_name) for rec, info in table._pod_infos.items()) \
        if isinstance(table._pod_infos, dict) else [
            (i, None if info is None else (info.pod.uid, info.pod.node_name)) for i, info in enumerate(table._pod_infos)]
    return state, infos


def _full_state(s, seen):
    results = [(r.pod.uid, r.pod.node_name, r.pod.nominated_node_name, r.pod.start_time, r.node_name, r.status,
                r.message, r.attempts, r.bound_at, r.nominated_node_name, r.queued_at, len(r.history),
                r.pod is s.cluster.pods.get(r.pod.uid))
               for r in s.pod_results()]
    pods = sorted(_canon(p) for p in s.cluster.pods.values())
    cache = s.cache
    entries = sorted((uid, st.node_name, st.assumed, st.binding_finished, st.pod is s.cluster.pods.get(uid),
                      _canon(st.pod)) for uid, st in cache._pods.items())
    cached = (entries, cache.assumed_fingerprint, cache.pod_count(), _canon(cache._parked),
              _canon(cache._ghost_pods))
    queue = s.queue
    pending, summary = queue.pending_pods()
    queued = ([p.uid for p in pending], summary, sorted(queue.nominated_node_names()),
              sorted(p.uid for p in queue.in_flight_pods()), len(queue.in_flight_events()),
              queue.scheduling_cycle(), _canon(queue, depth=3), _canon(queue.nominator, depth=3))
    recorder = s.metrics.framework
    metrics = (dict(s.metrics.attempts), len(s.metrics.attempt_latencies), s.metrics.preemption_victims,
               _stats(recorder.extension_point_duration), _stats(recorder.plugin_execution_duration))
    loop = (s._change_seq, s._cycles, dict(s._seq_seen), _canon(s._failures), _canon(s._failed_at),
            s.next_start_node_index, s.rng.bit_generator.state, s.clock.now())
    return {"results": results, "pods": pods, "cache": cached, "table": _table_state(s), "queue": queued,
            "metrics": metrics, "loop": loop, "bound": list(seen)}


def _watch(s, seen):
    """A bound callback recording what the scheduler looks like when it is called: a step left
    after the callbacks (or one done before the result is written) shows."""
    def cb(r):
        seen.append((r.pod.uid, r.node_name, r.status, r.message, r.bound_at, s.cache.pod_count(),
                     dict(s.metrics.attempts), s._change_seq, s.snapshot.table.version,
                     len(s.queue.in_flight_pods()), r.pod.uid in s.cluster.pods))
    s.bound_callbacks.append(cb)


def _counting(s):
    """Count the attempts that end in the idle or the collapsed binding cycle (the compiled and
    idle paths)."""
    s.served = 0
    for name in ("_idle_binding_cycle", "_collapsed_binding_cycle"):
        if hasattr(type(s), name):
            # (the class's method: not a fork's copy of its origin's wrapper)
            setattr(s, name, _counted(s, getattr(type(s), name).__get__(s)))
    return s


def _counted(s, inner):
    def counted(*args):
        s.served += 1
        return inner(*args)
    return counted


class _CountingCommit:
    """``Scheduler._bind_commit`` counting the commits it made (the compiled one's ``commit`` is a
    method of a compiled class: the class's instance is replaced, not patched)."""

    def __init__(self, inner):
        self.inner, self.done, self.placed = inner, 0, 0

    def commit(self, *args):
        ok = self.inner.commit(*args)
        self.done += bool(ok)
        if len(args) > 9:  # from the placement (_commit_placed passes the next start index)
            self.placed += bool(ok)
        return ok

    def commit_run(self, *args):
        # (the pods released at Permit: not the collapsed path's commits counted here)
        return self.inner.commit_run(*args)


@contextlib.contextmanager
def _commits_counted():
    inner = Scheduler._bind_commit
    Scheduler._bind_commit = counting = _CountingCommit(inner)
    try:
        yield counting
    finally:
        Scheduler._bind_commit = inner


def _configure(s, path):
    s.use_compiled_binding, s.use_idle_binding, s.use_bind_commit, s.use_placed_commit = PATHS[path]
    return _counting(s)


def _compare(build, drive, *, served=True, generic=True, committed=True):
    """``build()`` a scheduler per path, ``drive(s, seen)`` it (``seen``: the callbacks' log, for
    the state), and compare every path's full state with the generic path's."""
    states, counts, commits, placed = {}, {}, {}, {}
    for path in PATHS:
        s = _configure(build(), path)
        seen = []
        _watch(s, seen)
        with _commits_counted() as counter:
            drive(s, seen, path)
        commits[path], placed[path] = counter.done, counter.placed
        states[path] = _full_state(s, seen)
        # (a pod bound from its placement skips the binding cycles _counting counts)
        counts[path] = (s.served + counter.placed, s._cycles)
    for path in ("compiled", "committed", "collapsed", "idle"):
        for key in states["generic"]:
            assert states[path][key] == states["generic"][key], (
                path, key, _first_difference(states[path][key], states["generic"][key]))
    assert counts["generic"][0] == 0
    assert commits["collapsed"] == commits["idle"] == commits["generic"] == 0, commits
    assert placed["committed"] == 0, placed
    if served:
        assert counts["compiled"][0] > 0, counts
        if committed:
            assert commits["compiled"] > 0 and commits["committed"] > 0, commits
            assert placed["compiled"] > 0, placed
    if generic:
        assert counts["compiled"][0] < counts["compiled"][1], counts
    return counts, states


def _mixed_workload(seed, n=70):
    """Random pods (ports, nodeName, selectors, affinity, ...) with gated pods, pods that fit nowhere
    and high-priority pods that preempt (their next attempt runs with a nomination)."""
    rng = random.Random(seed * 17 + 1)
    pods = []
    for i in range(n):
        x = rng.random()
        if x < 0.06:
            pods.append(make_pod(f"gated-{i}", cpu="100m", schedulingGates=[{"name": "example.com/wait"}]))
        elif x < 0.12:
            pods.append(make_pod(f"vip-{i}", cpu=rng.choice(("6", "12")), memory="1Gi", priority=1000))
        elif x < 0.15:
            pods.append(make_pod(f"huge-{i}", cpu="500"))
        elif x < 0.22:
            app = f"app{i % 3}"
            pods.append(make_pod(f"follower-{i}", cpu="100m", affinity={"podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}]}}))
        elif x < 0.27:
            pods.append(make_pod(f"leader-{i}", cpu="100m", labels={"app": f"app{i % 3}"}))
        else:
            pods.append(random_pod(rng, i))
    return pods


def _random_build(seed, sampled=False):
    def build():
        s = Scheduler(load_config(V1), seed=seed)
        s.add(RANDOM_RUNTIME_CLASS)  # (random_pod's pods with an overhead name it)
        nodes, running = random_cluster(seed, 24, 60)
        s.add_nodes(nodes)
        s.add_pods(running)
        s.add_pods(_mixed_workload(seed))
        if sampled:
            s._cycles = 7  # another phase of the 10% plugin-metrics sampling
        return s
    return build


def _mutating_callbacks(s, seed):
    """Bound callbacks that change the cluster mid-run: every 7th bound pod deletes an earlier bound
    pod, every 11th adds a node, every 13th adds a pod and activates the gated ones' neighbours,
    the 17th deletes a node."""
    rng = random.Random(seed)
    bound = []

    def cb(r):
        bound.append(r.pod.uid)
        n = len(bound)
        if n % 7 == 0 and len(bound) > 3:
            victim = s.cluster.pods.get(bound[rng.randrange(len(bound) - 1)])
            if victim is not None:
                s.delete_pod(victim)
        if n % 11 == 0:
            s.add_node(make_node(f"late-{n}", cpu="4", memory="8Gi"))
        if n % 13 == 0:
            s.add_pod(make_pod(f"late-pod-{n}", cpu="200m"))
            s.activate({})
        if n == 17:
            s.delete_node(sorted(s.snapshot.table.row_of)[0])
    s.bound_callbacks.append(cb)


@pytest.mark.parametrize("seed,sampled", [(21, False), (22, True)])
def test_random_clusters(seed, sampled):
    def drive(s, seen, path):
        _mutating_callbacks(s, seed)
        s.run()

    served, cycles = _compare(_random_build(seed, sampled), drive)[0]["compiled"]
    assert served > 20


def test_more_nodes_than_the_feasible_nodes_to_find():
    """150 nodes: each cycle examines ~100 of them (numFeasibleNodesToFind), so the next start
    index moves by what the placement examined, which a pod bound from its placement (step 5)
    leaves before its commit (the mutant passing the index unmoved fails here: results)."""
    def build():
        s = Scheduler(load_config(V1), seed=41)
        nodes, running = random_cluster(41, 30, 40)  # (nodes few pods fit, some running pods)
        s.add_nodes(nodes + [make_node(f"wide-{i}", cpu="8", memory="16Gi") for i in range(120)])
        s.add_pods(running)
        s.add_pods(_mixed_workload(41, 40))
        return s

    def drive(s, seen, path):
        s.run()
        seen.append(("start", s.next_start_node_index))

    _compare(build, drive)


def test_fork_mid_run():
    """A fork taken mid-run, both sides run on (the fork gets more pods): each side's state is the
    same on every path, and the origin's is an unforked twin's."""
    def drive(s, seen, path):
        s.run(max_attempts=40)
        f = _configure(s.fork(), path)
        f.add_pods([make_pod(f"fork-{i}", cpu="150m") for i in range(15)])
        f.run()
        s.run()
        seen.append(("fork", _full_state(f, [])))

    _compare(_random_build(31), drive)

    def twin(s, seen, path):
        s.run(max_attempts=40)
        s.run()

    forked, plain = [], []
    for log, drive_ in ((forked, drive), (plain, twin)):
        s = _configure(_random_build(31)(), "compiled")
        drive_(s, log, "compiled")
        log.append(_full_state(s, []))
    for log in (forked, plain):  # the table's columns and indexes by content: a fork wraps the
        (table, infos) = log[-1]["table"]  # ones it shares (copy on write), the origin too
        log[-1]["table"] = ([(k, v) for k, v in table[1] if k not in ("_shared", "label_values") and not (
            isinstance(v, tuple) and v and v[0] in ("ndarray", "_SharedValues", "_Values"))]
                            + [(k, v) for k, v in table[1] if isinstance(v, tuple) and v and v[0] == "ndarray"], infos)
    for key in plain[-1]:
        assert forked[-1][key] == plain[-1][key], (key, _first_difference(forked[-1][key], plain[-1][key]))


def test_transaction_rolled_back_mid_run():
    def drive(s, seen, path):
        s.run(max_attempts=30)
        with s.transaction():
            s.add_pods([make_pod(f"tx-{i}", cpu="300m") for i in range(10)])
            s.run(max_attempts=25)
        s.run()

    _compare(_random_build(41), drive)


def test_records_switched_on_for_part_of_the_run():
    def drive(s, seen, path):
        s.run(max_attempts=30)
        s.record_mode = "all"
        s.run(max_attempts=20)
        s.record_mode = None
        s.run()

    _compare(_random_build(51), drive)


def test_storage_pods():
    """Pods with volumes (VolumeBinding's Reserve and PreBind work) beside plain pods."""
    def build():
        sc = storage_check_scenario(7, nodes=14, claims=40, pvs=30)
        s = Scheduler(load_config(V1), seed=7)
        s.add(sc.objects)
        s.add_nodes(sc.nodes)
        s.add_pods(sc.running)
        s.add_pods(sc.incoming + [make_pod(f"plain-{i}", cpu="50m") for i in range(20)])
        return s

    _, states = _compare(build, lambda s, seen, path: s.run())
    # pods with claims bound too (their Reserve and PreBind read their PreFilter's state)
    assert sum(r[5] == "Scheduled" and not r[6].startswith("Successfully assigned default/plain-")
               for r in states["generic"]["results"]) > 5


def test_device_pods():
    """Pods with ResourceClaims (DynamicResources' Reserve and PreBind work) beside plain pods."""
    def build():
        sc = device_check_scenario(11, nodes=12, pods=14)
        s = Scheduler(load_config(V1), seed=11)
        s.add(sc.objects)
        s.add_nodes(sc.nodes)
        s.add_pods(sc.incoming + [make_pod(f"plain-{i}", cpu="50m") for i in range(10)])
        return s

    _, states = _compare(build, lambda s, seen, path: s.run())
    assert sum(r[5] == "Scheduled" and not r[6].startswith("Successfully assigned default/plain-")
               for r in states["generic"]["results"]) > 3


def _custom(plugins, pods):
    def build():
        cfg = load_config({**V1, "profiles": [
            {"schedulerName": "default-scheduler"},
            {"schedulerName": "custom", "plugins": plugins}]}, registry_names=["Waiter", "FlakyBinder"])
        s = Scheduler(cfg, seed=5, registry=Registry({"Waiter": lambda a, h: Waiter(),
                                                      "FlakyBinder": lambda a, h: FlakyBinder()}))
        s.add_nodes([make_node(f"n{i}", cpu="8", memory="16Gi") for i in range(8)])
        s.add_pods(pods)
        return s
    return build


def test_permit_waits_and_a_failing_binder_beside_the_default_profile():
    """A Permit plugin that waits and a binder that fails, in a second profile: the default
    profile's pods take the path while the others are in flight or backing off."""
    permit = [make_pod(("wait-" if i % 4 == 0 else "p-") + str(i), cpu="300m", schedulerName="custom")
              for i in range(16)]
    plain = [make_pod(f"d-{i}", cpu="200m") for i in range(24)]
    _compare(_custom({"permit": {"enabled": [{"name": "Waiter"}]}}, permit + plain),
             lambda s, seen, path: s.run(until=60.0))
    flaky = [make_pod(f"f-{i}", cpu="300m", schedulerName="custom") for i in range(16)]
    plugins = {"bind": {"enabled": [{"name": "FlakyBinder"}], "disabled": [{"name": "DefaultBinder"}]}}
    _compare(_custom(plugins, flaky + plain), lambda s, seen, path: s.run(until=120.0), generic=False)


class StateReader(ReservePlugin, PostBindPlugin):
    """A Reserve plugin (not idle: it declares nothing) and a PostBind plugin that read what
    VolumeBinding's and DynamicResources' PreFilters wrote; ``seen`` counts the states found."""

    seen = 0

    def name(self):
        return "StateReader"

    def _read(self, state):
        state.read("VolumeBinding")
        state.read("DynamicResources")
        StateReader.seen += 1

    def reserve(self, state, pod, node_name):
        try:
            self._read(state)
        except Exception as e:  # noqa: BLE001
            return Status(Code.ERROR, f"no PreFilter state: {e}")
        return None

    def unreserve(self, state, pod, node_name):
        pass

    def post_bind(self, state, pod, node_name):
        self._read(state)


@pytest.mark.parametrize("point", ["reserve", "postBind"])
def test_plans_whose_state_is_read_keep_the_state_pre_filters(point):
    """Step 1: the compiled cycle skips the state PreFilters only for plans whose binding reads no
    state: a Reserve plugin that is not idle, or a PostBind plugin, gets the PreFilters' state."""
    def build():
        cfg = load_config({**V1, "profiles": [{"schedulerName": "default-scheduler", "plugins": {
            point: {"enabled": [{"name": "StateReader"}]}}}]}, registry_names=["StateReader"])
        s = Scheduler(cfg, seed=6, registry=Registry({"StateReader": lambda a, h: StateReader()}))
        s.add_nodes([make_node(f"n{i}", cpu="8", memory="16Gi") for i in range(6)])
        s.add_pods([make_pod(f"p-{i}", cpu="200m") for i in range(20)])
        return s

    StateReader.seen = 0
    s = build()
    results = s.run()
    assert all(r.status == "Scheduled" for r in results), results[0].message
    assert StateReader.seen == 20
    assert s.profiles["default-scheduler"].compiled_cycle.fused_cycles == 20


def test_the_pod_group_cycle_key():
    from fastsched.runtime import compiled_cycle
    from fastsched.scheduler.schedule_one_podgroup import POD_GROUP_CYCLE_KEY

    assert compiled_cycle._POD_GROUP_CYCLE_KEY == POD_GROUP_CYCLE_KEY


def test_default_plans_skip_the_state_pre_filters():
    from fastsched.runtime.compiled_cycle import _Plan

    s = Scheduler(load_config(V1), seed=6)
    s.add_nodes([make_node(f"n{i}", cpu="8", memory="16Gi") for i in range(6)])
    s.add_pods([make_pod(f"p-{i}", cpu="200m") for i in range(5)])
    s.run()
    engine = s.profiles["default-scheduler"].compiled_cycle
    plans = [p for p in engine._plans.values() if type(p) is _Plan]
    assert plans and all(p.state_plugins and p.stateless_binding for p in plans)


def test_the_stock_binder_failing():
    """``Cluster.bind`` failing (every third call): the compiled path assumes the pod it did not
    assume, then fails its binding cycle as the other paths do (forget, requeue, retry)."""
    def build():
        s = Scheduler(load_config(V1), seed=8)
        s.add_nodes([make_node(f"n{i}", cpu="8", memory="16Gi") for i in range(6)])
        s.add_pods([make_pod(f"p-{i}", cpu="300m") for i in range(24)])
        calls = []
        real = s.cluster.bind

        def bind(pod, node_name):
            calls.append(pod.uid)
            if len(calls) % 3 == 0:
                raise RuntimeError("etcd is down")
            return real(pod, node_name)
        s.cluster.bind = bind
        return s

    # (an instance's cluster.bind: the inlined binder, and the compiled commit, are not taken)
    _, states = _compare(build, lambda s, seen, path: s.run(until=120.0), generic=False, committed=False)
    assert states["generic"]["metrics"][0]["error"] > 3


class SkipSetReader(PostBindPlugin):
    """A PostBind plugin that logs the PreBind skip set its CycleState holds (the pre-flights'
    Skip answers, which the idle points and the compiled commit leave without calling them)."""

    def __init__(self, log):
        self.log = log

    def name(self):
        return "SkipSetReader"

    def post_bind(self, state, pod, node_name):
        self.log.append((pod.name, sorted(state.skip_pre_bind_plugins)))


def test_post_bind_sees_the_pre_bind_skip_set():
    """Step 4: the commit leaves the pre-flights' Skip set in the state PostBind gets, as the idle
    and generic paths do."""
    def build():
        cfg = load_config({**V1, "profiles": [{"schedulerName": "default-scheduler", "plugins": {
            "postBind": {"enabled": [{"name": "SkipSetReader"}]}}}]}, registry_names=["SkipSetReader"])
        log = []
        s = Scheduler(cfg, seed=6, registry=Registry({"SkipSetReader": lambda a, h: SkipSetReader(log)}))
        s.add_nodes([make_node(f"n{i}", cpu="8", memory="16Gi") for i in range(4)])
        s.add_pods([make_pod(f"p-{i}", cpu="200m") for i in range(8)])
        s.skip_log = log
        return s

    def drive(s, seen, path):
        s.run()
        seen.extend(s.skip_log)

    _, states = _compare(build, drive, generic=False)
    logged = [e for e in states["generic"]["bound"] if isinstance(e[1], list)]
    assert len(logged) == 8 and all(skipped for _, skipped in logged), logged


def test_without_the_pre_flights():
    """NominatedNodeNameForExpectation off: no pre-flights, so each PreBind plugin's idle Success
    is in the sampled plugin series (Framework.run_idle_points; the commit's branch for it)."""
    def build():
        s = Scheduler(load_config(V1), seed=9, feature_gates={"NominatedNodeNameForExpectation": False})
        s.add_nodes([make_node(f"n{i}", cpu="8", memory="16Gi") for i in range(4)])
        s.add_pods([make_pod(f"p-{i}", cpu="200m") for i in range(12)])
        return s

    _, states = _compare(build, lambda s, seen, path: s.run(), generic=False)
    assert not build()._pre_flights  # (the gate reached the Scheduler)


def test_opportunistic_batching_stores_the_unsigned_pods():
    """OpportunisticBatching on, PodTopologySpread without default constraints (with them the
    profile signs no pod and keeps no batch): the pods some plugin refuses to sign (affinity,
    ports, volumes ...) take the compiled cycle while the batch keeps no candidates, and their
    placement's StoreScheduleResults (``_BatchCycle.store_unsigned``), which a pod bound from its
    placement gets from the commit (step 5) before its first other write; signed pods take the
    plugin calls and leave candidates. The batch's last cycle, attempts and flushes are compared
    at each bound callback and at the end (the mutants skipping ``store_unsigned`` in the kernel,
    or passing it no feasible-node count, fail here: bound)."""
    config = {**V1, "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
        {"name": "PodTopologySpread", "args": {"defaultingType": "List"}}]}]}

    def build():
        s = Scheduler(load_config(config), seed=31, feature_gates={"OpportunisticBatching": True})
        nodes, running = random_cluster(31, 24, 50)
        s.add_nodes(nodes)
        s.add_pods(running)
        pods = _mixed_workload(31, 50)
        spread = [{"maxSkew": 2, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
                   "labelSelector": {"matchLabels": {"app": "spread"}}}]
        for i in range(0, 60, 2):  # unsigned pods (own spread constraints) among the others
            pods.insert(i, make_pod(f"spread-{i}", cpu="100m", labels={"app": "spread"},
                                    topologySpreadConstraints=spread))
        s.add_pods(pods)
        return s

    def drive(s, seen, path):
        (fw,) = s.profiles.values()
        batch = fw.batch
        assert batch is not None

        def log(r):
            seen.append(("batch", r.pod.uid, batch.last_cycle, dict(batch.flushes), list(batch._flush_log)))
        s.bound_callbacks.append(log)
        s.run()
        seen.append(("batch", batch.last_cycle, dict(batch.attempts), dict(batch.flushes), list(batch._flush_log),
                     batch.batched_pods, batch.state is None))

    _compare(build, drive)


def test_the_commits_inlined_calls():
    """The commit's inlined ``DurationSeries.observe`` (the append to the pending array, the fold
    left to the Python call when due), ``BulkPods.has`` and ``KubeObject.key`` against the same
    commit calling them as Python (``bind_commit(inline_calls=False)``): with every extension
    point series filled to just below its fold (``FOLD_EVERY``) after the first pods, each series'
    folded count and pending length, the results and the bulk pods' refusals are the same, and the
    inlined commit makes 4 fewer Python ``observe`` calls per committed pod (Reserve, Permit,
    PreBind, Bind) but the four that fold. Kills: the fold's bound off by one (a series left holding ``FOLD_EVERY``
    pending: counts), the append dropped (counts), the inlined observe never taken (calls). The
    clock's ``VirtualClock.now`` (read as its ``_now``, one call fewer per committed pod), with the
    clock moved off 0: the results' ``bound_at`` and the pods' ``start_time`` are the clock's time
    (kills a time other than ``_now``; the call count kills the inlined read never taken)."""
    import sys

    from fastsched.clock import VirtualClock
    from fastsched.runtime.metrics import FOLD_EVERY, DurationSeries
    from fastsched.scheduler.eventhandlers import EventHandlersMixin
    from fastsched.scheduler.schedule_one import bind_commit

    observe_code = DurationSeries.observe.__code__
    now_code = VirtualClock.now.__code__
    out = {}
    for inline in (True, False):
        s = Scheduler(load_config(V1), seed=12)
        s.add_nodes([make_node(f"n{i}", cpu="8", memory="16Gi") for i in range(4)])
        # (running pods: they go to the bulk columns, whose index the commit asks)
        s.add_pods([make_pod(f"r-{i}", cpu="100m", node_name=f"n{i % 4}") for i in range(12)])
        s.add_pods([make_pod(f"p-{i}", cpu="100m", namespace="ns1" if i % 2 else "default") for i in range(16)])
        s._bind_commit = _CountingCommit(bind_commit(EventHandlersMixin._changed, inline_calls=inline))
        s.run(max_attempts=2)  # (the kept observers exist from here)
        for series in s.metrics.framework._ep.values():
            series._pending.extend([1e-6] * (FOLD_EVERY - 2 - len(series._pending)))
        s._bind_commit.done = 0
        s.clock.advance(37.25)
        calls = [0, 0]

        def count(frame, event, arg):
            if event == "call" and frame.f_code is observe_code:
                calls[0] += 1
            elif event == "call" and frame.f_code is now_code:
                calls[1] += 1
        sys.setprofile(count)
        try:
            results = s.run()
        finally:
            sys.setprofile(None)
        assert s.cache.bulk.n_live  # (the bulk's index was asked)
        series = {k: (v.stats.count, len(v._pending)) for k, v in s.metrics.framework._ep.items()}
        assert all(pending < FOLD_EVERY for _, pending in series.values()), series
        late = [r for r in results if r.bound_at == 37.25]  # (bound after the clock moved)
        assert len(late) >= 10 and all(r.pod.start_time == 37.25 for r in late), len(late)
        out[inline] = (series, [(r.pod.name, r.status, r.node_name, r.message, r.bound_at, r.pod.start_time)
                                for r in results], s._bind_commit.done, calls[0], calls[1])
    assert out[True][:3] == out[False][:3]
    assert out[False][4] - out[True][4] == out[True][2], (out[False][4], out[True][4], out[True][2])
    assert out[True][2] >= 10, out[True][2]
    # (each of the four series folds once, at its FOLD_EVERY-th observation: a Python call)
    assert out[False][3] - out[True][3] == 4 * out[True][2] - 4, (out[False][3], out[True][3], out[True][2])
    assert any(" ns1/p-" in r[3] for r in out[True][1]) and any(" default/p-" in r[3] for r in out[True][1])


def test_the_commits_pod_info_and_pod_state_built_in_place():
    """The commit's ``PodInfo(pod)`` and ``_PodState(pod, host)`` built slot by slot (without their
    ``__init__`` frames) against the class calls (``bind_commit(inline_calls=False)``): every
    table PodInfo holds the cluster's pod, its ``requests`` and ``non_zero_requests`` (the very
    objects), every cache entry is a ``_PodState`` of the pod on its node, neither assumed nor
    finished, and the states are equal; the inlined commit makes no ``PodInfo.__init__`` or
    ``_PodState.__init__`` call for the pods it commits. Kills: a slot given another field's value
    (the requests swapped, the node name, the flags), the inlined build never taken (calls)."""
    import sys

    from fastsched.framework.types import PodInfo
    from fastsched.scheduler.cache import _PodState
    from fastsched.scheduler.eventhandlers import EventHandlersMixin
    from fastsched.scheduler.schedule_one import bind_commit

    codes = {PodInfo.__init__.__code__: 0, _PodState.__init__.__code__: 1}
    out = {}
    for inline in (True, False):
        s = Scheduler(load_config(V1), seed=5)
        s.add_nodes([make_node(f"n{i}", cpu="8", memory="16Gi") for i in range(4)])
        # (requests and non-zero requests differ: a pod without a memory request)
        s.add_pods([make_pod(f"p-{i}", cpu=f"{100 + i}m") for i in range(12)])
        s._bind_commit = _CountingCommit(bind_commit(EventHandlersMixin._changed, inline_calls=inline))
        calls = [0, 0]

        def count(frame, event, arg):
            if event == "call" and frame.f_code in codes:
                calls[codes[frame.f_code]] += 1
        sys.setprofile(count)
        try:
            s.run()
        finally:
            sys.setprofile(None)
        assert s._bind_commit.done == 12
        pods = s.cluster.pods
        infos = [i for i in s.snapshot.table._pod_infos if i is not None] \
            if not isinstance(s.snapshot.table._pod_infos, dict) else list(s.snapshot.table._pod_infos.values())
        assert len(infos) == 12
        for info in infos:
            assert type(info) is PodInfo and info.pod is pods.get(info.pod.uid)
            assert info.requests is info.pod.requests and info.non_zero_requests is info.pod.non_zero_requests
            assert info.requests != info.non_zero_requests
        states = s.cache._pods
        assert len(states) == 12
        for uid, st in states.items():
            assert type(st) is _PodState and st.pod is pods.get(uid)
            assert st.node_name == st.pod.node_name and st.node_name.startswith("n")
            assert st.assumed is False and st.binding_finished is False
        out[inline] = (_full_state(s, []), sorted((i.pod.uid, dict(i.requests), dict(i.non_zero_requests))
                                                  for i in infos), calls)
    assert out[True][:2] == out[False][:2]
    assert out[True][2] == [0, 0] and out[False][2] == [12, 12], out


def test_the_commit_skips_assigned_pod_added_by_the_memo():
    """With nothing unschedulable and no other pod in flight, the commit finds the AssignedPodAdd
    event's interest in the queue's memo by the event's id and calls no
    ``PriorityQueue.assigned_pod_added``; with a pod left unschedulable the call is made for each
    commit (the pods it may move). Kills: the memo looked up under another key (calls made for
    every commit) and the unschedulable pods' test dropped (no call)."""
    import sys

    from fastsched.scheduler.backend.queue.scheduling_queue import PriorityQueue
    from fastsched.scheduler.eventhandlers import EventHandlersMixin
    from fastsched.scheduler.schedule_one import bind_commit

    code = PriorityQueue.assigned_pod_added.__code__
    for unschedulable in (False, True):
        s = Scheduler(load_config(V1), seed=3)
        s.add_nodes([make_node(f"n{i}", cpu="8", memory="16Gi") for i in range(4)])
        # (the queue memoizes the event's interest by id at its second MoveAll: from here)
        s.add_pods([make_pod(f"warm-{i}", cpu="100m") for i in range(3)])
        s.run()
        assert s.queue._event_of_interest_by_id
        if unschedulable:
            s.add_pods([make_pod("huge", cpu="64")])
            s.run()
            assert len(s.queue._unschedulable_pods) == 1
        s.add_pods([make_pod(f"p-{i}", cpu="100m") for i in range(10)])
        s._bind_commit = _CountingCommit(bind_commit(EventHandlersMixin._changed))
        calls = [0]

        def count(frame, event, arg):
            if event == "call" and frame.f_code is code:
                calls[0] += 1
        sys.setprofile(count)
        try:
            s.run()
        finally:
            sys.setprofile(None)
        assert s._bind_commit.done == 10
        assert calls[0] == (10 if unschedulable else 0), (unschedulable, calls)


#: scheduler_perf's volume templates (templates/pv-aws.yaml, pvc.yaml): the pairs are made bound
_PV_TEMPLATE = {"apiVersion": "v1", "kind": "PersistentVolume", "spec": {
    "accessModes": ["ReadOnlyMany"], "awsElasticBlockStore": {"volumeID": "<volume-id>"},
    "capacity": {"storage": "1Gi"}, "persistentVolumeReclaimPolicy": "Retain"}}
_PVC_TEMPLATE = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                 "metadata": {"annotations": {"pv.kubernetes.io/bind-completed": "true"}},
                 "spec": {"accessModes": ["ReadOnlyMany"], "resources": {"requests": {"storage": "1Gi"}}}}


def _bound_claims_build(seed, *, failing_writes=0, failing_binds=0, plugins=None):
    """A random storage cluster (claims of every kind, pods with one to three of them) and pods
    whose claims are all bound (scheduler_perf's volume pairs, one to two a pod, some pods with
    an unbound claim beside them), plain pods between. ``failing_writes``: every n-th API write
    of a PV or a claim fails (VolumeBinding's PreBind, after the assume); ``failing_binds``: every
    n-th ``Cluster.bind`` fails; ``plugins``: the default profile's plugins (with the Waiter)."""
    from fastsched.sim.storage import perf_volume_objects

    def build():
        rng = random.Random(seed * 31 + 7)
        sc = storage_check_scenario(seed, nodes=10, claims=30, pvs=24)
        if plugins is None:
            s = Scheduler(load_config(V1), seed=seed)
        else:
            cfg = load_config({**V1, "profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}]},
                              registry_names=["Waiter"])
            s = Scheduler(cfg, seed=seed, registry=Registry({"Waiter": lambda a, h: Waiter()}))
        s.add(sc.objects)
        s.add_nodes(sc.nodes)
        s.add_pods(sc.running)
        pvs, pvcs, volumes = perf_volume_objects(_PV_TEMPLATE, _PVC_TEMPLATE, "default", 0, 60)
        for pv, pvc in zip(pvs, pvcs):
            s.add_object(pvc)
            s.add_object(pv)
        loose = [p for p in sc.incoming if p.volumes]
        pods, at = [], 0
        for i in range(40):
            k = rng.choice((1, 1, 2))
            mounted = [dict(v) for v in volumes[at:at + k]]
            at += k
            name = f"{'wait-' if i % 5 == 0 else ''}bound-{i}"
            if loose and rng.random() < 0.2:  # bound claims beside the volumes of another pod
                mounted += [dict(v, name=f"extra-{j}") for j, v in enumerate(rng.choice(loose).volumes)]
                name = f"mixed-{i}"
            pods.append(make_pod(name, cpu=rng.choice(("100m", "300m", "1")), volumes=mounted))
            if rng.random() < 0.4:
                pods.append(make_pod(f"plain-{i}", cpu="200m"))
        s.add_pods(pods + sc.incoming)
        if failing_writes:
            writes = []
            real_update = s.cluster.update_object

            def update_object(obj):
                if type(obj).__name__ in ("PersistentVolume", "PersistentVolumeClaim"):
                    writes.append(obj.name)
                    if len(writes) % failing_writes == 0:
                        raise RuntimeError("the API server is unavailable")
                return real_update(obj)
            s.cluster.update_object = update_object
        if failing_binds:
            binds = []
            real_bind = s.cluster.bind

            def bind(pod, node_name):
                binds.append(pod.uid)
                if len(binds) % failing_binds == 0:
                    raise RuntimeError("etcd is down")
                return real_bind(pod, node_name)
            s.cluster.bind = bind
        return s
    return build


@pytest.mark.parametrize("seed", [3, 14, 27])
def test_pods_whose_claims_are_all_bound(seed):
    """Pods whose claims are all bound (upstream's AllBound: VolumeBinding's Reserve, PreBind and
    Unreserve have nothing to do, ``VolumeBinding.binding_idle``) take the compiled binding path
    beside pods whose claims VolumeBinding binds, and the runs leave the generic path's state;
    each of them is served by the compiled path (the served attempts drop by as many when
    VolumeBinding judges nothing idle)."""
    from fastsched.plugins.volumebinding import VolumeBinding

    counts, states = _compare(_bound_claims_build(seed), lambda s, seen, path: s.run(until=120.0))
    bound = [r for r in states["generic"]["results"] if r[5] == "Scheduled" and "default/bound-" in r[6]]
    assert len(bound) > 20
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(VolumeBinding, "binding_idle", lambda self, state, pod, node_name: False)
        s = _configure(_bound_claims_build(seed)(), "compiled")
        s.run(until=120.0)
    assert counts["compiled"][0] - s.served >= len(bound), (counts["compiled"], s.served, len(bound))


@pytest.mark.parametrize("seed", [5, 8])
def test_pods_with_bound_claims_beside_failing_volume_writes(seed):
    """VolumeBinding's PreBind failing after the assume (every 3rd API write of a PV or claim
    raises) for the pods whose claims it binds, beside pods with bound claims on the compiled
    path: the failing pods are unreserved, forgotten and requeued as on the generic path."""
    _, states = _compare(_bound_claims_build(seed, failing_writes=3), lambda s, seen, path: s.run(until=120.0))
    assert states["generic"]["metrics"][0]["error"] > 0


@pytest.mark.parametrize("seed", [6, 9])
def test_pods_with_bound_claims_and_the_stock_binder_failing(seed):
    """``Cluster.bind`` failing every 4th call and volume writes every 5th: pods with bound claims
    taken by the idle path (an instance's ``cluster.bind``: no compiled commit) are assumed,
    unreserved (VolumeBinding's Unreserve: nothing to restore), forgotten and requeued as on the
    generic path."""
    _, states = _compare(_bound_claims_build(seed, failing_writes=5, failing_binds=4),
                         lambda s, seen, path: s.run(until=120.0), generic=False, committed=False)
    assert states["generic"]["metrics"][0]["error"] > 3


def test_pods_with_bound_claims_and_a_permit_plugin():
    """A Permit plugin (pods named ``wait-*`` wait, then time out): no pod, bound claims or not,
    takes the idle or compiled path (Framework.idle_binding_at asks no plugin then)."""
    _compare(_bound_claims_build(4, plugins={"permit": {"enabled": [{"name": "Waiter"}]}}),
             lambda s, seen, path: s.run(until=60.0), served=False)


@pytest.mark.parametrize("seed", [3, 11, 14, 27])
def test_pods_with_bound_claims_committed_from_their_placement(seed):
    """Pods whose claims are all bound (their plan's ``idle`` None: VolumeBinding judges per pod and
    node) are bound from the kernel's placement (``CompiledCycle.schedule``'s commit, which asks
    ``Framework.idle_binding_at`` for the chosen node), each of them: the commits made from the
    placement drop by at least as many when VolumeBinding judges nothing idle; every path's
    full state is the generic path's (events, records, API writes, cache and queue)."""
    from fastsched.plugins.volumebinding import VolumeBinding

    counts, states = _compare(_bound_claims_build(seed), lambda s, seen, path: s.run(until=120.0))
    bound = [r for r in states["generic"]["results"] if r[5] == "Scheduled" and "default/bound-" in r[6]]
    assert len(bound) > 20
    placed = {}
    for judged in (True, False):
        with pytest.MonkeyPatch.context() as mp:
            if not judged:
                mp.setattr(VolumeBinding, "binding_idle", lambda self, state, pod, node_name: False)
            s = _configure(_bound_claims_build(seed)(), "compiled")
            with _commits_counted() as counter:
                s.run(until=120.0)
            placed[judged] = counter.placed
            assert _full_state(s, [])["results"] == states["generic"]["results"]
    assert placed[True] - placed[False] >= len(bound), (placed, len(bound))


class _DecliningCommit(_CountingCommit):
    """``Scheduler._bind_commit`` refusing every other commit asked from the placement, as the
    compiled commit does when it writes nothing (returns False): the pod then goes through the
    binding cycle after all, VolumeBinding having judged it idle and left what its Reserve would
    in the state (``Framework.idle_binding_at``)."""

    def __init__(self, inner):
        super().__init__(inner)
        self.asked = self.declined = 0

    def commit(self, *args):
        if len(args) > 9:
            self.asked += 1
            if self.asked % 2:
                self.declined += 1
                return False
        return super().commit(*args)


@pytest.mark.parametrize("seed", [3, 14])
def test_pods_with_bound_claims_whose_placed_commit_declines(seed):
    """A pod with bound claims judged idle for its chosen node whose commit from the placement then
    declines (writes nothing) is bound by the binding cycle instead: every pod's result, the
    claims' and PVs' state, the cache, queue and table end as on the generic path, and the pods
    declined at the placement are still served by the compiled path's other steps."""
    _, states = _compare(_bound_claims_build(seed), lambda s, seen, path: s.run(until=120.0))
    inner = Scheduler._bind_commit
    Scheduler._bind_commit = declining = _DecliningCommit(inner)
    try:
        s = _configure(_bound_claims_build(seed)(), "compiled")
        seen = []
        _watch(s, seen)
        s.run(until=120.0)
    finally:
        Scheduler._bind_commit = inner
    assert declining.declined > 10 and declining.placed > 10, (declining.declined, declining.placed)
    state = _full_state(s, seen)
    for key in states["generic"]:
        assert state[key] == states["generic"][key], (key, _first_difference(state[key], states["generic"][key]))
    # the pods declined at their placement went through the binding cycle's compiled commit
    assert declining.done - declining.placed >= declining.declined, (declining.done, declining.placed)
