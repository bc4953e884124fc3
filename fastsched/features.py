"""Feature gates: the kube-scheduler gates fastsched knows, with their v1.37.2 defaults.

fastsched follows kube-scheduler v1.37 with its default feature gates. :class:`FeatureGates` is an
immutable ``name -> bool`` mapping over every gate listed in :data:`KNOWN_GATES` (the defaults,
overridden by what was given), built from a mapping or from upstream's ``--feature-gates`` syntax::

    FeatureGates({"SchedulerAsyncPreemption": False})
    FeatureGates("SchedulerAsyncPreemption=false")

A framework carries its gates as ``Framework.feature_gates`` (``new_framework(...,
feature_gates=...)``); plugins read them from their handle (``feature_gates_of(handle)``).

:data:`KNOWN_GATES` holds every gate kube-scheduler v1.37.2 reads (``pkg/scheduler/framework/
plugins/feature/feature.go``: ``NewSchedulerFeaturesFromGates``, plus the scheduler's and the
framework's own: batching, nomination, the queue), with its default and stage at v1.37.2
(``k8s.io/kubernetes@v1.37.2/pkg/features/kube_features.go``) and its dependencies
(``defaultKubernetesFeatureGateDependencies``, among these gates). Gates fall in three groups:

* **locked** upstream (``LockToDefault``: GA gates such as NodeDeclaredFeatures or
  DynamicResourceAllocation): setting one to its default is accepted, to the other value is
  upstream's error ``cannot set feature gate X to false, feature is locked to true``
  (``k8s.io/component-base/featuregate``: ``unsafeSetFromMap``);
* **switchable** here: setting them changes what fastsched does. ``SchedulerAsyncPreemption``
  (DefaultPreemption evicts the victims asynchronously and holds the preemptor at PreEnqueue
  meanwhile, see :mod:`fastsched.plugins.defaultpreemption`), ``SchedulerPopFromBackoffQ`` (the
  scheduling queue pops podBackoffQ's head when activeQ is empty, and orders podBackoffQ by 1 s
  backoff windows, see :mod:`fastsched.scheduler.backend.queue`), ``StorageCapacityScoring``
  (VolumeBinding's capacity score and its args' ``shape``), ``VolumeLimitScaling``
  (NodeVolumeLimits' check that a CSI volume's driver is on the node), ``OpportunisticBatching``
  (opportunistic batching, :mod:`fastsched.runtime.batch`), ``DRADeviceTaints`` (the DRA allocator's taint checks),
  ``DRADeviceTaintRules`` (DeviceTaintRules taint the devices they select),
  ``DRAFractionalCapacityRange`` (milli-value step arithmetic of capacity request policies),
  ``DRAListTypeAttributes`` (list-valued device attributes: the API server's drop and validation,
  CEL lists and ``includes()``, set semantics of the allocator's constraints),
  ``DRADeviceCompatibilityGroups`` (which devices drawing from one counter set may be allocated
  together), ``DRAOptionalNodeOperations`` (slices whose devices skip node-local operations, allocated
  only on nodes that declare the feature), ``GenericWorkload``
  (workload-aware scheduling: PodGroups scheduled as one, see docs/dev/gang-scheduling.md),
  ``DRAWorkloadResourceClaims`` (needs GenericWorkload: claims a PodGroup's ``spec.resourceClaims``
  names are reserved for the whole group, see :mod:`fastsched.plugins.dynamicresources` and
  :mod:`fastsched.dra.controller`),
  ``TopologyAwareWorkloadScheduling`` and ``PodGroupPreemptionPolicy`` (need GenericWorkload: a
  PodGroup's ``spec.preemptionPolicy``, defaulted and admitted, decides whether the group may
  preempt) and ``WorkloadWithJob`` (needs
  GenericWorkload: the Job controller makes a Workload and a PodGroup for each new Job and puts its
  pods in the group, :mod:`fastsched.controller.jobscheduling`; Job's ``spec.scheduling`` is kept);
* **fixed**: fastsched implements the v1.37 default only (the code has it built in: e.g. the DRA
  plugin, pod-level resources in the requests, composite pod groups off). Setting one to its
  default is accepted; to the other value is an error, rather than silently running the default.
  (``NodeInclusionPolicyInPodTopologySpread`` and ``MatchLabelKeysInPodTopologySpread`` are
  switched per plugin for scheduler_perf configs by :mod:`fastsched.perf.gates`.)

An unknown gate name is an error listing the known ones (upstream: ``unrecognized feature gate``).
Gates upstream removed by v1.37 are unknown, as upstream: ``SchedulerQueueingHints`` (GA and
locked in 1.34, removed in 1.35: queueing hints are always on; scheduler_perf configs that still
set it are handled by :mod:`fastsched.perf.gates`, which keeps its own table) and
``SidecarContainers`` (removed in 1.36). A gate turned on whose dependencies are off is upstream's
error ``X is enabled, but depends on features that are disabled: [Y]``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from .errors import FastschedError

SCHEDULER_ASYNC_PREEMPTION = "SchedulerAsyncPreemption"
SCHEDULER_POP_FROM_BACKOFF_Q = "SchedulerPopFromBackoffQ"
#: Not a gate any more (removed upstream in 1.35, see the module docstring); the name stays for
#: code that names it in scheduler_perf configs (:mod:`fastsched.perf.gates`).
SCHEDULER_QUEUEING_HINTS = "SchedulerQueueingHints"
STORAGE_CAPACITY_SCORING = "StorageCapacityScoring"
NODE_DECLARED_FEATURES = "NodeDeclaredFeatures"
OPPORTUNISTIC_BATCHING = "OpportunisticBatching"
GENERIC_WORKLOAD = "GenericWorkload"
TOPOLOGY_AWARE_WORKLOAD_SCHEDULING = "TopologyAwareWorkloadScheduling"
POD_GROUP_PREEMPTION_POLICY = "PodGroupPreemptionPolicy"
COMPOSITE_POD_GROUP = "CompositePodGroup"
DRA_WORKLOAD_RESOURCE_CLAIMS = "DRAWorkloadResourceClaims"
WORKLOAD_WITH_JOB = "WorkloadWithJob"
IN_PLACE_POD_VERTICAL_SCALING_SCHEDULER_PREEMPTION = "InPlacePodVerticalScalingSchedulerPreemption"
DYNAMIC_RESOURCE_ALLOCATION = "DynamicResourceAllocation"
DRA_DEVICE_BINDING_CONDITIONS = "DRADeviceBindingConditions"
DRA_RESOURCE_CLAIM_DEVICE_STATUS = "DRAResourceClaimDeviceStatus"
DRA_SCHEDULER_FILTER_TIMEOUT = "DRASchedulerFilterTimeout"
DRA_DEVICE_TAINTS = "DRADeviceTaints"
DRA_DEVICE_TAINT_RULES = "DRADeviceTaintRules"
DRA_CONSUMABLE_CAPACITY = "DRAConsumableCapacity"
DRA_FRACTIONAL_CAPACITY_RANGE = "DRAFractionalCapacityRange"
DRA_LIST_TYPE_ATTRIBUTES = "DRAListTypeAttributes"
DRA_DEVICE_COMPATIBILITY_GROUPS = "DRADeviceCompatibilityGroups"
DRA_OPTIONAL_NODE_OPERATIONS = "DRAOptionalNodeOperations"
DRA_DERIVED_ATTRIBUTES = "DRADerivedAttributes"
DRA_NODE_ALLOCATABLE_RESOURCES = "DRANodeAllocatableResources"


@dataclass(frozen=True)
class FeatureGate:
    """One gate: its v1.37.2 default and stage, whether upstream locks it to its default, whether
    fastsched implements both values, and the gates it depends on."""

    name: str
    default: bool
    stage: str
    switchable: bool
    #: what in fastsched follows the gate
    modelled_by: str
    #: ``LockToDefault`` at v1.37.2: the other value is upstream's error
    locked: bool = False
    #: ``defaultKubernetesFeatureGateDependencies`` at v1.37.2 (all of them known gates)
    depends_on: tuple[str, ...] = ()


def _gate(name: str, default: bool, stage: str, modelled_by: str, switchable: bool = False,
          locked: bool = False, depends_on: tuple[str, ...] = ()) -> FeatureGate:
    return FeatureGate(name, default, stage, switchable, modelled_by, locked, depends_on)


_DRA = (DYNAMIC_RESOURCE_ALLOCATION,)
_NOT_MODELLED = "not modelled: fastsched runs the default"

#: Every gate fastsched knows, by name: v1.37.2's defaults, stages, locks and dependencies
#: (``k8s.io/kubernetes@v1.37.2/pkg/features/kube_features.go``).
KNOWN_GATES: dict[str, FeatureGate] = {g.name: g for g in (
    # -- the scheduler, its queue and its framework
    _gate(SCHEDULER_ASYNC_PREEMPTION, True, "beta",
          "DefaultPreemption (asynchronous victim eviction, PreEnqueue holds the preemptor)", switchable=True),
    _gate(SCHEDULER_POP_FROM_BACKOFF_Q, True, "beta",
          "the scheduling queue (popping from backoffQ when activeQ is empty, 1 s backoff ordering windows)",
          switchable=True),
    _gate("SchedulerAsyncAPICalls", False, "beta", "the scheduler's API calls (synchronous)"),
    _gate("SchedulerPreQueueingHints", False, "alpha", _NOT_MODELLED),
    # Batching (schedule_one.go, framework/runtime/batch.go) only fires for pods every
    # PreFilter/Filter/PreScore/Score plugin signs; with the default profile PodTopologySpread's
    # system default constraints refuse every pod, so it is dormant there (fastsched.runtime.batch).
    _gate(OPPORTUNISTIC_BATCHING, True, "beta",
          "opportunistic batching (fastsched.runtime.batch: pod signatures, hints from the last cycle's scores)",
          switchable=True),
    _gate("NominatedNodeNameForExpectation", True, "beta",
          "the binding cycle: PreBind pre-flights, a pod that waits at Permit or PreBind nominated to its node",
          switchable=True),
    _gate("ClearingNominatedNodeNameAfterBinding", True, "beta",
          "the binding cycle: a bound pod's nominated node name cleared", switchable=True),
    _gate(GENERIC_WORKLOAD, False, "beta",
          "workload-aware scheduling: PodGroups, pod group cycles, GangScheduling, workload-aware preemption "
          "(off: spec.schedulingGroup dropped, every pod alone)", switchable=True),
    _gate(TOPOLOGY_AWARE_WORKLOAD_SCHEDULING, False, "alpha",
          "topology-aware workload scheduling: PodGroup topology constraints, PlacementGenerate and PlacementScore "
          "(TopologyPlacementGenerator, PodGroupPodsCount, NodeResourcesFit), a group cycle per placement",
          switchable=True, depends_on=(GENERIC_WORKLOAD,)),
    _gate(POD_GROUP_PREEMPTION_POLICY, False, "alpha",
          "PodGroup spec.preemptionPolicy (defaulted to PreemptLowerPriority, copied from the PriorityClass by "
          "Priority admission), validatePodGroup's and workload-aware preemption's policy from the PodGroup "
          "(off: the field dropped, the members' policy)", switchable=True, depends_on=(GENERIC_WORKLOAD,)),
    _gate(COMPOSITE_POD_GROUP, False, "alpha",
          "composite pod groups (groups of PodGroups): the scheduling.k8s.io/v1alpha3 CompositePodGroup kind, "
          "Workload's compositePodGroupTemplates and PodGroup's parentCompositePodGroupName (off: the kind refused, "
          "the fields dropped on create, as kube-apiserver does); a root CompositePodGroup's tree scheduled in one "
          "group cycle (minGroupCount, placements per CompositePodGroup), workload-aware preemption over trees",
          switchable=True, depends_on=(GENERIC_WORKLOAD, TOPOLOGY_AWARE_WORKLOAD_SCHEDULING)),
    # -- controllers
    _gate(WORKLOAD_WITH_JOB, False, "alpha",
          "the Job controller (a Workload and a PodGroup for each new Job without a controller owner, its pods "
          "in the group) and Job's spec.scheduling (off: dropped on create)",
          switchable=True, depends_on=(GENERIC_WORKLOAD,)),
    # -- plugins
    _gate(NODE_DECLARED_FEATURES, True, "GA", "the NodeDeclaredFeatures plugin in the default profile",
          locked=True),
    _gate("NodeInclusionPolicyInPodTopologySpread", True, "GA",
          "PodTopologySpread (fastsched.perf.gates switches it)", locked=True),
    _gate("MatchLabelKeysInPodTopologySpread", True, "beta", "PodTopologySpread (fastsched.perf.gates switches it)"),
    _gate("MatchLabelKeysInPodTopologySpreadSelectorMerge", True, "beta", "PodTopologySpread",
          depends_on=("MatchLabelKeysInPodTopologySpread",)),
    _gate("MatchLabelKeysInPodAffinity", True, "GA", "InterPodAffinity", locked=True),
    _gate("InterPodAffinityHostnameFastPath", False, "alpha", "InterPodAffinity"),
    _gate("TaintTolerationComparisonOperators", False, "alpha", "TaintToleration"),
    _gate(STORAGE_CAPACITY_SCORING, True, "beta",
          "VolumeBinding's Score (capacity of static and provisioned volumes) and VolumeBindingArgs' `shape`",
          switchable=True),
    _gate("VolumeLimitScaling", True, "beta", "NodeVolumeLimits (a CSI volume needs its driver on the node)",
          switchable=True),
    _gate("VolumeAttributesClass", True, "GA", "VolumeBinding", locked=True),
    _gate("MutableCSINodeAllocatableCount", True, "GA", "NodeVolumeLimits", locked=True),
    _gate("ImageVolume", True, "GA", "ImageLocality (image volumes)", locked=True),
    _gate("PodLevelResources", True, "beta", "pod requests (spec.resources)"),
    _gate("InPlacePodVerticalScaling", True, "GA", "pod requests and NodeResourcesFit's scale-down hint",
          locked=True),
    _gate("InPlacePodLevelResourcesVerticalScaling", True, "beta", "pod requests",
          depends_on=("InPlacePodVerticalScaling", "PodLevelResources", NODE_DECLARED_FEATURES)),
    _gate(IN_PLACE_POD_VERTICAL_SCALING_SCHEDULER_PREEMPTION, False, "alpha",
          "the default profile (no DeferredPodScheduling)", depends_on=("InPlacePodVerticalScaling",)),
    # -- dynamic resource allocation
    _gate(DYNAMIC_RESOURCE_ALLOCATION, True, "GA", "the DynamicResources plugin in the default profile",
          locked=True),
    _gate("DRAExtendedResource", True, "GA", "NodeResourcesFit and DynamicResources (device-backed extended "
          "resources)", locked=True, depends_on=_DRA),
    _gate("DRAPrioritizedList", True, "GA", "the DRA allocator (firstAvailable)", locked=True, depends_on=_DRA),
    _gate("DRAAdminAccess", True, "GA", "the DRA allocator", locked=True, depends_on=_DRA),
    _gate(DRA_RESOURCE_CLAIM_DEVICE_STATUS, True, "GA", "the DRA allocator", locked=True),
    _gate(DRA_CONSUMABLE_CAPACITY, True, "beta",
          "the DRA allocator (capacity requests, shared devices; off would also make the API server drop the "
          "fields, not modelled)", depends_on=_DRA),
    # kube_features.go has two 1.37 specs: Beta off, and Beta on with MinCompatibilityVersion 1.37,
    # which applies only with --min-compatibility-version>=1.37 (the default is 1.36): off
    _gate(DRA_FRACTIONAL_CAPACITY_RANGE, False, "beta",
          "the DRA allocator's and the API validation's requestPolicy step arithmetic (milli values)",
          switchable=True, depends_on=(DRA_CONSUMABLE_CAPACITY,)),
    _gate(DRA_DEVICE_TAINTS, True, "GA", "the DRA allocator (device taints: off, they are ignored)",
          switchable=True, depends_on=_DRA),
    _gate(DRA_DEVICE_TAINT_RULES, True, "GA",
          "DynamicResources' slices (DeviceTaintRules' taints added to the devices they select: off, not)",
          switchable=True, depends_on=(DRA_DEVICE_TAINTS,)),
    _gate(DRA_DEVICE_BINDING_CONDITIONS, True, "beta",
          "DynamicResources (binding conditions, bindingTimeout; off would select upstream's stable allocator "
          "variant, not ported)",
          depends_on=(DYNAMIC_RESOURCE_ALLOCATION, DRA_RESOURCE_CLAIM_DEVICE_STATUS)),
    _gate("DRAPartitionableDevices", True, "beta", "the DRA allocator (counters; off: not verified)",
          depends_on=_DRA),
    _gate(DRA_SCHEDULER_FILTER_TIMEOUT, True, "beta",
          "DynamicResources (filterTimeout; off also changes DynamicResourcesArgs' validation, not ported)",
          depends_on=_DRA),
    _gate(DRA_DEVICE_COMPATIBILITY_GROUPS, False, "alpha",
          "counter consumptions' compatibilityGroups: the API server's drop and validation, the allocator's "
          "co-allocation check per counter set (off: slices using them are ignored, their pools incomplete); on, "
          "the allocator is upstream's experimental variant",
          switchable=True, depends_on=(DYNAMIC_RESOURCE_ALLOCATION, "DRAPartitionableDevices")),
    _gate(DRA_DERIVED_ATTRIBUTES, False, "alpha",
          "requests' derivedAttributes (off: dropped on create, a request still having them refused by the "
          "allocator); on, their API validation and the allocator's constraints seeing them (evaluated per "
          "device, shadowing the device's attribute of that name for that request), the allocator being "
          "upstream's experimental variant",
          switchable=True, depends_on=_DRA),
    _gate(DRA_LIST_TYPE_ATTRIBUTES, False, "alpha",
          "list-valued device attributes (ints, bools, strings, versions): the API server's drop and validation, "
          "CEL lists and includes(), the allocator's set semantics of matchAttribute and distinctAttribute; on, "
          "the allocator is upstream's experimental variant (the same search as incubating otherwise)",
          switchable=True, depends_on=_DRA),
    _gate(DRA_NODE_ALLOCATABLE_RESOURCES, False, "alpha",
          "devices' nodeAllocatableResources and pods' status.nodeAllocatableResourceClaimStatuses (off: dropped "
          "on create); on, DynamicResources' Filter refuses sharing a claim with a mapped device and checks the "
          "pod's footprint with its claims' cpu/memory against the node (node by node), the assume copies the "
          "claim statuses into the pod, which NodeInfo counts, PreBind writes them and Unreserve clears them",
          switchable=True, depends_on=_DRA),
    _gate(DRA_OPTIONAL_NODE_OPERATIONS, False, "alpha",
          "ResourceSlices' spec.skipNodeOperations: the API server's drop and validation (also of a given claim "
          "status's results), the allocator's (a device with it only on a node declaring DRAOptionalNodeOperations, "
          "copied into its result; on, the allocator is upstream's experimental variant); DynamicResources' Filter "
          "checks allocated and pending allocations needing it whatever the gate",
          switchable=True, depends_on=(DYNAMIC_RESOURCE_ALLOCATION, NODE_DECLARED_FEATURES)),
    _gate(DRA_WORKLOAD_RESOURCE_CLAIMS, False, "beta",
          "PodGroup claims: a PodGroup's spec.resourceClaims kept on create, DynamicResources reserving a member's "
          "matching claims for the group (PreFilter, PreBind, PodGroupPostFilter), the resourceclaim controller's "
          "group claims from templates (off: spec.resourceClaims dropped, every claim the pod's)",
          switchable=True, depends_on=(DYNAMIC_RESOURCE_ALLOCATION, GENERIC_WORKLOAD)),
)}


class FeatureGateError(FastschedError, ValueError):
    """A feature gate that is unknown, not switchable here, or given a value that is no bool."""


def _go_bool(value: bool) -> str:
    return "true" if value else "false"


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
    """The value of every known gate: v1.37.2's defaults, overridden by ``gates`` (a mapping of
    gate names to bools, another FeatureGates, or upstream's ``"A=true,B=false"`` syntax).

    Raises :class:`FeatureGateError` for an unknown gate (naming the known ones), a value that is
    not a bool, a locked gate set away from its default, a gate on whose dependencies are off
    (upstream's messages, ``featuregate.unsafeSetFromMap``), or a fixed gate set away from its
    default (fastsched's message).
    """

    __slots__ = ("_values", "_overrides", "_non_defaults")

    def __init__(self, gates: Mapping[str, Any] | str | "FeatureGates" | None = None):
        overrides = _parse(gates)
        values = {name: g.default for name, g in KNOWN_GATES.items()}
        errs: list[str] = []
        for name, value in overrides.items():
            gate = KNOWN_GATES.get(name)
            if gate is None:
                # upstream returns at the first unknown gate
                raise FeatureGateError(f"unrecognized feature gate: {name} (fastsched knows: {_known_list()})")
            if gate.locked and value != gate.default:
                errs.append(f"cannot set feature gate {name} to {_go_bool(value)}, feature is locked to "
                            f"{_go_bool(gate.default)}")
                continue
            values[name] = value
        if not errs:
            # dependencies are checked once every gate is set (upstream: only when none failed)
            for name, gate in KNOWN_GATES.items():
                off = [dep for dep in gate.depends_on if not values[dep]]
                if values[name] and off:
                    errs.append(f"{name} is enabled, but depends on features that are disabled: [{' '.join(off)}]")
        if errs:
            # utilerrors.NewAggregate: one message as is, several in brackets
            raise FeatureGateError(errs[0] if len(errs) == 1 else f"[{', '.join(errs)}]")
        for name, value in overrides.items():
            gate = KNOWN_GATES[name]
            if value != gate.default and not gate.switchable:
                raise FeatureGateError(
                    f"feature gate {name}={_go_bool(value)} is not supported: fastsched implements {name} "
                    f"only as v1.37's default ({_go_bool(gate.default)}, {gate.stage}; {gate.modelled_by}); "
                    f"switchable gates: {', '.join(n for n, g in KNOWN_GATES.items() if g.switchable)}")
        self._values = values
        self._overrides = overrides
        self._non_defaults: frozenset[tuple[str, bool]] | None = None

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

    def non_defaults(self) -> frozenset[tuple[str, bool]]:
        """The gates whose value is not v1.37.2's default, as (name, value) pairs: what
        :func:`fastsched.api.load.gate_overrides` answers for these gates. Computed once: the
        values never change after construction, and the loader asks for every ``load_objects``
        call (scheduler_perf's runner makes one per pod of a template whose pods all differ,
        ``foo.com/bar-{{.Index}}``: the pass over every known gate was ~5% of making a pod)."""
        kept = self._non_defaults
        if kept is None:
            kept = self._non_defaults = frozenset(
                (name, bool(value)) for name, value in self._values.items()
                if bool(value) != KNOWN_GATES[name].default)
        return kept

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
        return f"FeatureGates({given})" if given else "FeatureGates(v1.37 defaults)"


#: v1.37.2's defaults.
DEFAULTS = FeatureGates()


def feature_gates_of(handle: Any) -> FeatureGates:
    """A plugin's gates: its handle's ``feature_gates`` (a FeatureGates or a mapping), else the
    v1.37.2 defaults (no handle, or a handle without gates)."""
    gates = getattr(handle, "feature_gates", None)
    if gates is None:
        return DEFAULTS
    return gates if isinstance(gates, FeatureGates) else FeatureGates(gates)


__all__ = ["COMPOSITE_POD_GROUP", "DEFAULTS", "DRA_WORKLOAD_RESOURCE_CLAIMS", "FeatureGate", "FeatureGateError",
           "FeatureGates", "GENERIC_WORKLOAD", "KNOWN_GATES", "POD_GROUP_PREEMPTION_POLICY", "WORKLOAD_WITH_JOB",
           "NODE_DECLARED_FEATURES", "OPPORTUNISTIC_BATCHING", "SCHEDULER_ASYNC_PREEMPTION", "SCHEDULER_QUEUEING_HINTS",
           "STORAGE_CAPACITY_SCORING", "TOPOLOGY_AWARE_WORKLOAD_SCHEDULING", "feature_gates_of"]
