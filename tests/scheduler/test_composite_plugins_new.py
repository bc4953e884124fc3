"""The plugins' constructors read the CompositePodGroup gate (step 4 of the composite work):
``gangscheduling.New``, ``topologyplacement.New`` and ``podgrouppodscount.New`` take
``feature.Features.EnableCompositePodGroup``; DynamicResources' PodGroupPostFilter leaves a
CompositePodGroup entity alone (``DRA PodGroupPostFilter is not supporting CompositePodGroups``:
Unschedulable, no message)."""
from __future__ import annotations

import dataclasses

import pytest

from fastsched.api.compositepodgroup import CompositePodGroup
from fastsched.features import COMPOSITE_POD_GROUP, KNOWN_GATES, FeatureGates
from fastsched.framework import Code, CycleState
from fastsched.framework.composite import COMPOSITE_POD_GROUP_KEY_TYPE, PodGroupInfo
from fastsched.framework.podgroups import QueuedPodGroupInfo
from fastsched.plugins import gangscheduling, podgrouppodscount, topologyaware
from fastsched.plugins.gangscheduling.hierarchy import CompositeGangScheduling


@pytest.fixture(autouse=True)
def composite_gate(monkeypatch):
    monkeypatch.setitem(KNOWN_GATES, COMPOSITE_POD_GROUP,
                        dataclasses.replace(KNOWN_GATES[COMPOSITE_POD_GROUP], switchable=True))


class Handle:
    def __init__(self, composite: bool):
        self.feature_gates = FeatureGates({"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True,
                                           COMPOSITE_POD_GROUP: composite})


@pytest.mark.parametrize("composite", [False, True])
def test_new_reads_the_gate(composite):
    gs = gangscheduling.new(None, Handle(composite))
    assert isinstance(gs, CompositeGangScheduling) is composite
    assert topologyaware.new(None, Handle(composite))._composite is composite
    assert podgrouppodscount.new(None, Handle(composite))._composite is composite


def test_dynamic_resources_pod_group_post_filter_skips_a_composite_entity():
    from fastsched.plugins.dynamicresources.tests.test_dynamic_resources import setup
    plugin, _, _ = setup([])
    cpg = CompositePodGroup(name="root", namespace="default")
    entity = QueuedPodGroupInfo.from_tree(PodGroupInfo("default", "root", COMPOSITE_POD_GROUP_KEY_TYPE,
                                                       composite_pod_group=cpg))
    # (a flat group without any member's PreFilter state is upstream's "not found" error instead)
    result, status = plugin.pod_group_post_filter(CycleState(), entity, None)
    assert result is None and status.code() == Code.UNSCHEDULABLE and status.message() == ""
