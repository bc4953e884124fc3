"""VolumeZone (upstream ``pkg/scheduler/framework/plugins/volumezone/volume_zone.go``, v1.34).

Extension points as upstream: PreFilter, Filter and EnqueueExtensions (no PreFilterExtensions).

* PreFilter looks at ``persistentVolumeClaim`` volumes only (generic ephemeral ones are not looked
  at). Every failure is UnschedulableAndUnresolvable: a claim without a name
  (``PersistentVolumeClaim had no name``), a missing claim, PV or class (the lister's text), an
  unbound claim without class (``PersistentVolumeClaim had no pv name and storageClass name``), a
  class without binding mode, an unbound claim of an Immediate class (``PersistentVolume had no
  name``). WaitForFirstConsumer claims that are not bound are skipped. From each bound PV the
  zone and region labels (GA and beta) are read, a value split on ``__`` into a set (values with
  an empty part ignored). No topology: Skip.
* Filter: a pod without volumes passes; a node with none of the four labels passes; else for each
  PV topology the node's value for its key (or the GA key of a beta key) must be in the set, else
  UnschedulableAndUnresolvable ``node(s) had no available volume zone``. Without the PreFilter
  state the topologies are recomputed.

Vectorized: each PV topology becomes a mask over the table's label codes. Pods without claim
volumes keep the fused cycle's no-op form.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ...api.storage import (WAIT_FOR_FIRST_CONSUMER, PersistentVolume, PersistentVolumeClaim, StorageClass,
                            claim_class, volume_source)
from ...framework import protocols as fwk
from ...framework.columns import FILTER_EACH_CYCLE, FILTER_SKIPPED, ColumnForm
from ...framework.cycle_state import CycleState
from ...framework.interface import (FILTER_NODE_ONLY, ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions,
                                    EventResource, PreFilterPlugin, QueueingHint)
from ...framework import signers
from ...framework.status import Code, Status
from ...framework.vectorized import FilterVerdicts, VectorizedFilterPlugin
from ..helper.typed import as_typed
from ..volumebinding.storage_view import StorageLister

if TYPE_CHECKING:  # pragma: no cover
    from ...api import Pod
    from ...framework.protocols import NodeTable

NAME = "VolumeZone"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_CONFLICT = "node(s) had no available volume zone"
_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
_GA_ZONE = "topology.kubernetes.io/zone"
_GA_REGION = "topology.kubernetes.io/region"
#: upstream ``topologyLabels``, in its order
TOPOLOGY_LABELS = (_BETA_ZONE, _BETA_REGION, _GA_ZONE, _GA_REGION)
_GA_OF = {_BETA_ZONE: _GA_ZONE, _BETA_REGION: _GA_REGION}


def _label_zones_to_set(value: str) -> frozenset[str] | None:
    """``LabelZonesToSet``: the ``__``-separated parts, trimmed; None when one is empty."""
    parts = [p.strip() for p in value.split("__")]
    if any(not p for p in parts):
        return None
    return frozenset(parts)


def _claim_names(pod: Pod) -> list[str]:
    names = []
    for v in pod.volumes:
        src = volume_source(v, "persistentVolumeClaim")
        if src is not None:
            names.append(src.get("claimName") or src.get("claim_name") or "")
    return names


class _StateData:
    __slots__ = ("topologies",)

    def __init__(self, topologies: list[tuple[str, str, frozenset[str]]]):
        self.topologies = topologies  # (pv name, label key, values)

    def clone(self) -> "_StateData":
        return self


class VolumeZone(PreFilterPlugin, VectorizedFilterPlugin, EnqueueExtensions):
    """PV zone and region labels against the node's."""

    def __init__(self, handle: fwk.Handle | None = None, enable_scheduling_queue_hint: bool = True):
        self.handle = handle
        self._enable_scheduling_queue_hint = enable_scheduling_queue_hint

    def name(self) -> str:
        return NAME

    # -- opportunistic batching ---------------------------------------------------------------------
    def sign_pod(self, pod: Pod) -> tuple[signers.Fragments | None, Status | None]:
        """Upstream ``SignPod``: the volumes' sources (ConfigMap and Secret sources left out)."""
        return ((signers.VOLUMES_SIGNER, signers.volumes_signer(pod)),), None

    #: the pod spec fields its column form and plan parts read (fastsched.framework.columns)
    #: its Filter reads the pod's PVs' zone labels and the node's labels, never the pods on the
    #: node (FilterPlugin.filter_pod_dependence)
    filter_pod_dependence = FILTER_NODE_ONLY

    column_reads = ("namespace", "volumes")

    def column_form(self, pod: Pod, table: NodeTable) -> ColumnForm | None:
        """No-op form for pods without claim volumes (PreFilter answers Skip); the others' Filter
        reads the claims' volumes, which change between cycles: it runs each cycle (CYCLE)."""
        return FILTER_EACH_CYCLE if _claim_names(pod) else FILTER_SKIPPED

    def _topologies(self, pod: Pod) -> tuple[list, Status | None]:
        """Upstream ``getPVbyPod``."""
        lister = StorageLister(getattr(self.handle, "client", None))
        out: list[tuple[str, str, frozenset[str]]] = []
        unresolvable = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        for name in _claim_names(pod):
            if not name:
                return [], Status(unresolvable, "PersistentVolumeClaim had no name")
            pvc = lister.pvc(pod.namespace, name)
            if pvc is None:
                return [], Status(unresolvable, f'persistentvolumeclaim "{name}" not found')
            pv_name = pvc.volume_name
            if not pv_name:
                sc_name = claim_class(pvc)
                if not sc_name:
                    return [], Status(unresolvable, "PersistentVolumeClaim had no pv name and storageClass name")
                sc = lister.storage_class(sc_name)
                if sc is None:
                    return [], Status(unresolvable, f'storageclass.storage.k8s.io "{sc_name}" not found')
                if sc.volume_binding_mode is None:
                    return [], Status(unresolvable, f'VolumeBindingMode not set for StorageClass "{sc_name}"')
                if sc.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER:
                    continue
                return [], Status(unresolvable, "PersistentVolume had no name")
            pv = lister.pv(pv_name)
            if pv is None:
                return [], Status(unresolvable, f'persistentvolume "{pv_name}" not found')
            out.extend((pv.name, key, zones) for key, zones in _pv_topologies(pv))
        return out, None

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[fwk.NodeInfo]) -> tuple[None, Status | None]:
        topologies, status = self._topologies(pod)
        if status is not None:
            return None, status
        if not topologies:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, _StateData(topologies))
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    def _state_topologies(self, state: CycleState, pod: Pod) -> tuple[list, Status | None]:
        try:
            return state.read(PRE_FILTER_STATE_KEY).topologies, None
        except KeyError:
            return self._topologies(pod)

    def filter(self, state: CycleState, pod: Pod, node_info: fwk.NodeInfo) -> Status | None:
        if not pod.volumes:
            return None
        topologies, status = self._state_topologies(state, pod)
        if status is not None:
            return status
        labels = node_info.node().labels
        if not any(key in labels for key in TOPOLOGY_LABELS):
            return None
        for _pv, key, values in topologies:
            v = labels.get(key)
            if v is None:
                v = labels.get(_GA_OF.get(key, key))
            if v is None or v not in values:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
        return None

    def filter_vectorized(self, state: CycleState, pod: Pod, nodes: fwk.NodeBatch) -> FilterVerdicts | Status:
        n = len(nodes)
        if not pod.volumes:
            return FilterVerdicts.all_pass(n)
        topologies, status = self._state_topologies(state, pod)
        if status is not None:
            return status
        table = getattr(nodes, "table", None)
        if table is None:
            return FilterVerdicts.from_statuses([self.filter(state, pod, ni) for ni in nodes])
        rows = np.asarray(nodes.rows, dtype=np.int64)

        def codes_of(key: str) -> np.ndarray:
            col = table.label_column(key)
            return np.full(n, -1, dtype=np.int32) if col is None else col[rows]

        constrained = np.zeros(n, dtype=bool)
        for key in TOPOLOGY_LABELS:
            constrained |= codes_of(key) >= 0
        fail = np.zeros(n, dtype=bool)
        for _pv, key, values in topologies:
            codes = codes_of(key)
            ga = _GA_OF.get(key)
            if ga is not None:
                codes = np.where(codes >= 0, codes, -2 - codes_of(ga))  # GA codes encoded as <= -2
            wanted = [table.label_code(key, v) for v in values]
            ok = np.isin(codes, [c for c in wanted if c is not None and c >= 0])
            if ga is not None:
                ga_wanted = [table.label_code(ga, v) for v in values]
                ok |= np.isin(codes, [-2 - c for c in ga_wanted if c is not None and c >= 0])
            fail |= ~ok
        fail &= constrained
        return FilterVerdicts.from_mask(fail, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)

    # -- EnqueueExtensions --------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        node_actions = ActionType.ADD | ActionType.UPDATE_NODE_LABEL
        if not self._enable_scheduling_queue_hint:
            node_actions |= ActionType.UPDATE_NODE_TAINT
        add_update = ActionType.ADD | ActionType.UPDATE
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.STORAGE_CLASS, ActionType.ADD),
                                 self.is_schedulable_after_storage_class_added),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, node_actions)),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, add_update),
                                 self.is_schedulable_after_persistent_volume_claim_change),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME, add_update),
                                 self.is_schedulable_after_persistent_volume_change),
        ]

    # The hints type their objects as upstream's util.As does: an object of another type is answered
    # with Queue and an error (isSchedulableAfter... in volume_zone.go), not raised.
    def is_schedulable_after_storage_class_added(self, pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, Any]:
        _, added, err = as_typed(StorageClass, "*v1.StorageClass", None, new)
        if err is not None:
            return QueueingHint.QUEUE, TypeError(f"unexpected objects in isSchedulableAfterStorageClassAdded: {err}")
        if added is not None and added.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER:
            return QueueingHint.QUEUE, None
        return QueueingHint.QUEUE_SKIP, None

    def is_schedulable_after_persistent_volume_claim_change(self, pod: Pod, old: Any,
                                                            new: Any) -> tuple[QueueingHint, Any]:
        _, modified, err = as_typed(PersistentVolumeClaim, "*v1.PersistentVolumeClaim", old, new)
        if err is not None:
            return QueueingHint.QUEUE, TypeError(
                f"unexpected objects in isSchedulableAfterPersistentVolumeClaimChange: {err}")
        if modified is not None and modified.namespace == pod.namespace and modified.name in _claim_names(pod):
            return QueueingHint.QUEUE, None
        return QueueingHint.QUEUE_SKIP, None

    def is_schedulable_after_persistent_volume_change(self, pod: Pod, old: Any,
                                                      new: Any) -> tuple[QueueingHint, Any]:
        original, modified, err = as_typed(PersistentVolume, "*v1.PersistentVolume", old, new)
        if err is not None:
            return QueueingHint.QUEUE, TypeError(f"unexpected objects in isSchedulableAfterPersistentVolumeChange: {err}")
        if original is None:
            return QueueingHint.QUEUE, None
        assert modified is not None  # an update
        if _pv_topologies(original) != _pv_topologies(modified):
            return QueueingHint.QUEUE, None
        return QueueingHint.QUEUE_SKIP, None


def _pv_topologies(pv: PersistentVolume) -> list[tuple[str, frozenset[str]]]:
    """Upstream ``getPVTopologies``: per topology label the PV carries, in ``topologyLabels``' order,
    the set of its ``__``-separated zones; a value that does not parse is left out. The hint compares
    these, not the raw values: "a__b" and "b__a" are the same topology."""
    labels = pv.labels
    if not labels:  # (scheduler_perf's PVs, a new one each measured pod: no label to look up)
        return []
    out = []
    for key in TOPOLOGY_LABELS:
        value = labels.get(key)
        if value is None:
            continue
        zones = _label_zones_to_set(value)
        if zones is not None:
            out.append((key, zones))
    return out


def new(args: Any, handle: fwk.Handle) -> VolumeZone:
    """Upstream ``New``: the plugin takes no args."""
    return VolumeZone(handle)


__all__ = ["NAME", "VolumeZone", "new", "ERR_REASON_CONFLICT", "PRE_FILTER_STATE_KEY", "TOPOLOGY_LABELS"]
