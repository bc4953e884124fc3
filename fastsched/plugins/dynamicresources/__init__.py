"""DynamicResources (upstream ``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go``, v1.37.2).

Extension points as upstream: PreEnqueue, PreFilter, Filter, PostFilter, Score / NormalizeScore
(in v1.37.2's default profile with weight 2), Reserve / Unreserve, PreBind (with
PreBindPreFlight) and EnqueueExtensions with queueing hints. Claims, slices and classes are read
through ``handle.client`` (see :mod:`.manager`); allocation is the structured allocator's
incubating variant (:mod:`fastsched.dra.allocator`), which v1.37.2's default gates select. Not
modelled: the alpha gate DRADerivedAttributes.
Node-allocatable resources (DRANodeAllocatableResources, alpha; :mod:`.nodeallocatable`): PreFilter
marks the allocated (or pending) claims with a device that maps cpu/memory; Filter refuses such a
claim reserved for another consumer or put in flight by another member of the pod group cycle
(``node allocatable resource claim <claim> has a mapped device and cannot be shared across pods``),
then, after the allocator, sums the claims' devices' amounts into the pod's claim statuses, checks
the pod's pod-level requests and limits cover them and the whole footprint fits the node's free
allocatable (``Insufficient cpu`` etc., UnschedulableAndUnresolvable past the allocatable) and
keeps the statuses per node; the scheduler's assume copies them into the assumed pod (NodeInfo counts them),
PreBind writes them into the pod's status, Unreserve clears them. Such pods' batch Filter runs node
by node.
Optional node operations (DRAOptionalNodeOperations): an allocated claim whose results have
``skipNodeOperations`` is unavailable on a node without the declared feature, a reused pending
allocation with them fails there with ``resource claim <claim> allocation requires
DRAOptionalNodeOperations feature on the node``, whatever the gate (the allocator honours it).
DeviceTaintRules (DRADeviceTaintRules, GA) add their taints to the devices they select when the
slices are read (:mod:`.manager`); DRADeviceTaints and DRADeviceTaintRules can be switched off.

Extended resources backed by DRA (DRAExtendedResource, GA; upstream
``extendeddynamicresources.go``): a pod requesting an extended resource that a DeviceClass maps
(``spec.extendedResourceName`` or ``deviceclass.resource.kubernetes.io/<class>``, see
:mod:`fastsched.dra.extended_resources`) gets a special claim after its own ones: PreFilter finds
the claim a prior cycle created for the pod or makes one in memory (``<extended-resources>``);
Filter gives it, per node, one request per container and resource the node's allocatable does not
offer (``cannot fit resource`` when neither a device plugin nor a class provides one; ``cannot
schedule extended resource claim`` for a claim of a prior cycle, which PostFilter then deletes);
Reserve marks its allocation in flight; PreBind creates it (``<pod>-extended-resources-`` plus a
generated suffix) with its allocation and reservation. The pod's
``status.extendedResourceClaimStatus`` is not modelled (nothing in the scheduler reads it).
As upstream, a pod with claims of its own whose extended resources the chosen node offers through a
device plugin fails PreBind (``nil or empty request mappings, no update of pod ...``): its special
claim for that node has no request.

For a pod without ``spec.resourceClaims`` (and without extended resources a class maps), as
upstream: PreEnqueue succeeds; PreFilter stores an
empty state and returns Skip; Filter and Reserve succeed; PostFilter returns Unschedulable
without a message (v1.34 said ``no new claims to deallocate``); Score is 0; PreBindPreFlight
returns Skip and PreBind Success. Filter,
PostFilter, Reserve, PreBindPreFlight and PreBind return an Error (``not found``) when PreFilter did
not store its state. Every rejection uses UnschedulableAndUnresolvable, as upstream's
``statusUnschedulable``.

Binding conditions (v1.37.2): Filter makes an allocated claim whose devices failed to bind
unavailable; PreBind checks the conditions once after writing the claims (upstream polls until
``bindingTimeout``; nothing sets device conditions in fastsched meanwhile, so pending conditions
end as the poll ends: ``device binding timeout: context deadline exceeded``). Not modelled: the
allocation timestamp and the timeout it starts (Filter's not-ready-and-timed-out check).

In a pod group cycle (GenericWorkload) a member reuses the allocation an earlier member's Reserve
put in flight for a claim they share (upstream ``podGroupStateData.pendingAllocations``): Filter
leaves it out of the allocator and appends it after the fresh results, Score and Reserve pair that
list with the claims in order (upstream's swap included), the manager counts the sharers. A write
of the claim PreFilter read fails with the API server's Conflict when the claim changed since
(PostFilter's deallocation; PreBind re-reads the claim, as upstream's retry on that Conflict).

Deviations: PostFilter picks the lowest-index unavailable claim where upstream iterates a Go set
(random).

Filter is vectorized over nodes (:mod:`.vectorized`) for the common shapes: claims with
``exactly`` ExactCount requests, all ResourceSlices bound to one node by ``nodeName``; nodes
without enough free matching devices are rejected from per-node count columns, the others go
through the allocator one by one, as upstream.
"""
from __future__ import annotations

import itertools
import time
from typing import TYPE_CHECKING, Any, Mapping, Sequence, cast

import numpy as np

from ...api.labels import NodeSelector
from ...api.objects import OwnerReference, Pod as _Pod, _field_copier
from ...api.resource import (DRA_OPTIONAL_NODE_OPERATIONS_FEATURE, FINALIZER, ResourceClaim,
                             allocation_requires_optional_node_operations, claim_spec_fields, claim_with_status,
                             parse_resource_claim)
from ...api.validation import ValidationError
from ...config.args import DynamicResourcesArgs
from ...features import (DRA_DERIVED_ATTRIBUTES, DRA_DEVICE_COMPATIBILITY_GROUPS, DRA_DEVICE_TAINT_RULES,
                         DRA_DEVICE_TAINTS, DRA_FRACTIONAL_CAPACITY_RANGE, DRA_LIST_TYPE_ATTRIBUTES,
                         DRA_NODE_ALLOCATABLE_RESOURCES, DRA_OPTIONAL_NODE_OPERATIONS, DRA_WORKLOAD_RESOURCE_CLAIMS,
                         TOPOLOGY_AWARE_WORKLOAD_SCHEDULING, feature_gates_of)
from ...dra.allocator import (Allocator, AllocationTimeout, AllocatorError, FailedAllocationOnNode, Features,
                              GroupAnswer, relocated)
from ...dra.extended_resources import (EXTENDED_RESOURCE_CLAIM_ANNOTATION, SPECIAL_CLAIM_IN_MEM_NAME,
                                       create_requests_and_mappings, is_dra_extended_resource_name)
from ...framework import protocols as fwk
from ...framework.columns import CYCLE, NODES, NORMALIZE_DEFAULT, ColumnForm
from ...framework.cycle_state import CycleState
from ...framework.composite import COMPOSITE_POD_GROUP_KEY_TYPE
from ...framework.podgroups import PodGroupStateError
from ...framework.interface import (ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions,
                                    EventResource, PostFilterPlugin, PreBindPlugin, PreEnqueuePlugin,
                                    PreFilterPlugin, QueueingHint, ReservePlugin)
from ...framework import signers
from ...framework.status import MAX_NODE_SCORE, SKIP, Code, Status
from ...framework.types import NodeScore
from ...framework.vectorized import (FilterVerdicts, VectorizedFilterPlugin, VectorizedScoreExtensions,
                                     VectorizedScorePlugin)
from ..helper.normalize_score import default_normalize_score
from ..helper.args import validated_args
from ..helper.typed import as_typed
from .manager import DeviceClassesGuard, DRAManager, manager_for, manager_of_handle
from . import nodeallocatable as na
from .resourceclaim import (ClaimLookupError, bind_to, claim_name, claim_name_from_pod_group, is_for_pod,
                            is_for_pod_group)
from .resourceclaim import is_reserved_for_pod as _is_reserved_for_pod

if TYPE_CHECKING:  # pragma: no cover
    from ...api import Pod
    from ...framework.types import NodeToStatus
    from ...framework.protocols import NodeTable
    from .vectorized import DeviceColumns

NAME = "DynamicResources"
#: requests that column_guard and mapped_extended_resources answer None for at once (no DRA
#: extended resource name among them)
_CPU_MEMORY = frozenset(("cpu", "memory"))
#: PreFilter stores the state Reserve and PreBind read, then answers Skip (pods without claims);
#: Score is 0 on every node (a constant, which the fused kernel adds as such).
_COLUMN_FORM = ColumnForm(filter=NODES, score=NODES, normalize=NORMALIZE_DEFAULT, keeps_state=True, reads=())
#: Pods with claims: Filter reads the claims, slices and allocations, which change between cycles;
#: Score reads Filter's allocations per node; Reserve, PreBind and PostFilter read PreFilter's state.
_EACH_CYCLE = ColumnForm(filter=CYCLE, score=CYCLE, normalize=NORMALIZE_DEFAULT, keeps_state=True)
#: ``resourceapi.FirstAvailableDeviceRequestMaxSize``: the first subrequest of a list scores 8
FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE = 8
#: CycleState key (upstream ``stateKey = Name``)
STATE_KEY = NAME
RESOURCE_CLAIM_IN_USE = "resourceclaim in use"
CANNOT_ALLOCATE_ALL_CLAIMS = "cannot allocate all claims"
CLAIM_NOT_AVAILABLE_ON_NODE = "resourceclaim not available on the node"
TIMED_OUT = "timed out trying to allocate devices"
DEALLOCATION_COMPLETED = "deallocation of ResourceClaim completed"
POD_GROUP_DEALLOCATION_COMPLETED = "deallocation and deletion of ResourceClaims completed"
POD_GROUP_CLAIM_DEALLOCATION_COMPLETED = "deallocation of PodGroup ResourceClaim completed"
POD_GROUP_CLAIM_UNRESERVED = "ResourceClaim unreserved for PodGroup"
#: the key a member's CycleState holds its group's CycleState under during a pod group cycle
#: (``SetPodGroupSchedulingCycle``; the scheduler's ``schedule_one_podgroup.POD_GROUP_CYCLE_KEY``)
POD_GROUP_CYCLE_KEY = "fastsched.io/pod-group-scheduling-cycle"
DELETION_COMPLETED = "deletion of ResourceClaim completed"
CANNOT_SCHEDULE_EXTENDED_CLAIM = "cannot schedule extended resource claim"
CANNOT_FIT_RESOURCE = "cannot fit resource"
#: the in-memory special claims' temporary UIDs (upstream: uuid.NewUUID())
_SPECIAL_UIDS = itertools.count(1)
#: a field-for-field copy of a ResourceClaim without ``__init__`` (the special claims' builders)
_copy_claim = _field_copier(ResourceClaim)
RESOURCE_CLAIM = EventResource.RESOURCE_CLAIM
RESOURCE_SLICE = EventResource.RESOURCE_SLICE
DEVICE_CLASS = EventResource.DEVICE_CLASS


def declares_optional_node_operations(node: Any) -> bool:
    """Whether the node's ``status.declaredFeatures`` has ``DRAOptionalNodeOperations``."""
    return DRA_OPTIONAL_NODE_OPERATIONS_FEATURE in (getattr(node, "declared_features", None) or ())


def _kobj(obj: Any) -> str:
    return f"{obj.namespace}/{obj.name}" if obj.namespace else obj.name


def _unschedulable(reason: str) -> Status:
    """Upstream ``statusUnschedulable``: always UnschedulableAndUnresolvable."""
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason)


def _error(err: BaseException | str) -> Status:
    return Status.from_error(err)


def is_reserved_for_pod(pod: Any, claim: ResourceClaim, accept_pod_group_reservation: bool = False) -> bool:
    """``resourceclaim.IsReservedForPod``: the pod's own reservation, or (DRAWorkloadResourceClaims
    on, ``accept_pod_group_reservation``) its PodGroup's."""
    return _is_reserved_for_pod(pod, claim, accept_pod_group_reservation)


def can_be_reserved(claim: ResourceClaim) -> bool:
    """``resourceclaim.CanBeReserved`` (v0.37.2): always true, "currently no restrictions on
    sharing". A claim with ResourceClaimReservedForMaxSize (256) reservations passes PreFilter;
    PreBind's status write adding the pod is then refused by the API server (an Error status).
    v0.34.4's refused such a claim at PreFilter ("resourceclaim in use")."""
    return True


def _claim_not_found(namespace: str, name: str) -> str:
    """A missing claim, as upstream's ``draManager.ResourceClaims().Get`` reports it: the claim
    tracker reads the assume cache, whose ``ErrNotFound`` says ``could not find ResourceClaim
    "ns/name"`` (not the API server's ``resourceclaim.resource.k8s.io "name" not found``)."""
    return f'could not find ResourceClaim "{namespace}/{name}"'


def pod_claims(manager: DRAManager, pod: Any, accept_pod_group_owner: bool = False) -> list[ResourceClaim]:
    """``foreachPodResourceClaim``: the pod's claims; ClaimLookupError with upstream's text for
    the first that is missing, being deleted or (from a template) not owned by the pod -- or, with
    ``accept_pod_group_owner`` (DRAWorkloadResourceClaims), by its PodGroup."""
    out = []
    for entry in pod.resource_claims:
        name, must_check_owner = claim_name(pod, entry)
        if name is None:
            continue
        claim = manager.get_claim(pod.namespace, name)
        if claim is None:
            raise ClaimLookupError(_claim_not_found(pod.namespace, name))
        if claim.deletion_timestamp is not None:
            raise ClaimLookupError(f'resourceclaim "{claim.name}" is being deleted')
        if must_check_owner:
            # resourceclaim.IsForPod, dynamic-resource-allocation v0.37.2 (v0.34.4 wrote "pod ...
            # (pod is not owner)"); DRAWorkloadResourceClaims accepts the pod's PodGroup as owner
            err = is_for_pod(pod, claim, accept_pod_group_owner)
            if err is not None:
                raise ClaimLookupError(err)
        out.append(claim)
    return out


class _StateData:
    """Upstream ``stateData``: the pod's claims (1:1 with the ones found), the allocator when
    some claim must be allocated, per-claim node selectors / chosen allocations, the indices of
    allocated claims unavailable on some node (for PostFilter) and Filter's results per node."""

    __slots__ = ("claims", "allocator", "unavailable_claims", "available_on_nodes", "allocations",
                 "node_allocations", "to_allocate", "vector", "binding_failed", "num_user_claims",
                 "pod_scalar_resources", "node_extended", "initial_extended_uid", "pod", "extended_claims",
                 "reused", "needs_node_operations", "bindings", "after_reserve", "mapped_claims",
                 "node_allocatable_statuses", "node_pools", "row_groups", "group_answers", "group_table")

    def __init__(self) -> None:
        self.claims: list[ResourceClaim] = []
        self.allocator: Allocator | None = None
        self.unavailable_claims: set[int] = set()
        self.available_on_nodes: list[NodeSelector | None] = []
        self.allocations: list[dict | None] = []
        self.node_allocations: dict[str, list[dict]] = {}
        self.to_allocate: list[int] = []
        self.vector: Any = None  # the vectorized filter's per-pod plan (None: per node only)
        #: indices of allocated claims whose devices' binding failed (unavailable on every node)
        self.binding_failed: set[int] = set()
        #: claims[:num_user_claims] are the pod's own; claims[num_user_claims], when there, is the
        #: special claim for extended resources backed by DRA (upstream claimStore)
        self.num_user_claims = 0
        #: the pod's DRA-extended-resource requests (draExtendedResource.podScalarResources)
        self.pod_scalar_resources: dict[str, int] = {}
        #: node -> (the special claim for the node or None, container request mappings)
        self.node_extended: dict[str, tuple[ResourceClaim | None, list[dict[str, str]]]] = {}
        self.initial_extended_uid = ""
        self.pod: Any = None
        #: the special claim and its mappings per distinct set of DRA-served requests: nodes that
        #: leave the pod the same requests get the same claim object, so that the allocator's
        #: node-shape cache (which compares claims by identity) serves them one search
        self.extended_claims: dict[tuple, tuple[ResourceClaim, list[dict[str, str]]]] = {}
        #: indices (in ``to_allocate`` order) of unallocated claims whose allocation another member
        #: of this pod group cycle made in Reserve and PreFilter reuses (upstream: PreFilter sets
        #: ``informationsForClaim[index].allocation``); Filter leaves them out of the allocator
        self.reused: list[int] = []
        #: once Reserve ran on this state: the indices (in ``to_allocate`` order) of every claim it
        #: allocated, which a later Filter on the state takes as pending allocations instead of
        #: ``reused`` (upstream: Reserve sets ``informationsForClaim[index].allocation``); None before
        self.after_reserve: list[int] | None = None
        #: indices of allocated claims, and of reused pending allocations, with a device that skips
        #: node operations (``allocationResultRequiresDRAOptionalNodeOperations``): usable only on
        #: nodes declaring DRAOptionalNodeOperations (checked whatever the gate, as upstream)
        self.needs_node_operations: set[int] = set()
        #: DRAWorkloadResourceClaims: the ``reservedFor`` entry of each of the pod's
        #: ``spec.resourceClaims`` entries, in *that* order (upstream ``claimStore.bindTo``, from
        #: ``podResourceClaimBindings``); empty with the gate off
        self.bindings: list[dict[str, str]] = []
        #: DRANodeAllocatableResources: claim uid -> whether its allocation (or pending one) has a
        #: device with a ``mapping`` (``claimHasNodeAllocatableMappedDevice``); None with the gate off
        self.mapped_claims: dict[str, bool] | None = None
        #: DRANodeAllocatableResources: node -> the pod's claim statuses Filter computed there
        #: (``nodeAllocation.nodeAllocatableResourceClaimStatuses``), read by the assume, PreBind
        #: and Unreserve
        self.node_allocatable_statuses: dict[str, list[dict[str, Any]]] = {}
        #: node -> its pools (driver, pool name) in the allocator's order, for the nodes whose
        #: ``node_allocations`` entry is a batch Filter's :class:`GroupAnswer` (written with it)
        self.node_pools: dict[str, tuple[tuple[str, str], ...]] = {}
        #: the batch Filter's shared answers by row of ``group_table`` (``vectorized._by_shape``):
        #: the index in ``group_answers`` of the group answer a node got without a Filter call of
        #: its own (-1: none; a ``node_allocations`` entry written later clears it), and per
        #: group (its GroupAnswer, the kept pools column it read the nodes' pools from)
        self.row_groups: Any = None
        self.group_answers: list[tuple[GroupAnswer, Any]] = []
        self.group_table: Any = None

    def allocation_at(self, node_name: str) -> list[dict] | None:
        """Filter's allocation for ``node_name``, naming that node's pools (``relocated``)."""
        answer = self.node_allocations.get(node_name)
        if answer is None and self.row_groups is not None:
            found = self._group_answer(node_name)
            return None if found is None else found[0].at(node_name, found[1])
        if type(answer) is GroupAnswer:
            return answer.at(node_name, self.node_pools[node_name])
        return relocated(answer)

    def filter_answer(self, node_name: str) -> list[dict] | None:
        """Filter's allocation for ``node_name`` as it recorded it (``node_allocations``' entry,
        or the group answer the node shares: another node's pools), for Score."""
        answer = self.node_allocations.get(node_name)
        if answer is None and self.row_groups is not None:
            found = self._group_answer(node_name)
            return None if found is None else found[0]
        return answer

    def _group_answer(self, node_name: str) -> tuple[GroupAnswer, tuple[tuple[str, str], ...]] | None:
        row = self.group_table.row_of.get(node_name)
        if row is None or row >= len(self.row_groups):
            return None
        g = int(self.row_groups[row])
        if g < 0:
            return None
        answer, pools = self.group_answers[g]
        return answer, pools[row]

    def set_node_allocation(self, node_name: str, answer: list[dict]) -> None:
        """``node_allocations[node_name] = answer``, over any group answer the node had."""
        self.node_allocations[node_name] = answer
        if self.row_groups is not None:
            row = self.group_table.row_of.get(node_name)
            if row is not None and row < len(self.row_groups):
                self.row_groups[row] = -1

    def binding(self, index: int, pod: Any) -> dict[str, str]:
        """``claimStore.getBinding``: ``bindings[index]``, else the pod. As upstream, ``index``
        counts the claims found, ``bindings`` the pod's entries: an entry whose claim was not
        needed (no name in the status) shifts the later claims' bindings, and the special claim
        for extended resources takes the entry at its index when there is one."""
        if index < len(self.bindings):
            return self.bindings[index]
        return {"resource": "pods", "name": pod.name, "uid": pod.uid}

    @property
    def extended_index(self) -> int | None:
        """The special claim's index in ``claims`` (None: the pod has none)."""
        return self.num_user_claims if len(self.claims) > self.num_user_claims else None

    def clone(self) -> "_StateData":
        return self  # upstream shares the pointer across clones


class _OwnClassesGuard:
    """DynamicResources' guard source when the handle's DRA manager is not its own (see
    ``DynamicResources.column_guard_source``): the DeviceClasses' version its guard reads."""

    __slots__ = ("plugin",)

    def __init__(self, plugin: "DynamicResources") -> None:
        self.plugin = plugin

    def __eq__(self, other: object) -> bool:
        return type(other) is _OwnClassesGuard and other.plugin is self.plugin

    def __hash__(self) -> int:
        return hash((_OwnClassesGuard, id(self.plugin)))

    def __call__(self) -> Any:
        manager = self.plugin.manager
        if manager.incremental:
            return manager.class_version
        classes = manager.client.list_objects("DeviceClass") if manager.client is not None else ()
        return hash(tuple((c.name, c.extended_resource_name, c.creation_timestamp) for c in classes))


class _PodGroupStateData:
    """Upstream ``podGroupStateData``: kept in the group's CycleState by PreFilter during a pod
    group cycle (GenericWorkload; DRAWorkloadResourceClaims is not needed for it)."""

    __slots__ = ("pods_state_data", "pending_allocations")

    def __init__(self) -> None:
        #: (namespace, name) -> the member's PreFilter state of this group cycle
        self.pods_state_data: dict[tuple[str, str], _StateData] = {}
        #: claim uid -> the uids of the members whose Reserve put (or shared) the claim's
        #: allocation in flight in *this* group cycle (``pendingAllocations``): only those
        #: allocations are reused by later members; the manager counts the sharers
        self.pending_allocations: dict[str, set[str]] = {}

    def clone(self) -> "_PodGroupStateData":
        return self


def _get_or_create_pod_group_state(group_state: CycleState) -> _PodGroupStateData:
    """``getOrCreatePodGroupStateData``."""
    data = group_state.get(STATE_KEY)
    if not isinstance(data, _PodGroupStateData):
        data = _PodGroupStateData()
        group_state.write(STATE_KEY, data)
    return data


def _pod_group_state(state: CycleState) -> _PodGroupStateData | None:
    """``getPodGroupStateData``: the group cycle's state, None outside a pod group cycle (and in
    the binding cycle, where the scheduler has removed the group's CycleState)."""
    group_state = state.get(POD_GROUP_CYCLE_KEY)
    if group_state is None:
        return None
    data = group_state.get(STATE_KEY)
    return data if isinstance(data, _PodGroupStateData) else None


def _state(state: CycleState) -> _StateData | Status:
    """The PreFilter's state data, or the Error status of its absence."""
    try:
        data: _StateData = state.read(STATE_KEY)
    except KeyError as e:
        return Status.from_error(e)
    return data


class DynamicResources(PreEnqueuePlugin, PreFilterPlugin, VectorizedFilterPlugin, PostFilterPlugin,
                       VectorizedScorePlugin, VectorizedScoreExtensions, ReservePlugin, PreBindPlugin,
                       EnqueueExtensions):
    """ResourceClaim allocation with structured parameters, as upstream v1.37.2."""

    def __init__(self, args: DynamicResourcesArgs | None = None, handle: fwk.Handle | None = None,
                 enable_scheduling_queue_hint: bool = True, features: Features | None = None,
                 workload_resource_claims: bool | None = None, node_allocatable_resources: bool | None = None):
        self.args = args if args is not None else DynamicResourcesArgs()
        self._enable_scheduling_queue_hint = enable_scheduling_queue_hint
        gates = feature_gates_of(handle)
        #: DRADeviceTaints (GA, not locked) switches the allocator's taint checks;
        #: DRADeviceTaintRules whether DeviceTaintRules taint the slices' devices
        self.features = features if features is not None else Features(
            device_taints=gates.enabled(DRA_DEVICE_TAINTS),
            fractional_capacity_range=gates.enabled(DRA_FRACTIONAL_CAPACITY_RANGE),
            list_type_attributes=gates.enabled(DRA_LIST_TYPE_ATTRIBUTES),
            compatibility_groups=gates.enabled(DRA_DEVICE_COMPATIBILITY_GROUPS),
            optional_node_operations=gates.enabled(DRA_OPTIONAL_NODE_OPERATIONS),
            derived_attributes=gates.enabled(DRA_DERIVED_ATTRIBUTES))
        self._taint_rules = gates.enabled(DRA_DEVICE_TAINT_RULES)
        #: TopologyAwareWorkloadScheduling: PodGroupPostFilter leaves groups with constraints alone
        self._topology_aware = gates.enabled(TOPOLOGY_AWARE_WORKLOAD_SCHEDULING)
        #: DRAWorkloadResourceClaims (``fts.EnableDRAWorkloadResourceClaims``): claims of a
        #: PodGroup's ``spec.resourceClaims`` are reserved for the group; ``workload_resource_claims``
        #: sets it for a plugin built without a framework (tests)
        self.workload_claims = (gates.enabled(DRA_WORKLOAD_RESOURCE_CLAIMS) if workload_resource_claims is None
                                else workload_resource_claims)
        #: DRANodeAllocatableResources (``fts.EnableDRANodeAllocatableResources``); the argument sets
        #: it for a plugin built without a framework (tests)
        self.node_allocatable = (gates.enabled(DRA_NODE_ALLOCATABLE_RESOURCES) if node_allocatable_resources is None
                                 else node_allocatable_resources)
        self._handle = handle
        self.filter_timeout = float(self.args.filter_timeout or 0)
        self._client: fwk.Client | None = getattr(handle, "client", None) if handle is not None else None
        self._manager: DRAManager | None = None
        # the special claims' parsed specs by their requests (see _create_extended_resource_claim)
        self._special_specs: dict[tuple, dict[str, Any]] = {}
        #: the special claims' requests (and their spec manifests) that this plugin's client
        #: validated and stored unchanged once: a later claim with them needs only its metadata
        #: checked (``_create_extended_resource_claim``; bounded: cleared when full)
        self._special_admitted: dict[tuple, dict[str, Any]] = {}
        #: the batch Filter's device columns (fastsched.plugins.dynamicresources.vectorized)
        self._vector_filter: DeviceColumns | None = None
        #: the manager's slice version the selector cache was last pruned at
        self._retained_version: int | None = None
        #: (DRA-served requests, their classes' names) -> (the pod's init containers and containers
        #: the requests were made from, the special claim's requests, the mappings): pods stamped
        #: from one template share their container tuples, so each needs
        #: ``create_requests_and_mappings`` once, not once per pod (bounded: cleared when full)
        self._special_requests: dict[tuple, tuple[Any, Any, tuple, list[dict[str, str]]]] = {}
        #: id(a special claim's requests) -> (those requests, what the batch Filter's plan reads
        #: of them: ``vectorized._needs``): kept per requests object, which ``_special_requests``
        #: shares across pods (bounded: cleared when full)
        self._special_needs: dict[int, tuple[tuple, Any]] = {}
        #: id(a special claim's parsed spec fields, ``_special_spec``'s) -> (those fields, the
        #: unnamed claim they and the annotation make): PreBind's created claims are field copies
        #: of it (``_created_special_claim``; bounded: cleared when full)
        self._special_protos: dict[int, tuple[dict[str, Any], ResourceClaim]] = {}

    def _update_object(self, obj: Any) -> None:
        """``client.update_object(obj)``; without a client it raises what the call on None did
        (an AttributeError, which the callers turn into an Error status or ignore, as before)."""
        client = self._client
        if client is None:
            raise AttributeError("'NoneType' object has no attribute 'update_object'")
        client.update_object(obj)

    @property
    def manager(self) -> DRAManager:
        if self._manager is None:
            self._manager = manager_for(self._client)
            self._manager.taint_rules_enabled = self._taint_rules
            self._manager.consumable_capacity = self.features.consumable_capacity
        return self._manager

    #: a Skip from PreFilter (the pod has no claims) leaves Reserve, Unreserve, PreBindPreFlight and
    #: PreBind nothing to do (see ReservePlugin.binding_idle_on_pre_filter_skip)
    binding_idle_on_pre_filter_skip = True

    def name(self) -> str:
        return NAME

    # -- opportunistic batching ---------------------------------------------------------------------
    def sign_pod(self, pod: Pod) -> tuple[signers.Fragments | None, Status | None]:
        """Upstream ``SignPod``: no fragment; refuses a pod with resource claims."""
        if pod.resource_claims:
            return None, Status(Code.UNSCHEDULABLE, "pods with dra resource claims are not signable")
        return None, None

    #: the pod spec fields its column form and plan parts read (fastsched.framework.columns)
    column_reads = ("namespace", "resource_claims", "containers", "init_containers", "overhead")
    #: its column form and plan parts read no container's ``volume_mounts`` (compiled_cycle shares a plan
    #: between pods whose mounts alone differ)
    column_reads_mounts = False

    def column_named_resources(self, pod: Pod) -> frozenset[str] | None:
        """The requested resources its plan parts depend on by name: none unless a DeviceClass maps
        one of them (then it cannot say: None)."""
        return None if self.mapped_extended_resources(pod) is not None else frozenset()

    def column_form(self, pod: Pod, table: NodeTable) -> ColumnForm | None:
        """The fused cycle's form for pods without claims: PreFilter stores the state Reserve and
        PreBind read, then answers Skip. Pods with claims, or with extended resources a DeviceClass
        maps: their Filter runs each cycle (CYCLE). So does every pod with DRAWorkloadResourceClaims:
        a PodGroup member's PreFilter looks its group up and fails without it, and the form cannot
        tell members apart (``spec.schedulingGroup`` is not among the fields plans are keyed on)."""
        if pod.resource_claims or self.workload_claims or self.mapped_extended_resources(pod) is not None:
            return _EACH_CYCLE
        return _COLUMN_FORM

    def column_guard(self, pod: Pod, table: NodeTable) -> int | None:  # noqa: D401
        """The DeviceClasses' version for a pod requesting extended resources (a class added,
        changed or removed may map them), else None."""
        requests = pod.requests
        if _CPU_MEMORY.issuperset(requests):  # (in C: the compiled cycle asks every cycle)
            return None
        if any(is_dra_extended_resource_name(name) for name in requests):
            manager = self.manager
            if manager.incremental:
                return manager.class_version
            classes = manager.client.list_objects("DeviceClass") if manager.client is not None else ()
            return hash(tuple((c.name, c.extended_resource_name, c.creation_timestamp) for c in classes))
        return None

    def column_guard_fixed(self, pod: Pod) -> bool:
        """:meth:`column_guard` is None for every cluster state when the pod requests no DRA
        extended resource name (``framework.columns.GuardedColumnPlugin``'s contract)."""
        requests = pod.requests
        return _CPU_MEMORY.issuperset(requests) or not any(is_dra_extended_resource_name(n) for n in requests)

    def column_guard_source(self, pod: Pod) -> Any:
        """:meth:`column_guard`'s source for a pod requesting DRA extended resource names
        (``framework.columns.GuardedColumnPlugin``): NodeResourcesFit's and BalancedAllocation's
        (``manager.DeviceClassesGuard`` of the framework handle, so the compiled cycle reads
        the DeviceClasses' version once a cycle for the three) when the handle's DRA manager is
        this plugin's: both guards then read one manager's version (or, not incremental, hash
        its client's classes alike). Else this plugin's own source. The framework's client is
        set once at its construction, so what is checked here holds for the memo entry's life."""
        if self.column_guard_fixed(pod):
            return None
        handle = self._handle
        if handle is not None and self._client is not None and manager_of_handle(handle) is self.manager:
            return DeviceClassesGuard(handle)
        return _OwnClassesGuard(self)

    def filter_records_node_state(self, state: CycleState) -> bool:
        """Whether this cycle's Filter may record claims unavailable on a node (PostFilter
        deallocates one; ``framework.columns.NodeDependentFilterState``): the pod has an allocated
        claim available on some nodes only, an allocated claim whose devices skip node operations,
        or a claim whose binding failed. Then which nodes Filter is asked about changes what
        PostFilter does, so the compiled cycle must not ask it beyond upstream's nodes (the
        fast-path differential's gangs-claims seed 61840035: a member's shared claim deallocated
        where upstream unreserves it)."""
        s = state.get(STATE_KEY)
        if not isinstance(s, _StateData):
            return False
        if s.binding_failed or any(selector is not None for selector in s.available_on_nodes):
            return True
        return any(s.claims[i].allocation for i in s.needs_node_operations)

    # -- PreEnqueue -------------------------------------------------------------------------------
    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not pod.resource_claims:
            return None
        try:
            pod_claims(self.manager, pod, self.workload_claims)
        except ClaimLookupError as e:
            return _unschedulable(str(e))
        return None

    # -- PreFilter --------------------------------------------------------------------------------
    def pre_filter_run(self, states: Sequence[CycleState], pods: Sequence[Pod],
                       nodes: Sequence[fwk.NodeInfo]) -> None:
        """:meth:`pre_filter` for each ``(state, pod)`` in order, its answers dropped, for pods of
        one spec in one pod group cycle (a gang's run of identical members, whose compiled cycle
        runs the state PreFilters only for the state later points read: docs/dev/gang-runs.md
        section 5). When the first pod ends at the shared Skip with nothing of its own in its state
        (no claim, no DRA extended resource, no claim bindings), so does every other pod of the
        spec: each then gets a fresh state holding only itself, written to its CycleState and to
        its group state's ``pods_state_data`` as :meth:`pre_filter` writes them, without the
        lookups. Otherwise each pod runs :meth:`pre_filter`."""
        if not states:
            return
        _, st = self.pre_filter(states[0], pods[0], nodes)
        first = states[0].get(STATE_KEY)
        if st is not SKIP or pods[0].resource_claims or first.num_user_claims or first.pod_scalar_resources \
                or first.bindings or first.initial_extended_uid:
            for state, pod in zip(states[1:], pods[1:]):
                self.pre_filter(state, pod, nodes)
            return
        for state, pod in zip(states[1:], pods[1:]):
            s = _StateData()
            s.pod = pod
            state.write(STATE_KEY, s)
            group_state = state.get(POD_GROUP_CYCLE_KEY)
            if group_state is not None:
                _get_or_create_pod_group_state(group_state).pods_state_data[(pod.namespace, pod.name)] = s

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[fwk.NodeInfo]) -> tuple[None, Status | None]:
        s = _StateData()
        s.pod = pod
        state.write(STATE_KEY, s)
        group_state = state.get(POD_GROUP_CYCLE_KEY)
        group_data: _PodGroupStateData | None = None
        if group_state is not None:  # a pod group cycle: PodGroupPostFilter reads the pod's state
            group_data = _get_or_create_pod_group_state(group_state)
            group_data.pods_state_data[(pod.namespace, pod.name)] = s
        manager = self.manager
        claims: list[ResourceClaim] = []
        if pod.resource_claims:
            try:
                claims = pod_claims(manager, pod, self.workload_claims)
            except ClaimLookupError as e:
                return None, _unschedulable(str(e))
        s.num_user_claims = len(claims)
        extended = self._pre_filter_extended_resources(pod, s)
        if self.workload_claims:
            # podResourceClaimBindings: asked whether or not the pod has claims, so a member whose
            # PodGroup is not in the snapshot is unschedulable here (upstream's order: after the
            # extended resources' PreFilter, before the Skip of a pod without claims)
            try:
                s.bindings = self._pod_resource_claim_bindings(pod)
            except (PodGroupStateError, ValueError) as e:
                return None, _unschedulable(str(e))
        if extended is not None:
            claims = [*claims, extended]
            s.initial_extended_uid = extended.uid
        if not claims:
            # the shared Skip (a SharedStatus, which refuses changes): every pod without claims
            # ends here, in the compiled cycle's state PreFilter too, so no Status is made for it
            return None, SKIP
        s.available_on_nodes = [None] * len(claims)
        s.allocations = [None] * len(claims)
        for index, claim in enumerate(claims):
            if (claim.allocation is not None and not can_be_reserved(claim)
                    and not is_reserved_for_pod(pod, claim, self.workload_claims)):
                return None, _unschedulable(RESOURCE_CLAIM_IN_USE)
            if claim.allocation is not None and self.features.device_binding:
                try:
                    claim_ready_for_binding(claim)
                except _BindError:
                    s.binding_failed.add(index)
            if claim.allocation is not None:
                if allocation_requires_optional_node_operations(claim.allocation):
                    s.needs_node_operations.add(index)
                selector = claim.allocation.get("nodeSelector")
                if selector is not None:
                    try:
                        parsed = NodeSelector.from_dict(selector)
                    except Exception as e:  # a malformed selector in the status
                        return None, _error(e)
                    if parsed.parse_errors:  # upstream's NewNodeSelector error
                        return None, _error("; ".join(parsed.parse_errors))
                    s.available_on_nodes[index] = parsed
                continue
            s.to_allocate.append(index)
            # v1.37.2: a member of a pod group reuses the allocation an earlier member's Reserve
            # made in this group cycle (still counted to allocate, so an allocator is made and
            # PreBind writes the allocation); other pending allocations make the pod wait
            if group_data is not None and claim.uid in group_data.pending_allocations:
                pending_allocation = manager.get_pending_allocation(claim.uid)
                if pending_allocation is not None:
                    s.allocations[index] = cast(dict, pending_allocation)  # (the claim's own, shared)
                    if allocation_requires_optional_node_operations(pending_allocation):
                        s.needs_node_operations.add(index)
                    selector = pending_allocation.get("nodeSelector")
                    if selector is not None:
                        try:
                            parsed = NodeSelector.from_dict(selector)
                        except Exception as e:  # a malformed selector
                            return None, _error(e)
                        if parsed.parse_errors:
                            return None, _error("; ".join(parsed.parse_errors))
                        s.available_on_nodes[index] = parsed
                    s.reused.append(index)
                    continue
            if manager.claim_has_pending_allocation(claim.uid):
                return None, _unschedulable(f"resource claim {_kobj(claim)} is in the process of being allocated")
            if index == s.num_user_claims:
                continue  # the special claim: no spec yet, or a prior cycle's (Filter refuses it)
            for request in claim.requests:
                if request.exactly is not None:
                    status = self._validate_device_class(request.exactly.device_class_name, request.name)
                    if status is not None:
                        return None, status
                elif request.first_available:
                    if not self.features.prioritized_list:
                        return None, _unschedulable(f"resource claim {_kobj(claim)}, request {request.name}: has "
                                                    f"subrequests, but the DRAPrioritizedList feature is disabled")
                    for sub in request.first_available:
                        status = self._validate_device_class(sub.device_class_name, f"{request.name}/{sub.name}")
                        if status is not None:
                            return None, status
                else:
                    return None, _unschedulable(f"resource claim {_kobj(claim)}, request {request.name}: unknown "
                                                f"request type")
        if self.node_allocatable:
            # PreFilter's claimHasNodeAllocatableMappedDevice: per claim with an allocation, or a
            # pending one of this cycle, whether a device of it maps node-allocatable resources
            # (looked up in every slice); Filter refuses sharing such a claim
            s.mapped_claims = {}
            all_slices: list[Any] | None = None
            for index, claim in enumerate(claims):
                allocation = claim.allocation if claim.allocation is not None else s.allocations[index]
                if allocation is not None:
                    if all_slices is None:
                        all_slices = manager.slices()
                    s.mapped_claims[claim.uid] = na.claim_has_mapped_device(allocation, all_slices)
        if s.to_allocate:
            self._retain_selector_cache(manager)
            s.allocator = Allocator(self.features, manager.allocated_devices(), manager.get_class,
                                    manager.slices_for_node, manager.selector_cache, all_slices=manager.slices,
                                    allocated_state=manager.allocated_state())
            if manager.incremental:
                # nodes of one shape: one search per cycle; their keys kept across cycles
                s.allocator.shapes = manager.node_shapes
                s.allocator.shape_key = manager.shape_key
                # answers kept across cycles per shape, for classes as they are now
                s.allocator.memo_salt = ("class_version", manager.class_version)
        s.claims = claims
        return None, None

    def _pod_group_manager(self) -> Any:
        manager = getattr(self._handle, "pod_group_manager", None) if self._handle is not None else None
        if manager is None:  # (the scheduler sets one with GenericWorkload on)
            raise PodGroupStateError("generic workload feature gate is disabled")
        return manager

    def _pod_group_snapshot(self, pod: Any) -> Any:
        """``getPodGroupSnapshot``: the pod's PodGroup (None: the gate off, or no group);
        PodGroupStateError with the lister's text when the scheduler does not know it."""
        if not self.workload_claims or pod.pod_group_name is None:
            return None
        return self._pod_group_manager().pod_groups_lister().get(pod.namespace, pod.pod_group_name)

    def _pod_resource_claim_bindings(self, pod: Any) -> list[dict[str, str]]:
        """``podResourceClaimBindings``: ``resourceclaim.BindTo`` for each ``spec.resourceClaims``
        entry (the PodGroup's reference for an entry equal to one of the group's claims)."""
        pod_group = self._pod_group_snapshot(pod)
        return [bind_to(pod, pod_group, entry) for entry in pod.resource_claims]

    def mapped_extended_resources(self, pod: Any) -> dict[str, int] | None:
        """The pod's non-zero requests of DRA extended resource names when some of them maps to a
        DeviceClass (upstream ``hasDeviceClassMappedExtendedResource``), else None."""
        if _CPU_MEMORY.issuperset(pod.requests):  # no such name (PreFilter asks every cycle)
            return None
        resolver = self.manager.device_class_resolver()
        if not resolver:
            return None
        # (one pass: the DRA extended resource names with their amounts, and whether a nonzero one
        # maps to a class; PreFilter asks for every pod of the DRA extended-resource cases)
        mapped = False
        out: dict[str, int] = {}
        for name, amount in pod.requests.items():
            if is_dra_extended_resource_name(name):
                out[name] = int(amount)
                if not mapped and amount and resolver.get_device_class(name) is not None:
                    mapped = True
        return out if mapped else None

    def _pre_filter_extended_resources(self, pod: Any, s: _StateData) -> ResourceClaim | None:
        """``preFilterExtendedResources``: the special claim (a prior cycle's, or a new one in
        memory) when some extended resource the pod requests maps to a DeviceClass, else None."""
        scalar = self.mapped_extended_resources(pod)
        if scalar is None:
            return None
        s.pod_scalar_resources = scalar
        found = self._find_extended_resource_claim(pod)
        if found is not None:
            return found
        return _in_memory_special_claim(pod)

    def _find_extended_resource_claim(self, pod: Any) -> ResourceClaim | None:
        """:func:`find_extended_resource_claim` over every claim, looked up in the manager's index
        (each pod would scan the whole claim list otherwise: quadratic in scheduler_perf's
        ExtendedResource cases). With more than one candidate the list order decides, as upstream."""
        manager = self.manager
        candidates = manager.extended_resource_claims(pod.name, pod.uid)
        if candidates is not None and len(candidates) <= 1:
            return candidates[0] if candidates else None
        return find_extended_resource_claim(pod, manager.list_claims())

    def _filter_extended_resources(self, s: _StateData, node: Any
                                   ) -> tuple[ResourceClaim | None, list[dict[str, str]], Status | None]:
        """``filterExtendedResources``: the special claim for ``node`` (None: nothing to allocate
        through DRA there) with its request mappings, or a rejection."""
        index = s.extended_index
        if index is None:
            return None, [], None
        claim = s.claims[index]
        if claim.requests:
            # a prior cycle's claim: PostFilter deletes it and the pod retries anew
            return None, [], _unschedulable(CANNOT_SCHEDULE_EXTENDED_CLAIM)
        resolver = self.manager.device_class_resolver()
        allocatable = node.allocatable
        extended: dict[str, int] = {}
        classes: list[str] = []
        for name, amount in s.pod_scalar_resources.items():
            if not amount:
                continue
            have = allocatable.get(name)
            device_class = resolver.get_device_class(name)
            if device_class is not None and not have:
                extended[name] = amount
                classes.append(device_class.name)
            elif have is None:
                return None, [], _unschedulable(CANNOT_FIT_RESOURCE)
        if s.num_user_claims == 0 and not extended:
            return None, [], None
        if claim.allocation is not None:
            return None, [], None
        key = tuple(extended.items())
        known = s.extended_claims.get(key)
        if known is None:
            # createRequestsAndMappings reads the containers' names, restart policies and
            # requests and each resource's class name: the same containers (by identity) and
            # class names give the same requests and mappings
            pod = s.pod
            memo_key = (key, tuple(classes))
            memo = self._special_requests
            made = memo.get(memo_key)
            if made is None or made[0] is not pod.init_containers or made[1] is not pod.containers:
                requests, mappings = create_requests_and_mappings(pod, extended, resolver)
                if len(memo) >= 256:
                    memo.clear()
                made = memo[memo_key] = (pod.init_containers, pod.containers, tuple(requests), mappings)
            known = s.extended_claims[key] = (claim.replace(requests=made[2]), made[3])
        return known[0], known[1], None  # (the mappings are read, never changed: shared as they are)

    def _retain_selector_cache(self, manager: DRAManager) -> None:
        # drop cached selector results of slices that changed (cheap when none did)
        version = manager.slice_version if manager.incremental else None
        if version is None or self._retained_version != version:
            manager.selector_cache.retain(manager.slices())
            self._retained_version = version

    def _validate_device_class(self, class_name: str, request_name: str) -> Status | None:
        if not class_name:
            return _error(f"request {request_name}: unsupported request type")
        if self.manager.get_class(class_name) is None:
            return _unschedulable(f"request {request_name}: device class {class_name} does not exist")
        return None

    def pre_filter_extensions(self) -> None:
        return None

    # -- Filter -----------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: fwk.NodeInfo) -> Status | None:
        s = _state(state)
        if isinstance(s, Status):
            return s
        if not s.claims:
            return None
        return self._filter_node(s, pod, node_info.node(), node_info, _pod_group_state(state))

    def _filter_node(self, s: _StateData, pod: Any, node: Any, node_info: Any = None,
                     group_data: _PodGroupStateData | None = None) -> Status | None:
        node_extended, mappings, status = self._filter_extended_resources(s, node)
        if status is not None:
            return status
        if node_extended is None and s.num_user_claims == 0:
            return None  # extended resources only, all from device plugins here
        unavailable = [index for index, selector in enumerate(s.available_on_nodes)
                       if selector is not None and not selector.matches(node)]
        needs_node_operations = s.needs_node_operations
        lacks_node_operations = bool(needs_node_operations) and not declares_optional_node_operations(node)
        if lacks_node_operations:
            # v1.37.2 Filter: an allocated claim whose devices skip node operations is unavailable
            # on a node that does not declare DRAOptionalNodeOperations (a reused pending
            # allocation is checked below, with its own message)
            unavailable = sorted(set(unavailable) | {i for i in needs_node_operations if s.claims[i].allocation})
        skipped = unavailable  # (the claim loop's ``continue``s: a failed binding does not skip)
        if s.binding_failed:
            # v1.37.2 Filter: an allocated claim whose devices' binding failed is unavailable, so
            # PostFilter can deallocate it (isClaimReadyForBinding's error)
            unavailable = sorted(set(unavailable) | s.binding_failed)
        if s.mapped_claims is not None:
            # v1.37.2 Filter's claim loop: an allocated claim (or one with a pending allocation)
            # that is available on the node must not be shared when a device of it is mapped
            pending = group_data.pending_allocations if group_data is not None else None
            for index, claim in enumerate(s.claims):
                if index in skipped:
                    continue
                if claim.allocation is None and s.allocations[index] is None:
                    continue
                status = na.validate_claim_sharing(pod, claim, s.mapped_claims, pending,
                                                   is_reserved_for_pod(pod, claim, self.workload_claims))
                if status is not None:
                    return status
        allocations = None
        fresh_claims: list[ResourceClaim] = []
        if s.allocator is not None:
            deadline = time.monotonic() + self.filter_timeout if self.filter_timeout > 0 else None
            extended_index = s.extended_index
            reused = s.reused if s.after_reserve is None else s.after_reserve
            if lacks_node_operations:
                for i in s.to_allocate:
                    if i in needs_node_operations and reused and i in reused:
                        return _unschedulable(f"resource claim {_kobj(s.claims[i])} allocation requires "
                                              f"DRAOptionalNodeOperations feature on the node")
            claims = [node_extended if i == extended_index and node_extended is not None else s.claims[i]
                      for i in s.to_allocate if not reused or i not in reused]
            try:
                allocations = s.allocator.allocate(node, claims, deadline)
            except AllocationTimeout:
                # v1.37.2 Filter: a timeout is an Error naming the node, so the pod retries through
                # backoff (v1.34: UnschedulableAndUnresolvable "timed out trying to allocate devices")
                return _error(f"node {node.name}: {TIMED_OUT}")
            except FailedAllocationOnNode as e:
                # v1.37.2 Filter: structured.ErrFailedAllocationOnNode only fails this node
                return _unschedulable(str(e))
            except AllocatorError as e:
                return _error(str(e))
            if allocations is None or len(allocations) != len(claims):
                return _unschedulable(CANNOT_ALLOCATE_ALL_CLAIMS)
            fresh_claims = claims
            if reused:
                # v1.37.2 Filter: ``append(allocationResult, pendingResult...)``: the fresh results
                # first, then the reused pending ones, and Score and Reserve walk this list in claim
                # order with one index -- a reused claim before a fresh one swaps their allocations,
                # as upstream does
                allocations = [*(relocated(allocations) or ()), *(a for i in reused if (a := s.allocations[i]) is not None)]
        statuses: list[dict[str, Any]] = []
        if self.node_allocatable:
            # v1.37.2 Filter: the pod's footprint with the claims' node-allocatable amounts must fit
            # the node (before the unavailable claims are recorded, as upstream)
            fits = self._node_allocatable_footprint(s, pod, node, node_info, fresh_claims, allocations)
            if isinstance(fits, Status):
                return fits
            statuses = fits
        if unavailable:
            s.unavailable_claims.update(unavailable)
            return _unschedulable(CLAIM_NOT_AVAILABLE_ON_NODE)
        if s.allocator is not None and allocations is not None:  # (allocated above when there is an allocator)
            s.set_node_allocation(node.name, allocations)
            if s.extended_index is not None:
                s.node_extended[node.name] = (node_extended, mappings)
        if s.allocator is not None or statuses:
            s.node_allocatable_statuses[node.name] = statuses
        return None

    def _node_allocatable_footprint(self, s: _StateData, pod: Any, node: Any, node_info: Any,
                                    fresh_claims: Sequence[ResourceClaim], allocations: list[dict] | None
                                    ) -> list[dict[str, Any]] | Status:
        """``calculateAndCheckNodeAllocatableResources``: the claim statuses of the pod on the
        node (empty when no allocated device has node-allocatable resources), or the failing
        status (``Insufficient cpu`` etc.; an Error when a device cannot be read)."""
        # allocationsMap: the claims given to the allocator with its results, then the pending
        # allocations reused (by the uid of the claim given: the special claim's node copy)
        by_uid: dict[str, Mapping[str, Any]] = {}
        answer = relocated(allocations) or []
        for given, result in zip(fresh_claims, answer):
            by_uid[given.uid] = result
        if s.allocator is not None:
            reused = s.reused if s.after_reserve is None else s.after_reserve
            for index in reused or ():
                pending_allocation = s.allocations[index]
                if pending_allocation is not None:
                    by_uid[s.claims[index].uid] = pending_allocation
        node_slices = na.filter_slices_for_node(self.manager.slices(), node)
        mapped_claims: list[tuple[ResourceClaim, Mapping[str, Any]]] = []
        for claim in s.claims:
            allocation = by_uid[claim.uid] if claim.uid in by_uid else claim.allocation
            if allocation is None:
                continue
            for result in (allocation.get("devices") or {}).get("results") or ():
                try:
                    device = na.get_device_from_slices(node_slices, result, node)
                except LookupError:
                    continue  # only logged upstream
                if device is not None and device.node_allocatable_resources:
                    mapped_claims.append((claim, allocation))
                    break
        if not mapped_claims:
            return []
        keyed = {(c.namespace, c.name, c.uid): a for c, a in mapped_claims}
        try:
            names = self._claim_name_to_uid(pod)
        except ClaimLookupError as e:
            return _error(f"processing pod resource claims: {e}")
        try:
            statuses = na.build_node_allocatable_dra_info(pod, keyed, names, node_slices, node)
        except (LookupError, ValueError) as e:
            return _error(str(e))
        status = na.validate_pod_level_resources_cover_dra(pod, statuses)
        if status is not None:
            return status
        demand = na.pod_requests_with_statuses(pod, statuses)
        if node_info is None:
            return _error("internal error: no node info for the node-allocatable resources check")
        status = na.node_fits_resources(node_info.allocatable, node_info.requested, demand)
        if status is not None:
            return status
        return statuses

    def _claim_name_to_uid(self, pod: Any) -> dict[str, str]:
        """``foreachPodResourceClaim``'s pairs: each ``spec.resourceClaims`` name with its claim's
        uid (entries without a claim left out)."""
        out: dict[str, str] = {}
        manager = self.manager
        for entry in pod.resource_claims:
            name, _ = claim_name(pod, entry)
            if name is None:
                continue
            claim = manager.get_claim(pod.namespace, name)
            if claim is None:
                raise ClaimLookupError(_claim_not_found(pod.namespace, name))
            out[str(entry.get("name") or "")] = claim.uid
        return out

    def filter_vectorized(self, state: CycleState, pod: Pod, nodes: fwk.NodeBatch) -> FilterVerdicts | Status:
        s = _state(state)
        if isinstance(s, Status):
            return s
        if not s.claims:
            return FilterVerdicts.all_pass(len(nodes))
        return _filter_batch(self, s, pod, nodes, state)

    # -- PostFilter -------------------------------------------------------------------------------
    def post_filter(self, state: CycleState, pod: Pod, filtered_node_status_map: NodeToStatus) -> tuple[None, Status]:
        s = _state(state)
        if isinstance(s, Status):
            return None, s
        if not s.claims:
            # v1.37 (dynamicresources.go PostFilter): no message any more (v1.34: "no new claims
            # to deallocate"), so nothing of DynamicResources shows in the FitError's text
            return None, Status(Code.UNSCHEDULABLE)
        return None, self._deallocate_or_delete_pod_claims(pod, s)[1]

    def _deallocate_or_delete_pod_claims(self, pod: Pod, s: _StateData) -> tuple[bool, Status]:
        """``deallocateOrDeletePodClaims``: deallocate one allocated claim unavailable on every
        node (reserved for nobody or this pod only); whether one was found, and the status."""
        extended_index = s.extended_index
        extended = s.claims[extended_index] if extended_index is not None else None
        for index in sorted(s.unavailable_claims):
            claim = s.claims[index]
            if index == extended_index:
                if extended is not None and extended.name != SPECIAL_CLAIM_IN_MEM_NAME:
                    break
                continue
            if not claim.reserved_for or (len(claim.reserved_for) == 1 and claim.reserved_for[0].get("uid") == pod.uid):
                current = self.manager.get_claim(claim.namespace, claim.name)
                if current is None:
                    return True, _error(f'resourceclaims.resource.k8s.io "{claim.name}" not found')
                if current != claim:
                    # upstream writes the claim PreFilter read (no retry): its resourceVersion
                    # precondition fails when the claim changed since, e.g. deallocated for
                    # another member of the group by this PodGroupPostFilter already (a write
                    # that changed nothing keeps the version, and equal content means that)
                    return True, _error(claim_conflict(claim.name))
                try:
                    self._update_object(claim_with_status(current, reserved_for=[], allocation=None))
                except Exception as e:  # an API error
                    return True, _error(e)
                return True, Status(Code.UNSCHEDULABLE, DEALLOCATION_COMPLETED)
        if extended is not None and extended.name != SPECIAL_CLAIM_IN_MEM_NAME:
            # a prior cycle's claim for the extended resources: delete it, the pod retries anew
            try:
                self._delete_claim(extended)
            except Exception as e:  # an API error
                return True, _error(e)
            return True, Status(Code.UNSCHEDULABLE, DELETION_COMPLETED)
        # v1.37 (dynamicresources.go deallocateOrDeletePodClaims): no claim to deallocate answers
        # Unschedulable without a message (v1.34: "still not schedulable")
        return False, Status(Code.UNSCHEDULABLE)

    # -- PodGroupPostFilter -----------------------------------------------------------------------
    def pod_group_post_filter(self, state: CycleState | None, pod_group_info: Any, scheduling_func: Any
                              ) -> tuple[None, Status]:
        """``PodGroupPostFilter`` (v1.37.2, CompositePodGroup off):
        PostFilter's claim deallocation for each queued member whose
        PreFilter state the group cycle kept, then Unschedulable ``deallocation and deletion of
        ResourceClaims completed`` (a reason appended to every member's message). No member reached
        this plugin's PreFilter in the group cycle: upstream's state lookup fails with ``not found``.
        With TopologyAwareWorkloadScheduling a PodGroup with scheduling constraints is left alone
        (Unschedulable, no message), and so is a CompositePodGroup entity. With DRAWorkloadResourceClaims, when some member had no claim
        of its own to deallocate, the group's claims are cleaned up through the first unscheduled
        member (:meth:`_deallocate_pod_group_claims`), whose status, when it has one, is the
        answer."""
        if getattr(pod_group_info, "type", None) == COMPOSITE_POD_GROUP_KEY_TYPE:
            return None, Status(Code.UNSCHEDULABLE)  # not supported for CompositePodGroups (upstream's too)
        pg = getattr(pod_group_info, "pod_group", None)
        if self._topology_aware and pg is not None and pg.scheduling_constraints is not None:
            return None, Status(Code.UNSCHEDULABLE)
        if state is None:
            data = None
        else:
            data = state.get(STATE_KEY)
            if not isinstance(data, _PodGroupStateData):
                return None, _error("not found" if data is None else "state is not podGroupStateData")
        unreserve_pod_group = False
        if data is not None and data.pods_state_data:
            for pod in pod_group_info.unscheduled_pods():
                pod_state = data.pods_state_data.get((pod.namespace, pod.name))
                if pod_state is None:
                    continue
                found, status = self._deallocate_or_delete_pod_claims(pod, pod_state)
                if status.code() == Code.ERROR:
                    return None, status
                if not found:
                    unreserve_pod_group = True
        if unreserve_pod_group and self.workload_claims:
            unscheduled = pod_group_info.unscheduled_pods()
            if unscheduled:
                group_status = self._deallocate_pod_group_claims(data, unscheduled[0])
                if group_status is not None:
                    return None, group_status
        return None, Status(Code.UNSCHEDULABLE, POD_GROUP_DEALLOCATION_COMPLETED)

    def _deallocate_pod_group_claims(self, data: _PodGroupStateData | None, pod: Any) -> Status | None:
        """``deallocatePodGroupClaims`` (DRAWorkloadResourceClaims), ``pod`` the first unscheduled
        member: nothing while the group has scheduled (assumed or bound) pods in the cache; else the
        first claim some member found unavailable on every node that is reserved for nobody or for
        this PodGroup alone is deallocated; else the group's reservation is removed from the first
        allocated claim of ``spec.resourceClaims`` reserved for it. Upstream picks the member and the
        claim by iterating Go maps (random); fastsched takes the members in PreFilter order and a
        member's claims by index, as its PostFilter does (docs/reference/deviations.md)."""
        group_name = pod.pod_group_name
        if group_name is None:
            return None
        try:
            group_state = self._pod_group_manager().pod_group_states_lister().get(pod.namespace, group_name)
        except PodGroupStateError as e:
            return _error(e)
        if group_state.scheduled_pods_count() > 0:
            return None
        try:
            pod_group = self._pod_group_snapshot(pod)
        except PodGroupStateError as e:
            return _error(e)
        if data is not None:
            for pod_state in data.pods_state_data.values():
                for index in sorted(pod_state.unavailable_claims):
                    claim = pod_state.claims[index]
                    reserved = claim.reserved_for
                    if not reserved or (pod_group is not None and len(reserved) == 1
                                        and reserved[0].get("uid") == pod_group.uid):
                        current = self.manager.get_claim(claim.namespace, claim.name)
                        if current is None:
                            return _error(f'resourceclaims.resource.k8s.io "{claim.name}" not found')
                        if current != claim:  # UpdateStatus of the claim PreFilter read: its version
                            return _error(claim_conflict(claim.name))
                        try:
                            self._update_object(claim_with_status(current, reserved_for=[], allocation=None))
                        except Exception as e:  # an API error
                            return _error(e)
                        return Status(Code.UNSCHEDULABLE, POD_GROUP_CLAIM_DEALLOCATION_COMPLETED)
        if pod_group is None:  # (upstream dereferences it here: cannot be, the member has a group)
            return None
        for entry in pod_group.resource_claims:
            try:
                name, must_check_owner = claim_name_from_pod_group(pod_group, entry)
            except ClaimLookupError as e:
                return _error(e)
            if name is None:
                continue
            group_claim = self.manager.get_claim(pod_group.namespace, name)
            if group_claim is None:
                return _error(_claim_not_found(pod_group.namespace, name))
            if must_check_owner and is_for_pod_group(pod_group, group_claim) is not None:
                continue
            if group_claim.allocation is not None and is_reserved_for_pod(pod, group_claim, self.workload_claims):
                # a strategic-merge patch deleting the group's entry (by uid), with the claim's uid
                # as precondition: it needs no fresh resourceVersion; a failure is only logged
                current = self.manager.get_claim(group_claim.namespace, group_claim.name)
                if current is None or current.uid != group_claim.uid:
                    continue
                reserved_for = [r for r in current.reserved_for if r.get("uid") != pod_group.uid]
                try:
                    self._update_object(claim_with_status(current, reserved_for=reserved_for))
                except Exception:
                    continue
                return _unschedulable(POD_GROUP_CLAIM_UNRESERVED)
        return None

    # -- Score / NormalizeScore -------------------------------------------------------------------
    def score(self, state: CycleState, pod: Pod, node_info: fwk.NodeInfo) -> tuple[int, Status | None]:
        """``Score`` (v1.37.2): 0 unless DRAPrioritizedList is on and Filter allocated claims on
        the node; then the rank of each prioritized-list subrequest allocated (``computeScore``)."""
        if not self.features.prioritized_list:
            return 0, None
        s = _state(state)
        if isinstance(s, Status):
            return 0, s
        if not s.claims:
            return 0, None
        return _node_score(s, node_info.node().name), None

    def score_vectorized(self, state: CycleState, pod: Pod, nodes: fwk.NodeBatch) -> tuple[np.ndarray, Status | None]:
        """``Score`` for every node of ``nodes``: zeros without claims or without a
        prioritized-list request among them (nothing can score then), else node by node."""
        out = np.zeros(len(nodes), dtype=np.int64)
        if not self.features.prioritized_list:
            return out, None
        s = _state(state)
        if isinstance(s, Status):
            return out, s
        if not s.claims or s.allocator is None or not any(r.first_available for c in s.claims for r in c.requests):
            return out, None
        names = nodes.table.node_names[nodes.rows]
        for i, name in enumerate(names.tolist()):
            out[i] = _node_score(s, name)
        return out, None

    def score_extensions(self) -> "DynamicResources":
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        """``NormalizeScore``: ``helper.DefaultNormalizeScore(MaxNodeScore, false, scores)``."""
        return default_normalize_score(MAX_NODE_SCORE, False, scores)

    def normalize_score_vectorized(self, state: CycleState, pod: Pod, scores: np.ndarray,
                                   nodes: fwk.NodeBatch) -> Status | None:
        if type(scores) is np.ndarray and scores.ndim == 1 and not np.count_nonzero(scores):
            # every score 0 (no prioritized-list request scored: the usual case): the default
            # normalization leaves them as they are (not reversed), without its kernel call
            # (count_nonzero: a reduction's ``any()`` cost ~5x more on the few nodes scored)
            return None
        return default_normalize_score(MAX_NODE_SCORE, False, scores)

    # -- Reserve / Unreserve ----------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = _state(state)
        if isinstance(s, Status):
            return s
        if not s.claims:
            return None
        num_with_allocator = 0
        for c in s.claims:
            if c.allocation is None:
                num_with_allocator += 1
        if num_with_allocator == 0:
            return None
        extended_index = s.extended_index
        if s.allocator is not None:
            # (another node's answer, when the allocator found the node of a shape it had searched)
            allocations = s.allocation_at(node_name)
            if allocations is None and s.vector:
                # the vectorized filter accepted the node from its columns: allocate now, as the
                # per-node Filter would have on the same state
                allocations = _allocate_for_reserve(self, s, node_name)
            if not allocations:
                if all(i == extended_index for i in s.to_allocate):
                    return None  # only the special claim, and the node's device plugins serve it
                return _error("claim allocation not found for node")
            if len(allocations) != len(s.to_allocate) or len(allocations) != num_with_allocator:
                return _error(f"internal error, have {len(allocations)} allocations, {len(s.to_allocate)} claims to "
                              f"allocate, want {num_with_allocator} claims")
            node_extended = s.node_extended.get(node_name, (None, []))[0]
            group_data = _pod_group_state(state)
            # (the allocations are Filter's fresh results followed by the reused pending ones, the
            # claims in claim order: zipped as upstream's running index pairs them)
            for allocation, index in zip(allocations, s.to_allocate):
                s.allocations[index] = allocation
                claim = s.claims[index]
                if index == extended_index:
                    if node_extended is None:  # cannot happen: Filter makes one when it allocates
                        return _error("internal error: no extended resource claim for the node")
                    claim = node_extended
                finalizers = claim.finalizers if FINALIZER in claim.finalizers else (*claim.finalizers, FINALIZER)
                # the in-flight copy (upstream's assumed claim): the manager reads its name,
                # namespace and allocation only, and nothing lists it with the stored objects, so
                # its manifest is left as the claim's (claim_with_status would build a new one
                # per pod that nothing reads: issue 27)
                pending = claim.replace(allocation=allocation, finalizers=finalizers)
                self.manager.signal_claim_pending_allocation(claim.uid, pending)
                if group_data is not None:
                    group_data.pending_allocations.setdefault(claim.uid, set()).add(pod.uid)
            # upstream's Reserve leaves ``informationsForClaim[index].allocation`` set for every
            # claim it allocated (Unreserve does not clear it), and Filter takes any claim with one
            # as a pending allocation, left out of the allocator: Filter run again on this state
            # (workload-aware preemption's reprieve, after the group algorithm's Unreserve) reuses
            # these allocations instead of allocating afresh
            s.after_reserve = [i for i in s.to_allocate if s.allocations[i] is not None]
            s.needs_node_operations.update(i for i in s.after_reserve
                                           if allocation_requires_optional_node_operations(s.allocations[i]))
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        s = _state(state)
        if isinstance(s, Status) or not s.claims:
            return None
        manager = self.manager
        group_data = _pod_group_state(state)
        for claim in s.claims[:s.num_user_claims]:
            # one share dropped; the allocation leaves the flight with its last sharer, and then
            # later members of this group cycle can no longer reuse it
            if manager.remove_claim_pending_allocation(claim.uid, force=False) and group_data is not None:
                group_data.pending_allocations.pop(claim.uid, None)
            if claim.allocation is not None and is_reserved_for_pod(pod, claim):
                current = manager.get_claim(claim.namespace, claim.name)
                if current is None or current.uid != claim.uid:
                    continue  # errors are only logged upstream
                reserved = [r for r in current.reserved_for if r.get("uid") != pod.uid]
                try:
                    self._update_object(claim_with_status(current, reserved_for=reserved))
                except Exception:
                    pass  # "We will get here again when pod scheduling is retried."
        self._unreserve_extended_resource_claim(s)
        if self.node_allocatable and s.node_allocatable_statuses.get(node_name):
            self._clear_node_allocatable_statuses(pod)
        return None

    def _clear_node_allocatable_statuses(self, pod: Any) -> None:
        """``clearNodeAllocatableResourceClaimStatus``: the statuses PreBind may have written
        removed from the pod (a merge patch with the pod's uid as precondition); errors only
        logged upstream."""
        if not na.claim_statuses_of(pod):
            return
        try:
            current, write = self._pod_status_writer(pod)
            if current is None:
                return  # the uid precondition fails: the pod is gone or replaced
            write(na.with_claim_statuses(current, None))
        except Exception:
            pass

    def _pod_status_writer(self, pod: Any) -> tuple[Any, Any]:
        """The API's current pod (by uid) and the client's status write (``set_pod_status``: the
        Scheduler's cluster; upstream's ``pods/status`` patch)."""
        client = self._client
        write = getattr(client, "set_pod_status", None)
        if client is None or write is None:
            raise AttributeError("the framework handle has no client that writes pod status")
        return client.get_pod_by_uid(pod.uid), write

    def _patch_node_allocatable_statuses(self, pod: Any, statuses: list[dict[str, Any]]) -> Status | None:
        """``patchNodeAllocatableResourceClaimStatus``: the statuses Filter computed written into
        the pod's status; they must be the assumed pod's (the scheduler copied them at assume)."""
        if not statuses:
            return None
        if na.claim_statuses_of(pod) != statuses:
            return _error("assumed pod status does not match calculated status to be patched")
        try:
            current, write = self._pod_status_writer(pod)
            if current is None:
                raise LookupError(f'pods "{pod.name}" not found')
            write(na.with_claim_statuses(current, statuses))
        except Exception as e:  # noqa: BLE001
            return _error(f"updating pod {pod.namespace}/{pod.name} NodeAllocatableResourceClaimStatuses: {e}")
        return None

    def _unreserve_extended_resource_claim(self, s: _StateData) -> None:
        """``unreserveExtendedResourceClaim``: the special claim's in-flight allocation dropped;
        the claim deleted when PreBind had created it."""
        index = s.extended_index
        if index is None:
            return
        claim = s.claims[index]
        self.manager.remove_claim_pending_allocation(s.initial_extended_uid, force=False)
        if claim.name == SPECIAL_CLAIM_IN_MEM_NAME:
            return
        try:
            self._delete_claim(claim)
        except Exception:
            pass  # only logged upstream

    def _delete_claim(self, claim: ResourceClaim) -> None:
        """``deleteClaim``: the finalizer removed, then the claim deleted (NotFound ignored)."""
        client = self._client
        if client is None:
            raise AttributeError("'NoneType' object has no attribute 'update_object'")
        current = self.manager.get_claim(claim.namespace, claim.name)
        if current is None:
            raise KeyError(f'resourceclaims.resource.k8s.io "{claim.name}" not found')
        if FINALIZER in current.finalizers:
            current = claim_with_status(current, finalizers=[f for f in current.finalizers if f != FINALIZER])
            client.update_object(current)
        try:
            client.delete_object("ResourceClaim", claim.name, claim.namespace)  # type: ignore[attr-defined]
        except KeyError:
            pass

    # -- PreBind ----------------------------------------------------------------------------------
    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = _state(state)
        if isinstance(s, Status):
            return s
        if not s.claims:
            return Status(Code.SKIP)
        return None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = _state(state)
        if isinstance(s, Status):
            return s
        if not s.claims:
            return None
        # the in-flight allocations PreBind wrote leave the flight only when PreBind succeeds
        # (upstream's deferred ``prebindSuccessCleanup``, forced: whatever the sharers); on a
        # failure Unreserve drops one share each
        written: list[str] = []
        for index, claim in enumerate(s.claims):
            if not is_reserved_for_pod(pod, claim, self.workload_claims):
                try:
                    s.claims[index] = self._bind_claim(s, index, pod, node_name, written)
                except _BindError as e:
                    return _error(str(e))
        if self.node_allocatable:
            patched = self._patch_node_allocatable_statuses(pod, s.node_allocatable_statuses.get(node_name) or [])
            if patched is not None:
                return patched
        status = self._wait_for_binding_conditions(s)
        if status is None:
            group_data = _pod_group_state(state)
            for uid in written:
                if self.manager.remove_claim_pending_allocation(uid) and group_data is not None:
                    group_data.pending_allocations.pop(uid, None)
        return status

    def _wait_for_binding_conditions(self, s: _StateData) -> Status | None:
        """PreBind's wait for the devices' binding conditions (DRADeviceBindingConditions)."""
        if not self.features.device_binding or not _has_binding_conditions(s.claims):
            return None
        # v1.37.2 PreBind polls isPodReadyForBinding every 5 s until bindingTimeout. Nothing in
        # fastsched sets device conditions while PreBind waits, so the wait is collapsed: the
        # claims' conditions now decide, and pending ones end as the poll ends, at its deadline.
        claims = [self.manager.get_claim(c.namespace, c.name) or c for c in s.claims]
        s.claims[:] = claims
        for claim in claims:
            try:
                ready = claim_ready_for_binding(claim)
            except _BindError as e:
                return _error(str(e))
            if not ready:
                return _error(f"{DEVICE_BINDING_TIMEOUT}: context deadline exceeded")
        return None

    def _bind_claim(self, s: _StateData, index: int, pod: Any, node_name: str, written: list[str]) -> ResourceClaim:
        """``bindClaim``; the uid of the claim whose allocation goes out of flight when PreBind
        succeeds is appended to ``written`` (set before the claim is created: its in-memory uid)."""
        claim = s.claims[index]
        allocation = s.allocations[index]
        is_extended = False
        if index == s.extended_index:
            if allocation is None and not claim.requests:
                return claim  # the extended resources all come from device plugins
            is_extended = True
        pending_uid = claim.uid
        if is_extended and claim.name == SPECIAL_CLAIM_IN_MEM_NAME:
            claim = self._create_extended_resource_claim(s, pod, node_name)
            s.claims[index] = claim  # Unreserve deletes it from now on
        updated = self._update_claim_status(s, claim, allocation, pod, s.binding(index, pod))
        if is_extended:
            mappings = s.node_extended.get(node_name, (None, []))[1]
            if not mappings:
                raise _BindError(f"nil or empty request mappings, no update of pod {pod.namespace}/{pod.name} "
                                 f"ExtendedResourceClaimStatus")
        if allocation is not None:
            written.append(pending_uid)
        return updated

    def _create_extended_resource_claim(self, s: _StateData, pod: Any, node_name: str) -> ResourceClaim:
        """``createExtendedResourceClaimInAPI``: the node's special claim created (the API server
        generates its name from ``<pod>-extended-resources-``), without an allocation yet."""
        node_extended = s.node_extended.get(node_name, (None, []))[0]
        if node_extended is None:
            raise _BindError(f"extended resource claim not found for node {node_name}")
        requests = node_extended.requests
        try:
            admitted_spec = self._special_admitted.get(requests)
        except TypeError:  # (unhashable requests: the full path)
            admitted_spec = None
        spec = admitted_spec if admitted_spec is not None else {
            "devices": {"requests": [_request_manifest(r) for r in requests]}}
        manifest = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {"generateName": node_extended.generate_name, "namespace": node_extended.namespace,
                                 "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod.name,
                                                      "uid": pod.uid, "controller": True}],
                                 "annotations": {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"}},
                    "spec": spec}
        client = self._client
        created: Any = manifest
        if getattr(client, "validates_built_objects", False):
            # the claim the manifest decodes to, built here without the loader's schema pass and
            # context (well-formed by construction): a client that validates objects built in code
            # as it validates manifests (the cluster) admits it alike
            # (its spec parsed once per request list: PreBind creates one such claim per pod from
            # the few request lists the nodes' classes give, issues 27, 29)
            spec_fields = self._special_spec(node_extended.requests, spec)
            if spec_fields is None:
                created = parse_resource_claim(manifest)
            else:
                # the claim ``parse_resource_claim(manifest, spec_fields=...)`` reads, built from
                # the values the manifest was made of (no metadata parse per pod: issue 27), as a
                # field copy of the one claim these spec fields and the annotation make
                # (``_created_special_claim``: ResourceClaim's __init__ per pod was ~3% of PreBind)
                created = _created_special_claim(
                    self._special_protos, spec_fields, node_extended.generate_name,
                    node_extended.namespace or "default",
                    (OwnerReference(kind="Pod", name=pod.name, uid=pod.uid, controller=True, api_version="v1"),),
                    manifest)
                if admitted_spec is not None and _metadata_valid(created, pod):
                    # the client validated and prepared a claim with these requests before and
                    # stored it unchanged; this one differs only by metadata that is valid by
                    # construction (_metadata_valid): its create would pass the same checks and
                    # change nothing, so it is handed over as admitted (the validation and
                    # PrepareForCreate were ~6% of a DRA extended-resource pod: issue 27)
                    created.admitted = True
        # (read before the create: the client marks the object it admits)
        validated_here = isinstance(created, ResourceClaim) and not created.admitted
        try:
            stored = client.add_object(created)  # type: ignore[union-attr]
        except Exception as e:
            # klog.KObj of the claim, whose name is cleared for the create call
            raise _BindError(f"create claim for extended resources {node_extended.namespace}/: {e}") from e
        if not isinstance(stored, ResourceClaim):  # a client that does not answer its create
            raise _BindError(f"create claim for extended resources {node_extended.namespace}/: the create "
                             f"returned no claim")
        if (admitted_spec is None and validated_here
                and stored.requests == created.requests and stored.constraints == created.constraints
                and stored.config == created.config and stored.allocation is None and not stored.reserved_for):
            # validated and prepared by the client with nothing dropped: the spec is known good
            try:
                if len(self._special_admitted) >= 256:
                    self._special_admitted.clear()
                self._special_admitted[requests] = spec
            except TypeError:
                pass
        return stored  # the created claim as the API answers it, as upstream (not a lookup)

    def _special_spec(self, requests: tuple, spec: dict) -> dict[str, Any] | None:
        """``spec`` (the manifest of ``requests``) parsed, kept per ``requests``; None when they
        are not hashable (parsed with the claim then). Bounded: emptied when full."""
        kept = self._special_specs
        try:
            fields = kept.get(requests)
        except TypeError:
            return None
        if fields is None:
            if len(kept) >= 256:
                kept.clear()
            fields = kept[requests] = claim_spec_fields(spec)
        return fields

    def _update_claim_status(self, s: _StateData, claim: ResourceClaim, allocation: Any, pod: Any,
                             binding: dict[str, str]) -> ResourceClaim:
        """``bindClaim``'s status update: the allocation (with the finalizer) and the reservation
        (``binding``: the pod, or with DRAWorkloadResourceClaims its PodGroup)."""
        manager = self.manager
        current = manager.get_claim(claim.namespace, claim.name)
        if current is None or current.uid != claim.uid:
            raise _BindError(f'resourceclaims.resource.k8s.io "{claim.name}" not found')
        if current.deletion_timestamp is not None:
            raise _BindError(f"claim {_kobj(claim)} got deleted in the meantime")
        finalizers = current.finalizers
        changes: dict[str, Any] = {}
        if allocation is not None:
            if current.allocation is not None:
                raise _BindError(f"claim {_kobj(claim)} got allocated elsewhere in the meantime")
            if FINALIZER not in finalizers:
                finalizers = (*finalizers, FINALIZER)
            changes["allocation"] = allocation
        elif current.allocation is None and self.features.device_binding:
            # v1.37.2 bindClaim (binding-condition gates on)
            raise _BindError(f"claim {_kobj(claim)} got deallocated elsewhere in the meantime")
        # upstream adds the binding without checking: the API server refuses what is not possible
        # (e.g. a 257th reservation) with an error naming the field
        reserved = [*current.reserved_for, binding]
        updated = claim_with_status(current, reserved_for=reserved, finalizers=finalizers, **changes)
        try:
            self._update_object(updated)
        except ValidationError as e:  # UpdateStatus's error, wrapped as bindClaim wraps it
            what = "add allocation and reservation to" if allocation is not None else "add reservation to"
            raise _BindError(f"{what} claim {_kobj(claim)}: {e}") from e
        return updated

    # -- EnqueueExtensions ------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        node_actions = ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_ALLOCATABLE
        if not self._enable_scheduling_queue_hint:
            node_actions |= ActionType.UPDATE_NODE_TAINT
        add_update = ActionType.ADD | ActionType.UPDATE
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, node_actions)),
            ClusterEventWithHint(ClusterEvent(RESOURCE_CLAIM, add_update | ActionType.DELETE),
                                 self.is_schedulable_after_claim_change),
            # the pod's own status naming its generated claims (TargetPod: that pod's update)
            ClusterEventWithHint(ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM),
                                 self.is_schedulable_after_target_pod_update),
            ClusterEventWithHint(ClusterEvent(DEVICE_CLASS, add_update)),
            ClusterEventWithHint(ClusterEvent(RESOURCE_SLICE, add_update)),
        ]

    def is_schedulable_after_claim_change(self, pod: Any, old: Any, new: Any) -> tuple[QueueingHint, Any]:
        """``isSchedulableAfterClaimChange``: a deleted claim queues the pod only when it still had
        an allocation (v1.37.2 registers claim deletes: DynamicResources' PostFilter deletes the
        extended resource claim of a prior cycle)."""
        # Upstream util.As[*resourceapi.ResourceClaim]: an object of another type is answered with
        # Queue and an error (isSchedulableAfterClaimChange), not raised.
        old, new, err = as_typed(ResourceClaim, "*v1.ResourceClaim", old, new)
        if err is not None:
            return QueueingHint.QUEUE, TypeError(f"unexpected object in isSchedulableAfterClaimChange: {err}")
        if new is None:
            if old is not None and old.allocation is not None:
                return QueueingHint.QUEUE, None
            return QueueingHint.QUEUE_SKIP, None
        try:
            claims = pod_claims(self.manager, pod, self.workload_claims)
        except ClaimLookupError:
            return QueueingHint.QUEUE_SKIP, None
        uses_claim = any(c.uid == new.uid for c in claims)
        if old is not None and old.allocation is not None and new.allocation is None:
            return QueueingHint.QUEUE, None  # deallocated: devices may be free now
        if not uses_claim:
            return QueueingHint.QUEUE_SKIP, None
        if old is None:
            return QueueingHint.QUEUE, None
        if (old.allocation == new.allocation and old.reserved_for == new.reserved_for
                and ((old.manifest or {}).get("status") or {}).get("devices")
                == ((new.manifest or {}).get("status") or {}).get("devices")):
            return QueueingHint.QUEUE_SKIP, None
        return QueueingHint.QUEUE, None

    def is_schedulable_after_target_pod_update(self, pod: Any, old: Any, new: Any) -> tuple[QueueingHint, Any]:
        """``isSchedulableAfterTargetPodUpdate``: Queue when the updated pod's claims can all be
        found now. No check that ``new`` is ``pod``: a TargetPod event is the pod's own update
        (v1.37.2 dropped v1.34's UID check)."""
        if not isinstance(new, _Pod):
            return QueueingHint.QUEUE, TypeError(
                f"unexpected object in isSchedulableAfterTargetPodUpdate: expected *v1.Pod, but got "
                f"{type(new).__name__}")
        try:
            pod_claims(self.manager, new, self.workload_claims)
        except ClaimLookupError:
            return QueueingHint.QUEUE_SKIP, None
        return QueueingHint.QUEUE, None


class _BindError(Exception):
    pass


def claim_conflict(name: str) -> str:
    """The API server's Conflict on a ResourceClaim written with a stale resourceVersion."""
    return (f'Operation cannot be fulfilled on resourceclaims.resource.k8s.io "{name}": the object has been '
            f"modified; please apply your changes to the latest version and try again")


#: ``ErrDeviceBindingTimeout`` / ``ErrDeviceBindingFailed`` (dynamicresources.go)
DEVICE_BINDING_TIMEOUT = "device binding timeout"
DEVICE_BINDING_FAILED = "device binding failed"


def _has_binding_conditions(claims: Sequence[ResourceClaim]) -> bool:
    """``hasBindingConditions``: some allocated device of the claims has binding conditions."""
    for claim in claims:
        for result in ((claim.allocation or {}).get("devices") or {}).get("results") or ():
            if result.get("bindingConditions"):
                return True
    return False


def _condition_true(conditions: Sequence[Any], name: str) -> dict | None:
    for c in conditions or ():
        if c.get("type") == name and c.get("status") == "True":
            return c
    return None


def claim_ready_for_binding(claim: ResourceClaim) -> bool:
    """``isClaimReadyForBinding``: every binding condition of the allocated devices is true in
    ``status.devices`` and no binding failure condition is (then :class:`_BindError` with
    upstream's text); a claim without binding conditions is ready, an unallocated one is not."""
    if claim.allocation is None:
        return False
    statuses = ((claim.manifest or {}).get("status") or {}).get("devices") or ()
    for result in (claim.allocation.get("devices") or {}).get("results") or ():
        conditions = result.get("bindingConditions") or ()
        if not conditions:
            continue
        device_status = next((d for d in statuses if d.get("device") == result.get("device")
                              and d.get("driver") == result.get("driver") and d.get("pool") == result.get("pool")),
                             None)
        if device_status is None:
            return False
        for name in result.get("bindingFailureConditions") or ():
            failed = _condition_true(device_status.get("conditions"), name)
            if failed is not None:
                message = str(failed.get("message", "")).replace("\\", "\\\\").replace('"', '\\"')
                raise _BindError(f'{DEVICE_BINDING_FAILED}: claim={claim.name}, reason={failed.get("reason", "")}, '
                                 f'message="{message}"')
        if any(_condition_true(device_status.get("conditions"), name) is None for name in conditions):
            return False
    return True


def find_extended_resource_claim(pod: Any, claims: Sequence[ResourceClaim]) -> ResourceClaim | None:
    """``findExtendedResourceClaim``: the claim annotated as the extended resource claim whose
    controller is ``pod`` (by name and uid)."""
    for claim in claims:
        if claim.annotations.get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) == "true":
            for ref in claim.owner_references:
                if ref.name == pod.name and ref.controller and ref.uid == pod.uid:
                    return claim
    return None


#: ``validation.IsDNS1123Subdomain``'s maximum length (``DNS1123SubdomainMaxLength``)
_DNS1123_SUBDOMAIN_MAX_LENGTH = 253


#: the in-memory special claim with what every pod's has alike (``_in_memory_special_claim``)
_IN_MEMORY_PROTO = ResourceClaim(name=SPECIAL_CLAIM_IN_MEM_NAME, uid="extended-resources-0",
                                 annotations={EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"})


def _in_memory_special_claim(pod: Any) -> ResourceClaim:
    """PreFilter's special claim for ``pod`` when no prior cycle created one
    (``preFilterExtendedResources``' in-memory claim): what ``ResourceClaim(name=<in-memory name>,
    namespace=, uid=, generate_name=, owner_references=, annotations=)`` builds, as a field copy of
    a claim with the constant fields (``__init__``'s defaults and read-only wrapping ran once for
    them; the annotations are a read-only mapping, shared). The name and uid are set, so
    ``__post_init__`` would derive nothing from them."""
    claim = _copy_claim(_IN_MEMORY_PROTO)
    claim.namespace = pod.namespace
    claim.uid = f"extended-resources-{next(_SPECIAL_UIDS)}"
    claim.generate_name = f"{pod.name}-extended-resources-"
    claim.owner_references = (OwnerReference(kind="Pod", name=pod.name, uid=pod.uid, controller=True,
                                             api_version="v1"),)
    return claim


def _created_special_claim(protos: dict[int, tuple[dict[str, Any], ResourceClaim]], spec_fields: dict[str, Any],
                           generate_name: str, namespace: str, owner_references: tuple,
                           manifest: Mapping[str, Any]) -> ResourceClaim:
    """``ResourceClaim(generate_name=, namespace=, annotations={<extended-resource annotation>},
    owner_references=, manifest=, **spec_fields)`` as a field copy of that claim without the
    per-pod fields, kept in ``protos`` per ``spec_fields`` object (PreBind's spec fields are kept
    per request list: ``_special_spec``). Unnamed, so ``__post_init__`` derives no uid; not
    admitted and not decoded, as a claim built in code."""
    kept = protos.get(id(spec_fields))
    if kept is None or kept[0] is not spec_fields:
        if len(protos) >= 256:
            protos.clear()
        kept = protos[id(spec_fields)] = (spec_fields, ResourceClaim(
            annotations={EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"}, **spec_fields))
    claim = _copy_claim(kept[1])
    claim.generate_name = generate_name
    claim.namespace = namespace
    claim.owner_references = owner_references
    claim.manifest = manifest
    return claim


def _metadata_valid(claim: ResourceClaim, pod: Any) -> bool:
    """Whether ``ValidateObjectMeta`` of the special claim ``claim`` built for ``pod`` is known to
    pass without running it: the pod was admitted (its name a DNS-1123 subdomain, its namespace a
    DNS-1123 label, both checked by its own validation), the claim's namespace is the pod's, its
    ``generateName`` is ``<pod name>-extended-resources-`` (a subdomain prefix of valid characters
    that starts with the pod name's first character and continues its last label, so only its
    length can fail: ``NameIsDNSSubdomain`` checks at most 253 characters of the name as
    ``maskTrailingDash`` leaves it, which replaces the last two characters by "a", so 254 of the
    prefix), no labels, the one constant annotation and one owner reference ``v1``/``Pod``
    with the pod's non-empty name and uid. Anything else: False (the client validates it then)."""
    generate_name = claim.generate_name
    refs = claim.owner_references
    return (getattr(pod, "admitted", False) is True and bool(pod.name) and bool(pod.uid)
            and claim.namespace == pod.namespace and not claim.name and not claim.labels
            and generate_name == f"{pod.name}-extended-resources-"
            and len(generate_name) - 1 <= _DNS1123_SUBDOMAIN_MAX_LENGTH and generate_name.isascii()
            and len(claim.annotations) == 1 and claim.annotations.get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) == "true"
            and len(refs) == 1 and refs[0].api_version == "v1" and refs[0].kind == "Pod"
            and refs[0].name == pod.name and refs[0].uid == pod.uid)


def _request_manifest(request: Any) -> dict:
    """A special claim's request (``exactly``, ExactCount) as the API carries it."""
    body = request.exactly
    return {"name": request.name, "exactly": {"deviceClassName": body.device_class_name,
                                              "allocationMode": body.allocation_mode, "count": body.count}}


def node_allocatable_claim_statuses(state: CycleState, node_name: str) -> list[dict[str, Any]] | None:
    """``ExtractPodNodeAllocatableResourceClaimStatus``: the claim statuses DynamicResources'
    Filter computed for ``node_name`` in this cycle (None without its state or without any)."""
    s = state.get(STATE_KEY)
    if not isinstance(s, _StateData):
        return None
    return s.node_allocatable_statuses.get(node_name) or None


def assumed_with_claim_statuses(assumed: Any, state: CycleState, node_name: str) -> Any:
    """``schedule_one.go: assume`` with DRANodeAllocatableResources: the assumed pod's
    ``status.nodeAllocatableResourceClaimStatuses`` set to what Filter computed for its node
    (overwriting any of an earlier attempt), so the cache counts them on the node."""
    statuses = node_allocatable_claim_statuses(state, node_name)
    if not statuses and not na.claim_statuses_of(assumed):
        return assumed
    return na.with_claim_statuses(assumed, statuses)


def _node_score(s: _StateData, node_name: str) -> int:
    """``Score`` on one node from PreFilter's state: 0 without an allocator (upstream records
    allocations per node only when some claim is allocated in the cycle), else ``computeScore``
    over every claim, allocated ones with their status' allocation, the others with Filter's.

    When the vectorized Filter passed the node from its columns (no allocation computed yet), every
    claim to allocate has ``exactly`` requests only (its plan requires it), so those score 0 and the
    already allocated claims alone decide."""
    if s.allocator is None:
        return 0
    allocations = s.filter_answer(node_name)
    if allocations is None and not s.vector:
        return 0
    score = 0
    pending = 0
    for claim in s.claims:
        allocation: Any
        if claim.allocation is not None:
            allocation = claim.allocation
        elif allocations is None:
            continue
        else:
            if pending >= len(allocations):
                return 0  # upstream's "number of allocations is smaller" error; cannot happen here
            allocation = allocations[pending]
            pending += 1
        if not any(r.first_available for r in claim.requests):
            continue
        allocated = {r.get("request", "") for r in (allocation.get("devices") or {}).get("results") or ()
                     if "/" in r.get("request", "")}
        for request in claim.requests:
            if request.exactly is not None:
                continue
            for i, sub in enumerate(request.first_available):
                if f"{request.name}/{sub.name}" in allocated:
                    score += FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE - i
    return score


def new(args: Any, handle: fwk.Handle) -> DynamicResources:
    """Upstream ``New`` with DynamicResourceAllocation on: type-check and validate the args."""
    args = validated_args(args, DynamicResourcesArgs, "got args of type {got}, want *DynamicResourcesArgs")
    return DynamicResources(args, handle)


# The batch Filter's module reads this module's names when imported, so it comes last; a name
# bound here, not a function-level import (an import statement per call, ~1% of a DRA
# scheduler_perf cycle in samples)
from .vectorized import allocate_for_reserve as _allocate_for_reserve, filter_batch as _filter_batch  # noqa: E402

__all__ = ["NAME", "DynamicResources", "new", "STATE_KEY", "pod_claims",
           "claim_name", "ClaimLookupError", "CANNOT_ALLOCATE_ALL_CLAIMS", "CLAIM_NOT_AVAILABLE_ON_NODE",
           "RESOURCE_CLAIM_IN_USE"]
