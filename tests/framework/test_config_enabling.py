"""fastsched.testing.config_enabling: the default configuration plus one out-of-tree plugin at one
extension point, equal to what the same YAML loads to."""
import pytest

from fastsched import Scheduler, load_config
from fastsched.config import ConfigError, config_to_dict
from fastsched.features import FeatureGates
from fastsched.framework import Code, Status
from fastsched.runtime import Registry
from fastsched.testing import config_enabling, make_node, make_pod


def _yaml(point_set: str, gates=None):
    return load_config(f"""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    plugins:
      {point_set}
""", registry_names=["Mine"], feature_gates=gates)


@pytest.mark.parametrize("kwargs,point_set", [
    ({"point": "filter"}, "filter: {enabled: [{name: Mine}]}"),
    ({"point": "score", "weight": 3}, "score: {enabled: [{name: Mine, weight: 3}]}"),
    ({"point": "bind", "disabled": ("DefaultBinder",)},
     "bind: {enabled: [{name: Mine}], disabled: [{name: DefaultBinder}]}"),
    ({"point": "queueSort", "disabled": ("PrioritySort",)},
     "queueSort: {enabled: [{name: Mine}], disabled: [{name: PrioritySort}]}"),
])
def test_the_configuration_is_the_one_the_same_yaml_loads_to(kwargs, point_set):
    assert config_to_dict(config_enabling("Mine", **kwargs)) == config_to_dict(_yaml(point_set))


def test_feature_gates_decide_the_defaults_as_in_load_config():
    gates = {"GenericWorkload": True}
    got = config_enabling("Mine", "permit", feature_gates=gates)
    assert config_to_dict(got) == config_to_dict(_yaml("permit: {enabled: [{name: Mine}]}", FeatureGates(gates)))
    # the gate changes the default plugin list, so the two differ where it is off
    assert config_to_dict(got) != config_to_dict(config_enabling("Mine", "permit"))


def test_a_wrong_point_is_the_loaders_error_with_its_field_path():
    with pytest.raises(ConfigError, match=r'unknown field "profiles\[0\]\.plugins\.fliter"'):
        config_enabling("Mine", "fliter")


def test_the_plugin_runs_at_its_point_in_a_scheduler():
    class Mine:
        def __init__(self, args, handle):
            pass

        def name(self):
            return "Mine"

        def filter(self, state, pod, node_info):
            if node_info.node().name != "n1":
                return Status(Code.UNSCHEDULABLE, "not n1")
            return None

    s = Scheduler(config_enabling("Mine", "filter"), registry=Registry({"Mine": Mine}))
    s.add_nodes([make_node(f"n{i}") for i in range(3)])
    s.add_pods([make_pod(f"p{i}", cpu="100m") for i in range(5)])
    assert {r.node_name for r in s.run()} == {"n1"}
