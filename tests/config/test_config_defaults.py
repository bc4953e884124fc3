"""Defaulting: the v1.37.2 default configuration, plugin merging and default plugin args
(upstream pkg/scheduler/apis/config/v1/{default_plugins_test.go,defaults_test.go})."""

from __future__ import annotations

import pytest

from fastsched.config import (
    DEFAULT_PLUGINS,
    DefaultPreemptionArgs,
    DynamicResourcesArgs,
    InterPodAffinityArgs,
    KubeSchedulerConfiguration,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    Plugin,
    PluginSet,
    PodTopologySpreadArgs,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
    VolumeBindingArgs,
    default_plugins,
    load_config,
    merge_plugin_set,
    set_defaults,
)

from .helpers import doc, problems

# defaults_test.go (v1.37.2): TestSchedulerDefaults' default profile
DEFAULT_ORDER = [
    ("SchedulingGates", 0),
    ("PrioritySort", 0),
    ("NodeName", 0),
    ("NodeUnschedulable", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0),
    ("NodeVolumeLimits", 0),
    ("VolumeBinding", 0),
    ("VolumeZone", 0),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", 2),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
    ("NodeDeclaredFeatures", 0),
]

DEFAULT_ARGS = [
    ("DefaultPreemption", DefaultPreemptionArgs(10, 100)),
    ("DynamicResources", DynamicResourcesArgs(10.0, 600.0)),
    ("InterPodAffinity", InterPodAffinityArgs(1, False)),
    ("NodeAffinity", NodeAffinityArgs(None)),
    (
        "NodeResourcesBalancedAllocation",
        NodeResourcesBalancedAllocationArgs([ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]),
    ),
    (
        "NodeResourcesFit",
        NodeResourcesFitArgs(
            [], [], ScoringStrategy("LeastAllocated", [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)])
        ),
    ),
    ("PodTopologySpread", PodTopologySpreadArgs([], "System")),
    ("VolumeBinding", VolumeBindingArgs(600, [UtilizationShapePoint(0, 10), UtilizationShapePoint(100, 0)])),
]


def pairs(plugins):
    return [(p.name, p.weight) for p in plugins]


class TestBareConfig:
    def test_scalars(self):
        cfg = load_config()
        assert cfg.parallelism == 16
        assert cfg.percentage_of_nodes_to_score == 0
        assert cfg.pod_initial_backoff_seconds == 1
        assert cfg.pod_max_backoff_seconds == 10
        assert cfg.enable_profiling is True
        assert cfg.enable_contention_profiling is True
        assert cfg.delay_cache_until_active is False
        le = cfg.leader_election
        assert (le.leader_elect, le.lease_duration, le.renew_deadline, le.retry_period) == (True, 15.0, 10.0, 2.0)
        assert (le.resource_lock, le.resource_name, le.resource_namespace) == (
            "leases",
            "kube-scheduler",
            "kube-system",
        )
        cc = cfg.client_connection
        assert (cc.content_type, cc.qps, cc.burst) == ("application/vnd.kubernetes.protobuf", 50.0, 100)
        assert cfg.extenders == []

    def test_single_default_profile(self):
        cfg = load_config()
        assert [p.scheduler_name for p in cfg.profiles] == ["default-scheduler"]
        profile = cfg.profiles[0]
        assert profile.percentage_of_nodes_to_score is None

    def test_default_plugins_as_multi_point(self):
        plugins = load_config().profiles[0].plugins
        assert pairs(plugins.multi_point.enabled) == DEFAULT_ORDER
        assert pairs(DEFAULT_PLUGINS) == DEFAULT_ORDER
        assert plugins.multi_point.disabled == []
        for ep in ("pre_enqueue", "queue_sort", "pre_filter", "filter", "score", "bind"):
            assert getattr(plugins, ep) == PluginSet()

    def test_default_args_in_plugin_name_order(self):
        profile = load_config().profiles[0]
        assert [(pc.name, pc.args) for pc in profile.plugin_config] == DEFAULT_ARGS

    def test_minimal_document_equals_pure_defaults(self):
        assert load_config(doc()) == load_config()

    def test_default_plugins_returns_fresh_copies(self):
        plugins = default_plugins()
        plugins.multi_point.enabled[0].weight = 99
        assert DEFAULT_PLUGINS[0].weight == 0


class TestProfiles:
    def test_single_unnamed_profile_is_default_scheduler(self):
        cfg = load_config(doc(profiles=[{"percentageOfNodesToScore": 30}]))
        assert cfg.profiles[0].scheduler_name == "default-scheduler"
        assert cfg.profiles[0].percentage_of_nodes_to_score == 30

    def test_several_profiles_are_not_named(self):
        assert problems(doc(profiles=[{}, {"schedulerName": "b"}])) == ["profiles[0].schedulerName: Required value"]

    def test_explicit_empty_name_is_kept(self):
        assert problems(doc(profiles=[{"schedulerName": ""}])) == ["profiles[0].schedulerName: Required value"]


class TestMerging:
    def test_disable_one_default_at_multi_point(self):
        profile = load_config(
            doc(profiles=[{"plugins": {"multiPoint": {"disabled": [{"name": "ImageLocality"}]}}}])
        ).profiles[0]
        assert pairs(profile.plugins.multi_point.enabled) == [p for p in DEFAULT_ORDER if p[0] != "ImageLocality"]
        assert pairs(profile.plugins.multi_point.disabled) == [("ImageLocality", 0)]

    def test_disabling_a_plugin_with_args_drops_its_default_args(self):
        profile = load_config(
            doc(profiles=[{"plugins": {"multiPoint": {"disabled": [{"name": "DefaultPreemption"}]}}}])
        ).profiles[0]
        assert "DefaultPreemption" not in [pc.name for pc in profile.plugin_config]

    def test_disabling_at_one_point_keeps_args(self):
        profile = load_config(
            doc(profiles=[{"plugins": {"score": {"disabled": [{"name": "PodTopologySpread"}]}}}])
        ).profiles[0]
        assert "PodTopologySpread" in [pc.name for pc in profile.plugin_config]
        assert pairs(profile.plugins.multi_point.enabled) == DEFAULT_ORDER

    def test_star_disables_every_default(self):
        profile = load_config(
            doc(
                profiles=[
                    {
                        "plugins": {
                            "multiPoint": {
                                "disabled": [{"name": "*"}],
                                "enabled": [
                                    {"name": "PrioritySort"},
                                    {"name": "DefaultBinder"},
                                    {"name": "NodeAffinity"},
                                ],
                            }
                        }
                    }
                ]
            )
        ).profiles[0]
        assert pairs(profile.plugins.multi_point.enabled) == [
            ("PrioritySort", 0),
            ("DefaultBinder", 0),
            ("NodeAffinity", 0),
        ]
        assert pairs(profile.plugins.multi_point.disabled) == [("*", 0)]
        assert [pc.name for pc in profile.plugin_config] == ["NodeAffinity"]

    def test_reenable_with_new_weight_replaces_in_place(self):
        profile = load_config(
            doc(
                profiles=[
                    {
                        "plugins": {
                            "multiPoint": {
                                "enabled": [{"name": "Custom", "weight": 4}, {"name": "NodeAffinity", "weight": 7}]
                            }
                        }
                    }
                ]
            )
        ).profiles[0]
        expected = [(n, 7 if n == "NodeAffinity" else w) for n, w in DEFAULT_ORDER] + [("Custom", 4)]
        assert pairs(profile.plugins.multi_point.enabled) == expected

    def test_user_entries_appended_at_their_point(self):
        profile = load_config(
            doc(profiles=[{"plugins": {"filter": {"enabled": [{"name": "A"}, {"name": "B"}]}}}]),
            registry_names=["A", "B"],
        ).profiles[0]
        assert pairs(profile.plugins.filter.enabled) == [("A", 0), ("B", 0)]
        assert pairs(profile.plugins.multi_point.enabled) == DEFAULT_ORDER

    def test_merge_plugin_set_rules(self):
        default = PluginSet(enabled=[Plugin("A", 1), Plugin("B", 1), Plugin("C", 1)], disabled=[Plugin("Z")])
        custom = PluginSet(enabled=[Plugin("X", 5), Plugin("C", 9), Plugin("X", 6)], disabled=[Plugin("B", 3)])
        merged = merge_plugin_set(default, custom)
        assert pairs(merged.enabled) == [("A", 1), ("C", 9), ("X", 5), ("X", 6)]
        assert pairs(merged.disabled) == [("B", 0), ("Z", 0)]

    def test_merge_plugin_set_star(self):
        default = PluginSet(enabled=[Plugin("A"), Plugin("B")])
        merged = merge_plugin_set(default, PluginSet(enabled=[Plugin("B", 2)], disabled=[Plugin("*")]))
        assert pairs(merged.enabled) == [("B", 2)]


class TestExplicitArgs:
    def test_defaults_applied_inside_explicit_args(self):
        profile = load_config(
            doc(
                profiles=[
                    {
                        "pluginConfig": [
                            {
                                "name": "NodeResourcesFit",
                                "args": {
                                    "scoringStrategy": {
                                        "type": "MostAllocated",
                                        "resources": [{"name": "cpu"}, {"name": "nvidia.com/gpu", "weight": 3}],
                                    }
                                },
                            },
                            {"name": "NodeResourcesBalancedAllocation", "args": {"resources": [{"name": "cpu"}]}},
                            {"name": "PodTopologySpread", "args": {"defaultingType": ""}},
                            {"name": "DefaultPreemption", "args": {"minCandidateNodesAbsolute": 0}},
                        ]
                    }
                ]
            )
        ).profiles[0]
        fit = profile.plugin_args("NodeResourcesFit")
        assert fit.scoring_strategy == ScoringStrategy(
            "MostAllocated", [ResourceSpec("cpu", 1), ResourceSpec("nvidia.com/gpu", 3)]
        )
        assert profile.plugin_args("NodeResourcesBalancedAllocation").resources == [ResourceSpec("cpu", 1)]
        assert profile.plugin_args("PodTopologySpread").defaulting_type == "System"
        assert profile.plugin_args("DefaultPreemption") == DefaultPreemptionArgs(10, 0)
        # Explicit configs come first, defaults for the others are appended in name order.
        assert [pc.name for pc in profile.plugin_config][4:] == [
            "DynamicResources",
            "InterPodAffinity",
            "NodeAffinity",
            "VolumeBinding",
        ]

    def test_strategy_without_resources_gets_default_pair(self):
        args = (
            load_config(
                doc(
                    profiles=[
                        {
                            "pluginConfig": [
                                {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}
                            ]
                        }
                    ]
                )
            )
            .profiles[0]
            .plugin_args("NodeResourcesFit")
        )
        assert args.scoring_strategy.resources == [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]

    def test_in_tree_plugin_config_without_args_gets_defaults(self):
        profile = load_config(doc(profiles=[{"pluginConfig": [{"name": "InterPodAffinity"}]}])).profiles[0]
        assert profile.plugin_args("InterPodAffinity") == InterPodAffinityArgs()

    def test_set_defaults_on_programmatic_config(self):
        cfg = KubeSchedulerConfiguration()
        assert set_defaults(cfg) is cfg
        assert cfg == load_config()


class TestOtherDefaults:
    def test_profiling_off_leaves_contention_off(self):
        cfg = load_config(doc(enableProfiling=False))
        assert (cfg.enable_profiling, cfg.enable_contention_profiling) == (False, False)
        cfg = load_config(doc(enableProfiling=False, enableContentionProfiling=True))
        assert cfg.enable_contention_profiling is True

    def test_zero_values_upstream_treats_as_unset(self):
        cfg = load_config(
            doc(
                leaderElection={"leaseDuration": "0s", "renewDeadline": "0s", "retryPeriod": "0s", "resourceLock": ""},
                clientConnection={"qps": 0, "burst": 0, "contentType": ""},
            )
        )
        le, cc = cfg.leader_election, cfg.client_connection
        assert (le.lease_duration, le.renew_deadline, le.retry_period, le.resource_lock) == (15.0, 10.0, 2.0, "leases")
        assert (cc.qps, cc.burst, cc.content_type) == (50.0, 100, "application/vnd.kubernetes.protobuf")

    def test_explicit_zero_backoff_is_kept(self):
        assert problems(doc(podInitialBackoffSeconds=0, podMaxBackoffSeconds=0)) == [
            "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0"
        ]

    def test_extender_http_timeout_defaults_to_5s(self):
        cfg = load_config(doc(extenders=[{"urlPrefix": "http://e"}, {"urlPrefix": "http://f", "httpTimeout": "30s"}]))
        assert [e.http_timeout for e in cfg.extenders] == [5.0, 30.0]


class _Gates:
    """Gates as upstream's tests set them (featuregatetesting), including values fastsched's
    FeatureGates refuses (it implements GenericWorkload off, DynamicResourceAllocation on)."""

    def __init__(self, **overrides):
        from fastsched.features import DEFAULTS

        self.values = {**DEFAULTS, **overrides}

    def enabled(self, name):
        return self.values[name]


_BASE = [p for p in DEFAULT_ORDER if p[0] not in ("DynamicResources", "NodeDeclaredFeatures")]
_WITH_DRA = [p for p in DEFAULT_ORDER if p[0] != "NodeDeclaredFeatures"]


@pytest.mark.parametrize("name, gates, want", [
    # default_plugins_test.go: TestApplyFeatureGates (v1.37.2)
    ("Feature gate DynamicResourceAllocation disabled",
     _Gates(DynamicResourceAllocation=False, NodeDeclaredFeatures=False), _BASE),
    ("Feature gate DynamicResourceAllocation enabled", _Gates(DynamicResourceAllocation=True), DEFAULT_ORDER),
    ("Feature gate NodeDeclaredFeatures enabled", _Gates(NodeDeclaredFeatures=True), DEFAULT_ORDER),
    ("Feature gate NodeDeclaredFeatures disabled", _Gates(NodeDeclaredFeatures=False), _WITH_DRA),
    ("Feature gate GenericWorkload enabled", _Gates(GenericWorkload=True), DEFAULT_ORDER + [("GangScheduling", 0)]),
    ("Feature gate TopologyAwareWorkloadScheduling enabled",
     _Gates(GenericWorkload=True, TopologyAwareWorkloadScheduling=True),
     DEFAULT_ORDER + [("GangScheduling", 0), ("TopologyPlacementGenerator", 0), ("PodGroupPodsCount", 1)]),
    # applyDeferredPodScheduling: just before NodeResourcesFit
    ("InPlacePodVerticalScalingSchedulerPreemption enabled", _Gates(InPlacePodVerticalScalingSchedulerPreemption=True),
     DEFAULT_ORDER[:7] + [("DeferredPodScheduling", 0)] + DEFAULT_ORDER[7:]),
])
def test_apply_feature_gates(name, gates, want):
    from fastsched.config.defaults import default_plugin_list

    assert pairs(default_plugin_list(gates)) == want
    assert pairs(default_plugins(gates).multi_point.enabled) == want


def test_gated_args_defaults():
    # defaults_test.go: TestPluginArgsDefaults; SetDefaults_VolumeBindingArgs, SetDefaults_DynamicResourcesArgs
    args = VolumeBindingArgs()
    args.set_defaults(feature_gates={"StorageCapacityScoring": False})
    assert args.shape is None
    args.set_defaults()
    assert args == VolumeBindingArgs(600, [UtilizationShapePoint(0, 10), UtilizationShapePoint(100, 0)])
    given = VolumeBindingArgs(shape=[UtilizationShapePoint(0, 0), UtilizationShapePoint(100, 10)])
    given.set_defaults()
    assert given.shape == [UtilizationShapePoint(0, 0), UtilizationShapePoint(100, 10)]
    dra = DynamicResourcesArgs()
    dra.set_defaults(feature_gates=_Gates(DRADeviceBindingConditions=False))
    assert dra.binding_timeout is None
    dra.set_defaults()
    assert dra == DynamicResourcesArgs(10.0, 600.0)
    explicit = DynamicResourcesArgs(binding_timeout=30.0)
    explicit.set_defaults()
    assert explicit.binding_timeout == 30.0


def test_load_config_defaults_for_the_given_gates():
    cfg = load_config(feature_gates={"StorageCapacityScoring": False})
    assert cfg.profiles[0].plugin_args("VolumeBinding") == VolumeBindingArgs(600, None)


def test_workload_points_are_merged_and_named_like_the_others():
    profile = load_config(doc(profiles=[{"plugins": {
        "placementScore": {"enabled": [{"name": "NodeResourcesFit", "weight": 3}]},
        "podGroupPostFilter": {"enabled": [{"name": "DefaultPreemption"}], "disabled": [{"name": "*"}]},
        "placementGenerate": {"disabled": [{"name": "X"}]},
    }}])).profiles[0]
    assert pairs(profile.plugins.placement_score.enabled) == [("NodeResourcesFit", 3)]
    assert pairs(profile.plugins.pod_group_post_filter.enabled) == [("DefaultPreemption", 0)]
    assert pairs(profile.plugins.pod_group_post_filter.disabled) == [("*", 0)]
    assert pairs(profile.plugins.placement_generate.disabled) == [("X", 0)]


def test_a_plugin_only_at_pod_group_post_filter_gets_no_default_args():
    # pluginsNames (v1 defaults.go) reads every point but PodGroupPostFilter
    profile = load_config(doc(profiles=[{"plugins": {
        "multiPoint": {"disabled": [{"name": "*"}], "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}]},
        "podGroupPostFilter": {"enabled": [{"name": "DefaultPreemption"}]},
        "placementScore": {"enabled": [{"name": "NodeResourcesFit"}]},
    }}])).profiles[0]
    assert [pc.name for pc in profile.plugin_config] == ["NodeResourcesFit"]


# pkg/scheduler/apis/config/testing/defaults/defaults.go (v1.37.2): ExpandedPluginsV1, the default
# profile's plugins per extension point after MultiPoint expansion
_PRE_FILTER = ["NodeName", "NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
               "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
               "InterPodAffinity", "DynamicResources", "NodeDeclaredFeatures"]
EXPANDED_PLUGINS_V1 = {
    "pre_enqueue": [("SchedulingGates", 0), ("DynamicResources", 0), ("DefaultPreemption", 0)],
    "queue_sort": [("PrioritySort", 0)],
    "pre_filter": [(n, 0) for n in _PRE_FILTER],
    "filter": [(n, 0) for n in _PRE_FILTER],
    "post_filter": [("DynamicResources", 0), ("DefaultPreemption", 0)],
    "pod_group_post_filter": [("DynamicResources", 0), ("DefaultPreemption", 0)],
    "pre_score": [(n, 0) for n in ("TaintToleration", "NodeAffinity", "NodeResourcesFit", "VolumeBinding",
                                   "PodTopologySpread", "InterPodAffinity", "NodeResourcesBalancedAllocation")],
    "score": [("TaintToleration", 3), ("NodeAffinity", 2), ("NodeResourcesFit", 1), ("VolumeBinding", 1),
              ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("DynamicResources", 2),
              ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1)],
    "reserve": [("VolumeBinding", 0), ("DynamicResources", 0)],
    "pre_bind": [("VolumeBinding", 0), ("DynamicResources", 0)],
    "bind": [("DefaultBinder", 0)],
    "placement_score": [("NodeResourcesFit", 1)],
}
def test_expanded_default_plugins():
    from fastsched.config.types import EXTENSION_POINTS
    from fastsched.scheduler import Scheduler

    listed = Scheduler().profiles["default-scheduler"].list_plugins()
    for point in EXTENSION_POINTS:
        if point == "multi_point":
            continue
        want = EXPANDED_PLUGINS_V1.get(point, [])
        assert pairs(getattr(listed, point).enabled) == want, point
