"""The in-tree plugin registry (upstream ``pkg/scheduler/framework/plugins/registry.go``)."""
from __future__ import annotations

import importlib

from ..runtime.registry import Registry

#: (plugin name, module under fastsched.plugins) in upstream's registry order.
IN_TREE_PLUGINS: tuple[tuple[str, str], ...] = (
    ("DynamicResources", "dynamicresources"),
    ("SchedulingGates", "schedulinggates"),
    ("PrioritySort", "queuesort"),
    ("DefaultBinder", "defaultbinder"),
    ("DefaultPreemption", "defaultpreemption"),
    ("ImageLocality", "imagelocality"),
    ("InterPodAffinity", "interpodaffinity"),
    ("NodeAffinity", "nodeaffinity"),
    ("NodeDeclaredFeatures", "nodedeclaredfeatures"),
    ("NodeName", "nodename"),
    ("NodePorts", "nodeports"),
    ("NodeResourcesBalancedAllocation", "noderesources"),
    ("NodeResourcesFit", "noderesources"),
    ("NodeUnschedulable", "nodeunschedulable"),
    ("NodeVolumeLimits", "nodevolumelimits"),
    ("PodTopologySpread", "podtopologyspread"),
    ("TaintToleration", "tainttoleration"),
    ("VolumeBinding", "volumebinding"),
    ("VolumeRestrictions", "volumerestrictions"),
    ("VolumeZone", "volumezone"),
    ("GangScheduling", "gangscheduling"),
    ("TopologyPlacementGenerator", "topologyaware"),
    ("PodGroupPodsCount", "podgrouppodscount"),
)


def _factory(name: str, module: str):
    mod = importlib.import_module(f"fastsched.plugins.{module}")
    factories = getattr(mod, "FACTORIES", None)
    if factories is not None:
        return factories[name]
    return mod.new


#: In-tree plugins that implement a workload-aware point upstream (v1.37.2: ``var _ fwk.PlacementScorePlugin
#: = &Fit{}`` in noderesources/fit.go, ``PodGroupPostFilter`` in default_preemption.go and
#: dynamicresources.go), registered as virtual subclasses of the point's interface so that
#: MultiPoint expands them into those points and a configuration may name them there, as upstream.
#: DefaultPreemption and DynamicResources have ``pod_group_post_filter`` (workload-aware preemption);
#: Fit has ``score_placement`` (its placement scorer exists with TopologyAwareWorkloadScheduling).
_WORKLOAD_POINTS: tuple[tuple[str, str, str], ...] = (
    ("noderesources.fit", "Fit", "PlacementScorePlugin"),
    ("defaultpreemption.default_preemption", "DefaultPreemption", "PodGroupPostFilterPlugin"),
    ("dynamicresources", "DynamicResources", "PodGroupPostFilterPlugin"),
)


def _register_workload_points() -> None:
    from ..framework import interface

    for module, cls_name, iface in _WORKLOAD_POINTS:
        try:
            cls = getattr(importlib.import_module(f"fastsched.plugins.{module}"), cls_name)
        except (ModuleNotFoundError, AttributeError):
            continue
        getattr(interface, iface).register(cls)


def in_tree_registry() -> Registry:
    """A new Registry with every in-tree plugin that this release implements.

    Plugins of the default profile that are not implemented yet are absent, so building the
    default profile fails with upstream's ``... does not exist`` message naming them.
    """
    r = Registry()
    for name, module in IN_TREE_PLUGINS:
        try:
            factory = _factory(name, module)
        except ModuleNotFoundError as e:
            if e.name == f"fastsched.plugins.{module}":
                continue
            raise
        r.register(name, factory)
    _register_workload_points()
    return r
