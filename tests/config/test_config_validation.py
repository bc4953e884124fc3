"""Validation: every rule, with its exact message and field path."""

from __future__ import annotations

import pytest

from fastsched.config import (
    ConfigError,
    DefaultPreemptionArgs,
    InterPodAffinityArgs,
    Plugin,
    PluginConfig,
    load_config,
    validate_config,
    validation_errors,
)
from fastsched.plugins import in_tree_registry
from fastsched.runtime import new_framework

from .helpers import doc, problems

REMOVED = (
    'was invalid in version "kubescheduler.config.k8s.io/v1" '
    '(KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")'
)


def one_profile(**profile):
    return doc(profiles=[profile])


class TestTopLevel:
    def test_parallelism(self):
        assert problems(doc(parallelism=0)) == [
            "parallelism: Invalid value: 0: should be an integer value greater than zero"
        ]

    def test_profiles_required(self):
        cfg = load_config()
        cfg.profiles = []
        assert [str(e) for e in validation_errors(cfg)] == ["profiles: Required value"]

    def test_percentage_of_nodes_to_score(self):
        assert problems(doc(percentageOfNodesToScore=101)) == [
            "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"
        ]
        assert problems(doc(profiles=[{"percentageOfNodesToScore": -1}])) == [
            "profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]"
        ]
        load_config(doc(percentageOfNodesToScore=100, profiles=[{"percentageOfNodesToScore": 0}]))

    def test_backoff(self):
        assert problems(doc(podInitialBackoffSeconds=0)) == [
            "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0"
        ]
        assert problems(doc(podInitialBackoffSeconds=5, podMaxBackoffSeconds=1)) == [
            "podMaxBackoffSeconds: Invalid value: 1: must be greater than or equal to PodInitialBackoffSeconds"
        ]
        load_config(doc(podInitialBackoffSeconds=5, podMaxBackoffSeconds=5))

    def test_resource_lock_must_be_leases(self):
        assert problems(doc(leaderElection={"resourceLock": "endpoints"})) == [
            'leaderElection.resourceLock: Invalid value: "endpoints": resourceLock value must be "leases"'
        ]
        load_config(doc(leaderElection={"leaderElect": False, "resourceLock": "endpoints"}))

    def test_leader_election_durations(self):
        assert problems(doc(leaderElection={"leaseDuration": "5s", "renewDeadline": "10s", "retryPeriod": "-1s"})) == [
            'leaderElection.retryPeriod: Invalid value: "-1s": must be greater than zero',
            'leaderElection.leaseDuration: Invalid value: "10s": LeaseDuration must be greater than RenewDeadline',
        ]

    def test_leader_election_names_required(self):
        cfg = load_config()
        cfg.leader_election.resource_name = ""
        cfg.leader_election.resource_namespace = ""
        assert [str(e) for e in validation_errors(cfg)] == [
            'leaderElection.resourceNamespace: Invalid value: "": resourceNamespace is required',
            'leaderElection.resourceName: Invalid value: "": resourceName is required',
        ]

    def test_client_connection_burst(self):
        assert problems(doc(clientConnection={"burst": -1})) == [
            "clientConnection.burst: Invalid value: -1: must be non-negative"
        ]


class TestProfiles:
    def test_scheduler_name_required(self):
        assert problems(doc(profiles=[{"schedulerName": "a"}, {}])) == ["profiles[1].schedulerName: Required value"]

    def test_duplicate_scheduler_name(self):
        assert problems(
            doc(profiles=[{"schedulerName": "foo"}, {"schedulerName": "bar"}, {"schedulerName": "foo"}])
        ) == ['profiles[2].schedulerName: Duplicate value: "foo"']

    def test_only_one_queue_sort(self):
        qs = {"queueSort": {"enabled": [{"name": "PrioritySort"}, {"name": "Other"}]}}
        assert problems(one_profile(plugins=qs)) == [
            "profiles[0].plugins.queueSort.Enabled: Invalid value: 2: only one queue sort plugin can be enabled"
        ]

    def test_queue_sort_same_for_all_profiles(self):
        assert problems(
            doc(
                profiles=[
                    {"schedulerName": "a", "plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}]}}},
                    {"schedulerName": "b"},
                ]
            )
        ) == [
            'profiles[1].plugins.queueSort: Invalid value: {"Enabled":null,"Disabled":null}: '
            "must be the same for all profiles"
        ]

    def test_queue_sort_args_same_for_all_profiles(self):
        def profile(name, x):
            return {
                "schedulerName": name,
                "plugins": {"queueSort": {"enabled": [{"name": "CustomSort"}], "disabled": [{"name": "*"}]}},
                "pluginConfig": [{"name": "CustomSort", "args": {"x": x}}],
            }

        load_config(doc(profiles=[profile("a", 1), profile("b", 1)]))
        assert problems(doc(profiles=[profile("a", 1), profile("b", 2)])) == [
            'profiles[1].pluginConfig.args: Invalid value: {"x":2}: queueSort must be the same for all profiles'
        ]

    def test_removed_plugins_rejected(self):
        assert problems(
            one_profile(
                plugins={"filter": {"enabled": [{"name": "NodePorts"}, {"name": "EBSLimits"}]}},
                pluginConfig=[{"name": "GCEPDLimits", "args": {}}],
            )
        ) == [
            f'profiles[0].plugins.filter.enabled[1]: Invalid value: "EBSLimits": {REMOVED}',
            f'profiles[0].pluginConfig[0]: Invalid value: "GCEPDLimits": {REMOVED}',
        ]

    def test_duplicate_plugin_config(self):
        pc = [{"name": "DefaultPreemption"}, {"name": "DefaultPreemption"}]
        assert problems(one_profile(pluginConfig=pc)) == [
            'profiles[0].pluginConfig[1]: Duplicate value: "DefaultPreemption"'
        ]

    def test_plugin_args_validated(self):
        pc = [
            {"name": "DefaultPreemption", "args": {"minCandidateNodesPercentage": 101}},
            {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": -1}},
        ]
        assert problems(one_profile(pluginConfig=pc)) == [
            "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 101: "
            "not in valid range [0, 100]",
            "profiles[0].pluginConfig[1].args.hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]",
        ]

    def test_node_resources_fit_args_not_validated_here(self):
        # Upstream keys this validator "NodeResourcesFitArgs", so config validation skips it.
        pc = [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Foo"}}}]
        args = load_config(one_profile(pluginConfig=pc)).profiles[0].plugin_args("NodeResourcesFit")
        assert [str(e) for e in args.validate()] == [
            'scoringStrategy.type: Unsupported value: "Foo": supported values: '
            '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'
        ]

    def test_args_of_the_wrong_type(self):
        cfg = load_config()
        profile = cfg.profiles[0]
        profile.plugin_config = [PluginConfig("InterPodAffinity", {"hardPodAffinityWeight": 5})]
        assert [str(e) for e in validation_errors(cfg)] == [
            'profiles[0].pluginConfig[0].args: Invalid value: {"hardPodAffinityWeight":5}: has to match plugin args'
        ]
        profile.plugin_config = [PluginConfig("InterPodAffinity", InterPodAffinityArgs(5))]
        assert validation_errors(cfg) == []


class TestWeights:
    def test_weight_outside_int32_in_yaml(self):
        score = {"score": {"enabled": [{"name": "NodeAffinity", "weight": 2**31}]}}
        assert problems(one_profile(plugins=score)) == [
            "profiles[0].plugins.score.enabled[0].weight: json: cannot unmarshal number 2147483648 into Go struct "
            "field Plugin.profiles.plugins.score.enabled.weight of type int32"
        ]

    def test_weight_outside_int32_in_python(self):
        cfg = load_config()
        cfg.profiles[0].plugins.multi_point.enabled.append(Plugin("ImageLocality", -(2**31) - 1))
        assert [str(e) for e in validation_errors(cfg)] == [
            "profiles[0].plugins.multiPoint.enabled[20].weight: Invalid value: -2147483649: "
            "not in valid range [-2147483648, 2147483647]"
        ]

    def test_zero_negative_and_large_weights_are_accepted(self):
        # Upstream has no range rule: 0 means "unset" (the framework scores with 1), negative
        # weights pass validation.
        score = {
            "score": {
                "enabled": [{"name": "NodeAffinity", "weight": -5}, {"name": "ImageLocality", "weight": 2**31 - 1},
                            {"name": "TaintToleration", "weight": 0}]
            }
        }
        profile = load_config(one_profile(plugins=score)).profiles[0]
        assert profile.plugins.score.enabled == [Plugin("NodeAffinity", -5), Plugin("ImageLocality", 2**31 - 1),
                                                 Plugin("TaintToleration", 0)]
        fw = new_framework(in_tree_registry(), profile)
        assert {n: fw.score_plugin_weight[n] for n in ("NodeAffinity", "ImageLocality", "TaintToleration")} == {
            "NodeAffinity": -5, "ImageLocality": 2**31 - 1, "TaintToleration": 1}


class TestUnknownPluginConfig:
    def test_plugin_config_for_unknown_plugin(self):
        assert problems(one_profile(pluginConfig=[{"name": "Foo", "args": {"a": 1}}])) == [
            'profiles[0].pluginConfig[0].name: Invalid value: "Foo": '
            "plugin is neither in-tree, nor registered, nor enabled at any extension point of this profile"
        ]

    def test_registry_names_make_it_known(self):
        profile = load_config(
            one_profile(pluginConfig=[{"name": "Foo", "args": {"a": 1}}]), registry_names=["Foo"]
        ).profiles[0]
        assert profile.plugin_args("Foo") == {"a": 1}

    def test_enabled_plugin_is_known(self):
        profile = load_config(
            one_profile(plugins={"score": {"enabled": [{"name": "Foo"}]}}, pluginConfig=[{"name": "Foo"}])
        ).profiles[0]
        assert Plugin("Foo", 0) in profile.plugins.score.enabled
        assert profile.plugin_args("Foo") is None  # an entry without args

    def test_in_tree_plugin_need_not_be_enabled(self):
        profile = load_config(
            one_profile(
                plugins={"multiPoint": {"disabled": [{"name": "DefaultPreemption"}]}},
                pluginConfig=[{"name": "DefaultPreemption", "args": {}}],
            )
        ).profiles[0]
        assert "DefaultPreemption" not in [p.name for p in profile.plugins.multi_point.enabled]
        assert profile.plugin_args("DefaultPreemption") == DefaultPreemptionArgs()  # {} defaulted


class TestExtenders:
    def test_prioritize_needs_positive_weight(self):
        assert problems(doc(extenders=[{"urlPrefix": "http://e", "prioritizeVerb": "prioritize"}])) == [
            "extenders[0].weight: Invalid value: 0: must have a positive weight applied to it"
        ]
        load_config(doc(extenders=[{"urlPrefix": "http://e", "prioritizeVerb": "prioritize", "weight": 1}]))

    def test_at_most_one_binder(self):
        ext = [{"urlPrefix": "http://a", "bindVerb": "bind"}, {"urlPrefix": "http://b", "bindVerb": "bind"}]
        assert problems(doc(extenders=ext)) == [
            'extenders: Invalid value: "found 2 extenders implementing bind": only one extender can implement bind'
        ]

    def test_managed_resources(self):
        ext = [
            {
                "urlPrefix": "http://a",
                "managedResources": [{"name": "example.com/foo"}, {"name": "foo"}, {"name": "kubernetes.io/x"}],
            },
            {"urlPrefix": "http://b", "managedResources": [{"name": "example.com/foo"}, {"name": "a/b/c"}]},
        ]
        assert problems(doc(extenders=ext)) == [
            'extenders[0].managedResources[1].name: Invalid value: "foo": is an invalid extended resource name',
            'extenders[0].managedResources[2].name: Invalid value: "kubernetes.io/x": '
            "is an invalid extended resource name",
            'extenders[1].managedResources[0].name: Invalid value: "example.com/foo": '
            "duplicate extender managed resource name",
            'extenders[1].managedResources[1].name: Invalid value: "a/b/c": a valid label key must consist of '
            "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
            "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
            "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')",
        ]


class TestAggregate:
    def test_one_error_lists_every_problem_in_upstream_order(self):
        with pytest.raises(ConfigError) as info:
            load_config(
                doc(
                    parallelism=-1,
                    percentageOfNodesToScore=200,
                    podInitialBackoffSeconds=0,
                    profiles=[{"schedulerName": "x"}, {"schedulerName": "x"}],
                )
            )
        assert str(info.value) == (
            "[parallelism: Invalid value: -1: should be an integer value greater than zero, "
            'profiles[1].schedulerName: Duplicate value: "x", '
            "percentageOfNodesToScore: Invalid value: 200: not in valid range [0-100], "
            "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0]"
        )

    def test_validate_config_passes_valid_config(self):
        cfg = load_config()
        assert validation_errors(cfg) == []
        assert validate_config(cfg) is None  # raises ConfigError otherwise

    def test_validate_false_skips_validation(self):
        assert load_config(doc(parallelism=0), validate=False).parallelism == 0


def test_removed_plugins_on_the_workload_points():
    # v1.37.2 validatePluginConfig's stagesToPluginSet has podGroupPostFilter, not the placement points
    plugins = {"podGroupPostFilter": {"enabled": [{"name": "AzureDiskLimits"}]},
               "placementScore": {"enabled": [{"name": "EBSLimits"}]},
               "placementGenerate": {"enabled": [{"name": "GCEPDLimits"}]}}
    assert problems(one_profile(plugins=plugins)) == [
        f'profiles[0].plugins.podGroupPostFilter.enabled[0]: Invalid value: "AzureDiskLimits": {REMOVED}']


def test_dynamic_resources_binding_timeout_in_a_profile():
    args = {"name": "DynamicResources", "args": {"bindingTimeout": "500ms"}}
    assert problems(one_profile(pluginConfig=[args])) == [
        'profiles[0].pluginConfig[0].args.bindingTimeout: Invalid value: "500ms": must be at least 1 second']
