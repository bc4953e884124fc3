"""A user's plugin, in plain Python, running through a framework built from upstream YAML."""
import pytest

from fastsched import load_config
from fastsched.framework import Code, CycleState, FilterPlugin, ScorePlugin, Status
from fastsched.plugins import in_tree_registry
from fastsched.runtime import FrameworkError, Registry, new_framework
from fastsched.testing import make_node, make_pod
from fastsched.snapshot import build_snapshot

CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: labelled
    plugins:
      multiPoint: {disabled: [{name: '*'}]}      # only what is listed below
      queueSort: {enabled: [{name: PrioritySort}]}
      filter: {enabled: [{name: PreferFast}]}
      score: {enabled: [{name: PreferFast, weight: 3}]}
      bind: {enabled: [{name: DefaultBinder}]}
    pluginConfig:
      - name: PreferFast
        args: {label: speed, wanted: fast}
"""


class PreferFast(FilterPlugin, ScorePlugin):
    """Rejects nodes labelled broken=true; scores nodes whose `label` equals `wanted` 100."""

    def __init__(self, args, handle):
        self.label = args["label"]
        self.wanted = args["wanted"]

    def name(self):
        return "PreferFast"

    def filter(self, state, pod, node_info):
        if node_info.node().labels.get("broken") == "true":
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node is broken")
        return None

    def score(self, state, pod, node_info):
        return (100 if node_info.node().labels.get(self.label) == self.wanted else 0), None


def build():
    cfg = load_config(CONFIG, registry_names=["PreferFast"])
    registry = in_tree_registry()
    registry.merge(Registry({"PreferFast": PreferFast}))
    nodes = [make_node("a", labels={"speed": "slow"}), make_node("b", labels={"speed": "fast"}),
             make_node("c", labels={"speed": "fast", "broken": "true"})]
    snap = build_snapshot(nodes)
    return new_framework(registry, cfg.profile("labelled"), snapshot_shared_lister=snap), snap


def test_user_plugin_filters_and_scores_from_yaml_args():
    fw, snap = build()
    assert [p.name() for p in fw.filter_plugins] == ["PreferFast"]
    assert fw.score_plugin_weight == {"PreferFast": 3}
    pod = make_pod("p")
    state = CycleState()
    verdicts = {v.name: fw.run_filter_plugins(state, pod, v) for v in snap.batch()}
    assert verdicts["a"] is None and verdicts["b"] is None
    assert verdicts["c"].code() == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert verdicts["c"].plugin() == "PreferFast" and verdicts["c"].message() == "node is broken"
    feasible = [v for v in snap.batch() if verdicts[v.name] is None]
    scores, st = fw.run_score_plugins(state, pod, feasible)
    assert st is None
    assert {s.name: s.total_score for s in scores} == {"a": 0, "b": 300}


def test_user_plugin_mixes_with_the_batch_path():
    fw, snap = build()
    res = fw.run_filter_plugins_vectorized(CycleState(), make_pod("p"), snap.batch())
    assert res.feasible().tolist() == [True, True, False]
    assert res.status(2).message() == "node is broken"


def test_unregistered_plugin_fails_with_a_clear_message():
    cfg = load_config(CONFIG, registry_names=["PreferFast"])
    with pytest.raises(FrameworkError, match='^FilterPlugin "PreferFast" does not exist$'):
        new_framework(in_tree_registry(), cfg.profile("labelled"))


EXAMPLES = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - plugins:
      score:
        disabled:
        - name: PodTopologySpread
        enabled:
        - name: MyCustomPluginA
          weight: 2
        - name: MyCustomPluginB
          weight: 1
""", """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
  - schedulerName: no-scoring-scheduler
    plugins:
      preScore:
        disabled:
        - name: '*'
      score:
        disabled:
        - name: '*'
"""


class Custom(ScorePlugin):
    def __init__(self, name):
        self._name = name

    def name(self):
        return self._name

    def score(self, state, pod, node_info):
        return 10, None


def test_first_example_builds_once_custom_plugins_are_registered():
    cfg = load_config(EXAMPLES[0], registry_names=["MyCustomPluginA", "MyCustomPluginB"])
    prof = cfg.profiles[0]
    assert prof.scheduler_name == "default-scheduler"
    with pytest.raises(FrameworkError, match='^ScorePlugin "MyCustomPluginA" does not exist$'):
        new_framework(in_tree_registry(), prof)
    reg = in_tree_registry()
    reg.merge(Registry({"MyCustomPluginA": lambda a, h: Custom("MyCustomPluginA"),
                        "MyCustomPluginB": lambda a, h: Custom("MyCustomPluginB")}))
    fw = new_framework(reg, prof)
    names = [p.name() for p in fw.score_plugins]
    assert "PodTopologySpread" not in names
    assert names[-2:] == ["MyCustomPluginA", "MyCustomPluginB"]
    assert fw.score_plugin_weight["MyCustomPluginA"] == 2 and fw.score_plugin_weight["TaintToleration"] == 3
    assert "PodTopologySpread" in [p.name() for p in fw.filter_plugins]


def test_second_example_gives_a_profile_without_scoring():
    cfg = load_config(EXAMPLES[1])
    assert [p.scheduler_name for p in cfg.profiles] == ["default-scheduler", "no-scoring-scheduler"]
    default = new_framework(in_tree_registry(), cfg.profile("default-scheduler"))
    no_scoring = new_framework(in_tree_registry(), cfg.profile("no-scoring-scheduler"))
    assert len(default.score_plugins) == 9 and default.pre_score_plugins  # v1.37: DynamicResources scores too
    assert no_scoring.score_plugins == [] and no_scoring.pre_score_plugins == []
    assert [p.name() for p in no_scoring.filter_plugins] == [p.name() for p in default.filter_plugins]
