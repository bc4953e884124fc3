"""The idle binding path (issue 29, ``ScheduleOneMixin._idle_binding_cycle``) leaves exactly what the
generic path leaves: the same results, pods, cache, node table, queue, metrics (counts per series:
durations differ) and bound-callback order, on seeded random clusters and workloads that mix pods it
serves with pods it must not (claims, volumes, gates, Permit plugins that wait, failing binders,
preemption nominations, decision records, extenders). ``Scheduler.use_idle_binding = False`` forces
the generic path."""
import random

import pytest

from fastsched import Scheduler, load_config
from fastsched.framework import BindPlugin, Code, PermitPlugin, Status
from fastsched.runtime import Registry
from fastsched.testing import (RANDOM_RUNTIME_CLASS, device_check_scenario, make_node, make_pod, random_cluster, random_pod,
                               storage_check_scenario)

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def _counting(s):
    """Count the attempts that take the idle binding path (on the instance, not the class)."""
    s.idle_bindings = 0
    inner = s._idle_binding_cycle

    def counted(*args):
        s.idle_bindings += 1
        return inner(*args)

    s._idle_binding_cycle = counted
    return s


def _stats(series):
    return sorted((k, v.count) for k, v in series.items())


def _state(s, callbacks):
    """Everything the two paths must leave alike (durations excepted: they are measured)."""
    results = [(r.pod.uid, r.pod.node_name, r.pod.nominated_node_name, r.pod.start_time, r.node_name, r.status,
                r.message, r.attempts, r.bound_at, r.nominated_node_name) for r in s.pod_results()]
    pods = sorted((p.uid, p.node_name, p.nominated_node_name, p.start_time) for p in s.cluster.pods.values())
    cache = (sorted((uid, st.node_name, st.assumed, st.binding_finished, st.pod.start_time)
                    for uid, st in s.cache._pods.items()), s.cache.assumed_fingerprint, s.cache.pod_count())
    table = s.snapshot.table
    rows = []
    for name, row in sorted(table.row_of.items()):
        info = s.snapshot.get(name)
        rows.append((name, [pi.pod.uid for pi in info.pods], dict(info.requested.as_dict())
                     if hasattr(info.requested, "as_dict") else repr(info.requested)))
    queue = s.queue
    pending, summary = queue.pending_pods()
    queued = (sorted(p.uid for p in pending), summary, sorted(queue.nominated_node_names()),
              len(queue.in_flight_pods()), len(queue.in_flight_events()), queue.scheduling_cycle())
    recorder = s.metrics.framework
    metrics = (dict(s.metrics.attempts), len(s.metrics.attempt_latencies), s.metrics.preemption_victims,
               _stats(recorder.extension_point_duration), _stats(recorder.plugin_execution_duration))
    loop = (s._change_seq, s._cycles, s.next_start_node_index, s.rng.bit_generator.state, s.clock.now())
    return {"results": results, "pods": pods, "cache": cache, "table": rows, "queue": queued,
            "metrics": metrics, "loop": loop, "bound": list(callbacks)}


def _compare(build, *, served=True, generic=True, **run):
    """Run ``build(idle)`` twice (idle path on, off) and compare; ``served``/``generic``: whether the
    idle path must have served some / left some attempts."""
    states, counts = [], []
    for idle in (True, False):
        s = build()
        s.use_idle_binding = idle
        s.use_compiled_binding = False  # (its own test: test_compiled_binding.py)
        _counting(s)
        callbacks = []
        s.bound_callbacks.append(lambda r: callbacks.append((r.pod.uid, r.node_name, r.status)))
        s.run(**run)
        states.append(_state(s, callbacks))
        counts.append((s.idle_bindings, s._cycles))
    for key in states[0]:
        assert states[0][key] == states[1][key], key
    (idle_served, cycles), (off_served, _) = counts
    assert off_served == 0
    if served:
        assert idle_served > 0, counts
    else:
        assert idle_served == 0, counts
    if generic:
        assert idle_served < cycles, counts  # some attempts took the generic path
    return counts


def _mixed_workload(seed, n=160):
    """Random pods (ports, nodeName, selectors, ...) with gated pods, pods that fit nowhere and
    high-priority pods that preempt (their next attempt runs with a nomination)."""
    rng = random.Random(seed * 17 + 1)
    pods = []
    for i in range(n):
        x = rng.random()
        if x < 0.08:
            pods.append(make_pod(f"gated-{i}", cpu="100m", schedulingGates=[{"name": "example.com/wait"}]))
        elif x < 0.14:
            pods.append(make_pod(f"vip-{i}", cpu=rng.choice(("6", "12")), memory="1Gi", priority=1000))
        elif x < 0.17:
            pods.append(make_pod(f"huge-{i}", cpu="500"))
        else:
            pods.append(random_pod(rng, i))
    return pods


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
@pytest.mark.parametrize("config", ["default", "sampled", "no-pre-flights"])
def test_random_clusters(seed, config):
    def build():
        gates = {"NominatedNodeNameForExpectation": False} if config == "no-pre-flights" else None
        s = Scheduler(load_config(V1), seed=seed, feature_gates=gates)
        nodes, running = random_cluster(seed, 60, 150)
        s.add_nodes(nodes)
        s.add(RANDOM_RUNTIME_CLASS)  # (random_pod's pods with an overhead name it)
        s.add_pods(running)
        s.add_pods(_mixed_workload(seed))
        if config == "sampled":
            s._cycles = 3  # another phase of the 10% plugin-metrics sampling
        return s

    served, cycles = _compare(build)[0]
    assert served > 30


def test_storage_pods():
    """Pods with claims (VolumeBinding's Reserve and PreBind work, or, every claim bound, the idle
    path: VolumeBinding.binding_idle) beside pods without."""
    def build():
        sc = storage_check_scenario(7, nodes=14, claims=40, pvs=30)
        s = Scheduler(load_config(V1), seed=7)
        s.add(sc.objects)
        s.add_nodes(sc.nodes)
        s.add_pods(sc.running)
        s.add_pods(sc.incoming + [make_pod(f"plain-{i}", cpu="50m") for i in range(20)])
        return s

    _compare(build)


def test_device_claims_take_the_generic_path():
    """Pods with ResourceClaims (DynamicResources' Reserve and PreBind work) beside pods without."""
    def build():
        sc = device_check_scenario(11, nodes=12, pods=14)
        s = Scheduler(load_config(V1), seed=11)
        s.add(sc.objects)
        s.add_nodes(sc.nodes)
        s.add_pods(sc.incoming + [make_pod(f"plain-{i}", cpu="50m") for i in range(10)])
        return s

    _compare(build)


class Waiter(PermitPlugin):
    """Makes pods named ``wait-*`` wait 5 s (then the timeout rejects them); allows the others."""

    def name(self):
        return "Waiter"

    def permit(self, state, pod, node_name):
        return (Status(Code.WAIT), 5.0) if pod.name.startswith("wait-") else (None, 0)


class FlakyBinder(BindPlugin):
    """Fails every third bind call."""

    def __init__(self):
        self.calls = 0

    def name(self):
        return "FlakyBinder"

    def bind(self, state, pod, node_name):
        self.calls += 1
        return Status(Code.ERROR, "etcd is down") if self.calls % 3 == 0 else None


def _custom(plugins, seed=5, pods=None, **kwargs):
    def build():
        cfg = load_config({**V1, "profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}]},
                          registry_names=["Waiter", "FlakyBinder"])
        s = Scheduler(cfg, seed=seed, registry=Registry({"Waiter": lambda a, h: Waiter(),
                                                          "FlakyBinder": lambda a, h: FlakyBinder()}), **kwargs)
        s.add_nodes([make_node(f"n{i}", cpu="8", memory="16Gi") for i in range(8)])
        s.add_pods(pods if pods is not None else
                   [make_pod(("wait-" if i % 4 == 0 else "p-") + str(i), cpu="300m") for i in range(40)])
        return s
    return build


def test_a_permit_plugin_keeps_every_pod_on_the_generic_path():
    _compare(_custom({"permit": {"enabled": [{"name": "Waiter"}]}}), served=False, until=60.0)


def test_bind_failures_on_the_idle_path():
    """A binder that fails: the idle path hands the failure to handleBindingCycleError as the
    generic path does (forget, requeue, retry after backoff)."""
    plugins = {"bind": {"enabled": [{"name": "FlakyBinder"}], "disabled": [{"name": "DefaultBinder"}]}}
    _compare(_custom(plugins, pods=[make_pod(f"p-{i}", cpu="300m") for i in range(40)]), generic=False, until=120.0)


def test_decision_records_keep_the_generic_path():
    def build():
        s = Scheduler(load_config(V1), seed=3, record="all")
        nodes, running = random_cluster(3, 30, 60)
        s.add_nodes(nodes)
        s.add(RANDOM_RUNTIME_CLASS)
        s.add_pods(running)
        s.add_pods([random_pod(random.Random(3), i) for i in range(30)])
        return s

    _compare(build, served=False)


def test_extenders_keep_the_generic_path():
    from fastsched.extender.testing import ReferenceExtender

    with ReferenceExtender() as ext:
        def build():
            cfg = load_config({**V1, "extenders": [{"urlPrefix": ext.url, "filterVerb": "filter",
                                                    "bindVerb": "bind", "weight": 1}]})
            s = Scheduler(cfg, seed=4)
            s.add_nodes([make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(6)])
            s.add_pods([make_pod(f"p-{i}", cpu="100m") for i in range(12)])
            return s

        _compare(build, served=False)


def test_a_bound_pod_requeues_the_pods_it_may_help():
    """Pods with required pod affinity for pods not bound yet wait as unschedulable; the idle path's
    bindings of such pods move them (the queue's AssignedPodAdd), as the generic path's do."""
    def build():
        s = Scheduler(load_config(V1), seed=5)
        s.add_nodes([make_node(f"n{i}", cpu="8", memory="16Gi",
                               labels={"topology.kubernetes.io/zone": f"z{i % 2}"}) for i in range(6)])
        pods = []
        for i in range(6):
            app = f"app{i % 3}"
            pods.append(make_pod(f"follower-{i}", cpu="100m", affinity={"podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "topology.kubernetes.io/zone"}]}}))
            pods.append(make_pod(f"leader-{i}", cpu="100m", labels={"app": app}))
        s.add_pods(pods)
        return s

    _compare(build)
