"""check_config: a configuration that validates must also build, as the Scheduler builds it."""
from __future__ import annotations

import pytest

from fastsched import check_config
from fastsched.config import ConfigError, dump_config, load_config
from fastsched.runtime import FrameworkError
from fastsched.scheduler import Scheduler

HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

UNKNOWN_PLUGIN = HEAD + """\
profiles:
- schedulerName: default-scheduler
  plugins:
    filter:
      enabled: [{name: NoSuchPlugin}]
"""
NO_BIND = HEAD + """\
profiles:
- schedulerName: default-scheduler
- schedulerName: no-binder
  plugins:
    multiPoint:
      disabled: [{name: DefaultBinder}]
"""
BOGUS_STRATEGY = HEAD + """\
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: Bogus}}
"""
BAD_EXTENDER = HEAD + """\
extenders:
- urlPrefix: "not a url"
  filterVerb: filter
"""

NOT_A_PLACEMENT_SCORER = HEAD + """\
profiles:
- schedulerName: default-scheduler
  plugins:
    placementScore:
      enabled: [{name: NodeAffinity}]
"""
UNKNOWN_GROUP_POST_FILTER = HEAD + """\
profiles:
- schedulerName: default-scheduler
  plugins:
    podGroupPostFilter:
      enabled: [{name: NoSuchPlugin}]
"""

CASES = [
    ("unknown plugin", UNKNOWN_PLUGIN,
     ('profiles[0].plugins.filter.enabled[0].name: profile "default-scheduler": FilterPlugin "NoSuchPlugin" '
      "does not exist")),
    ("no bind plugin", NO_BIND,
     'profiles[1].plugins.bind: at least one bind plugin is needed for profile with scheduler name "no-binder"'),
    ("scoringStrategy Bogus", BOGUS_STRATEGY,
     ('profiles[0].pluginConfig[0].args.scoringStrategy.type: profile "default-scheduler": initializing plugin '
      '"NodeResourcesFit": Unsupported value: "Bogus": supported values: "LeastAllocated", "MostAllocated", '
      '"RequestedToCapacityRatio"')),
    # v1.37's workload-aware points: updatePluginList checks them like the others
    ("placementScore plugin that is no PlacementScorePlugin", NOT_A_PLACEMENT_SCORER,
     ('profiles[0].plugins.placementScore.enabled[0].name: profile "default-scheduler": plugin "NodeAffinity" does '
      'not extend PlacementScorePlugin plugin')),
    ("unknown podGroupPostFilter plugin", UNKNOWN_GROUP_POST_FILTER,
     ('profiles[0].plugins.podGroupPostFilter.enabled[0].name: profile "default-scheduler": PodGroupPostFilterPlugin '
      '"NoSuchPlugin" does not exist')),
    ("extender urlPrefix", BAD_EXTENDER,
     "extenders[0].urlPrefix: extender urlPrefix 'not a url' is not an http(s) URL"),
]


@pytest.mark.parametrize("text, message", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_configs_that_validate_but_cannot_build_are_refused(text, message):
    load_config(text)  # upstream's validation lets them through ...
    with pytest.raises(ConfigError) as built:  # ... and the Scheduler cannot be built from them,
        Scheduler(load_config(text))
    assert str(built.value) == message  # which it says at the field, as the check does
    with pytest.raises(ConfigError) as info:
        check_config(text)
    assert [str(e) for e in info.value.errors] == [message]
    assert info.value.with_source("cfg.yaml").lines() == [f"cfg.yaml: {message}"]


def test_a_profile_that_cannot_be_built_is_still_a_framework_error():
    # what Scheduler raised before it named the field: callers catching FrameworkError still do
    with pytest.raises(FrameworkError) as info:
        Scheduler(load_config(UNKNOWN_PLUGIN))
    assert str(info.value).endswith('FilterPlugin "NoSuchPlugin" does not exist')


def test_what_check_config_accepts_the_scheduler_accepts(tmp_path):
    default = dump_config(load_config(None))
    assert check_config(default) == load_config(None)
    two = HEAD + """\
profiles:
- schedulerName: default-scheduler
- schedulerName: spread
  plugins:
    score:
      enabled: [{name: PodTopologySpread, weight: 5}]
extenders:
- {urlPrefix: "http://127.0.0.1:1/ext", filterVerb: filter}
"""
    cfg = check_config(two)
    sched = Scheduler(cfg)
    assert set(sched.profiles) == {"default-scheduler", "spread"}
    path = tmp_path / "cfg.yaml"
    path.write_text(two)
    assert check_config(path) == cfg


def test_validation_errors_come_before_build_errors():
    text = UNKNOWN_PLUGIN + "parallelism: -1\n"
    with pytest.raises(ConfigError) as info:
        check_config(text)
    assert [e.path for e in info.value.errors] == ["parallelism"]


def test_unknown_plugin_in_multi_point():
    text = HEAD + """\
profiles:
- schedulerName: custom
  plugins:
    multiPoint:
      enabled: [{name: Mystery}]
"""
    with pytest.raises(ConfigError) as info:
        check_config(text)
    (err,) = info.value.errors
    # defaulting puts the default plugins ahead of the file's in multiPoint: the list is named, not an index
    assert err.path == "profiles[0].plugins.multiPoint.enabled" and 'profile "custom"' in str(err)
    assert '"Mystery" does not exist' in str(err)


def test_out_of_tree_plugins_come_from_the_registry():
    from fastsched.framework.interface import FilterPlugin
    from fastsched.framework.status import Status

    class Always(FilterPlugin):
        def name(self):
            return "Always"

        def filter(self, state, pod, node_info):
            return Status()

    text = UNKNOWN_PLUGIN.replace("NoSuchPlugin", "Always")
    with pytest.raises(ConfigError):
        check_config(text)
    cfg = check_config(text, registry={"Always": lambda args, handle: Always()})
    assert [p.name for p in cfg.profiles[0].plugins.filter.enabled] == ["Always"]


def test_unreadable_config_file(tmp_path):
    binary = tmp_path / "config.yaml"
    binary.write_bytes(b"\xff\xfe\x00\x81 binary")
    with pytest.raises(ConfigError, match=r"cannot read '.*config.yaml': not a UTF-8 text file"):
        load_config(binary)
    with pytest.raises(ConfigError, match="not a UTF-8 text file"):
        load_config(b"\xff\xfe\x00\x81")


def test_in_tree_plugins_that_implement_the_workload_points_are_accepted_there():
    # NodeResourcesFit is a PlacementScorePlugin, DefaultPreemption a PodGroupPostFilterPlugin (v1.37.2);
    # with GenericWorkload off nothing runs them, and the configuration is valid, as upstream
    cfg = check_config(HEAD + """\
profiles:
- schedulerName: default-scheduler
  plugins:
    placementScore:
      enabled: [{name: NodeResourcesFit, weight: 2}]
    podGroupPostFilter:
      enabled: [{name: DefaultPreemption}]
""")
    fw = Scheduler(cfg).profiles["default-scheduler"]
    assert fw.placement_score_plugin_weight == {"NodeResourcesFit": 2}
