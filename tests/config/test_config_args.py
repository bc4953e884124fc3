"""Plugin args: decoding, defaults and the validation_pluginargs.go messages."""

from __future__ import annotations

import pytest

from fastsched.config import (
    ARGS_TYPES,
    ConfigError,
    DefaultPreemptionArgs,
    DynamicResourcesArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PodTopologySpreadArgs,
    ResourceSpec,
    ScoringStrategy,
    TopologySpreadConstraint,
    UtilizationShapePoint,
    VolumeBindingArgs,
)

P = "profiles[0].pluginConfig[0].args"
SPREAD_ACTIONS = 'supported values: "DoNotSchedule", "ScheduleAnyway"'


def messages(args, path=P):
    return [str(e) for e in args.validate(path)]


def test_registry_and_kinds():
    assert sorted(ARGS_TYPES) == [
        "DefaultPreemption",
        "DynamicResources",
        "InterPodAffinity",
        "NodeAffinity",
        "NodeResourcesBalancedAllocation",
        "NodeResourcesFit",
        "PodTopologySpread",
        "VolumeBinding",
    ]
    for name, cls in ARGS_TYPES.items():
        assert cls.ARGS_KIND == name + "Args"
        assert cls().validate() == []
        assert cls.from_dict(cls().to_dict()) == cls()


def test_from_dict_is_strict():
    with pytest.raises(ConfigError) as info:
        InterPodAffinityArgs.from_dict({"hardPodAffinityWeight": "x", "bogus": 1}, "args")
    assert [str(e) for e in info.value.errors] == [
        'unknown field "args.bogus"',
        # encoding/json's UnmarshalTypeError: the args' own struct, the path from the args' root
        "args.hardPodAffinityWeight: json: cannot unmarshal string into Go struct field "
        "InterPodAffinityArgs.hardPodAffinityWeight of type int32",
    ]


class TestDefaultPreemption:
    def test_defaults(self):
        assert DefaultPreemptionArgs.from_dict({}) == DefaultPreemptionArgs(10, 100)

    def test_ranges(self):
        assert messages(DefaultPreemptionArgs(-1, -1)) == [
            f"{P}.minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100]",
            f"{P}.minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)",
        ]

    def test_both_zero(self):
        assert messages(DefaultPreemptionArgs(0, 0)) == [
            f"{P}.minCandidateNodesPercentage: Invalid value: 0: "
            "cannot be zero at the same time as minCandidateNodesAbsolute",
            f"{P}.minCandidateNodesAbsolute: Invalid value: 0: "
            "cannot be zero at the same time as minCandidateNodesPercentage",
        ]


class TestInterPodAffinity:
    def test_defaults_and_range(self):
        assert InterPodAffinityArgs.from_dict({}) == InterPodAffinityArgs(1, False)
        assert messages(InterPodAffinityArgs(101)) == [
            f"{P}.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"
        ]
        assert messages(InterPodAffinityArgs(0)) == []


class TestNodeResourcesFit:
    def test_defaults(self):
        args = NodeResourcesFitArgs.from_dict({})
        assert args.scoring_strategy == ScoringStrategy(
            "LeastAllocated", [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]
        )

    def test_weight_zero_defaults_to_one(self):
        args = NodeResourcesFitArgs.from_dict(
            {"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 0}]}}
        )
        args.set_defaults()
        assert args.scoring_strategy.resources == [ResourceSpec("cpu", 1)]

    def test_nil_strategy_defaults(self):
        args = NodeResourcesFitArgs(scoring_strategy=None)
        args.set_defaults()
        assert args.scoring_strategy == NodeResourcesFitArgs().scoring_strategy

    def test_validation(self):
        args = NodeResourcesFitArgs(
            ignored_resources=["example.com/a", "bad key!"],
            ignored_resource_groups=["example.com", "a/b"],
            scoring_strategy=ScoringStrategy("Bogus", [ResourceSpec("cpu", 0), ResourceSpec("memory", 101)]),
        )
        assert messages(args, "") == [
            'ignoredResources[1]: Invalid value: "bad key!": name part must consist of alphanumeric characters, '
            "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
            "or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            "ignoredResourceGroups[1]: Invalid value: \"a/b\": resource group name can't contain '/'",
            'scoringStrategy.type: Unsupported value: "Bogus": supported values: "LeastAllocated", "MostAllocated", '
            '"RequestedToCapacityRatio"',
            "scoringStrategy.resources[0].weight: Invalid value: 0: resource weight of cpu not in valid range (0, 100]",
            "scoringStrategy.resources[1].weight: Invalid value: 101: "
            "resource weight of memory not in valid range (0, 100]",
        ]

    def test_shape_validation(self):
        args = NodeResourcesFitArgs.from_dict(
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "resources": [{"name": "cpu", "weight": 1}],
                    "requestedToCapacityRatio": {
                        "shape": [
                            {"utilization": 50, "score": 11},
                            {"utilization": 40, "score": 1},
                            {"utilization": 101, "score": -1},
                        ]
                    },
                }
            }
        )
        # v1.37.2 (validation_pluginargs.go: ValidateNodeResourcesFitArgs): the shape is reported
        # under requestedToCapacityRatio (1.34: scoringStrategy.shape)
        assert messages(args, "") == [
            "scoringStrategy.requestedToCapacityRatio.shape[1].utilization: Invalid value: 40: values must be sorted "
            "in increasing order",
            "scoringStrategy.requestedToCapacityRatio.shape[0].score: Invalid value: 11: not in valid range [0, 10]",
            "scoringStrategy.requestedToCapacityRatio.shape[2].utilization: Invalid value: 101: not in valid range "
            "[0, 100]",
            "scoringStrategy.requestedToCapacityRatio.shape[2].score: Invalid value: -1: not in valid range [0, 10]",
        ]
        # "ScoringStrategy: requestedToCapacityRatio field is missing"
        empty = NodeResourcesFitArgs(
            scoring_strategy=ScoringStrategy("RequestedToCapacityRatio", [ResourceSpec("cpu", 1)], None)
        )
        assert messages(empty, "") == ["scoringStrategy.requestedToCapacityRatio: Required value: must be specified "
                                       "when type is RequestedToCapacityRatio"]
        empty.scoring_strategy.requested_to_capacity_ratio = NodeResourcesFitArgs.from_dict(
            {"scoringStrategy": {"requestedToCapacityRatio": {}}}
        ).scoring_strategy.requested_to_capacity_ratio
        assert messages(empty, "") == ["scoringStrategy.requestedToCapacityRatio.shape: Required value: at least one "
                                       "point must be specified"]

    def test_ratio_only_with_its_type_and_strategy_required(self):
        args = NodeResourcesFitArgs.from_dict({"scoringStrategy": {
            "type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 1}],
            "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0}]}}})
        assert messages(args, "") == ["scoringStrategy.requestedToCapacityRatio: Forbidden: must be nil when type is "
                                      "not RequestedToCapacityRatio"]
        assert messages(NodeResourcesFitArgs(scoring_strategy=None), "") == [
            "scoringStrategy: Required value: ScoringStrategy field is required"]


class TestBalancedAllocation:
    def test_defaults(self):
        args = NodeResourcesBalancedAllocationArgs.from_dict({"resources": []})
        args.set_defaults()
        assert args.resources == [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]

    def test_validation(self):
        args = NodeResourcesBalancedAllocationArgs([ResourceSpec("cpu", 1), ResourceSpec("cpu", 2)])
        assert messages(args) == [
            f'{P}.resources[1].name: Duplicate value: "cpu"',
            f"{P}.resources[1].weight: Invalid value: 2: must be 1",
        ]


class TestPodTopologySpread:
    def test_defaults(self):
        assert PodTopologySpreadArgs.from_dict({}).defaulting_type == "System"

    def test_defaulting_type(self):
        assert messages(PodTopologySpreadArgs([], "Bogus")) == [
            f'{P}.defaultingType: Unsupported value: "Bogus": supported values: "System", "List"'
        ]
        constraint = TopologySpreadConstraint(1, "zone", "DoNotSchedule")
        assert messages(PodTopologySpreadArgs([constraint], "System")) == [
            f'{P}.defaultingType: Invalid value: "System": when .defaultConstraints are not empty'
        ]

    def test_constraints(self):
        args = PodTopologySpreadArgs.from_dict(
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 0, "topologyKey": "", "whenUnsatisfiable": ""},
                    {
                        "maxSkew": 1,
                        "topologyKey": "zone",
                        "whenUnsatisfiable": "Sometimes",
                        "labelSelector": {"matchLabels": {"a": "b"}},
                    },
                    {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "Sometimes"},
                ],
            }
        )
        c = f"{P}.defaultConstraints"
        assert messages(args) == [
            f"{c}[0].maxSkew: Invalid value: 0: not in valid range (0, inf)",
            f"{c}[0].topologyKey: Required value: can not be empty",
            f"{c}[0].whenUnsatisfiable: Required value: can not be empty",
            f'{c}[1].whenUnsatisfiable: Unsupported value: "Sometimes": {SPREAD_ACTIONS}',
            f"{c}[1].labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod",
            f'{c}[2].whenUnsatisfiable: Unsupported value: "Sometimes": {SPREAD_ACTIONS}',
            f'{c}[2]: Duplicate value: "{{zone, Sometimes}}"',
        ]

    def test_round_trip(self):
        d = {
            "defaultingType": "List",
            "defaultConstraints": [
                {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway", "minDomains": 2}
            ],
        }
        args = PodTopologySpreadArgs.from_dict(d)
        assert PodTopologySpreadArgs.from_dict(args.to_dict()) == args


class TestNodeAffinity:
    def test_raw_dict_kept(self):
        affinity = {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 3,
                    "preference": {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]},
                }
            ]
        }
        assert NodeAffinityArgs.from_dict({"addedAffinity": affinity}).added_affinity == affinity
        assert NodeAffinityArgs.from_dict({}).added_affinity is None

    def test_required_terms(self):
        args = NodeAffinityArgs.from_dict(
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {},
                            {
                                "matchExpressions": [
                                    {"key": "zone", "operator": "Near", "values": ["a"]},
                                    {"key": "zone", "operator": "In"},
                                    {"key": "-bad", "operator": "Exists", "values": ["x"]},
                                    {"key": "cpus", "operator": "Gt", "values": ["two"]},
                                    {"key": "zone", "operator": "In", "values": ["not valid!"]},
                                ],
                                "matchFields": [
                                    {"key": "metadata.name", "operator": "Exists"},
                                    {"key": "metadata.name", "operator": "In", "values": ["a", "b"]},
                                ],
                            },
                        ]
                    }
                }
            }
        )
        t = "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[1]"
        assert messages(args, "") == [
            f'{t}.matchExpressions[0].operator: Unsupported value: "Near": supported values: "In", "NotIn", "Exists", '
            '"DoesNotExist", "Gt", "Lt"',
            f"{t}.matchExpressions[1].values: Invalid value: null: "
            "for 'in', 'notin' operators, values set can't be empty",
            f'{t}.matchExpressions[2].key: Invalid value: "-bad": name part must consist of alphanumeric characters, '
            "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
            "or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            f'{t}.matchExpressions[2].values: Invalid value: ["x"]: '
            "values set must be empty for exists and does not exist",
            f'{t}.matchExpressions[3].values[0]: Invalid value: "two": '
            "for 'Gt', 'Lt' operators, the value must be an integer",
            f'{t}.matchExpressions[4].values[0][zone]: Invalid value: "not valid!": a valid label must be an empty '
            "string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
            "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
            "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
            f'{t}.matchFields[0].operator: Unsupported value: "Exists": supported values: "In", "NotIn"',
            f'{t}.matchFields[1].values: Invalid value: ["a","b"]: must have one element',
        ]

    def test_preferred_terms_path_has_no_preference_segment(self):
        args = NodeAffinityArgs(
            {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 0, "preference": {"matchExpressions": [{"key": "a", "operator": "Bad"}]}},
                    {"weight": 1, "preference": {"matchExpressions": [{"key": "a", "operator": "Bad"}]}},
                ]
            }
        )
        assert messages(args, "") == [
            "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[1].matchExpressions[0].operator: "
            'Unsupported value: "Bad": supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"'
        ]


class TestVolumeBinding:
    def test_defaults(self):
        assert VolumeBindingArgs.from_dict({}) == VolumeBindingArgs(600, None)
        assert VolumeBindingArgs.from_dict({"bindTimeoutSeconds": 0}).bind_timeout_seconds == 0

    def test_validation(self):
        args = VolumeBindingArgs(-1, [UtilizationShapePoint(0, 10)])
        assert messages(args) == [
            f"{P}.bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, should not be a negative value",
            f'{P}.shape: Invalid value: [{{"Utilization":0,"Score":10}}]: '
            "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring",
        ]


class TestDynamicResources:
    def test_defaults_and_decoding(self):
        assert DynamicResourcesArgs.from_dict({}).filter_timeout == 10.0
        assert DynamicResourcesArgs.from_dict({"filterTimeout": "0s"}).filter_timeout == 0.0
        assert DynamicResourcesArgs.from_dict({"filterTimeout": "1m"}).to_dict()["filterTimeout"] == "1m0s"

    def test_validation(self):
        assert messages(DynamicResourcesArgs(-1.0)) == [
            f'{P}.filterTimeout: Invalid value: "-1s": must be zero or positive'
        ]

    def test_binding_timeout(self):
        # v1.35+: bindingTimeout (kube-scheduler config/v1 types.go), validation_pluginargs_test.go cases
        assert DynamicResourcesArgs.from_dict({}).binding_timeout is None
        args = DynamicResourcesArgs.from_dict({"bindingTimeout": "30s"})
        assert args.binding_timeout == 30.0 and args.to_dict()["bindingTimeout"] == "30s"
        assert messages(args) == []                                     # valid BindingTimeout
        assert messages(DynamicResourcesArgs(binding_timeout=0.0)) == [  # BindingTimeout < 1s (0s)
            f'{P}.bindingTimeout: Invalid value: "0s": must be at least 1 second']
        assert messages(DynamicResourcesArgs(binding_timeout=-1.0)) == [  # BindingTimeout < 1s (negative)
            f'{P}.bindingTimeout: Invalid value: "-1s": must be at least 1 second']

    @pytest.mark.parametrize("gate", ["DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus"])
    def test_binding_timeout_needs_both_gates(self, gate):
        class Gates:
            def enabled(self, name):
                return name != gate

        errs = DynamicResourcesArgs(binding_timeout=1.0).validate(P, feature_gates=Gates())
        assert [str(e) for e in errs] == [f"{P}.bindingTimeout: Forbidden: DRADeviceBindingConditions or "
                                          f"DRAResourceClaimDeviceStatus feature gate is disabled"]
        assert DynamicResourcesArgs().validate(P, feature_gates=Gates()) == []
