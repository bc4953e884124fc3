"""Feature gates: the kube-scheduler gates fastsched knows, with their v1.34 defaults.

fastsched follows kube-scheduler v1.34 with its default feature gates. :class:`FeatureGates` is an
immutable ``name -> bool`` mapping over every gate listed in :data:`KNOWN_GATES` (the defaults,
overridden by what was given), built from a mapping or from upstream's ``--feature-gates`` syntax::

    FeatureGates({"SchedulerAsyncPreemption": False})
    FeatureGates("SchedulerAsyncPreemption=false")

A framework carries its gates as ``Framework.feature_gates`` (``new_framework(...,
feature_gates=...)``); plugins read them from their handle (``feature_gates_of(handle)``).

Gates fall in two groups:

* **switchable** here: setting them changes what fastsched does. ``SchedulerAsyncPreemption``
  (DefaultPreemption evicts the victims asynchronously and holds the preemptor at PreEnqueue
  meanwhile, see :mod:`fastsched.plugins.defaultpreemption`);
* **fixed**: fastsched implements the v1.34 default only (the code has it built in: e.g.
  SchedulerQueueingHints' hints, the DRA plugin, sidecar and pod-level resources in the requests).
  Setting one to its default is accepted; to the other value is an error, rather than silently
  running the default. (``SchedulerQueueingHints``, ``NodeInclusionPolicyInPodTopologySpread`` and
  ``MatchLabelKeysInPodTopologySpread`` are switched per plugin for scheduler_perf configs by
  :mod:`fastsched.perf.gates`; ``SchedulerPopFromBackoffQ`` by ``PriorityQueue(pop_from_backoff_q=)``.)

An unknown gate name is an error listing the known ones (upstream: ``unrecognized feature gate``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from .errors import FastschedError

SCHEDULER_ASYNC_PREEMPTION = "SchedulerAsyncPreemption"
SCHEDULER_QUEUEING_HINTS = "SchedulerQueueingHints"


@dataclass(frozen=True)
class FeatureGate:
    """One gate: its v1.34 default and stage, and whether fastsched implements both values."""

    name: str
    default: bool
    stage: str
    switchable: bool
    #: what in fastsched follows the gate
    modelled_by: str


def _gate(name: str, default: bool, stage: str, modelled_by: str, switchable: bool = False) -> FeatureGate:
    return FeatureGate(name, default, stage, switchable, modelled_by)


#: Every gate fastsched knows, by name (v1.34 defaults).
KNOWN_GATES: dict[str, FeatureGate] = {g.name: g for g in (
    _gate(SCHEDULER_ASYNC_PREEMPTION, True, "beta",
          "DefaultPreemption (asynchronous victim eviction, PreEnqueue holds the preemptor)", switchable=True),
    _gate(SCHEDULER_QUEUEING_HINTS, True, "beta", "the plugins' queueing hints (fastsched.perf.gates switches them)"),
    _gate("SchedulerPopFromBackoffQ", True, "beta", "the scheduling queue (PriorityQueue(pop_from_backoff_q=))"),
    _gate("NodeInclusionPolicyInPodTopologySpread", True, "GA",
          "PodTopologySpread (fastsched.perf.gates switches it)"),
    _gate("MatchLabelKeysInPodTopologySpread", True, "beta", "PodTopologySpread (fastsched.perf.gates switches it)"),
    _gate("DynamicResourceAllocation", True, "GA", "the DynamicResources plugin in the default profile"),
    _gate("DRAExtendedResource", False, "alpha", "NodeResourcesFit (extended resources checked against allocatable)"),
    _gate("StorageCapacityScoring", False, "alpha",
          "VolumeBinding's Score (capacity of static and provisioned volumes) and VolumeBindingArgs' `shape`",
          switchable=True),
    _gate("SidecarContainers", True, "GA", "pod requests (restartable init containers)"),
    _gate("PodLevelResources", True, "beta", "pod requests (spec.resources)"),
    _gate("InPlacePodVerticalScaling", True, "beta", "pod requests and NodeResourcesFit's scale-down hint"),
)}


class FeatureGateError(FastschedError, ValueError):
    """A feature gate that is unknown, not switchable here, or given a value that is no bool."""


def _known_list() -> str:
    return ", ".join(sorted(KNOWN_GATES))


def _parse_bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        # Go's strconv.ParseBool, as upstream's --feature-gates flag
        if value in ("1", "t", "T", "TRUE", "true", "True"):
            return True
        if value in ("0", "f", "F", "FALSE", "false", "False"):
            return False
    raise FeatureGateError(f'invalid value of {name}={value}, err: strconv.ParseBool: parsing "{value}": '
                           f'invalid syntax')


def _parse(gates: Any) -> dict[str, bool]:
    if gates is None:
        return {}
    if isinstance(gates, FeatureGates):
        return dict(gates.overrides())
    if isinstance(gates, str):
        out: dict[str, bool] = {}
        for item in gates.split(","):
            item = item.strip()
            if not item:
                continue
            if "=" not in item:
                raise FeatureGateError(f"missing bool value for {item}")
            name, value = item.split("=", 1)
            out[name.strip()] = _parse_bool(name.strip(), value.strip())
        return out
    if isinstance(gates, Mapping):
        return {str(k): _parse_bool(str(k), v) for k, v in gates.items()}
    raise FeatureGateError(f"feature gates must be a mapping of gate names to bools or a "
                           f"'Name=true,Other=false' string, not {type(gates).__name__}")


class FeatureGates(Mapping[str, bool]):
    """The value of every known gate: v1.34's defaults, overridden by ``gates`` (a mapping of
    gate names to bools, another FeatureGates, or upstream's ``"A=true,B=false"`` syntax).

    Raises :class:`FeatureGateError` for an unknown gate (naming the known ones), a value that is
    not a bool, or a fixed gate set away from its default.
    """

    __slots__ = ("_values", "_overrides")

    def __init__(self, gates: Mapping[str, Any] | str | "FeatureGates" | None = None):
        overrides = _parse(gates)
        values = {name: g.default for name, g in KNOWN_GATES.items()}
        for name, value in overrides.items():
            gate = KNOWN_GATES.get(name)
            if gate is None:
                raise FeatureGateError(f"unrecognized feature gate: {name} (fastsched knows: {_known_list()})")
            if value != gate.default and not gate.switchable:
                raise FeatureGateError(
                    f"feature gate {name}={str(value).lower()} is not supported: fastsched implements {name} "
                    f"only as v1.34's default ({str(gate.default).lower()}, {gate.stage}; {gate.modelled_by}); "
                    f"switchable gates: {', '.join(n for n, g in KNOWN_GATES.items() if g.switchable)}")
            values[name] = value
        self._values = values
        self._overrides = overrides

    # -- reading ---------------------------------------------------------------------------------
    def enabled(self, name: str) -> bool:
        """Whether gate ``name`` is on (FeatureGateError for an unknown name)."""
        try:
            return self._values[name]
        except KeyError:
            raise FeatureGateError(f"unrecognized feature gate: {name} (fastsched knows: {_known_list()})") from None

    def __getitem__(self, name: str) -> bool:
        return self.enabled(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def overrides(self) -> dict[str, bool]:
        """The gates that were given explicitly (their values)."""
        return dict(self._overrides)

    def with_overrides(self, gates: Mapping[str, Any] | str) -> "FeatureGates":
        """These gates with ``gates`` applied on top."""
        merged = dict(self._overrides)
        merged.update(_parse(gates))
        return FeatureGates(merged)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FeatureGates):
            return self._values == other._values
        if isinstance(other, Mapping):
            return self._values == dict(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._values.items())))

    def __repr__(self) -> str:
        given = ", ".join(f"{k}={str(v).lower()}" for k, v in self._overrides.items())
        return f"FeatureGates({given})" if given else "FeatureGates(v1.34 defaults)"


#: v1.34's defaults.
DEFAULTS = FeatureGates()


def feature_gates_of(handle: Any) -> FeatureGates:
    """A plugin's gates: its handle's ``feature_gates`` (a FeatureGates or a mapping), else the
    v1.34 defaults (no handle, or a handle without gates)."""
    gates = getattr(handle, "feature_gates", None)
    if gates is None:
        return DEFAULTS
    return gates if isinstance(gates, FeatureGates) else FeatureGates(gates)


__all__ = ["DEFAULTS", "FeatureGate", "FeatureGateError", "FeatureGates", "KNOWN_GATES", "SCHEDULER_ASYNC_PREEMPTION",
           "SCHEDULER_QUEUEING_HINTS", "feature_gates_of"]
