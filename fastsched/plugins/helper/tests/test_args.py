"""The shared constructor preamble: defaults, upstream's type-mismatch text, validation errors."""
import pytest

from fastsched.config.args import InterPodAffinityArgs, NodeAffinityArgs
from fastsched.config.errors import ConfigError
from fastsched.plugins.helper.args import go_type_name, validated_args

MISMATCH = "want args to be of type InterPodAffinityArgs, got {got}"


def test_none_gives_the_defaults():
    assert validated_args(None, InterPodAffinityArgs, MISMATCH) == InterPodAffinityArgs()


def test_wrong_type_names_it_as_go_prints_it():
    with pytest.raises(ValueError, match=r"^want args to be of type InterPodAffinityArgs, got \*config.NodeAffinityArgs$"):
        validated_args(NodeAffinityArgs(), InterPodAffinityArgs, MISMATCH)
    with pytest.raises(ValueError, match=r"^want args to be of type InterPodAffinityArgs, got dict$"):
        validated_args({}, InterPodAffinityArgs, MISMATCH)
    assert go_type_name(None) == "<nil>"


def test_invalid_args_raise_config_error():
    with pytest.raises(ConfigError, match="hardPodAffinityWeight"):
        validated_args(InterPodAffinityArgs(hard_pod_affinity_weight=101), InterPodAffinityArgs, MISMATCH)
