"""The scheduler with real HTTP extenders configured from YAML (upstream extender semantics)."""
import pytest

from fastsched.extender.testing import ReferenceExtender
from fastsched.scheduler import Scheduler
from fastsched.testing import make_node, make_pod


def config(url, ignorable=False, **verbs):
    fields = {"filterVerb": "filter", "prioritizeVerb": "prioritize", "weight": 1, **verbs}
    lines = "\n".join(f"    {k}: {v}" for k, v in fields.items() if v is not None)
    return f"""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 100
extenders:
  - urlPrefix: "{url}"
    ignorable: {str(ignorable).lower()}
    httpTimeout: 300ms
{lines}
"""


def scheduler(url, n_nodes=4, **kw):
    s = Scheduler(config(url, **kw), seed=1)
    s.add_nodes([make_node(f"node-{i}", cpu="4") for i in range(n_nodes)])
    return s


def test_filter_narrows_and_failed_nodes_reach_the_fit_error():
    with ReferenceExtender(filter_reject={"node-0": "no fpga", "node-1": "no fpga"},
                           filter_unresolvable={"node-2": "wrong rack"}) as ext:
        s = scheduler(ext.url)
        s.add_pod(make_pod("p", cpu="1"))
        (r,) = s.run()
        assert r.node_name == "node-3"
        s.add_pod(make_pod("big", cpu="4"))  # node-3 is now too full; the others are rejected by the extender
        r = s.run()[-1]
        assert r.status == "Unschedulable"
        assert r.message.startswith("0/4 nodes are available: 1 Insufficient cpu, 1 wrong rack, 2 no fpga.")
        # the extender only saw nodes the plugins kept
        sent = [b["Nodes"]["items"] for v, b in ext.requests if v == "filter"]
        assert [i["metadata"]["name"] for i in sent[-1]] == ["node-0", "node-1", "node-2"]


def test_prioritize_changes_the_choice_with_weight_scaling():
    with ReferenceExtender(prioritize_scores={"node-2": 10}) as ext:
        s = scheduler(ext.url, weight=5)
        e = s.explain(make_pod("probe", cpu="1"))
        # the plugins see four equal nodes; the extender's score 10 x weight 5 x (MaxNodeScore /
        # MaxExtenderPriority = 10) = 500 comes on top for node-2
        assert e.total["node-2"] - e.total["node-0"] == 500 and e.best_nodes == ["node-2"]
        s.add_pod(make_pod("p", cpu="1"))
        (r,) = s.run()
        assert r.node_name == "node-2"
        assert "prioritize" in ext.verbs_called()


def test_node_cache_capable_sends_names_only():
    with ReferenceExtender(filter_reject={"node-1": "x"}) as ext:
        s = scheduler(ext.url, nodeCacheCapable="true")
        s.add_pod(make_pod("p"))
        s.run()
        verb, body = ext.requests[0]
        assert verb == "filter" and body["Nodes"] is None and sorted(body["NodeNames"]) == [f"node-{i}" for i in range(4)]


def test_bind_is_delegated_to_the_binder_extender():
    with ReferenceExtender() as ext:
        s = scheduler(ext.url, bindVerb="bind")
        s.add_pod(make_pod("p", uid="uid-p"))
        (r,) = s.run()
        assert r.scheduled and ext.bound == [("default/p", "uid-p", r.node_name)]


def test_managed_resources_decide_interest_and_can_be_ignored_by_the_scheduler():
    with ReferenceExtender(filter_reject={"node-0": "busy fpga"}) as ext:
        cfg = config(ext.url) + """    managedResources:
      - name: example.com/fpga
        ignoredByScheduler: true
"""
        s = Scheduler(cfg, seed=0)
        s.add_nodes([make_node(f"node-{i}") for i in range(2)])  # no node advertises example.com/fpga
        s.add_pods([make_pod("plain"), make_pod("fpga", requests={"example.com/fpga": "1"})])
        plain, fpga = s.run()
        assert plain.scheduled and fpga.scheduled and fpga.node_name == "node-1"
        # only the pod asking for the managed resource was sent to the extender
        assert [b["Pod"]["metadata"]["name"] for v, b in ext.requests if v == "filter"] == ["fpga"]
        args = s.config.profiles[0].plugin_args("NodeResourcesFit")
        assert args.ignored_resources == ["example.com/fpga"]


def test_preempt_verb_is_consulted():
    with ReferenceExtender() as ext:
        s = scheduler(ext.url, n_nodes=1, preemptVerb="preempt")
        s.add_pod(make_pod("low", cpu="4", priority=1, node_name="node-0"))
        s.add_pod(make_pod("vip", cpu="4", priority=100))
        (r,) = s.run()
        assert r.scheduled and "preempt" in ext.verbs_called()
        meta = [b for v, b in ext.requests if v == "preempt"][0]["NodeNameToVictims"]
        assert list(meta) == ["node-0"] and meta["node-0"]["Pods"][0]["metadata"]["name"] == "low"


@pytest.mark.parametrize("n_pods", [1, 3])
@pytest.mark.parametrize("mode", ["refused", "slow", "http500", "garbage", "unknown-node"])
@pytest.mark.parametrize("ignorable", [False, True])
def test_failure_modes(mode, ignorable, n_pods):
    ext = ReferenceExtender(mode="ok" if mode == "refused" else mode, delay=1.0)
    if mode == "refused":
        url = ext.url
        ext._server.server_close()
    else:
        ext.start()
        url = ext.url
    try:
        s = scheduler(url, ignorable=ignorable)
        s.add_pods([make_pod(f"p{i}") for i in range(n_pods)])
        results = s.run()
        assert len(results) == n_pods
        for r in results:
            if ignorable:
                assert r.scheduled and r.attempts == 1, r.message
            else:
                # the extender fails every attempt: retried once after backoff, then settled
                assert r.status == "Error" and r.attempts == 2
                assert {"refused": "failed filter with extender at URL", "slow": "timeout after 0.3s",
                        "http500": "code 500", "garbage": "malformed JSON",
                        "unknown-node": 'claims a filtered node "no-such-node"'}[mode] in r.message
    finally:
        if mode != "refused":
            ext.stop()


def test_explain_consults_the_extenders_as_run_does():
    with ReferenceExtender(filter_reject={"node-0": "no fpga"}, prioritize_scores={"node-2": 10}) as ext:
        s = scheduler(ext.url, n_nodes=3)
        e = s.explain(make_pod("p", cpu="1"))
        key = f"extender {s.extenders[0].name()}"
        assert e.filter["node-0"][key].message() == "no fpga" and "node-0" not in e.feasible
        assert e.filter["node-1"][key] is None
        assert e.scores[key]["node-2"].weighted == 10 * 1 * 10   # score x weight x 100/10
        assert e.best_nodes == ["node-2"]
        s.add_pod(make_pod("p", cpu="1"))
        (r,) = s.run()
        assert r.node_name == "node-2"                             # explain and run() agree


@pytest.mark.parametrize("n_pods", [1, 3, 20])
def test_a_failing_binder_extender_does_not_make_run_spin(n_pods):
    with ReferenceExtender(bind_error="bind refused") as ext:
        s = scheduler(ext.url, bindVerb="bind")
        s.add_pods([make_pod(f"p{i}", cpu="100m") for i in range(n_pods)])
        results = s.run()
        for r in results:
            assert r.status == "Error" and "bind refused" in r.message
            assert r.attempts == 2   # retried once after backoff, then settled
        # each failed bind released its pod: the others saw no committed change, so they settled
        # too (20 pods once called the extender a thousand times in 20 s, never ending)
        assert ext.verbs_called().count("bind") == 2 * n_pods
        assert s.cache.pod_count() == 0


@pytest.mark.parametrize("n_pods", [1, 3, 20])
def test_failing_binder_extender_with_time_running_retries_until_the_end(n_pods):
    with ReferenceExtender(bind_error="bind refused") as ext:
        s = scheduler(ext.url, bindVerb="bind")
        s.add_pods([make_pod(f"p{i}", cpu="100m") for i in range(n_pods)])
        results = s.run(until=60)
        # retried with backoff (1 s doubling to 10 s) for the whole minute, ending as run() does
        assert all(r.status == "Error" and "bind refused" in r.message and 8 <= r.attempts <= 12 for r in results)


def test_an_error_from_a_transient_extender_failure_is_retried_after_backoff():
    with ReferenceExtender(mode="http500") as ext:
        s = scheduler(ext.url)
        s.add_pod(make_pod("p", cpu="1"))
        (r,) = s.run(max_attempts=1)
        assert r.status == "Error"
        ext.mode = "ok"                                       # the extender recovers; the cluster is unchanged
        (r,) = s.run()
        assert r.status == "Scheduled" and r.attempts == 2 and s.clock.now() >= 1.0
