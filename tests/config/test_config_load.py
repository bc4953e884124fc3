"""Loading: sources, strict decoding, apiVersion/kind, durations, typed args, dump/load round trip."""

from __future__ import annotations

import json
import textwrap

import pytest
import yaml

from fastsched.config import (
    ConfigError,
    DynamicResourcesArgs,
    InterPodAffinityArgs,
    NodeResourcesFitArgs,
    PluginSet,
    dump_config,
    load_config,
)

from .helpers import doc, problems

EXAMPLE_1 = textwrap.dedent(
    """\
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
    """
)

EXAMPLE_2 = textwrap.dedent(
    """\
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
)

RICH = textwrap.dedent(
    """\
    apiVersion: kubescheduler.config.k8s.io/v1
    kind: KubeSchedulerConfiguration
    parallelism: 8
    percentageOfNodesToScore: 40
    podInitialBackoffSeconds: 2
    podMaxBackoffSeconds: 20
    enableProfiling: false
    delayCacheUntilActive: true
    leaderElection:
      leaderElect: false
      leaseDuration: 1m30s
    clientConnection:
      kubeconfig: /etc/kube/config
      qps: 25.5
      burst: 50
    profiles:
      - schedulerName: a
        percentageOfNodesToScore: 10
        plugins:
          multiPoint:
            enabled:
            - name: MyPlugin
              weight: 3
          filter:
            disabled:
            - name: NodePorts
        pluginConfig:
          - name: MyPlugin
            args:
              nested: {list: [1, 2], flag: true}
          - name: NodeResourcesFit
            args:
              apiVersion: kubescheduler.config.k8s.io/v1
              kind: NodeResourcesFitArgs
              ignoredResources: [example.com/foo]
              scoringStrategy:
                type: RequestedToCapacityRatio
                resources: [{name: cpu, weight: 2}]
                requestedToCapacityRatio:
                  shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]
          - name: NodeAffinity
            args:
              addedAffinity:
                requiredDuringSchedulingIgnoredDuringExecution:
                  nodeSelectorTerms:
                  - matchExpressions:
                    - {key: zone, operator: In, values: [a, b]}
          - name: PodTopologySpread
            args:
              defaultingType: List
              defaultConstraints:
              - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule}
          - name: DynamicResources
            args: {filterTimeout: 2.5s}
      - schedulerName: b
    extenders:
      - urlPrefix: http://extender
        filterVerb: filter
        prioritizeVerb: prioritize
        weight: 5
        bindVerb: bind
        enableHTTPS: true
        tlsConfig: {insecure: true, serverName: ext, certData: aGVsbG8=}
        httpTimeout: 1m30s
        nodeCacheCapable: true
        managedResources: [{name: example.com/foo, ignoredByScheduler: true}]
        ignorable: true
    """
)


class TestExamples:
    def test_first_example(self):
        cfg = load_config(EXAMPLE_1)
        (profile,) = cfg.profiles
        assert profile.scheduler_name == "default-scheduler"
        score = profile.plugins.score
        assert [p.name for p in score.disabled] == ["PodTopologySpread"]
        assert [(p.name, p.weight) for p in score.enabled] == [("MyCustomPluginA", 2), ("MyCustomPluginB", 1)]
        assert profile.plugins.multi_point == load_config().profiles[0].plugins.multi_point

    def test_second_example(self):
        cfg = load_config(EXAMPLE_2)
        assert [p.scheduler_name for p in cfg.profiles] == ["default-scheduler", "no-scoring-scheduler"]
        default, no_scoring = cfg.profiles
        assert default.plugins == load_config().profiles[0].plugins
        for ep in (no_scoring.plugins.pre_score, no_scoring.plugins.score):
            assert ep.enabled == [] and [p.name for p in ep.disabled] == ["*"]
        assert no_scoring.plugins.multi_point == default.plugins.multi_point
        assert no_scoring.plugin_config == default.plugin_config

    def test_rich_config(self):
        cfg = load_config(RICH)
        assert (cfg.parallelism, cfg.percentage_of_nodes_to_score) == (8, 40)
        assert cfg.leader_election.lease_duration == 90.0 and cfg.leader_election.leader_elect is False
        assert cfg.client_connection.qps == 25.5
        a = cfg.profile("a")
        assert a.plugin_args("MyPlugin") == {"nested": {"list": [1, 2], "flag": True}}
        fit = a.plugin_args("NodeResourcesFit")
        assert isinstance(fit, NodeResourcesFitArgs)
        assert [p.score for p in fit.scoring_strategy.requested_to_capacity_ratio.shape] == [0, 10]
        assert a.plugin_args("NodeAffinity").added_affinity == {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}]
            }
        }
        assert a.plugin_args("PodTopologySpread").default_constraints[0].topology_key == "topology.kubernetes.io/zone"
        assert a.plugin_args("DynamicResources") == DynamicResourcesArgs(2.5, 600.0)  # bindingTimeout defaulted (v1.35+)
        (ext,) = cfg.extenders
        assert ext.http_timeout == 90.0 and ext.tls_config.cert_data == b"hello"
        assert ext.managed_resources[0].ignored_by_scheduler is True


class TestSources:
    def test_path_str_and_pathlike(self, tmp_path):
        f = tmp_path / "sched.yaml"
        f.write_text(EXAMPLE_1)
        assert load_config(str(f)) == load_config(f) == load_config(EXAMPLE_1)

    def test_json_text_bytes_and_dict(self):
        data = yaml.safe_load(EXAMPLE_2)
        expected = load_config(EXAMPLE_2)
        assert load_config(json.dumps(data)) == expected
        assert load_config(EXAMPLE_2.encode()) == expected
        assert load_config(data) == expected
        assert data == yaml.safe_load(EXAMPLE_2)  # the dict is not modified

    def test_missing_file(self, tmp_path):
        with pytest.raises(ConfigError, match="reading .*missing.yaml: No such file or directory"):
            load_config(str(tmp_path / "missing.yaml"))

    def test_unsupported_source(self):
        with pytest.raises(TypeError):
            load_config(42)


class TestDocument:
    def test_bad_yaml_names_the_line(self):
        text = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles: [\n"
        with pytest.raises(ConfigError) as info:
            load_config(text)
        assert str(info.value).startswith("invalid YAML: line 4, column 1: ")
        assert info.value.errors == []

    def test_yaml_mapping_error(self):
        # libyaml's wording, which go-yaml (a port of it) shares: "yaml: line 2: mapping values are
        # not allowed in this context"
        with pytest.raises(
            ConfigError, match=r"^invalid YAML: line 2, column 12: mapping values are not allowed in this context$"
        ):
            load_config("kind: a\nprofiles: b: c\n")

    def test_duplicate_keys(self):
        text = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        text += "parallelism: 1\nparallelism: 2\n"
        # go-yaml names the second value's line (the value starts at column 14)
        with pytest.raises(ConfigError, match='^invalid YAML: line 4, column 14: key "parallelism" already set in map$'):
            load_config(text)

    def test_several_documents(self):
        with pytest.raises(ConfigError, match="expected a single YAML document, found 2"):
            load_config(EXAMPLE_1 + "---\n" + EXAMPLE_2)

    def test_not_a_mapping(self):
        with pytest.raises(ConfigError, match="must be a mapping, got a list"):
            load_config("- a\n- b\n")

    def test_missing_api_version_and_kind(self):
        assert problems("parallelism: 2\n") == [
            'apiVersion: Required value: must be "kubescheduler.config.k8s.io/v1"',
            'kind: Required value: must be "KubeSchedulerConfiguration"',
        ]
        assert problems("") == problems("parallelism: 2\n")

    def test_unknown_api_version(self):
        assert problems(doc(apiVersion="kubescheduler.config.k8s.io/v1beta3")) == [
            'apiVersion: Unsupported value: "kubescheduler.config.k8s.io/v1beta3": '
            'supported values: "kubescheduler.config.k8s.io/v1"'
        ]

    def test_unknown_kind(self):
        assert problems(doc(kind="KubeProxyConfiguration")) == [
            'kind: Unsupported value: "KubeProxyConfiguration": supported values: "KubeSchedulerConfiguration"'
        ]


class TestStrictDecoding:
    def test_unknown_fields_with_paths(self):
        assert problems(
            doc(
                parralelism=4,
                profiles=[
                    {"plugins": {"scor": {}, "filter": {"enable": []}}, "pluginConfig": [{"name": "X", "arg": {}}]}
                ],
                extenders=[{"urlPrefix": "u", "tls": {}}],
            )
        ) == [
            'unknown field "parralelism"',
            'unknown field "profiles[0].plugins.scor"',
            'unknown field "profiles[0].plugins.filter.enable"',
            'unknown field "profiles[0].pluginConfig[0].arg"',
            'unknown field "extenders[0].tls"',
        ]

    def test_field_names_are_case_sensitive(self):
        assert problems(doc(Parallelism=4)) == ['unknown field "Parallelism"']

    def test_unknown_field_in_typed_args(self):
        pc = [
            {"name": "DefaultPreemption", "args": {"minCandidateNodesPercent": 5}},
            {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"resources": [{"name": "cpu", "weigth": 2}]}}},
            {"name": "NodeAffinity", "args": {"addedAffinity": {"requiredDuringScheduling": {}}}},
        ]
        assert problems(doc(profiles=[{"pluginConfig": pc}])) == [
            'unknown field "profiles[0].pluginConfig[0].args.minCandidateNodesPercent"',
            'unknown field "profiles[0].pluginConfig[1].args.scoringStrategy.resources[0].weigth"',
            'unknown field "profiles[0].pluginConfig[2].args.addedAffinity.requiredDuringScheduling"',
        ]

    def test_type_errors(self):
        assert problems(
            doc(
                parallelism="16",
                enableProfiling="yes",
                profiles=[{"plugins": {"score": {"enabled": [{"name": "NodeAffinity", "weight": 1.5}]}}}, "oops"],
            )
        ) == [
            "parallelism: json: cannot unmarshal string into Go struct field KubeSchedulerConfiguration.parallelism "
            "of type int32",
            # (a field of the embedded DebuggingConfiguration: Go's field stack names it)
            "enableProfiling: json: cannot unmarshal string into Go struct field "
            "KubeSchedulerConfiguration.DebuggingConfiguration.enableProfiling of type bool",
            "profiles[0].plugins.score.enabled[0].weight: json: cannot unmarshal number 1.5 into Go struct field "
            "Plugin.profiles.plugins.score.enabled.weight of type int32",
            "profiles[1]: json: cannot unmarshal string into Go struct field KubeSchedulerConfiguration.profiles "
            "of type v1.KubeSchedulerProfile",
        ]

    def test_null_means_unset(self):
        assert load_config(doc(parallelism=None, profiles=None, extenders=None)) == load_config()

    def test_args_kind_must_match_plugin(self):
        pc = [
            {
                "name": "NodeResourcesFit",
                "args": {"kind": "InterPodAffinityArgs", "apiVersion": "kubescheduler.config.k8s.io/v1beta3"},
            }
        ]
        # the decoder's scheme knows no such version (NotRegisteredError, after gvkWithDefaults);
        # a kind it knows that is not the plugin's: decodeNestedObjects' own check
        prefix = "decoding .profiles[0].pluginConfig[0]: "
        assert problems(doc(profiles=[{"pluginConfig": pc}])) == [
            "profiles[0].pluginConfig[0].args.apiVersion: " + prefix + "decoding args for plugin NodeResourcesFit: "
            'no kind "InterPodAffinityArgs" is registered for version "kubescheduler.config.k8s.io/v1beta3" in '
            'scheme "pkg/runtime/scheme.go:111"']
        pc[0]["args"]["apiVersion"] = "kubescheduler.config.k8s.io/v1"
        assert problems(doc(profiles=[{"pluginConfig": pc}])) == [
            "profiles[0].pluginConfig[0].args.kind: " + prefix + "args for plugin NodeResourcesFit were not of type "
            "NodeResourcesFitArgs.kubescheduler.config.k8s.io, got InterPodAffinityArgs.kubescheduler.config.k8s.io"]
        pc[0]["args"] = {"kind": "Foo"}
        assert problems(doc(profiles=[{"pluginConfig": pc}])) == [
            "profiles[0].pluginConfig[0].args.kind: " + prefix + "decoding args for plugin NodeResourcesFit: "
            'no kind "Foo" is registered for version "kubescheduler.config.k8s.io/v1" in scheme '
            '"pkg/runtime/scheme.go:111"']
        pc[0]["args"] = {"apiVersion": "a/b/c"}
        assert problems(doc(profiles=[{"pluginConfig": pc}])) == [
            "profiles[0].pluginConfig[0].args.apiVersion: " + prefix + "decoding args for plugin NodeResourcesFit: "
            "unexpected GroupVersion string: a/b/c"]
        pc[0]["args"] = {"apiVersion": "x/"}
        assert problems(doc(profiles=[{"pluginConfig": pc}])) == [
            "profiles[0].pluginConfig[0].args.apiVersion: " + prefix + "decoding args for plugin NodeResourcesFit: "
            """Object 'apiVersion' is missing in '{"apiVersion":"x/"}'"""]

    def test_args_with_matching_kind(self):
        pc = [
            {
                "name": "InterPodAffinity",
                "args": {
                    "apiVersion": "kubescheduler.config.k8s.io/v1",
                    "kind": "InterPodAffinityArgs",
                    "hardPodAffinityWeight": 7,
                },
            }
        ]
        args = load_config(doc(profiles=[{"pluginConfig": pc}])).profiles[0].plugin_args("InterPodAffinity")
        assert args == InterPodAffinityArgs(7)

    def test_out_of_tree_args_stay_plain(self):
        pc = [{"name": "Custom", "args": {"kind": "Whatever", "anything": [1]}}]
        profile = load_config(doc(profiles=[{"pluginConfig": pc}]), registry_names={"Custom"}).profiles[0]
        assert profile.plugin_args("Custom") == {"kind": "Whatever", "anything": [1]}


class TestUpstreamTypeErrors:
    """A value of the wrong JSON type is refused in the words of the strict JSON decoder
    kube-scheduler loads its file with (apimachinery's serializer/json over sigs.k8s.io/json:
    ``UnmarshalTypeError`` with ``addErrorContext``'s struct and dotted path), after fastsched's
    field path; plugin args are a document of their own (``DecodeNestedObjects``)."""

    def test_integral_float_is_an_integer(self):
        # sigs.k8s.io/yaml turns YAML's 16.0 into JSON's 16
        assert load_config(doc(parallelism=16.0, podMaxBackoffSeconds=20.0)).parallelism == 16

    def test_out_of_range(self):
        assert problems(doc(podInitialBackoffSeconds=2**63, parallelism=-(2**31) - 1)) == [
            "parallelism: json: cannot unmarshal number -2147483649 into Go struct field "
            "KubeSchedulerConfiguration.parallelism of type int32",
            "podInitialBackoffSeconds: json: cannot unmarshal number 9223372036854775808 into Go struct field "
            "KubeSchedulerConfiguration.podInitialBackoffSeconds of type int64",
        ]

    def test_nested_structs_and_lists(self):
        assert problems(doc(
            clientConnection={"qps": "fast", "burst": [1]},
            profiles={"a": 1},
            extenders=[{"urlPrefix": 5, "tlsConfig": 3, "managedResources": {}}],
        )) == [
            "clientConnection.qps: json: cannot unmarshal string into Go struct field "
            "ClientConnectionConfiguration.clientConnection.qps of type float32",
            "clientConnection.burst: json: cannot unmarshal array into Go struct field "
            "ClientConnectionConfiguration.clientConnection.burst of type int32",
            "profiles: json: cannot unmarshal object into Go struct field KubeSchedulerConfiguration.profiles "
            "of type []v1.KubeSchedulerProfile",
            "extenders[0].urlPrefix: json: cannot unmarshal number into Go struct field Extender.extenders.urlPrefix "
            "of type string",
            "extenders[0].tlsConfig: json: cannot unmarshal number into Go struct field Extender.extenders.tlsConfig "
            "of type v1.ExtenderTLSConfig",
            "extenders[0].managedResources: json: cannot unmarshal object into Go struct field "
            "Extender.extenders.managedResources of type []v1.ExtenderManagedResource",
        ]

    def test_plugin_args(self):
        pc = [
            {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": True}},
            {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": 5, "resources": [{"weight": 0.5}]}}},
            {"name": "DefaultPreemption", "args": [1]},
            {"name": "PodTopologySpread", "args": {"kind": 5}},
            {"name": "NodeAffinity", "args": {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": 1}]}]}}}},
        ]
        prefix = "decoding .profiles[0].pluginConfig[{}]: decoding args for plugin {}: "
        meta = "couldn't get version/kind; json parse error: json: cannot unmarshal "
        assert problems(doc(profiles=[{"pluginConfig": pc}])) == [
            "profiles[0].pluginConfig[0].args.hardPodAffinityWeight: " + prefix.format(0, "InterPodAffinity")
            + "json: cannot unmarshal bool into Go struct field InterPodAffinityArgs.hardPodAffinityWeight "
            "of type int32",
            "profiles[0].pluginConfig[1].args.scoringStrategy.type: " + prefix.format(1, "NodeResourcesFit")
            + "json: cannot unmarshal number into Go struct field ScoringStrategy.scoringStrategy.type "
            "of type v1.ScoringStrategyType",
            "profiles[0].pluginConfig[1].args.scoringStrategy.resources[0].weight: "
            + prefix.format(1, "NodeResourcesFit") + "json: cannot unmarshal number 0.5 into Go struct field "
            "ResourceSpec.scoringStrategy.resources.weight of type int64",
            "profiles[0].pluginConfig[2].args: " + prefix.format(2, "DefaultPreemption") + meta
            + 'array into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
            'Kind string "json:\\"kind,omitempty\\"" }',
            "profiles[0].pluginConfig[3].args.kind: " + prefix.format(3, "PodTopologySpread") + meta
            + "number into Go struct field .kind of type string",
            "profiles[0].pluginConfig[4].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
            ".nodeSelectorTerms[0].matchExpressions[0].operator: " + prefix.format(4, "NodeAffinity")
            + "json: cannot unmarshal number into Go struct field NodeSelectorRequirement.addedAffinity"
            ".requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.matchExpressions.operator "
            "of type v1.NodeSelectorOperator",
        ]

    def test_numbers_as_encoding_json_writes_them(self):
        from fastsched.config._decode import go_number_text
        assert [go_number_text(v) for v in (1.5, 1e-7, 2.5e21, 1e20, 0.000123, -3)] == [
            "1.5", "1e-7", "2.5e+21", "100000000000000000000", "0.000123", "-3"]

    def test_document_type_meta(self):
        assert problems(doc(kind=5)) == [
            "kind: couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct "
            "field .kind of type string"]

    def test_null_list_elements_are_zero_values(self):
        # encoding/json leaves a null element of a slice at its zero value: an empty profile (then
        # defaulted), an empty string
        cfg = load_config(doc(profiles=[None]))
        assert cfg.profiles[0].scheduler_name == "default-scheduler"
        pc = [{"name": "NodeResourcesFit", "args": {"ignoredResources": [None, "a"]}}]
        # (NodeResourcesFit's args are validated when the plugin is built, as upstream's)
        args = load_config(doc(profiles=[{"pluginConfig": pc}])).profiles[0].plugin_args("NodeResourcesFit")
        assert args.ignored_resources == ["", "a"]


class TestDurations:
    def test_null_duration_that_is_no_pointer(self):
        # metav1.Duration's UnmarshalJSON is called with null for a field that is no pointer: it
        # parses "" (the DynamicResources args' durations are pointers: null leaves them unset)
        assert problems(doc(leaderElection={"leaseDuration": None},
                            extenders=[{"urlPrefix": "http://e", "httpTimeout": None}])) == [
            'leaderElection.leaseDuration: time: invalid duration ""',
            'extenders[0].httpTimeout: time: invalid duration ""',
        ]
        pc = [{"name": "DynamicResources", "args": {"filterTimeout": None}}]
        assert load_config(doc(profiles=[{"pluginConfig": pc}])).profiles[0].plugin_args(
            "DynamicResources").filter_timeout == 10.0

    def test_duration_quoted_as_the_time_package_quotes(self):
        assert problems(doc(leaderElection={"leaseDuration": "\u00fc\n"})) == [
            'leaderElection.leaseDuration: time: invalid duration "\\xc3\\xbc\\x0a"']

    @pytest.mark.parametrize("text, seconds", [("30s", 30.0), ("1m30s", 90.0), ("250ms", 0.25), ("0s", 5.0)])
    def test_extender_http_timeout(self, text, seconds):
        cfg = load_config(doc(extenders=[{"urlPrefix": "http://e", "httpTimeout": text}]))
        assert cfg.extenders[0].http_timeout == seconds

    def test_bad_durations(self):
        assert problems(
            doc(
                extenders=[
                    {"urlPrefix": "http://e", "httpTimeout": "30"},
                    {"urlPrefix": "http://f", "httpTimeout": 30},
                ],
                leaderElection={"leaseDuration": "15 s"},
            )
        ) == [
            # metav1.Duration.UnmarshalJSON: time.ParseDuration's error, or encoding/json's for a
            # value that is no string (it decodes a string first)
            'leaderElection.leaseDuration: time: unknown unit " s" in duration "15 s"',
            'extenders[0].httpTimeout: time: missing unit in duration "30"',
            "extenders[1].httpTimeout: json: cannot unmarshal number into Go struct field "
            "Extender.extenders.httpTimeout of type string",
        ]


class TestDump:
    @pytest.mark.parametrize("source", [None, EXAMPLE_1, EXAMPLE_2, RICH])
    def test_round_trip(self, source):
        cfg = load_config(source, registry_names=["MyPlugin"])
        text = dump_config(cfg)
        again = load_config(text, registry_names=["MyPlugin"])
        assert again == cfg
        assert dump_config(again) == text

    def test_dump_is_v1_yaml(self):
        data = yaml.safe_load(dump_config(load_config(EXAMPLE_2)))
        assert data["apiVersion"] == "kubescheduler.config.k8s.io/v1"
        assert data["kind"] == "KubeSchedulerConfiguration"
        assert data["leaderElection"]["leaseDuration"] == "15s"
        second = data["profiles"][1]
        assert second["schedulerName"] == "no-scoring-scheduler"
        assert second["plugins"]["score"] == {"disabled": [{"name": "*"}]}
        assert second["plugins"]["multiPoint"]["enabled"][4] == {"name": "TaintToleration", "weight": 3}
        assert second["pluginConfig"][0] == {
            "name": "DefaultPreemption",
            "args": {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "DefaultPreemptionArgs",
                "minCandidateNodesPercentage": 10,
                "minCandidateNodesAbsolute": 100,
            },
        }

    def test_dumped_defaults_reload_without_merging_twice(self):
        cfg = load_config()
        assert (
            load_config(dump_config(cfg)).profiles[0].plugins.multi_point.enabled
            == cfg.profiles[0].plugins.multi_point.enabled
        )
        assert cfg.profiles[0].plugins.score == PluginSet()
