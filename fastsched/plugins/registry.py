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
)


def _factory(name: str, module: str):
    mod = importlib.import_module(f"fastsched.plugins.{module}")
    factories = getattr(mod, "FACTORIES", None)
    if factories is not None:
        return factories[name]
    return mod.new


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
    return r
