"""NodeVolumeLimits (upstream ``pkg/scheduler/framework/plugins/nodevolumelimits/csi.go``, ``CSILimits``, v1.37).

Extension points as upstream: PreFilter, Filter and EnqueueExtensions.

* PreFilter: Skip unless the pod has a ``persistentVolumeClaim`` or ``ephemeral`` volume or an
  inline volume csi-translation-lib can migrate (gcePersistentDisk, awsElasticBlockStore, cinder,
  azureDisk, azureFile, vsphereVolume, portworxVolume).
* Filter: the CSI volumes the pod would attach (``<driver>/<handle>``: a bound PV's CSI source, or
  its in-tree source translated when migration is on; an unbound claim's class provisioner with a
  random handle per claim; migrated inline volumes) against the node's CSINode
  ``allocatable.count`` per driver, counting each volume already attached by the node's pods once.
  A missing claim of the pod: UnschedulableAndUnresolvable ``looking up PVC <ns>/<n>: <lister
  text>``; over a limit: Unschedulable ``node(s) exceed max volume count``.
* VolumeLimitScaling (beta, on since v1.37; ``checkCSIDriverOnNode``): before the limits, each new
  volume's driver whose CSIDriver sets ``spec.preventPodSchedulingIfMissing`` must be listed in the
  node's CSINode (no CSINode: not listed), else Unschedulable ``<driver> CSI driver is not
  installed on the node``. A driver without a CSIDriver object passes. Upstream walks the new
  volumes in Go map order, so with two such drivers missing its message names either; this names
  the first in the pod's volume order.

Limits come from CSINode objects only (v1.34 no longer reads ``attachable-volumes-*`` node
allocatable). In-tree volumes of AWS EBS, Portworx, GCE PD, Azure Disk and Cinder count as migrated
on any node with a CSINode (v1.37 ``isCSIMigrationOn``). VolumeAttachment objects are not modelled
(fastsched has no VolumeAttachment kind; upstream also counts the volumes they attach to the node
that no pod on it uses, v1.37 through an index on ``spec.nodeName``).

Vectorized: what each row's pods attach is kept in a :class:`RowCache` (rows recomputed only when
they change, everything when a storage object changes), with per-driver counts as (C,) int64
columns and the rows holding each volume, so the Filter over many nodes is array work.
"""
from __future__ import annotations

import random
import string
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from ...api.storage import CSINode, claim_class, claim_name_of_volume, volume_is_for_pod
from ...framework import protocols as fwk
from ...framework.columns import FILTER_EACH_CYCLE, FILTER_SKIPPED, ColumnForm
from ...framework.cycle_state import CycleState
from ...framework.interface import (FILTER_NODE_ONLY, FILTER_PER_POD, ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions,
                                    EventResource, PreFilterPlugin, QueueingHint)
from ...framework import signers
from ...framework.status import Code, Status
from ...framework.vectorized import FilterVerdicts, VectorizedFilterPlugin
from ..helper.typed import as_typed
from ..volumebinding.storage_view import (CSI_DRIVER_OF_PLUGIN, PLUGIN_OF_SOURCE, RowCache, StorageLister,
                                          TranslationError, csi_migration_on, plugin_of_source, storage_version,
                                          translated_handle, verdicts_into_mask)

if TYPE_CHECKING:  # pragma: no cover
    from ...api import Pod
    from ...framework.protocols import NodeTable

NAME = "NodeVolumeLimits"
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"
#: inline volume types with a CSI migration translator in v1.34
MIGRATABLE_INLINE_SOURCES = tuple(PLUGIN_OF_SOURCE)


class _PodError(Exception):
    """filterAttachableVolumes failing; ``not_found`` marks a missing claim of the new pod."""

    def __init__(self, message: str, not_found: bool = False):
        super().__init__(message)
        self.not_found = not_found


def _uses_volumes(pod: Pod) -> bool:
    for v in pod.volumes:
        if claim_name_of_volume(pod, v) is not None or plugin_of_source(v) is not None:
            return True
    return False


class NodeVolumeLimits(PreFilterPlugin, VectorizedFilterPlugin, EnqueueExtensions):
    """CSI attach limits per node (upstream ``CSILimits``)."""

    def __init__(self, handle: fwk.Handle | None = None, enable_volume_limit_scaling: bool = True):
        self.handle = handle
        #: the VolumeLimitScaling gate (beta, on by default since v1.37)
        self.enable_volume_limit_scaling = enable_volume_limit_scaling
        # upstream: rand.String(32) from Go's global source, the prefix of the handles given to
        # unbound claims; drawn from a private generator so the scheduler's RNG is not consumed
        rng = random.Random(NAME)
        alphabet = string.ascii_lowercase + string.digits
        self.random_volume_id_prefix = "".join(rng.choice(alphabet) for _ in range(32))
        self._attached = RowCache(self._row_attached, self._on_row_change, self._on_reset)
        #: (C,) int64 0..C-1: every row, for filter_passes_everywhere's sync of the whole table
        self._every_row = np.zeros(0, dtype=np.int64)
        self._counts: dict[str, np.ndarray] = {}          # driver -> (C,) int64 attached volumes per row
        self._rows_of_volume: dict[str, set[int]] = {}     # unique name -> rows attaching it
        #: driver -> the maximum of its ``_counts`` column, while known (kept by _on_row_change: a
        #: row's count rising raises it, one falling from it drops it to be taken again), so the
        #: Filter's table-wide bound is not a pass over every row each cycle
        self._count_max: dict[str, int] = {}
        self._error_rows: set[int] = set()
        #: (pod uid, namespace, name, whether the node has no CSINode) -> (the pod's volumes, what
        #: the pod attaches there or its error text). What a pod attaches reads the CSINode only
        #: for whether there is one (``csi_migration_on``), and the pod for its uid, namespace,
        #: name and volumes: the entry holds the volumes tuple and is taken only for that same
        #: tuple (a bound copy of the pod, ``Pod.with_node_name``, shares it)
        self._pod_attached: dict[tuple[str, str, str, bool], tuple[Any, dict[str, str] | str]] = {}

    def name(self) -> str:
        return NAME

    # -- opportunistic batching ---------------------------------------------------------------------
    def sign_pod(self, pod: Pod) -> tuple[signers.Fragments | None, Status | None]:
        """Upstream ``SignPod``: the volumes' sources (ConfigMap and Secret sources left out)."""
        return ((signers.VOLUMES_SIGNER, signers.volumes_signer(pod)),), None

    #: the pod spec fields its column form and plan parts read (fastsched.framework.columns)
    column_reads = ("namespace", "volumes")

    def column_form(self, pod: Pod, table: NodeTable) -> ColumnForm | None:
        """No-op form for pods PreFilter skips; the others' Filter counts the volumes attached to
        each node, which change between cycles: it runs each cycle (CYCLE)."""
        return FILTER_EACH_CYCLE if _uses_volumes(pod) else FILTER_SKIPPED

    @property
    def _lister(self) -> StorageLister:
        return StorageLister(getattr(self.handle, "client", None))

    #: Filter reads the node's pods only where the node's CSINode has a limit (and the pod has new
    #: volumes): node-only for a pod that no CSINode of the table limits, else pod-dependent
    #: (filter_pod_dependence_of; FilterPlugin.filter_pod_dependence)
    filter_pod_dependence = FILTER_PER_POD

    def filter_pod_dependence_of(self, state: CycleState, pod: Pod, table: NodeTable) -> str | None:
        """:data:`FILTER_NODE_ONLY` when no row of ``table`` reads its pods' volumes for ``pod``:
        on every CSINode profile the pod's new volumes fail to read, are none, fail the driver
        check, or the CSINode sets no limit (Filter's returns before it lists the node's pods);
        else None. Then the verdict on any row is the same with any pods on it, so preemption's dry
        run and RunFilterPluginsWithNominatedPods may judge it on the table as it is."""
        if not pod.volumes:
            return FILTER_NODE_ONLY
        lister = self._lister
        _, profiles, _, _ = self._profiles(table, storage_version(lister.client))
        for csi_node in profiles:
            if not self._limits(csi_node):
                continue
            new = self._new_volumes(pod, csi_node)
            if isinstance(new, Status) or not new or self._driver_missing(lister, new, csi_node) is not None:
                continue
            return None
        return FILTER_NODE_ONLY

    # -- PreFilter ----------------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[fwk.NodeInfo]) -> tuple[None, Status | None]:
        if _uses_volumes(pod):
            return None, None
        return None, Status(Code.SKIP)

    def pre_filter_extensions(self) -> None:
        return None

    # -- the volumes a pod attaches -----------------------------------------------------------------
    def attachable_volumes(self, lister: StorageLister, pod: Pod, csi_node: CSINode | None, new_pod: bool,
                           result: dict[str, str]) -> None:
        """Upstream ``filterAttachableVolumes``: add ``unique name -> driver`` of the pod's CSI
        volumes to ``result``; raises _PodError."""
        for vol in pod.volumes:
            claim = claim_name_of_volume(pod, vol)
            if claim is None:
                self._inline(vol, csi_node, result)
                continue
            pvc_name, ephemeral = claim
            if not pvc_name:
                raise _PodError("PersistentVolumeClaim had no name")
            pvc = lister.pvc(pod.namespace, pvc_name)
            if pvc is None:
                if new_pod:
                    raise _PodError(f'looking up PVC {pod.namespace}/{pvc_name}: persistentvolumeclaim '
                                    f'"{pvc_name}" not found', not_found=True)
                continue
            if ephemeral:
                problem = volume_is_for_pod(pod, pvc)
                if problem is not None:
                    raise _PodError(problem)
            driver, handle = self._driver_info(lister, csi_node, pvc)
            if not driver or not handle:
                continue
            result[f"{driver}/{handle}"] = driver

    @staticmethod
    def _inline(vol: Mapping[str, Any], csi_node: CSINode | None, result: dict[str, str]) -> None:
        found = plugin_of_source(vol)
        if found is None:
            return
        plugin, spec = found
        if not csi_migration_on(csi_node, plugin):
            return
        try:
            handle = translated_handle(plugin, spec)
        except TranslationError as e:
            raise _PodError(f"converting volume({vol.get('name', '')}) from inline to csi: {e}") from None
        driver = CSI_DRIVER_OF_PLUGIN[plugin]
        result[f"{driver}/{handle}"] = driver

    def _driver_info(self, lister: StorageLister, csi_node: CSINode | None, pvc: Any) -> tuple[str, str]:
        """Upstream ``getCSIDriverInfo``."""
        pv = lister.pv(pvc.volume_name) if pvc.volume_name else None
        if pv is None:
            return self._driver_info_from_class(lister, csi_node, pvc)
        if pv.source == "csi":
            return pv.csi_driver, pv.csi_volume_handle
        if csi_node is None:
            return "", ""   # no in-tree plugin is migrated without a CSINode (``csi_migration_on``)
        found = plugin_of_source({pv.source: pv.source_spec}) if pv.source else None
        if found is None:
            return "", ""
        plugin, spec = found
        if not csi_migration_on(csi_node, plugin):
            return "", ""
        try:
            handle = translated_handle(plugin, spec, pv.labels)
        except TranslationError:
            return "", ""
        return CSI_DRIVER_OF_PLUGIN[plugin], handle

    def _driver_info_from_class(self, lister: StorageLister, csi_node: CSINode | None, pvc: Any) -> tuple[str, str]:
        """Upstream ``getCSIDriverInfoFromSC``."""
        sc_name = claim_class(pvc)
        if not sc_name:
            return "", ""
        sc = lister.storage_class(sc_name)
        if sc is None:
            return "", ""
        handle = f"{self.random_volume_id_prefix}-{pvc.namespace}/{pvc.name}"
        provisioner = sc.provisioner
        if provisioner in CSI_DRIVER_OF_PLUGIN:
            if not csi_migration_on(csi_node, provisioner):
                return "", ""
            return CSI_DRIVER_OF_PLUGIN[provisioner], handle
        return provisioner, handle

    @staticmethod
    def _driver_installed(lister: StorageLister, driver: str, csi_node: CSINode | None) -> bool:
        """Upstream ``checkCSIDriverOnNode``: a driver whose CSIDriver object is missing, or does
        not set ``preventPodSchedulingIfMissing``, counts as installed; else the node's CSINode
        must list it."""
        csi_driver = lister.csi_driver(driver)
        if csi_driver is None or not csi_driver.prevent_pod_scheduling_if_missing:
            return True
        if csi_node is None:
            return False
        return any(d.name == driver for d in csi_node.drivers)

    def _driver_missing(self, lister: StorageLister, new: dict[str, str], csi_node: CSINode | None) -> Status | None:
        """Filter's VolumeLimitScaling check over the pod's new volumes (before the limits)."""
        if not self.enable_volume_limit_scaling:
            return None
        for driver in new.values():
            if not self._driver_installed(lister, driver, csi_node):
                return Status(Code.UNSCHEDULABLE, f"{driver} CSI driver is not installed on the node")
        return None

    @staticmethod
    def _limits(csi_node: CSINode | None) -> dict[str, int]:
        """Upstream ``getVolumeLimits``: CSINode ``allocatable.count`` per driver."""
        if csi_node is None:
            return {}
        return {d.name: d.count for d in csi_node.drivers if d.count is not None}

    # -- Filter -------------------------------------------------------------------------------------
    def _new_volumes(self, pod: Pod, csi_node: CSINode | None) -> dict[str, str] | Status:
        new: dict[str, str] = {}
        try:
            self.attachable_volumes(self._lister, pod, csi_node, True, new)
        except _PodError as e:
            code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if e.not_found else Code.ERROR
            return Status(code, str(e))
        return new

    @staticmethod
    def _verdict(new: dict[str, str], limits: dict[str, int], attached: dict[str, str]) -> Status | None:
        new = dict(new)
        attached_count: dict[str, int] = {}
        for unique, driver in attached.items():
            new.pop(unique, None)
            attached_count[driver] = attached_count.get(driver, 0) + 1
        new_count: dict[str, int] = {}
        for driver in new.values():
            new_count[driver] = new_count.get(driver, 0) + 1
        for driver, count in new_count.items():
            limit = limits.get(driver)
            if limit is not None and attached_count.get(driver, 0) + count > limit:
                return Status(Code.UNSCHEDULABLE, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: fwk.NodeInfo) -> Status | None:
        if not pod.volumes:
            return None
        node = node_info.node()
        csi_node = self._lister.csi_node(node.name)
        new = self._new_volumes(pod, csi_node)
        if isinstance(new, Status):
            return new
        if not new:
            return None
        lister = self._lister
        missing = self._driver_missing(lister, new, csi_node)
        if missing is not None:
            return missing
        limits = self._limits(csi_node)
        if not limits:
            return None
        attached: dict[str, str] = {}
        for pi in node_info.pods:
            try:
                self.attachable_volumes(lister, pi.pod, csi_node, False, attached)
            except _PodError as e:
                return Status.from_error(str(e))
        return self._verdict(new, limits, attached)

    # -- vectorized ---------------------------------------------------------------------------------
    def _row_attached(self, table: NodeTable, row: int) -> dict[str, str] | str:
        """What the row's pods attach (unique name -> driver), or the error text of the first pod
        whose volumes cannot be read.

        Each pod's own part is kept (:attr:`_pod_attached`) while the storage objects stay (the
        RowCache drops every row when they change, and _on_reset this memo): a row reloaded
        because one pod came or went reads the others' volumes from the memo."""
        lister = self._lister
        csi_node = lister.csi_node(table.node_names[row])
        memo = self._pod_attached
        attached: dict[str, str] = {}
        no_csi_node = csi_node is None
        for pi in table.pods[row]:
            pod = pi.pod
            volumes = pod.volumes
            if not volumes:
                continue
            key = (pod.uid, pod.namespace, pod.name, no_csi_node)
            hit = memo.get(key)
            if hit is None or hit[0] is not volumes:
                own: dict[str, str] = {}
                try:
                    self.attachable_volumes(lister, pod, csi_node, False, own)
                    value: dict[str, str] | str = own
                except _PodError as e:
                    value = str(e)
                if len(memo) >= 1 << 17:
                    memo.clear()
                hit = memo[key] = (volumes, value)
            value = hit[1]
            if isinstance(value, str):
                return value
            attached.update(value)
        return attached

    def _remember_attached(self, pod: Pod, new: dict[str, str]) -> None:
        memo = self._pod_attached
        if len(memo) >= 1 << 17:
            memo.clear()
        memo[(pod.uid, pod.namespace, pod.name, False)] = (pod.volumes, dict(new))

    def _on_reset(self, capacity: int) -> None:
        if capacity < 0:  # grown: keep the values
            self._capacity = -capacity
            for driver, col in list(self._counts.items()):
                grown = np.zeros(-capacity, dtype=np.int64)
                grown[:len(col)] = col
                self._counts[driver] = grown
            return
        self._counts = {}
        self._count_max = {}
        self._rows_of_volume = {}
        self._error_rows = set()
        self._capacity = capacity
        self._pod_attached = {}  # the storage objects changed: every pod's part is read again

    def _on_row_change(self, row: int, old: Any, new: Any) -> None:
        if type(old) is dict and type(new) is dict:
            # A row's value changes by the pods that came or went (one bound pod's volumes, most
            # often), while the whole value grows with the row's pods: only the entries that
            # differ are taken out and put in (items, so a unique name whose driver changed is
            # both), which leaves counts, maxima and volume rows as the full swap leaves them.
            # The full swap made the per-pod cost grow with the pods already on the node.
            self._apply_entries(row, old.items() - new.items(), -1)
            self._apply_entries(row, new.items() - old.items(), 1)
            return
        for value, sign in ((old, -1), (new, 1)):
            if value is None:
                continue
            if isinstance(value, str):
                (self._error_rows.add if sign > 0 else self._error_rows.discard)(row)
                continue
            self._apply_entries(row, value.items(), sign)

    def _apply_entries(self, row: int, entries: Any, sign: int) -> None:
        """Count ``entries`` ((unique name, driver) pairs) of ``row`` in (``sign`` 1) or out (-1):
        the per-driver count columns, their kept maxima and the rows holding each volume."""
        for unique, driver in entries:
            col = self._counts.get(driver)
            if col is None:
                col = self._counts[driver] = np.zeros(self._capacity_now(), dtype=np.int64)
            col[row] += sign
            known = self._count_max.get(driver)
            if known is not None:
                if sign > 0:
                    if col[row] > known:
                        self._count_max[driver] = int(col[row])
                elif col[row] + 1 >= known:
                    del self._count_max[driver]  # the maximum may have fallen: taken again when asked
            rows = self._rows_of_volume.setdefault(unique, set())
            if sign > 0:
                rows.add(row)
            else:
                rows.discard(row)

    def _driver_max(self, driver: str, col: np.ndarray) -> int:
        """The maximum of ``driver``'s count column (``col``), kept between cycles."""
        known = self._count_max.get(driver)
        if known is None:
            known = self._count_max[driver] = int(col.max()) if len(col) else 0
        return known

    def _capacity_now(self) -> int:
        return max((len(c) for c in self._counts.values()), default=getattr(self, "_capacity", 0))

    def filter_vectorized(self, state: CycleState, pod: Pod, nodes: fwk.NodeBatch) -> FilterVerdicts | Status:
        n = len(nodes)
        if not pod.volumes:
            return FilterVerdicts.all_pass(n)
        table = getattr(nodes, "table", None)
        if table is None:
            return FilterVerdicts.from_statuses([self.filter(state, pod, ni) for ni in nodes])
        lister = self._lister
        if lister.known_empty("CSINode"):  # (no CSINode at all: _profiles' one profile, unread)
            return self._without_csi_nodes(lister, pod, n)
        rows = np.asarray(nodes.rows, dtype=np.int64)
        version = storage_version(lister.client)
        profile_of_row, profiles, uniform, contents = self._profiles(table, version)
        if len(profiles) == 1:
            return self._without_csi_nodes(lister, pod, n)
        reasons: list[tuple[str, ...]] = []
        need_rows = []
        plans = []
        # profiles with equal CSINode content share the work
        by_content: dict[tuple | None, tuple] = {}
        if uniform is not None:
            # every row of the table has the one profile (every node's CSINode alike, the
            # CSINode-limited volume cases): no per-row profile ids to gather
            profile_of = profile_of_row
            present = [uniform]
        else:
            profile_of = profile_of_row[rows]
            # the profiles of the rows, without a sort (a few profiles, many rows)
            present = np.flatnonzero(np.bincount(profile_of, minlength=len(profiles))).tolist()
        for pid in present:
            csi_node = profiles[pid]
            content = contents[pid]
            plan = by_content.get(content)
            if plan is None:
                new = self._new_volumes(pod, csi_node)
                if not isinstance(new, Status) and new:
                    missing = self._driver_missing(lister, new, csi_node)
                    if missing is not None:
                        new = missing
                limits = self._limits(csi_node)
                plan = by_content[content] = (new, limits)
            plans.append((pid, plan))
        # masks of the profiles' rows: None when every row has the one profile present
        one = len(present) == 1
        codes: np.ndarray | None = None
        rid: np.ndarray | None = None
        for pid, (new, limits) in plans:
            mask = None if one else profile_of == pid
            if isinstance(new, Status):
                if codes is None or rid is None:
                    codes, rid = np.zeros(n, dtype=np.int8), np.full(n, -1, dtype=np.int32)
                reasons.append(tuple(new.reasons()))
                codes[mask if mask is not None else slice(None)] = int(new.code())
                rid[mask if mask is not None else slice(None)] = len(reasons) - 1
                continue
            if not new or not limits:
                continue  # (the per-node Filter returns before it lists the node's pods)
            need_rows.append((mask, new, limits))
        if not need_rows:
            if codes is None or rid is None:
                return FilterVerdicts.all_pass(n)
            return FilterVerdicts(codes, rid, reasons)
        self._attached.sync(table, rows, version)
        for pid, (new, _limits) in plans:
            if pid and isinstance(new, dict):
                # what the pod attaches on a node with a CSINode, for when it is bound: its row's
                # reload (next cycle) reads it here instead of the pod's claims again. Read as a new
                # pod's, which differs from an existing one's only by raising for a missing claim
                # (and a driver missing on the node made ``new`` a Status, not stored)
                self._remember_attached(pod, new)
        over: np.ndarray | None = None
        error_at: np.ndarray | None = None
        for mask, new, limits in need_rows:
            if self._error_rows:
                err = np.isin(rows, list(self._error_rows))
                if mask is not None:
                    err &= mask
                error_at = err if error_at is None else error_at | err
            for driver, limit in limits.items():
                uniques = [u for u, d in new.items() if d == driver]
                if not uniques:
                    continue
                count_col = self._counts.get(driver)
                k = len(uniques)
                if k <= limit and (count_col is None or self._driver_max(driver, count_col) + k <= limit):
                    # a row gets at most k new volumes (fewer where some are attached there
                    # already) and no row (of the whole table) holds more than limit - k: none is
                    # over, whichever rows hold the new volumes
                    continue
                holders = [h for h in map(self._rows_of_volume.get, uniques) if h]
                attached = count_col[rows] if count_col is not None else np.zeros(n, dtype=np.int64)
                new_here = np.full(n, k, dtype=np.int64)
                for h in holders:
                    new_here -= np.isin(rows, list(h))
                # a driver left with no new volume once shared ones are dropped is not checked
                hit = (new_here > 0) & (attached + new_here > limit)
                if mask is not None:
                    hit &= mask
                over = hit if over is None else over | hit
        if codes is None or rid is None:
            if (error_at is None or not error_at.any()) and (over is None or not over.any()):
                return FilterVerdicts.all_pass(n)
            codes, rid = np.zeros(n, dtype=np.int8), np.full(n, -1, dtype=np.int32)
        if error_at is not None and error_at.any():  # an existing pod's volumes could not be read: Error, per node
            for i in np.flatnonzero(error_at).tolist():
                reasons.append((self._attached.get(int(rows[i])),))
                codes[i] = int(Code.ERROR)
                rid[i] = len(reasons) - 1
            if over is not None:
                over &= ~error_at
        if over is not None and over.any():
            reasons.append((ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,))
            codes[over] = int(Code.UNSCHEDULABLE)
            rid[over] = len(reasons) - 1
        return FilterVerdicts(codes, rid, reasons)

    def _without_csi_nodes(self, lister: StorageLister, pod: Pod, n: int) -> FilterVerdicts:
        """:meth:`filter_vectorized` where no node has a CSINode: no limits anywhere, so every row
        passes unless reading the pod's volumes (or, with VolumeLimitScaling, a missing driver)
        fails, the same way on every row: no per-row arrays (pods with volumes, every cycle of
        the volume cases)."""
        new = self._without_csi_nodes_status(lister, pod)
        if new is None:
            return FilterVerdicts.all_pass(n)
        return FilterVerdicts(np.full(n, int(new.code()), dtype=np.int8), np.zeros(n, dtype=np.int32),
                              [tuple(new.reasons())])

    def _without_csi_nodes_status(self, lister: StorageLister, pod: Pod) -> Status | None:
        """The one verdict of every row where no node has a CSINode (:meth:`_without_csi_nodes`)."""
        new = self._new_volumes(pod, None)
        if isinstance(new, Status):
            return new
        return self._driver_missing(lister, new, None) if new else None

    def filter_passes_everywhere(self, state: CycleState, pod: Pod, table: NodeTable) -> bool:
        """The compiled cycle's question after PreFilter (framework.columns.CycleFilterShortcuts):
        True when :meth:`filter_vectorized` passes every row of ``table`` this cycle. It does when
        the pod has no volume; when no node has a CSINode (one profile, no limits) and reading
        the pod's volumes (and, with VolumeLimitScaling, their drivers) succeeds, the answer it
        gives every row then (:meth:`_without_csi_nodes`); and when every row has the one CSINode
        profile (the CSINode-limited volume cases), the pod's new volumes read there without a
        missing driver, and no limit can be passed: no row's attached volumes fail to read and,
        per limited driver, the pod's k new volumes fit on the row holding the most (counted with
        every row brought up to date, as the windows bring theirs: each row's verdict is then the
        one its window would give). The Filter writes no state (what the pod attaches is kept for
        its row's reload as the windows keep it). False says nothing (the windows ask the Filter)."""
        if not pod.volumes:
            return True
        lister = self._lister
        if lister.known_empty("CSINode"):
            return self._without_csi_nodes_status(lister, pod) is None
        version = storage_version(lister.client)
        _, profiles, uniform, _ = self._profiles(table, version)
        if len(profiles) == 1:
            return self._without_csi_nodes_status(lister, pod) is None
        if uniform is None:
            return False
        csi_node = profiles[uniform]
        new = self._new_volumes(pod, csi_node)
        if isinstance(new, Status):
            return False
        if new and self._driver_missing(lister, new, csi_node) is not None:
            return False
        limits = self._limits(csi_node)
        if not new or not limits:
            return True
        every = self._every_row
        if len(every) != len(table.row_version):
            every = self._every_row = np.arange(len(table.row_version), dtype=np.int64)
        self._attached.sync(table, every, version)
        if uniform:
            self._remember_attached(pod, new)
        if self._error_rows:
            return False
        for driver, limit in limits.items():
            k = sum(1 for d in new.values() if d == driver)
            if not k:
                continue
            count_col = self._counts.get(driver)
            if k > limit or (count_col is not None and self._driver_max(driver, count_col) + k > limit):
                return False
        return True

    def filter_window_mask(self, state: CycleState, pod: Pod, nodes: fwk.NodeBatch, mask: np.ndarray,
                           first: bool) -> bool:
        """The compiled cycle's window Filter (``CompiledCycle._filter_windows``): whether each
        row of ``nodes`` passes :meth:`filter_vectorized`, written into ``mask`` (C,) uint8 at the
        rows (set when ``first``, else ANDed); False (nothing written) for a Status answer or an
        Error verdict (:func:`~..volumebinding.storage_view.verdicts_into_mask`)."""
        return verdicts_into_mask(self.filter_vectorized(state, pod, nodes), nodes.rows, mask, first)

    def _content(self, csi_node: CSINode) -> tuple:
        """What Filter reads of a CSINode (beside whether it exists): its migrated plugins, its
        limits and, for VolumeLimitScaling, the drivers it lists."""
        return (csi_node.migrated_plugins, tuple(sorted(self._limits(csi_node).items())),
                frozenset(d.name for d in csi_node.drivers) if self.enable_volume_limit_scaling else None)

    def _profiles(self, table: NodeTable, version: Any) -> tuple[np.ndarray, list, int | None, list]:
        """(C,) int64 profile id per row (rows whose CSINodes agree on what Filter reads share one;
        0: no CSINode), a representative CSINode of each profile, the one profile id of every
        live row when they all share it (else None), and each profile's :meth:`_content` (None for
        0; kept so a cycle does not sort the limits again); rebuilt when nodes or storage objects change."""
        key = (id(table), table.node_version, version)
        cached = getattr(self, "_profile_cache", None)
        if cached is not None and cached[0] == key:
            return cached[1], cached[2], cached[3], cached[4]
        lister = self._lister
        profile_of_row = np.zeros(len(table.row_version), dtype=np.int64)
        profiles: list = [None]
        index: dict[tuple, int] = {}
        for name, row in table.row_of.items():
            csi_node = lister.csi_node(name)
            if csi_node is None:
                continue
            content = self._content(csi_node)
            pid = index.get(content)
            if pid is None:
                pid = index[content] = len(profiles)
                profiles.append(csi_node)
            profile_of_row[row] = pid
        live = np.fromiter(table.row_of.values(), dtype=np.int64, count=len(table.row_of))
        first = int(profile_of_row[live[0]]) if len(live) else 0
        uniform = first if len(live) and bool((profile_of_row[live] == first).all()) else None
        contents: list = [None] * len(profiles)
        for content, pid in index.items():
            contents[pid] = content
        self._profile_cache = (key, profile_of_row, profiles, uniform, contents)
        return profile_of_row, profiles, uniform, contents

    # -- EnqueueExtensions --------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_NODE, ActionType.ADD)),
            # v1.37 csi.go: an updated CSINode requeues only when a driver's limit went up
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_NODE, ActionType.UPDATE),
                                 self.is_schedulable_after_csi_node_updated),
            # v1.37 csi.go registers AssignedPod/Delete (v1.34: Pod/Delete), same hint
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE),
                                 self.is_schedulable_after_assigned_pod_deleted),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
                                 self.is_schedulable_after_pvc_added),
            ClusterEventWithHint(ClusterEvent(EventResource.VOLUME_ATTACHMENT, ActionType.DELETE)),
        ]

    def is_schedulable_after_assigned_pod_deleted(self, pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, Any]:
        """``isSchedulableAfterAssignedPodDeleted``: a bound (or nominated) pod that attached a claim,
        ephemeral or migratable volume."""
        if old is None or not old.volumes or (not old.node_name and not getattr(old, "nominated_node_name", "")):
            return QueueingHint.QUEUE_SKIP, None
        return (QueueingHint.QUEUE if _uses_volumes(old) else QueueingHint.QUEUE_SKIP), None

    @staticmethod
    def is_schedulable_after_csi_node_updated(pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, Any]:
        """``isSchedulableAfterCSINodeUpdated``: Queue when some driver of the new CSINode allows
        more volumes than it did (a driver without ``allocatable.count``, or absent before, counts
        as 0), else QueueSkip; an object of another type is Queue with an error."""
        original, modified, err = as_typed(CSINode, "*v1.CSINode", old, new)
        if err is not None:
            return QueueingHint.QUEUE, TypeError(f"unexpected objects in isSchedulableAfterCSINodeUpdated: {err}")
        assert original is not None and modified is not None  # an update
        old_limits = {d.name: d.count or 0 for d in original.drivers}
        for d in modified.drivers:
            if (d.count or 0) > old_limits.get(d.name, 0):
                return QueueingHint.QUEUE, None
        return QueueingHint.QUEUE_SKIP, None

    def is_schedulable_after_pvc_added(self, pod: Pod, old: Any, new: Any) -> tuple[QueueingHint, Any]:
        """``isSchedulableAfterPVCAdded``: the pod uses the new claim."""
        if new is None or new.namespace != pod.namespace:
            return QueueingHint.QUEUE_SKIP, None
        for v in pod.volumes:
            claim = claim_name_of_volume(pod, v)
            if claim is not None and claim[0] == new.name:
                return QueueingHint.QUEUE, None
        return QueueingHint.QUEUE_SKIP, None


def new(args: Any, handle: fwk.Handle) -> NodeVolumeLimits:
    """Upstream ``NewCSI``: the plugin takes no args; it reads the VolumeLimitScaling gate."""
    from ...features import feature_gates_of

    return NodeVolumeLimits(handle, enable_volume_limit_scaling=feature_gates_of(handle).enabled("VolumeLimitScaling"))


__all__ = ["NAME", "NodeVolumeLimits", "new", "ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED"]
