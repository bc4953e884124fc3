"""Feature gates of scheduler_perf configs: applied where fastsched models the gate.

A test case's ``featureGates`` merged with the workload's (the workload wins per gate, as
upstream's ``featureGatesMerge``). fastsched follows kube-scheduler v1.37 with its default gates;
the gates below switch behaviour fastsched implements, and are applied to the plugins a
Scheduler builds. Any other gate is reported (one warning naming it) and ignored: the run then
shows v1.37.2's default behaviour for it.

- ``SchedulerQueueingHints``: with ``false`` every plugin registers its events without queueing
  hints (upstream's ``buildQueueingHintMap`` then uses the default hint, Queue, for every event)
  and the plugins that register other events without hints do so.
- ``NodeInclusionPolicyInPodTopologySpread``, ``MatchLabelKeysInPodTopologySpread``: the
  PodTopologySpread plugin's switches of the same meaning.
- ``SchedulerAsyncPreemption``: passed to the Scheduler (``Scheduler(feature_gates=...)``, see
  :mod:`fastsched.features`): DefaultPreemption evicts victims asynchronously or not.
- ``SchedulerPopFromBackoffQ``: passed to the Scheduler likewise: the queue pops backoffQ when
  activeQ is empty (no v1.37.2 config sets it).
- ``OpportunisticBatching``: passed to the Scheduler likewise: the profiles sign pods and reuse a
  cycle's scores (the ``batching`` topic's ``OpportunisticBatchingDisabled`` workloads turn it off).
- ``GenericWorkload``: PodGroups and gang scheduling (the ``podgroup`` topics); see
  :func:`scheduler_feature_gates`.
- ``TopologyAwareWorkloadScheduling``: PodGroup topology constraints and the placement algorithm
  (``podgroup/tas``), likewise.
- ``DRAWorkloadResourceClaims``: claims a PodGroup's ``spec.resourceClaims`` names, reserved for the
  whole group (``dra/workloadresourceclaims``), likewise.

Gates in :data:`NOT_MODELLED_GATES` switch on behaviour fastsched does not implement: a workload
that turns one on is skipped (the reason names the gate) rather than run without it.
"""
from __future__ import annotations

import contextlib
import functools
from typing import Any, Iterator, Mapping

__all__ = ["MODELLED_GATES", "NOT_MODELLED_GATES", "split_gates", "gated_registry", "scheduler_gates",
           "scheduler_feature_gates", "not_modelled_gate"]

#: gate -> (plugin attribute names set to the gate's value, the v1.37.2 default value)
MODELLED_GATES: dict[str, tuple[tuple[str, ...], bool]] = {
    "SchedulerQueueingHints": (("enable_scheduling_queue_hint", "_enable_scheduling_queue_hint"), True),
    "NodeInclusionPolicyInPodTopologySpread": (("enable_node_inclusion_policy",), True),
    "MatchLabelKeysInPodTopologySpread": (("enable_match_label_keys",), True),
    # no plugin attribute: the Scheduler's feature gates carry these (scheduler_gates)
    "SchedulerAsyncPreemption": ((), True),
    "SchedulerPopFromBackoffQ": ((), True),
    "OpportunisticBatching": ((), True),
    "GenericWorkload": ((), False),
    "TopologyAwareWorkloadScheduling": ((), False),
    "PodGroupPreemptionPolicy": ((), False),
    "DRAWorkloadResourceClaims": ((), False),
}

#: gate -> why a workload that turns it on cannot run (its behaviour is not ported); none left
#: since CompositePodGroup became switchable (no v1.37.2 scheduler_perf config turns it on)
NOT_MODELLED_GATES: dict[str, str] = {}


def not_modelled_gate(gates: Mapping[str, bool]) -> str | None:
    """Why a workload with ``gates`` is skipped (None when fastsched runs it)."""
    for gate, reason in NOT_MODELLED_GATES.items():
        if gates.get(gate):
            return reason
    return None


def scheduler_gates(gates: Mapping[str, bool]) -> dict[str, bool]:
    """The gates the Scheduler itself takes (``Scheduler(feature_gates=...)``): the switchable ones
    of :mod:`fastsched.features`."""
    from ..features import KNOWN_GATES
    return {k: v for k, v in gates.items() if k in KNOWN_GATES and KNOWN_GATES[k].switchable}


def scheduler_feature_gates(gates: Mapping[str, bool]) -> Any:
    """The Scheduler's FeatureGates for ``gates``: the switchable ones of
    :mod:`fastsched.features` (GenericWorkload among them), through
    :class:`~fastsched.features.FeatureGates`."""
    from ..features import FeatureGates

    return FeatureGates(scheduler_gates(gates))


#: gates whose "on" fastsched always runs (v1.37.2's default) and cannot switch off: on is modelled
#: (nothing to apply), off is reported as not modelled
ALWAYS_ON_GATES = frozenset({"DynamicResourceAllocation"})


def split_gates(gates: Mapping[str, bool]) -> tuple[dict[str, bool], dict[str, bool]]:
    """``(modelled, ignored)``: the gates fastsched applies and those it does not model."""
    modelled = {k: v for k, v in gates.items() if k in MODELLED_GATES}
    ignored = {k: v for k, v in gates.items() if k not in MODELLED_GATES
               and not (k in ALWAYS_ON_GATES and v)}
    return modelled, ignored


def _gated_factory(factory: Any, gates: Mapping[str, bool], args: Any, handle: Any) -> Any:
    """A registry factory: ``factory``'s plugin with ``gates`` applied (see :func:`_apply`)."""
    return _apply(factory(args, handle), gates)


def _apply(plugin: Any, gates: Mapping[str, bool]) -> Any:
    for gate, value in gates.items():
        attrs, _default = MODELLED_GATES[gate]
        for attr in attrs:
            if hasattr(plugin, attr):
                try:
                    setattr(plugin, attr, value)
                except AttributeError:  # a read-only property: the plugin does not expose the switch
                    pass
    if gates.get("SchedulerQueueingHints") is False and hasattr(plugin, "events_to_register"):
        original = plugin.events_to_register

        def events_without_hints() -> list:
            # buildQueueingHintMap with the gate off: every registered event gets the default
            # hint (Queue), i.e. no hint function
            from ..framework.interface import ClusterEventWithHint

            out = []
            for reg in original() or ():
                event = reg.event if isinstance(reg, ClusterEventWithHint) else reg
                out.append(ClusterEventWithHint(event, None))
            return out

        try:
            plugin.events_to_register = events_without_hints
        except AttributeError:
            pass
    return plugin


@contextlib.contextmanager
def gated_registry(gates: Mapping[str, bool]) -> Iterator[None]:
    """While active, Schedulers built get in-tree plugins with ``gates`` (modelled ones) applied.

    The Scheduler takes its in-tree registry from ``fastsched.plugins.in_tree_registry`` when it
    is constructed; this wraps each factory so that the plugin it builds has the gates' switches
    set before the Scheduler reads the plugins' events.
    """
    gates = {k: v for k, v in gates.items() if k in MODELLED_GATES}
    if not gates:
        yield
        return
    from .. import plugins
    from ..runtime import Registry

    original = plugins.in_tree_registry

    def wrapped() -> Registry:
        reg = original()
        out = Registry()
        for name in reg:
            factory = reg[name]
            out.register(name, functools.partial(_gated_factory, factory, gates))
        return out

    plugins.in_tree_registry = wrapped
    try:
        yield
    finally:
        plugins.in_tree_registry = original
