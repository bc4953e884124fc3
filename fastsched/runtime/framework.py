"""The framework runtime (upstream ``pkg/scheduler/framework/runtime/framework.go``).

:func:`new_framework` builds a :class:`Framework` for one profile from a :class:`Registry`; the
``run_*`` methods run one extension point with upstream's semantics. A plugin that raises instead of
returning a Status is treated as having returned an Error status carrying the exception, so one
broken plugin fails the attempt, never the caller.

Every return value is checked where it crosses into the framework (:mod:`.returns`): a Status-returning
method must return a Status or None; ``score`` an ``(int, Status or None)`` pair (Python or NumPy
integer within int64; not bool, float or str); ``pre_filter`` / ``post_filter`` a
``(PreFilterResult / PostFilterResult or None, Status or None)`` pair; ``permit`` a
``(Status or None, timeout)`` pair whose timeout, when the status is Wait, is a non-negative number of
seconds; ``filter_vectorized`` a FilterVerdicts with one valid verdict per node, a Status or None;
``score_vectorized`` an ``(integer ndarray of shape (len(nodes),), Status or None)`` pair; NormalizeScore
must leave an int score on every node (and upstream's ``[0, 100]`` range check applies after it).
Anything else becomes an Error status worded::

    plugin "<name>" returned <value> from <Point>: expected <what>

which then takes upstream's road for a plugin Error (wrapped as upstream wraps it, e.g.
``running "F" filter plugin: plugin "F" returned 'ok' from Filter: expected a Status or None``):
the attempt fails with Error and the scheduler requeues the pod.
"""
from __future__ import annotations

import random
import time
import warnings
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence, TypeGuard

import numpy as np

from ..errors import FastschedError
from ..features import DEFAULTS as DEFAULT_FEATURE_GATES, GENERIC_WORKLOAD, OPPORTUNISTIC_BATCHING, FeatureGates
from ..clock import RealClock, VirtualClock
from ..config.types import KubeSchedulerProfile, Plugin as PluginConfigEntry, Plugins, PluginSet
from ..framework.vectorized import FilterVerdicts
from ..framework.cycle_state import CycleState
from ..framework import protocols as fwk
from ..framework.protocols import is_node_batch
from ..framework.interface import (EXTENSION_POINT_INTERFACES, BindPlugin, EnqueueExtensions,
                                   FilterPlugin, Handle, PermitPlugin, Placement, PlacementGeneratePlugin,
                                   PlacementPluginScores, PlacementScore, PlacementScorePlugin,
                                   Plugin, PodActivator, PodGroupPostFilterPlugin, PodNominator,
                                   PostBindPlugin, PostFilterPlugin, PreBindPlugin, PreEnqueuePlugin,
                                   PreFilterPlugin, PreScorePlugin, QueueSortPlugin, ReservePlugin,
                                   ScorePlugin, SharedLister)
from ..framework.parallelize import DEFAULT_PARALLELISM, ParallelError, Parallelizer
from ..framework.status import (MAX_NODE_SCORE, MAX_TOTAL_SCORE, MIN_NODE_SCORE, SKIP, Code, Status, StatusError)
from ..framework.types import (NodePluginScores, NodeScore, NodeToStatus, PluginScore, PodInfo,
                               PostFilterResult, PreFilterResult, WaitingPod,
                               merge_pre_filter_results)
from .metrics import MetricsRecorder
from .registry import Registry
from .filter_results import FilterResults
from .returns import (EXPECT_NORMALIZE, EXPECT_PERMIT, EXPECT_PERMIT_WAIT, EXPECT_POST_FILTER,
                      EXPECT_PRE_FILTER, EXPECT_SCORE, EXPECT_SCORE_VECTORIZED, EXPECT_STATUS, as_int64,
                      as_timeout, bad_return, checked_status, describe, int_score_array)
from ..util.field import go_quote
from ..framework.signers import SCHEDULER_NAME_SIGNER
from .batch import OpportunisticBatch
from .capabilities import vectorized_method
from .compiled_cycle import CompiledCycle
from .nominated import FRAMEWORK_METHODS as _NOMINATED_PATH_METHODS
from .nominated import filter_with_nominated_pods
from .score_matrix import ScoreMatrix, ScoreRangeError, weight_and_check
from .waiting_pods import WaitingPodImpl, WaitingPodsMap

if TYPE_CHECKING:  # pragma: no cover
    from ..api import Pod

#: Upstream's cap on a Permit plugin's wait.
MAX_PERMIT_TIMEOUT = 15 * 60.0

# Upstream order of extension points in getExtensionPoints (it decides which error comes first);
# v1.37 appends the workload-aware points (PodGroup cycles only, which need GenericWorkload).
_EXTENSION_POINT_ORDER = ("pre_filter", "filter", "post_filter", "reserve", "pre_score", "score",
                          "pre_bind", "bind", "post_bind", "permit", "pre_enqueue", "queue_sort",
                          "placement_generate", "placement_score", "pod_group_post_filter")


#: How the vectorized methods are named in messages.
_FILTER_VECTORIZED = "Filter (filter_vectorized)"
_SCORE_VECTORIZED = "Score (score_vectorized)"
_NORMALIZE_VECTORIZED = "NormalizeScore (normalize_score_vectorized)"


class FrameworkError(FastschedError, ValueError):
    """A profile that cannot be built into a framework; the message is upstream's."""


def _error(msg: str) -> Status:
    return Status.from_error(StatusError(msg))


def _err_text(status: Status) -> str:
    err = status.as_error()
    return str(err) if err is not None else status.message()


def _plugin_exception(e: BaseException) -> Status:
    """The Error status a plugin's uncaught exception becomes."""
    return Status.from_error(StatusError(f"{type(e).__name__}: {e}" if str(e) else type(e).__name__))


def pod_priority(pod: "Pod") -> int:
    """Upstream ``corev1helpers.PodPriority``: spec.priority, or 0 when unset."""
    p = getattr(pod, "priority", None)
    return 0 if p is None else int(p)


def _is_bad(s: Status | None) -> TypeGuard[Status]:
    return s is not None and s.code() != Code.SUCCESS


def _code_str(s: Status | None) -> str:
    if s is None:
        return "Success"
    return str(s.code()) if isinstance(s, Status) else "Error"  # not yet checked: a wrong return


class Framework(Handle):
    """A built profile: the plugin lists per extension point and the ``run_*`` methods.

    It is also the ``handle`` passed to plugin factories.
    """

    #: the decision record (fastsched.scheduler.records.AttemptRecord) of the attempt being run, set
    #: by the Scheduler around a recorded attempt: Reserve, Permit, PreBind, Bind and PostFilter
    #: report each plugin's status to it. None (nearly always): one test per extension point.
    decision_sink: Any = None
    #: whether Filter with nominated pods may take the vectorized form (runtime/nominated.py): true
    #: for this class and for subclasses that override none of the methods that form reproduces
    nominated_filters_vectorizable: bool = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.nominated_filters_vectorizable = all(getattr(cls, m) is getattr(Framework, m)
                                                 for m in _NOMINATED_PATH_METHODS)

    def __init__(self, registry: Registry, *, snapshot_shared_lister: SharedLister | None = None,
                 parallelizer: Parallelizer | None = None, pod_nominator: PodNominator | None = None,
                 pod_activator: PodActivator | None = None, extenders: Sequence[Any] = (),
                 clock: Any = None, waiting_pods: WaitingPodsMap | None = None,
                 metrics_recorder: MetricsRecorder | None = None, client: fwk.Client | None = None,
                 event_recorder: Any = None, namespaces: Any = None, rng: random.Random | None = None,
                 feature_gates: Any = None):
        self.registry = registry
        #: the feature gates plugins read (``fastsched.features``): v1.37.2's defaults unless given
        self.feature_gates = (DEFAULT_FEATURE_GATES if feature_gates is None
                              else feature_gates if isinstance(feature_gates, FeatureGates)
                              else FeatureGates(feature_gates))
        #: the seeded source of randomness plugins use where upstream is random (e.g. preemption)
        self.rng = rng if rng is not None else random.Random(0)
        #: name -> Namespace (what namespaceSelectors match); a live mapping owned by the caller
        self.namespaces = namespaces if namespaces is not None else {}
        self._snapshot_shared_lister = snapshot_shared_lister
        self._parallelizer = parallelizer or Parallelizer(DEFAULT_PARALLELISM)
        self.pod_nominator = pod_nominator
        self.pod_activator = pod_activator
        #: upstream's PodGroupManager (the scheduler cache's pod groups, GenericWorkload): set by the
        #: Scheduler, read by GangScheduling; None in a framework built without one
        self.pod_group_manager: Any = None
        #: upstream's MutableSnapshotSharedLister (the snapshot's mutation session, workload-aware
        #: preemption): set by the Scheduler; None in a framework built without one
        self.mutable_snapshot: Any = None
        self._extenders = list(extenders)
        self.clock = clock if clock is not None else VirtualClock()
        self.waiting_pods = waiting_pods if waiting_pods is not None else WaitingPodsMap()
        self.metrics = metrics_recorder if metrics_recorder is not None else MetricsRecorder()
        #: the object DefaultBinder-style plugins bind through (a cache/scheduler); None here
        self.client = client
        self.event_recorder = event_recorder

        self._profile_name = ""
        self._percentage_of_nodes_to_score: int | None = None
        self.plugins_map: dict[str, Plugin] = {}
        self.score_plugin_weight: dict[str, int] = {}
        #: PlacementScore weights (v1.37: getValidScoreWeights over PlacementScore + MultiPoint)
        self.placement_score_plugin_weight: dict[str, int] = {}
        self.enqueue_extensions_list: list[EnqueueExtensions] = []
        # each list holds plugins that pass isinstance() of the extension point's interface
        # (structural: _update_plugin_list checks it), so the element type is that interface
        self.pre_enqueue_plugins_list: list[PreEnqueuePlugin] = []
        self.queue_sort_plugins: list[QueueSortPlugin] = []
        self.pre_filter_plugins: list[PreFilterPlugin] = []
        self.filter_plugins: list[FilterPlugin] = []
        self.post_filter_plugins: list[PostFilterPlugin] = []
        self.pre_score_plugins: list[PreScorePlugin] = []
        self.score_plugins: list[ScorePlugin] = []
        self.reserve_plugins: list[ReservePlugin] = []
        self.permit_plugins: list[PermitPlugin] = []
        self.pre_bind_plugins: list[PreBindPlugin] = []
        self.bind_plugins: list[BindPlugin] = []
        self.post_bind_plugins: list[PostBindPlugin] = []
        # the workload-aware points: filled from the configuration, run by the PodGroup cycle
        # (GenericWorkload; the placement points with TopologyAwareWorkloadScheduling)
        self.placement_generate_plugins: list[PlacementGeneratePlugin] = []
        self.placement_score_plugins: list[PlacementScorePlugin] = []
        self.pod_group_post_filter_plugins: list[PodGroupPostFilterPlugin] = []
        # (name, plugin) pairs for the per-node hot loops, filled by _finish()
        self._filter_named: list[tuple[str, FilterPlugin]] = []
        self._pre_filter_named: list[tuple[str, PreFilterPlugin]] = []
        self._score_named: list[tuple[str, ScorePlugin]] = []
        #: plugin name -> its bound filter_vectorized / score_vectorized method, or None
        self._filter_vectorized: dict[str, Callable | None] = {}
        self._score_vectorized: dict[str, Callable | None] = {}
        self.compiled_cycle: CompiledCycle | None = None
        self._score_plans: dict[frozenset[str], _ScorePlan] = {}
        #: the cycle's skip_filter_plugins -> its IdleBinding, or None when some Reserve, Permit or
        #: PreBind plugin may work for a pod with that skip set (see idle_binding)
        self._idle_bindings: dict[frozenset[str], IdleBinding | None] = {}
        #: idle_binding_at's memo: skip set -> (plan, the judges of the plugins left) or None
        self._judged_bindings: dict[frozenset[str], tuple[IdleBinding, tuple[Any, ...]] | None] = {}
        #: OpportunisticBatching (upstream computeBatchablePlugins): the PreFilter, Filter, PreScore
        #: and Score plugins that sign, whether every one of them can, and the batch state (None
        #: when the gate is off)
        self._batchable: list[Any] = []
        self.signatures_enabled = False
        self.batch: OpportunisticBatch | None = None

    # ==========================================================================================
    # Construction
    # ==========================================================================================
    def _lists(self) -> dict[str, list]:
        return {
            "pre_filter": self.pre_filter_plugins, "filter": self.filter_plugins,
            "post_filter": self.post_filter_plugins, "reserve": self.reserve_plugins,
            "pre_score": self.pre_score_plugins, "score": self.score_plugins,
            "pre_bind": self.pre_bind_plugins, "bind": self.bind_plugins,
            "post_bind": self.post_bind_plugins, "permit": self.permit_plugins,
            "pre_enqueue": self.pre_enqueue_plugins_list, "queue_sort": self.queue_sort_plugins,
            "placement_generate": self.placement_generate_plugins,
            "placement_score": self.placement_score_plugins,
            "pod_group_post_filter": self.pod_group_post_filter_plugins,
        }

    def _build(self, profile: KubeSchedulerProfile) -> None:
        self._profile_name = profile.scheduler_name
        self._percentage_of_nodes_to_score = profile.percentage_of_nodes_to_score
        if self._extenders:
            # Extenders have no EnqueueExtensions: a pod they rejected is retried on any event.
            self.enqueue_extensions_list.append(_DefaultEnqueueExtension("Extender"))
        plugins = profile.plugins
        if plugins is None:
            self._finish()
            return

        needed = _plugins_needed(plugins)
        plugin_config: dict[str, Any] = {}
        for pc in profile.plugin_config:
            if pc.name in plugin_config:
                raise FrameworkError(f"repeated config for plugin {pc.name}")
            plugin_config[pc.name] = pc.args

        for name, factory in self.registry.items():
            if name not in needed:
                continue
            try:
                p = factory(plugin_config.get(name), self)
            except Exception as e:  # noqa: BLE001 - reported with upstream's wrapping
                raise FrameworkError(f"initializing plugin {go_quote(name)}: {e}") from e
            if p is None:
                raise FrameworkError(f"initializing plugin {go_quote(name)}: factory returned None")
            self.plugins_map[name] = p
            self._fill_enqueue_extensions(p)

        lists = self._lists()
        for point in _EXTENSION_POINT_ORDER:
            _update_plugin_list(lists[point], point, getattr(plugins, point), self.plugins_map)

        if plugins.multi_point.enabled:
            self._expand_multi_point(plugins)

        if len(self.queue_sort_plugins) != 1:
            raise FrameworkError(
                f"only one queue sort plugin required for profile with scheduler name "
                f"{go_quote(profile.scheduler_name)}, but got {len(self.queue_sort_plugins)}")
        if not self.bind_plugins:
            raise FrameworkError(
                f"at least one bind plugin is needed for profile with scheduler name "
                f"{go_quote(profile.scheduler_name)}")

        if len(self.placement_generate_plugins) > 1:
            raise FrameworkError(
                f"at most one placement generate plugin is allowed for profile with scheduler name "
                f"{go_quote(profile.scheduler_name)}")

        try:
            self.score_plugin_weight = _valid_score_weights(
                self.plugins_map, ScorePlugin, list(plugins.score.enabled) + list(plugins.multi_point.enabled))
        except FrameworkError as e:
            raise FrameworkError(f"score plugins: {e}") from None
        for sp in self.score_plugins:
            if self.score_plugin_weight.get(sp.name(), 0) == 0:
                raise FrameworkError(f"score plugin {go_quote(sp.name())} is not configured with weight")
        try:
            self.placement_score_plugin_weight = _valid_score_weights(
                self.plugins_map, PlacementScorePlugin,
                list(plugins.placement_score.enabled) + list(plugins.multi_point.enabled))
        except FrameworkError as e:
            raise FrameworkError(f"placement score plugins: {e}") from None
        for pp in self.placement_score_plugins:
            if self.placement_score_plugin_weight.get(pp.name(), 0) == 0:
                raise FrameworkError(f"placement score plugin {go_quote(pp.name())} is not configured with weight")
        self._finish()

    def _finish(self) -> None:
        self._filter_named = [(p.name(), p) for p in self.filter_plugins]
        # (the AddPod/RemovePod loop runs per pod per node in preemption's per-node dry run: a
        # name() call per plugin each time was a tenth of PreemptionPVs' time)
        self._pre_filter_named = [(p.name(), p) for p in self.pre_filter_plugins]
        self._score_named = [(p.name(), p) for p in self.score_plugins]
        # capabilities resolved once: the cycle never asks a plugin what it can do
        self._filter_vectorized = {name: vectorized_method(p, "filter_vectorized") for name, p in self._filter_named}
        self._score_vectorized = {name: vectorized_method(p, "score_vectorized") for name, p in self._score_named}
        self._score_plans = {}
        #: the fused PreFilter-to-selectHost pass (enabled when every such plugin has a column form)
        self.compiled_cycle = CompiledCycle(self)
        self._compute_batchable_plugins()

    def _compute_batchable_plugins(self) -> None:
        """Upstream ``computeBatchablePlugins`` (run when OpportunisticBatching is on): signatures
        need every PreFilter, Filter, PreScore and Score plugin to sign, and no extender."""
        self._batchable = []
        self.signatures_enabled = False
        self.batch = None
        if not self.feature_gates.enabled(OPPORTUNISTIC_BATCHING):
            return
        self.batch = OpportunisticBatch(self, self.feature_gates.enabled(GENERIC_WORKLOAD))
        enabled = not self._extenders
        seen: set[str] = set()
        for pl in (*self.pre_filter_plugins, *self.filter_plugins, *self.pre_score_plugins, *self.score_plugins):
            name = pl.name()
            if name in seen:
                continue
            seen.add(name)
            if callable(getattr(pl, "sign_pod", None)):
                self._batchable.append(pl)
            else:
                enabled = False
        self.signatures_enabled = enabled
        if not enabled or any(_refuses_every_pod(pl) for pl in self._batchable):
            # no pod of this profile can be signed (e.g. PodTopologySpread with default
            # constraints): the state would never be set, so there is nothing to keep
            self.batch = None

    def sign_pod(self, pod: "Pod") -> tuple | None:
        """Upstream ``SignPod``: the pod's signature, a hashable value two pods share exactly when
        upstream's JSON signatures are equal; None when signatures are off for the profile or a
        plugin refuses (Unschedulable) or fails (Error) to sign the pod."""
        if not self.signatures_enabled:
            return None
        start = time.perf_counter()
        status: Status | None = None
        try:
            sig: dict[str, Any] = {SCHEDULER_NAME_SIGNER: pod.scheduler_name}
            for pl in self._batchable:
                try:
                    fragments, status = pl.sign_pod(pod)
                except Exception as e:  # noqa: BLE001
                    status = _plugin_exception(e)
                if status is not None and status.code() != Code.SUCCESS:
                    return None
                status = None
                for key, value in fragments or ():
                    sig[key] = value
            return tuple(sorted(sig.items()))
        finally:
            self.metrics.observe_extension_point("Sign", _code_str(status), self._profile_name,
                                                 time.perf_counter() - start)

    def _fill_enqueue_extensions(self, p: Any) -> None:
        if not isinstance(p, (PreEnqueuePlugin, PreFilterPlugin, FilterPlugin, ReservePlugin, PermitPlugin)):
            return
        self.enqueue_extensions_list.append(p if isinstance(p, EnqueueExtensions) else _DefaultEnqueueExtension(p.name()))

    def _expand_multi_point(self, plugins: Plugins) -> None:
        lists = self._lists()
        for point in _EXTENSION_POINT_ORDER:
            iface, iface_name = EXTENSION_POINT_INTERFACES[point]
            pset: PluginSet = getattr(plugins, point)
            enabled = [e.name for e in pset.enabled]
            enabled_set = dict.fromkeys(enabled)
            disabled = {d.name for d in pset.disabled}
            if "*" in disabled:
                continue
            multi_point_enabled: dict[str, None] = {}
            overrides: set[str] = set()
            for ep in plugins.multi_point.enabled:
                pg = self.plugins_map.get(ep.name)
                if pg is None:
                    raise FrameworkError(f"{iface_name} {go_quote(ep.name)} does not exist")
                if not isinstance(pg, iface):
                    continue
                if ep.name in disabled:
                    continue
                if ep.name in enabled_set:
                    overrides.add(ep.name)
                    continue
                if ep.name in multi_point_enabled:
                    raise FrameworkError(f"plugin {go_quote(ep.name)} already registered as {go_quote(iface_name)}")
                multi_point_enabled[ep.name] = None
            ordered = ([n for n in enabled_set if n in overrides] + list(multi_point_enabled)
                       + [n for n in enabled_set if n not in overrides])
            lst = lists[point]
            lst[:] = [self.plugins_map[n] for n in ordered]

    def _set_score_weights(self, entries: Iterable[PluginConfigEntry]) -> None:
        self.score_plugin_weight = _valid_score_weights(self.plugins_map, ScorePlugin, entries)

    # ==========================================================================================
    # Introspection
    # ==========================================================================================
    def profile_name(self) -> str:
        return self._profile_name

    def percentage_of_nodes_to_score(self) -> int | None:
        return self._percentage_of_nodes_to_score

    def has_filter_plugins(self) -> bool:
        return bool(self.filter_plugins)

    def has_post_filter_plugins(self) -> bool:
        return bool(self.post_filter_plugins)

    def has_score_plugins(self) -> bool:
        return bool(self.score_plugins)

    def pre_enqueue_plugins(self) -> list:
        """The PreEnqueue plugins, each behind a proxy that checks its return value (a Status or
        None; anything else, or an exception, becomes an Error status, which gates the pod as
        upstream's runPreEnqueuePlugins does). Other attributes reach the plugin itself."""
        return [_CheckedPreEnqueue(p) for p in self.pre_enqueue_plugins_list]

    def enqueue_extensions(self) -> list:
        return list(self.enqueue_extensions_list)

    def queue_sort_func(self) -> Callable[[Any, Any], bool]:
        """The QueueSort plugin's ``less``, checked: a NumPy bool counts as a bool; any other value,
        or an exception, counts as False (the queue keeps arrival order for that pair) and is
        reported once per plugin as a RuntimeWarning naming the plugin and the value."""
        if not self.queue_sort_plugins:
            raise FrameworkError("No QueueSort plugin is registered in the frameworkImpl.")
        plugin = self.queue_sort_plugins[0]
        return _CheckedLess(plugin.name(), plugin.less)

    def queue_sort_key_func(self) -> Callable[[Any], Any] | None:
        """The QueueSort plugin's optional ``sort_key`` (a key ordered as ``less``), or None."""
        if not self.queue_sort_plugins:
            raise FrameworkError("No QueueSort plugin is registered in the frameworkImpl.")
        plugin = self.queue_sort_plugins[0]
        key = getattr(plugin, "sort_key", None)
        if not callable(key):
            return None
        # A subclass that overrides less() but inherits sort_key() would be ordered wrongly: the
        # key is trusted only when it is defined at or below the class that defines less().
        mro = type(plugin).__mro__
        less_owner = next((c for c in mro if "less" in vars(c)), None)
        key_owner = next((c for c in mro if "sort_key" in vars(c)), None)
        if less_owner is None or key_owner is None or not issubclass(key_owner, less_owner):
            return None
        return key

    def list_plugins(self) -> Plugins:
        """The enabled plugins per extension point after expansion (Score entries with weights)."""
        out = Plugins()
        for point, lst in self._lists().items():
            entries = []
            for p in lst:
                name = p.name()
                weight = (self.score_plugin_weight.get(name, 0) if point == "score"
                          else self.placement_score_plugin_weight.get(name, 0) if point == "placement_score" else 0)
                entries.append(PluginConfigEntry(name, weight))
            getattr(out, point).enabled = entries
        return out

    def plugin(self, name: str) -> Any:
        """The instantiated plugin called ``name`` (KeyError when it is not part of this profile)."""
        return self.plugins_map[name]

    def close(self) -> None:
        """Close every plugin that has a ``close()``; raises one error listing the failures."""
        errs = []
        for name, p in self.plugins_map.items():
            closer = getattr(p, "close", None)
            if callable(closer):
                try:
                    closer()
                except Exception as e:  # noqa: BLE001
                    errs.append(f"{name} failed to close: {e}")
        if errs:
            raise RuntimeError("\n".join(errs))

    # ==========================================================================================
    # The placement points (TopologyAwareWorkloadScheduling)
    # ==========================================================================================
    def run_placement_generate_plugins(self, state: Any, pod_group: Any, nodes: Any) -> tuple[list, Status | None]:
        """``RunPlacementGeneratePlugins``: no plugin, one placement of ``nodes``; else the (only)
        plugin's placements, none being Unschedulable ``no feasible placements found``."""
        placement = Placement(nodes=nodes)
        if not self.placement_generate_plugins:
            return [placement], None
        pl = self.placement_generate_plugins[0]
        result, st = pl.generate_placements(state, pod_group, placement)
        if st is not None and not st.is_success():
            return [], st.with_plugin(pl.name())
        if result is None or not result.placements:
            return [], Status(Code.UNSCHEDULABLE, "no feasible placements found", plugin=pl.name())
        return list(result.placements), None

    def run_placement_score_plugins(self, state: Any, pod_group: Any, assignments: list,
                                    placement_states: list) -> tuple[list, Status | None]:
        """``RunPlacementScorePlugins``: each plugin's score of each placement, normalized by the
        plugins that have PlacementScoreExtensions, checked to lie in [0, 100], weighted, summed."""
        if len(assignments) != len(placement_states):
            return [], Status.from_error(StatusError(
                f"expected one PlacementCycleState per PodGroupAssignments, got {len(placement_states)} "
                f"placement states for {len(assignments)} assignments"))
        plugins = list(self.placement_score_plugins)
        per_plugin: dict[str, list[PlacementScore]] = {}
        for pl in plugins:
            scores = []
            for i, pga in enumerate(assignments):
                score, st = pl.score_placement(placement_states[i], pod_group, pga)
                if st is not None and not st.is_success():
                    return [], Status.from_error(StatusError(
                        f"running PlacementScore plugins: plugin {go_quote(pl.name())} failed with: {st.as_error()}"))
                scores.append(PlacementScore(pga.placement, score))
            per_plugin[pl.name()] = scores
        for pl in plugins:
            ext_of = getattr(pl, "placement_score_extensions", None)
            ext = ext_of() if ext_of is not None else None
            if ext is None:
                continue
            st = ext.normalize_placement_score(state, pod_group, per_plugin[pl.name()])
            if st is not None and not st.is_success():
                return [], Status.from_error(StatusError(
                    f"running NormalizePlacementScore on PlacementScore plugins: plugin {go_quote(pl.name())} "
                    f"failed with: {st.as_error()}"))
        out = []
        for i, pga in enumerate(assignments):
            ps = PlacementPluginScores(pga.placement)
            for pl in plugins:
                score = per_plugin[pl.name()][i].score
                if score > MAX_NODE_SCORE or score < MIN_NODE_SCORE:
                    return [], Status.from_error(StatusError(
                        f"applying score defaultWeights on PlacementScore plugins: plugin {go_quote(pl.name())} "
                        f"returns an invalid score {score}, it should in the range of [{MIN_NODE_SCORE}, "
                        f"{MAX_NODE_SCORE}] after normalizing"))
                weighted = score * self.placement_score_plugin_weight.get(pl.name(), 0)
                ps.scores.append(PluginScore(pl.name(), weighted))
                ps.total_score += weighted
            out.append(ps)
        return out, None

    # ==========================================================================================
    # Handle
    # ==========================================================================================
    def snapshot_shared_lister(self) -> SharedLister | None:
        return self._snapshot_shared_lister

    def set_snapshot_shared_lister(self, lister: SharedLister | None) -> None:
        self._snapshot_shared_lister = lister

    def parallelizer(self) -> Parallelizer:
        return self._parallelizer

    def extenders(self) -> list:
        return self._extenders

    def set_pod_nominator(self, nominator: PodNominator | None) -> None:
        self.pod_nominator = nominator

    def set_pod_activator(self, activator: PodActivator | None) -> None:
        self.pod_activator = activator

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        if self.pod_nominator is None:
            return []
        return self.pod_nominator.nominated_pods_for_node(node_name)

    def activate(self, pods: dict) -> None:
        if self.pod_activator is not None:
            self.pod_activator.activate(pods)

    def get_namespace(self, name: str) -> Any:
        """The Namespace object called ``name``, or None when unknown."""
        return self.namespaces.get(name)

    def iterate_over_waiting_pods(self, callback: Callable[[WaitingPod], None]) -> None:
        self.waiting_pods.iterate(callback)

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self.waiting_pods.get(uid)

    def reject_waiting_pod(self, uid: str) -> bool:
        wp = self.waiting_pods.get(uid)
        if wp is None:
            return False
        wp.reject("", "removed")
        return True

    # ==========================================================================================
    # Run: PreFilter / Filter / PostFilter
    # ==========================================================================================
    def run_pre_filter_plugins(self, state: CycleState, pod: "Pod", nodes: Sequence[fwk.NodeInfo] | None = None,
                               *, record: dict | None = None
                               ) -> tuple[PreFilterResult | None, Status | None, set[str]]:
        """Upstream ``RunPreFilterPlugins``: returns (result, status, plugins that narrowed the nodes).

        ``record``, when given, receives each plugin's own (result, status) by plugin name.
        """
        start = time.perf_counter()
        skip: set[str] = set()
        status: Status | None = None
        try:
            if nodes is None:
                try:
                    lister = self._snapshot_shared_lister
                    nodes = lister.node_infos().list() if lister is not None else []
                except Exception as e:  # noqa: BLE001
                    status = _error(f"getting all nodes: {e}")
                    return None, status, set()
            result: PreFilterResult | None = None
            plugins_with_nodes: set[str] = set()
            return_status: Status | None = None
            timed = state.record_plugin_metrics
            for pl in self.pre_filter_plugins:
                name = pl.name()
                if timed:
                    r, s = self._timed("PreFilter", name, state, pl.pre_filter, state, pod, nodes, status_at=1)
                else:
                    # _timed without the sample (9 cycles in 10): the call and its checks inline, the
                    # common answer (an exact pair of None or a PreFilterResult and None or a Status)
                    # taken as it is, any other through _timed's own checks (_checked_pair)
                    try:
                        out = pl.pre_filter(state, pod, nodes)
                    except Exception as e:  # noqa: BLE001
                        out = (None, _plugin_exception(e))
                    if type(out) is tuple and len(out) == 2 and (out[1] is None or type(out[1]) is Status):
                        r, s = out
                    else:
                        r, s = _checked_pair(name, "PreFilter", out, 1)
                if (r is not None and type(r) is not PreFilterResult and not isinstance(r, PreFilterResult)
                        and (s is None or s.is_success())):  # upstream reads the result only then
                    r, s = None, bad_return(name, "PreFilter", (r, s), EXPECT_PRE_FILTER)
                if record is not None:
                    record[name] = (r, s)
                if s is not None:  # (None, Success: nothing to skip or to report)
                    if s.is_skip():
                        skip.add(name)
                        continue
                    if _is_bad(s):
                        s.set_plugin(name)
                        if s.code() == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                            status = s
                            return None, s, set()
                        if s.code() == Code.UNSCHEDULABLE:
                            return_status = s
                            continue
                        status = _error(f"running PreFilter plugin {go_quote(name)}: {_err_text(s)}").with_plugin(name)
                        return None, status, set()
                if r is not None and not r.all_nodes():
                    plugins_with_nodes.add(name)
                if r is not None or result is not None:  # (two Nones merge to None: nothing to do)
                    result = merge_pre_filter_results(result, r)
                    if result is not None and not result.node_names:
                        ps = sorted(plugins_with_nodes)
                        msg = (f"node(s) didn't satisfy plugin {ps[0]}" if len(ps) == 1 else
                               f"node(s) didn't satisfy plugin(s) [{' '.join(ps)}] simultaneously")
                        status = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg)
                        return result, status, plugins_with_nodes
            status = return_status
            return result, return_status, plugins_with_nodes
        finally:
            state.set_skip_filter_plugins(skip)
            self.metrics.observe_extension_point("PreFilter", _code_str(status), self._profile_name,
                                                 time.perf_counter() - start)

    def _run_pre_filter_extension(self, op: str, state: CycleState, pod_to_schedule: "Pod",
                                  pod_info: PodInfo, node_info: fwk.NodeInfo) -> Status | None:
        skip = state.skip_filter_plugins
        for name, pl in self._pre_filter_named:
            if name in skip:
                continue
            try:
                ext = pl.pre_filter_extensions()
                if ext is None:
                    continue
                fn = ext.add_pod if op == "AddPod" else ext.remove_pod
                s = fn(state, pod_to_schedule, pod_info, node_info)
            except Exception as e:  # noqa: BLE001 - also a pre_filter_extensions() without add_pod/remove_pod
                s = _plugin_exception(e)
            if s is not None and type(s) is not Status:
                s = checked_status(s, name, op)
            if _is_bad(s):
                return _error(f"running {op} on PreFilter plugin {go_quote(name)}: {_err_text(s)}")
        return None

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod_to_schedule: "Pod",
                                         pod_info_to_add: PodInfo, node_info: fwk.NodeInfo) -> Status | None:
        return self._run_pre_filter_extension("AddPod", state, pod_to_schedule, pod_info_to_add, node_info)

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod_to_schedule: "Pod",
                                            pod_info_to_remove: PodInfo, node_info: fwk.NodeInfo) -> Status | None:
        return self._run_pre_filter_extension("RemovePod", state, pod_to_schedule, pod_info_to_remove, node_info)

    def run_filter_plugins(self, state: CycleState, pod: "Pod", node_info: fwk.NodeInfo) -> Status | None:
        """Upstream ``RunFilterPlugins``: the first non-success wins; non-rejections become Error."""
        skip = state.skip_filter_plugins
        record = state.should_record_plugin_metrics()
        for name, pl in self._filter_named:
            if name in skip:
                continue
            try:
                if record:
                    t0 = time.perf_counter()
                    s = pl.filter(state, pod, node_info)
                    self.metrics.observe_plugin("Filter", name, _code_str(s), time.perf_counter() - t0)
                else:
                    s = pl.filter(state, pod, node_info)
            except Exception as e:  # noqa: BLE001
                s = _plugin_exception(e)
            if s is not None:
                if type(s) is not Status:
                    s = checked_status(s, name, "Filter")
                if s.code() == Code.SUCCESS:
                    continue
                if not s.is_rejected():
                    s = _error(f"running {go_quote(name)} filter plugin: {_err_text(s)}")
                s.set_plugin(name)
                return s
        return None

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: "Pod",
                                               node_info: fwk.NodeInfo) -> Status | None:
        """Upstream ``RunFilterPluginsWithNominatedPods`` (two passes when nominated pods apply)."""
        status: Status | None = None
        pods_added = False
        for i in range(2):
            state_to_use, node_info_to_use = state, node_info
            if i == 0:
                try:
                    pods_added, state_to_use, node_info_to_use = self._add_ge_nominated_pods(pod, state, node_info)
                except _NominatedPodError as e:
                    return _error(str(e))
            elif not pods_added or _is_bad(status):
                break
            status = self.run_filter_plugins(state_to_use, pod, node_info_to_use)
            if _is_bad(status) and not status.is_rejected():
                return status
        return status

    def _add_ge_nominated_pods(self, pod: "Pod", state: CycleState, node_info: fwk.NodeInfo):
        name = node_info.name  # (the table's name column: no Node object built for it)
        if not name:
            node = node_info.node()
            name = node.name if node is not None else ""
        nominated = self.nominated_pods_for_node(name) if name else []
        if not nominated:
            return False, state, node_info
        prio = pod_priority(pod)
        uid = pod.uid
        counted = [pi for pi in nominated if pod_priority(pi.pod) >= prio and pi.pod.uid != uid]
        state_out = state.clone()
        if not counted:
            # upstream clones both and runs the first pass on the clones; with no pod added the
            # NodeInfo clone holds what the node holds and Filter only reads it, so the node itself
            # answers the same (the copy of every PodInfo was most of a preemptor's second cycle
            # here: its own nomination is on the node); the CycleState stays a clone, so Filter's
            # writes to it are dropped as upstream drops them
            return False, state_out, node_info
        node_info_out = node_info.snapshot()
        for pi in counted:
            node_info_out.add_pod_info(pi)
            s = self.run_pre_filter_extension_add_pod(state_out, pod, pi, node_info_out)
            if _is_bad(s):
                raise _NominatedPodError(_err_text(s))
        return True, state_out, node_info_out

    def run_filter_plugins_vectorized(self, state: CycleState, pod: "Pod",
                                      nodes: Sequence[fwk.NodeInfo] | fwk.NodeBatch, *,
                                 only: Iterable[str] | None = None) -> FilterResults:
        """RunFilterPlugins for every node at once: each plugin's verdict on the nodes still passing.

        Plugins with ``filter_vectorized`` run vectorized when ``nodes`` is a NodeBatch; the others run
        one node at a time on the nodes still passing. The result equals calling
        :meth:`run_filter_plugins` on each node. ``only`` restricts the run to the named plugins.
        """
        n = len(nodes)
        named = self._filter_named if only is None else [(nm, p) for nm, p in self._filter_named if nm in set(only)]
        out = FilterResults(n, [name for name, _ in named])
        batch = nodes if is_node_batch(nodes) else None
        pending = _ALL_PENDING if n <= len(_ALL_PENDING) else np.arange(n, dtype=np.int64)
        pending = pending[:n]
        skip = state.skip_filter_plugins
        for j, (name, pl) in enumerate(named):
            if name in skip:
                continue
            m = len(pending)
            if m == 0:
                break
            sub: Sequence[fwk.NodeInfo] | fwk.NodeBatch
            if m == n:
                sub = nodes
            else:
                sub = batch.select(pending) if batch is not None else [nodes[i] for i in pending.tolist()]
            filter_vectorized = self._filter_vectorized.get(name) if batch is not None else None
            if filter_vectorized is not None:
                try:
                    res = filter_vectorized(state, pod, sub)
                except Exception as e:  # noqa: BLE001
                    res = _plugin_exception(e)
                if res is None:
                    continue
                try:  # the common case, cheaply: int8 codes and int32 reason ids, one per node
                    fits = (type(res) is FilterVerdicts and res.codes.dtype is _INT8
                            and res.reason_ids.dtype is _INT32 and res.codes.shape == res.reason_ids.shape == (m,))
                except AttributeError:  # e.g. codes that are not an array
                    fits = False
                if not fits:
                    if isinstance(res, Status):
                        res = FilterVerdicts.from_statuses([res] * m)
                    elif not isinstance(res, FilterVerdicts) or not _verdict_arrays_fit(res, m):
                        res = FilterVerdicts.from_statuses(
                            [bad_return(name, _FILTER_VECTORIZED, res, _expect_verdicts(m))] * m)
                # the values (codes, reason ids, reasons) are checked by record(), once a node failed
                pending = out.record(j, name, pending, res, _expect_verdicts)
            else:
                statuses = []
                for ni in sub:
                    try:
                        s = pl.filter(state, pod, ni)
                    except Exception as e:  # noqa: BLE001
                        s = _plugin_exception(e)
                    if s is not None and type(s) is not Status:
                        s = checked_status(s, name, "Filter")
                    statuses.append(s)
                pending = out.record(j, name, pending, FilterVerdicts.from_statuses(statuses))
        return out

    def run_filter_plugins_with_nominated_pods_vectorized(self, state: CycleState, pod: "Pod",
                                                          nodes: Sequence[fwk.NodeInfo]) -> FilterResults:
        """RunFilterPluginsWithNominatedPods over many nodes: the vectorized verdicts, except on the
        nodes with nominated pods of equal or higher priority, which run upstream's two passes (so
        Filter runs at most twice on any node, as upstream)."""
        if self.pod_nominator is not None and is_node_batch(nodes):
            # Node-only and additive filters (the default profile's, for most pods): one vectorized
            # pass on a shadow table holding the nominated pods that count, exactly upstream's
            # verdicts (issue 14; see .nominated). None: the per-node correction below.
            out = filter_with_nominated_pods(self, state, pod, nodes)
            if out is not None:
                return out
        special = self._nodes_with_ge_nominated_pods(pod, nodes)
        if not special:
            return self.run_filter_plugins_vectorized(state, pod, nodes)
        n = len(nodes)
        keep = np.ones(n, dtype=bool)
        keep[special] = False
        positions = np.flatnonzero(keep)
        rest: Sequence[fwk.NodeInfo] | fwk.NodeBatch
        if is_node_batch(nodes):
            rest = nodes.select(positions)
        else:
            rest = [nodes[i] for i in positions.tolist()]
        out = FilterResults.placed(n, self.run_filter_plugins_vectorized(state, pod, rest), positions)
        for i in special:
            out.set_status(i, self.run_filter_plugins_with_nominated_pods(state, pod, nodes[i]))
        return out

    def _nodes_with_ge_nominated_pods(self, pod: "Pod", nodes: Sequence[fwk.NodeInfo]) -> list[int]:
        """Positions (in ``nodes``) of the nodes holding a nominated pod of at least ``pod``'s
        priority (other than ``pod``): where upstream's first Filter pass adds nominated pods."""
        nominator = self.pod_nominator
        if nominator is None:
            return []
        names_fn = getattr(nominator, "nominated_node_names", None)
        nominated = set(names_fn()) if names_fn is not None else None
        if nominated is not None and not nominated:
            return []
        prio = pod_priority(pod)

        def counts(name: str) -> bool:
            return any(pod_priority(pi.pod) >= prio and pi.pod.uid != pod.uid
                       for pi in self.nominated_pods_for_node(name))

        if nominated is not None and is_node_batch(nodes):
            # only the nominated nodes are looked at: O(nominated) Python work, not O(nodes)
            row_of = nodes.table.row_of
            wanted = [row_of[name] for name in nominated if name in row_of and counts(name)]
            if not wanted:
                return []
            return np.flatnonzero(np.isin(nodes.rows, wanted)).tolist()
        node_names = nodes.names if hasattr(nodes, "names") else [ni.node().name for ni in nodes]
        return [i for i, name in enumerate(node_names) if (nominated is None or name in nominated) and counts(name)]

    def run_post_filter_plugins(self, state: CycleState, pod: "Pod", filtered_node_status_map: NodeToStatus
                                ) -> tuple[PostFilterResult | None, Status | None]:
        """Upstream ``RunPostFilterPlugins``: stop at the first Success, Error or UnschedulableAndUnresolvable."""
        start = time.perf_counter()
        status: Status | None = None
        try:
            result: PostFilterResult | None = None
            reasons: list[str] = []
            rejector = ""
            for pl in self.post_filter_plugins:
                name = pl.name()
                r, s = self._timed("PostFilter", name, state, pl.post_filter, state, pod,
                                   filtered_node_status_map, status_at=1)
                if (r is not None and type(r) is not PostFilterResult and not isinstance(r, PostFilterResult)
                        and (s is None or s.is_success() or s.is_rejected())):  # where upstream reads it
                    r, s = None, bad_return(name, "PostFilter", (r, s), EXPECT_POST_FILTER)
                if self.decision_sink is not None:
                    self.decision_sink.plugin_status("PostFilter", name, s)
                if s is None or s.is_success():
                    status = s
                    return r, s
                if s.code() == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    status = s.with_plugin(name)
                    return r, status
                if not s.is_rejected():
                    status = _error(_err_text(s)).with_plugin(name)
                    return None, status
                if r is not None and r.mode() != 0:
                    result = r
                reasons.extend(s.reasons())
                if not rejector:
                    rejector = name
            status = Status(Code.UNSCHEDULABLE, *reasons).with_plugin(rejector)
            return result, status
        finally:
            self.metrics.observe_extension_point("PostFilter", _code_str(status), self._profile_name,
                                                 time.perf_counter() - start)

    # ==========================================================================================
    # Run: PreScore / Score
    # ==========================================================================================
    def run_pre_score_plugins(self, state: CycleState, pod: "Pod", nodes: Sequence[fwk.NodeInfo], *,
                              record: dict | None = None) -> Status | None:
        """Upstream ``RunPreScorePlugins``: Skip disables the coupled Score; anything else failing is Error.

        ``record``, when given, receives each plugin's own status by plugin name.
        """
        start = time.perf_counter()
        skip: set[str] = set()
        status: Status | None = None
        try:
            for pl in self.pre_score_plugins:
                name = pl.name()
                s = self._timed("PreScore", name, state, pl.pre_score, state, pod, nodes)
                if record is not None:
                    record[name] = s
                if s is not None and s.is_skip():
                    skip.add(name)
                    continue
                if _is_bad(s):
                    status = _error(f"running PreScore plugin {go_quote(name)}: {_err_text(s)}")
                    return status
            return None
        finally:
            state.set_skip_score_plugins(skip)
            self.metrics.observe_extension_point("PreScore", _code_str(status), self._profile_name,
                                                 time.perf_counter() - start)

    def _score_plan(self, skip: frozenset[str]) -> "_ScorePlan":
        """The Score plugins that run when ``skip`` skipped, with their weights (memoized per skip set)."""
        plan = self._score_plans.get(skip)
        if plan is None:
            active = [(n, p) for n, p in self._score_named if n not in skip]
            plan = _ScorePlan(active, np.array([self.score_plugin_weight[n] for n, _ in active], dtype=np.int64))
            self._score_plans[skip] = plan
        return plan

    def run_score_plugins_matrix(self, state: CycleState, pod: "Pod", nodes: Sequence[fwk.NodeInfo]
                                 ) -> tuple[ScoreMatrix | None, Status | None]:
        """RunScorePlugins returning the score arrays (see :class:`ScoreMatrix`) instead of objects."""
        start = time.perf_counter()
        status: Status | None = None
        try:
            plan = self._score_plan(state.skip_score_plugins)
            raw, status = self._raw_scores(state, pod, nodes, plan)
            if raw is None:
                return None, status
            m, status = self._normalized_matrix(state, pod, nodes, plan, raw)
            return m, status
        finally:
            self.metrics.observe_extension_point("Score", _code_str(status), self._profile_name,
                                                 time.perf_counter() - start)

    def run_raw_score_plugins(self, state: CycleState, pod: "Pod", nodes: Sequence[fwk.NodeInfo]
                              ) -> tuple[np.ndarray | None, list[str], Status | None]:
        """Upstream ``RunRawScorePlugins`` (for opportunistic batching's rescoring), over a node
        batch: ((P, N) raw scores of the Score plugins PreScore did not skip, their names, None),
        or (None, names, Error status)."""
        plan = self._score_plan(state.skip_score_plugins)
        raw, status = self._raw_scores(state, pod, nodes, plan)
        return raw, plan.names, status

    def normalize_scores(self, state: CycleState, pod: "Pod", nodes: Sequence[fwk.NodeInfo],
                         raw: np.ndarray) -> tuple[ScoreMatrix | None, Status | None]:
        """Upstream ``NormalizeScores``: NormalizeScore, weights and totals over given raw scores
        ((P, N), rows in the order of the Score plugins PreScore did not skip)."""
        plan = self._score_plan(state.skip_score_plugins)
        return self._normalized_matrix(state, pod, nodes, plan, raw)

    def _raw_scores(self, state: CycleState, pod: "Pod", nodes: Sequence[fwk.NodeInfo], plan: "_ScorePlan"
                    ) -> tuple[np.ndarray | None, Status | None]:
        """Each active Score plugin's raw score per node: ((P, N) int64, None) or (None, Error)."""
        active = plan.active
        n = len(nodes)
        raw = np.zeros((len(active), n), dtype=np.int64)    # (P, N)
        batchable = n > 0 and is_node_batch(nodes)
        per_node = []
        for j, (name, pl) in enumerate(active):
            score_vectorized = self._score_vectorized.get(name) if batchable else None
            if score_vectorized is None:
                per_node.append(j)
                continue
            sc, s = self._timed("Score", name, state, score_vectorized, state, pod, nodes, status_at=1,
                                label=_SCORE_VECTORIZED)
            if not _is_bad(s):
                if type(sc) is np.ndarray and sc.dtype is _INT64 and sc.shape == (n,):
                    raw[j] = sc
                elif int_score_array(sc, n) is not None:
                    raw[j] = sc
                else:
                    s = bad_return(name, _SCORE_VECTORIZED, (sc, s),
                                   f"an (integer ndarray of shape ({n},), Status or None) pair")
            if _is_bad(s):
                return None, _error(f"running Score plugins: plugin {go_quote(name)} failed with: {_err_text(s)}")
        if per_node and n:
            failed = self._score_per_node(state, pod, nodes, raw, [(j, *active[j]) for j in per_node])
            if failed is not None:
                return None, failed
        return raw, None

    def _normalized_matrix(self, state: CycleState, pod: "Pod", nodes: Sequence[fwk.NodeInfo], plan: "_ScorePlan",
                           raw: np.ndarray) -> tuple[ScoreMatrix | None, Status | None]:
        """NormalizeScore per plugin, then the weights and the range check (upstream normalizeScores)."""
        status: Status | None = None
        active = plan.active
        n = len(nodes)
        batchable = n > 0 and is_node_batch(nodes)
        normalized = raw
        for j, (name, pl) in enumerate(active):
            try:
                ext = pl.score_extensions()
            except Exception as e:  # noqa: BLE001
                status = _error(f"running Normalize on Score plugins: plugin {go_quote(name)} failed with: "
                                f"{_err_text(_plugin_exception(e))}")
                return None, status
            if ext is None:
                continue
            if normalized is raw:
                normalized = raw.copy()
            normalize_batch = vectorized_method(ext, "normalize_score_vectorized") if batchable else None
            if normalize_batch is not None:
                # normalized in place: on failure the matrix is dropped anyway
                s = self._timed("ScoreExtensionNormalize", name, state, normalize_batch,
                                state, pod, normalized[j], nodes, label=_NORMALIZE_VECTORIZED)
            else:
                node_names = nodes.names if hasattr(nodes, "names") else [ni.node().name for ni in nodes]
                lst = [NodeScore(nm, sc) for nm, sc in zip(node_names, normalized[j].tolist())]
                fn = getattr(ext, "normalize_score", None)
                if fn is None:
                    s = bad_return(name, "ScoreExtensions", ext, "an object with normalize_score, or None")
                else:
                    s = self._timed("ScoreExtensionNormalize", name, state, fn, state, pod, lst,
                                    label="NormalizeScore")
                if not _is_bad(s):
                    s = _store_normalized(name, lst, normalized[j])
            if _is_bad(s):
                status = _error(f"running Normalize on Score plugins: plugin {go_quote(name)} failed with: "
                                f"{_err_text(s)}")
                return None, status
        try:
            weighted, totals = weight_and_check(normalized, plan.weights, plan.names, self._parallelizer)
        except ScoreRangeError as e:
            status = _error(f"applying score defaultWeights on Score plugins: {e}")
            return None, status
        return ScoreMatrix(plan.names, nodes, raw, normalized, weighted, totals), None

    def _score_per_node(self, state: CycleState, pod: "Pod", nodes: Sequence[fwk.NodeInfo], raw: np.ndarray,
                        plugins: list[tuple[int, str, Any]]) -> Status | None:
        """Score the plugins without ``score_vectorized`` one node at a time, in parallel chunks."""
        record = state.should_record_plugin_metrics()

        def score_node(i: int) -> None:
            ni = nodes[i]
            for j, name, pl in plugins:
                try:
                    if record:
                        t0 = time.perf_counter()
                        out = pl.score(state, pod, ni)
                        self.metrics.observe_plugin("Score", name, _code_str(_second(out)),
                                                    time.perf_counter() - t0)
                    else:
                        out = pl.score(state, pod, ni)
                except Exception as e:  # noqa: BLE001
                    raise StatusError(f"plugin {go_quote(name)} failed with: {_err_text(_plugin_exception(e))}")
                if (type(out) is tuple or isinstance(out, tuple)) and len(out) == 2:
                    sc, s = out
                    if s is not None:
                        if type(s) is not Status and not isinstance(s, Status):
                            s = bad_return(name, "Score", out, EXPECT_SCORE)
                        if s.code() != Code.SUCCESS:  # the score is not read (upstream)
                            raise StatusError(f"plugin {go_quote(name)} failed with: {_err_text(s)}")
                    if type(sc) is not int or not -2**63 <= sc < 2**63:
                        sc = as_int64(sc)
                        if sc is None:
                            s = bad_return(name, "Score", out, EXPECT_SCORE)
                            raise StatusError(f"plugin {go_quote(name)} failed with: {_err_text(s)}")
                else:
                    s = bad_return(name, "Score", out, EXPECT_SCORE)
                    raise StatusError(f"plugin {go_quote(name)} failed with: {_err_text(s)}")
                raw[j, i] = sc

        try:
            self._parallelizer.until(len(nodes), score_node, "Score")
        except ParallelError as e:
            return _error(f"running Score plugins: {e.error}")
        return None

    def run_score_plugins(self, state: CycleState, pod: "Pod", nodes: Sequence[fwk.NodeInfo]
                          ) -> tuple[list[NodePluginScores] | None, Status | None]:
        """Upstream ``RunScorePlugins``: per node, each plugin's weighted score and the total."""
        m, s = self.run_score_plugins_matrix(state, pod, nodes)
        if m is None:
            return None, s
        return m.to_node_plugin_scores(), None

    # ==========================================================================================
    # Run: Reserve / Permit / PreBind / Bind / PostBind
    # ==========================================================================================
    def run_reserve_plugins_reserve(self, state: CycleState, pod: "Pod", node_name: str) -> Status | None:
        """Upstream ``RunReservePluginsReserve``: the first failure wins (rejections keep their code)."""
        start = _perf_counter()
        status: Status | None = None
        try:
            record = state.record_plugin_metrics
            sink = self.decision_sink
            idle = state.skip_filter_plugins
            for pl in self.reserve_plugins:
                if idle and _idle(pl, idle):
                    # its Reserve would answer Success and change nothing (declared): not called, in
                    # any cycle (its PreBind must see the same), reported as a call would be
                    self._idle_call("Reserve", pl.name(), record, sink)
                    continue
                s = self._call_status("Reserve", pl, record, pl.reserve, state, pod, node_name)
                if sink is not None:
                    sink.plugin_status("Reserve", pl.name(), s)
                if s is not None and s._code != _SUCCESS:
                    name = pl.name()
                    if s.is_rejected():
                        s.set_plugin(name)
                        status = s
                    else:
                        status = _error(f"running Reserve plugin {go_quote(name)}: {_err_text(s)}")
                    return status
            return None
        finally:
            self._observe_point("Reserve", status, _perf_counter() - start)

    def run_reserve_plugins_unreserve(self, state: CycleState, pod: "Pod", node_name: str) -> None:
        """Unreserve on every Reserve plugin, in reverse order; failures are ignored."""
        idle = state.skip_filter_plugins
        for pl in reversed(self.reserve_plugins):
            if idle and _idle(pl, idle):
                continue  # declared: nothing to undo
            try:
                pl.unreserve(state, pod, node_name)
            except Exception:  # noqa: BLE001 - upstream ignores Unreserve results
                pass

    def run_permit_plugins(self, state: CycleState, pod: "Pod", node_name: str) -> Status | None:
        """Upstream ``RunPermitPlugins``; a Wait registers a waiting pod with one timer per plugin."""
        start = _perf_counter()
        status: Status | None = None
        try:
            waits: dict[str, float] = {}
            for pl in self.permit_plugins:
                name = pl.name()
                s, timeout = self._timed("Permit", name, state, pl.permit, state, pod, node_name, status_at=0)
                if self.decision_sink is not None:
                    self.decision_sink.plugin_status("Permit", name, s,
                                                     as_timeout(timeout) if s is not None and s.is_wait() else None)
                if s is not None and s.is_wait():
                    t = as_timeout(timeout)
                    if t is None:
                        s = bad_return(name, "Permit", (s, timeout), EXPECT_PERMIT_WAIT)
                    else:
                        waits[name] = min(t, MAX_PERMIT_TIMEOUT)
                        continue
                if _is_bad(s):
                    if s.is_rejected():
                        status = s.with_plugin(name)
                    else:
                        status = _error(f"running Permit plugin {go_quote(name)}: {_err_text(s)}").with_plugin(name)
                    return status
            if waits:
                self.waiting_pods.add(WaitingPodImpl(pod, waits, self.clock))
                status = Status(Code.WAIT, f"one or more plugins asked to wait and no plugin rejected pod "
                                           f"{go_quote(pod.name)}")
                return status
            return None
        finally:
            self._observe_point("Permit", status, _perf_counter() - start)

    def will_wait_on_permit(self, pod: "Pod") -> bool:
        return self.waiting_pods.get(pod.uid) is not None

    def wait_on_permit(self, pod: "Pod") -> Status | None:
        """Block until the waiting pod is allowed or rejected (virtual time jumps to its timers)."""
        if not len(self.waiting_pods):  # nearly every cycle: skip the map's locked lookup
            return None
        wp = self.waiting_pods.get(pod.uid)
        if wp is None:
            return None
        try:
            s = wp.wait()
        finally:
            self.waiting_pods.remove(pod.uid)
        if _is_bad(s):
            if s.is_rejected():
                return s
            return _error(f"waiting on permit for pod: {_err_text(s)}").with_plugin(s.plugin())
        return None

    def run_pre_bind_pre_flights(self, state: CycleState, pod: "Pod", node_name: str) -> Status | None:
        """Upstream ``RunPreBindPreFlights``: Success if any plugin will work, Skip if all skip."""
        skip: set[str] = set()
        returning: Status | None = SKIP  # shared: no caller changes it (see SharedStatus)
        idle = state.skip_filter_plugins
        for pl in self.pre_bind_plugins:
            name = pl.name()
            if idle and _idle(pl, idle):
                skip.add(name)  # declared: its pre-flight answers Skip
                continue
            fn = getattr(pl, "pre_bind_pre_flight", None)
            try:
                s = fn(state, pod, node_name) if fn is not None else None
            except Exception as e:  # noqa: BLE001
                s = _plugin_exception(e)
            if s is not None and type(s) is not Status:
                s = checked_status(s, name, "PreBindPreFlight")
            code = Code.SUCCESS if s is None else s.code()
            if code == Code.ERROR and s is not None:
                return _error(f"running PreBindPreFlight {go_quote(name)}: {_err_text(s)}")
            if code == Code.SUCCESS:
                returning = None
            elif code == Code.SKIP:
                skip.add(name)
            else:
                return _error(f"PreBindPreFlight {name} returned {go_quote(str(code))}, which is unsupported. "
                              f"It is supposed to return Success, Skip, or Error status")
        state.set_skip_pre_bind_plugins(skip)
        return returning

    def run_pre_bind_plugins(self, state: CycleState, pod: "Pod", node_name: str) -> Status | None:
        """Upstream ``RunPreBindPlugins`` (plugins PreBindPreFlight skipped do not run)."""
        start = _perf_counter()
        status: Status | None = None
        try:
            skip = state.skip_pre_bind_plugins
            record = state.record_plugin_metrics
            sink = self.decision_sink
            idle = state.skip_filter_plugins
            for pl in self.pre_bind_plugins:
                if skip and pl.name() in skip:
                    continue
                if idle and _idle(pl, idle):
                    # declared: its PreBind does nothing (reached with the pre-flights off)
                    self._idle_call("PreBind", pl.name(), record, sink)
                    continue
                s = self._call_status("PreBind", pl, record, pl.pre_bind, state, pod, node_name)
                if sink is not None:
                    sink.plugin_status("PreBind", pl.name(), s)
                if s is not None and s._code != _SUCCESS:
                    name = pl.name()
                    if s.is_rejected():
                        s.set_plugin(name)
                        status = s
                    else:
                        status = _error(f"running PreBind plugin {go_quote(name)}: {_err_text(s)}")
                    return status
            return None
        finally:
            self._observe_point("PreBind", status, _perf_counter() - start)

    def run_bind_plugins(self, state: CycleState, pod: "Pod", node_name: str) -> Status | None:
        """Upstream ``RunBindPlugins``: Skip passes to the next plugin; all skipping returns Skip."""
        start = _perf_counter()
        status: Status | None = None
        try:
            if not self.bind_plugins:
                status = Status(Code.SKIP, "")
                return status
            record = state.record_plugin_metrics
            sink = self.decision_sink
            for pl in self.bind_plugins:
                status = self._call_status("Bind", pl, record, pl.bind, state, pod, node_name)
                if sink is not None:
                    sink.plugin_status("Bind", pl.name(), status)
                if status is None:
                    return None
                if status.is_skip():
                    continue
                if status._code != _SUCCESS:
                    if status.is_rejected():
                        status.set_plugin(pl.name())
                    else:
                        status = _error(f"running Bind plugin {go_quote(pl.name())}: {_err_text(status)}")
                return status
            return status
        finally:
            self._observe_point("Bind", status, _perf_counter() - start)

    # -- the idle binding path ---------------------------------------------------------------------
    def idle_binding(self, state: CycleState) -> "IdleBinding | None":
        """What Reserve, Permit, the PreBind pre-flights and PreBind come to for a pod whose cycle
        left ``state``, when none of their plugins has anything to do for it; else None.

        They have nothing to do when the profile has no Permit plugin and every Reserve and PreBind
        plugin is idle for the pod by its own declaration (``binding_idle_on_pre_filter_skip``
        and its PreFilter skipped the pod: the same test as :func:`_idle` in the runners). The
        runners would then call no plugin, every pre-flight would answer Skip, nothing would wait
        and every point would end in Success: :meth:`run_idle_points` leaves what they leave
        (metrics, the pre-flights' skip set) without walking the lists. Decided once per distinct skip set (the compiled cycle's plans
        share one frozenset per plan, so the lookup is by identity); the point lists are fixed
        once the framework is built."""
        return self.idle_binding_for(state.skip_filter_plugins)

    def idle_binding_for(self, skipped: frozenset[str]) -> "IdleBinding | None":
        """:meth:`idle_binding` for a cycle whose PreFilters skipped ``skipped`` (the compiled
        cycle asks it once per plan, at compile time)."""
        try:
            return self._idle_bindings[skipped]
        except KeyError:
            pass
        plan: IdleBinding | None = None
        if not self.permit_plugins and all(_idle(pl, skipped) for pl in self.reserve_plugins) \
                and all(_idle(pl, skipped) for pl in self.pre_bind_plugins):
            plan = IdleBinding(tuple(pl.name() for pl in self.reserve_plugins),
                               tuple(pl.name() for pl in self.pre_bind_plugins))
        self._idle_bindings[skipped] = plan
        return plan

    def idle_binding_at(self, state: CycleState, pod: "Pod", node_name: str) -> "IdleBinding | None":
        """:meth:`idle_binding` for ``pod`` placed on ``node_name``: also when the Reserve and
        PreBind plugins its PreFilters did not skip each judge themselves idle for this pod on this
        node (``ReservePlugin.binding_idle``: VolumeBinding when every claim of the pod is bound,
        upstream's AllBound). Asked where the binding cycle would call Reserve (after the assume or
        in its place): a judge that answers True has left in ``state`` what its Reserve would
        have, so that its Unreserve, PreBindPreFlight and PreBind (a failed Bind, a PostBind
        plugin) see the same; one that answers False may have left only what its Reserve leaves
        too. The plan of a skip set and its judges are found once per skip set."""
        skipped = state.skip_filter_plugins
        plan = self.idle_binding_for(skipped)
        if plan is not None:
            return plan
        try:
            judged = self._judged_bindings[skipped]
        except KeyError:
            judged = self._judged_bindings[skipped] = self._judged_binding(skipped)
        if judged is None:
            return None
        for pl in judged[1]:
            if not pl.binding_idle(state, pod, node_name):
                return None
        return judged[0]

    def _judged_binding(self, skipped: frozenset[str]) -> "tuple[IdleBinding, tuple[Any, ...]] | None":
        """The plan :meth:`idle_binding_at` gives for skip set ``skipped`` and the plugins it asks
        (each once, in the Reserve then PreBind order; the plugins, not their bound methods, so
        that a fork's copy asks its own), or None when some Reserve or PreBind plugin neither
        skipped the pod idly nor judges itself, or a Permit plugin runs."""
        if self.permit_plugins:
            return None
        judges: list[Any] = []
        for pl in self.reserve_plugins + self.pre_bind_plugins:
            if _idle(pl, skipped) or any(pl is j for j in judges):
                continue
            if getattr(pl, "binding_idle", None) is None:
                return None
            judges.append(pl)
        return IdleBinding(tuple(pl.name() for pl in self.reserve_plugins),
                           tuple(pl.name() for pl in self.pre_bind_plugins)), tuple(judges)

    def run_idle_points(self, state: CycleState, plan: "IdleBinding", pre_flights: bool) -> None:
        """What :meth:`run_reserve_plugins_reserve`, :meth:`run_permit_plugins`,
        :meth:`run_pre_bind_pre_flights` and :meth:`run_pre_bind_plugins` leave for a pod
        :meth:`idle_binding` answered ``plan`` for (no decision sink: the caller checks), in one
        call: each Reserve plugin's idle Success in the sampled plugin metrics; with
        ``pre_flights`` every pre-flight's Skip (so no PreBind plugin runs), without them each
        PreBind plugin's idle Success as the runner reports it; the three points' Success, each
        with its own measured duration (the observers kept as :meth:`_observe_point` keeps its).
        Nothing the pod's cycle does between Permit and PreBind reads these (the metrics and
        ``state.skip_pre_bind_plugins``), so they are all left at Permit's time. Inlined in
        ``_kernels/_bind.pyx`` (the compiled binding path's commit): a change here is a change there."""
        start = _perf_counter()
        record = state.record_plugin_metrics
        if record:
            observe = self.metrics.observe_plugin
            for name in plan.reserve:
                observe("Reserve", name, "Success", 0.0)
        reserved = permitted = _perf_counter()  # (no Permit plugin: nothing between)
        if pre_flights:
            state.skip_pre_bind_plugins = plan.pre_bind_skip
        elif record:
            observe = self.metrics.observe_plugin
            for name in plan.pre_bind:
                observe("PreBind", name, "Success", 0.0)
        pre_bound = _perf_counter()
        kept = self.__dict__.get("_idle_observers")
        if kept is None or kept[0] is not self.metrics or kept[1] is not self._profile_name:
            # the three points' Success series' observe, kept per recorder and profile
            series = self.metrics.extension_point_series
            kept = self._idle_observers = (self.metrics, self._profile_name, tuple(
                series(point, "Success", self._profile_name).observe for point in ("Reserve", "Permit", "PreBind")))
        observe_reserve, observe_permit, observe_pre_bind = kept[2]
        observe_reserve(reserved - start)
        observe_permit(permitted - reserved)
        observe_pre_bind(pre_bound - permitted)

    def _idle_call(self, point: str, name: str, record: bool, sink: Any) -> None:
        """What a Success call of an idle plugin (``binding_idle_on_pre_filter_skip``) leaves behind:
        its sampled duration (0: it was not called) and its status in a decision record."""
        if record:
            self.metrics.observe_plugin(point, name, "Success", 0.0)
        if sink is not None:
            sink.plugin_status(point, name, None)

    def run_post_bind_plugins(self, state: CycleState, pod: "Pod", node_name: str) -> None:
        """Upstream ``RunPostBindPlugins``: informational, results and exceptions ignored."""
        for pl in self.post_bind_plugins:
            try:
                pl.post_bind(state, pod, node_name)
            except Exception:  # noqa: BLE001 - PostBind is informational
                pass

    # ==========================================================================================
    # helpers
    # ==========================================================================================
    def _call_status(self, point: str, pl: Any, record: bool, fn: Callable, state: CycleState,
                     *args: Any) -> Status | None:
        """A plugin's Status-returning method (Reserve, PreBind, Bind): through :meth:`_timed` when
        this cycle samples plugin durations, else called plainly with the same return check
        (_timed's generality costs more than a no-op plugin)."""
        if record:
            return self._timed(point, pl.name(), state, fn, state, *args)
        try:
            s = fn(state, *args)
        except Exception as e:  # noqa: BLE001
            return _plugin_exception(e)
        if s is not None and type(s) is not Status and not isinstance(s, Status):
            return bad_return(pl.name(), point, s, EXPECT_STATUS)
        return s

    def _timed(self, point: str, name: str, state: CycleState, fn: Callable, *args,
               status_at: int | None = None, label: str | None = None):
        """Call a plugin method, sampling its duration when the cycle records plugin metrics.

        A raised exception, or a return value of the wrong shape (not a Status or None; for a pair,
        not a 2-tuple whose element ``status_at`` is a Status or None), becomes an Error status in
        the position the caller reads it from: the return value itself (``status_at=None``) or
        element ``status_at`` of a pair. ``label`` names the point in messages (default ``point``).
        """
        record = state.record_plugin_metrics
        t0 = _perf_counter() if record else 0.0
        try:
            out = fn(*args)
        except Exception as e:  # noqa: BLE001
            return _as_return(_plugin_exception(e), status_at)
        if status_at is None:
            s = out
            if s is not None and type(s) is not Status and not isinstance(s, Status):
                return bad_return(name, label or point, out, EXPECT_STATUS)
        elif type(out) is tuple and len(out) == 2 and ((s := out[status_at]) is None or type(s) is Status):
            pass  # the common answer: an exact pair with None or a Status where the caller reads it
        else:
            checked = _checked_pair(name, label or point, out, status_at)
            if checked is not out:
                return checked  # the Error pair
            s = out[status_at]
        if record:
            self.metrics.observe_plugin(point, name, _code_str(s), _perf_counter() - t0)
        return out

    def _observe_point(self, point: str, status: Status | None, seconds: float) -> None:
        """Record one run of extension point ``point`` that ended with ``status``.

        Success (``None``) is nearly every run, so its series' ``observe`` is kept per point (for
        this framework's recorder and profile) instead of looked up by labels each time.
        """
        if status is None:
            try:
                cached = self._point_observers[point]
            except (AttributeError, KeyError):  # the first run of this point
                cached = None
            if cached is not None and cached[0] is self.metrics and cached[1] is self._profile_name:
                cached[2](seconds)
                return
            series = self.metrics.extension_point_series(point, "Success", self._profile_name)
            if "_point_observers" not in self.__dict__:
                #: point -> (recorder, profile name, its Success series' observe)
                self._point_observers: dict[str, tuple] = {}
            self._point_observers[point] = (self.metrics, self._profile_name, series.observe)
            series.observe(seconds)
            return
        self.metrics.observe_extension_point(point, _code_str(status), self._profile_name, seconds)


class IdleBinding:
    """:meth:`Framework.idle_binding`'s answer: the names of the profile's Reserve and PreBind
    plugins (in order), all idle for the pods it is given for, and the pre-flights' skip set."""

    __slots__ = ("reserve", "pre_bind", "pre_bind_skip")

    def __init__(self, reserve: tuple[str, ...], pre_bind: tuple[str, ...]):
        self.reserve = reserve
        self.pre_bind = pre_bind
        self.pre_bind_skip = frozenset(pre_bind)


def _idle(pl: Any, skipped: frozenset[str]) -> bool:
    """Whether plugin ``pl`` has nothing to do at Reserve, Unreserve, PreBindPreFlight and PreBind
    in this cycle: it declares ``binding_idle_on_pre_filter_skip`` and its PreFilter skipped the pod
    (``skipped``: the cycle's ``skip_filter_plugins``; its name is asked only of declaring plugins)."""
    return getattr(pl, "binding_idle_on_pre_filter_skip", False) and pl.name() in skipped


_perf_counter = time.perf_counter
_SUCCESS = Code.SUCCESS


#: What each pair-returning point is expected to return (for the messages of :meth:`Framework._timed`).
_PAIRS = {"PreFilter": EXPECT_PRE_FILTER, "PostFilter": EXPECT_POST_FILTER, "Permit": EXPECT_PERMIT,
          "Score": EXPECT_SCORE, _SCORE_VECTORIZED: EXPECT_SCORE_VECTORIZED}


_INT8, _INT32, _INT64 = np.dtype(np.int8), np.dtype(np.int32), np.dtype(np.int64)

#: Positions 0, 1, 2, ... shared (read-only) by the batch filter runs: slicing it is cheaper than arange.
_ALL_PENDING = np.arange(1 << 16, dtype=np.int64)
_ALL_PENDING.flags.writeable = False


def _second(out: Any) -> Any:
    """The status element of a Score pair, for the metrics label (None when it is not a pair)."""
    return out[1] if type(out) is tuple and len(out) == 2 else None


def _store_normalized(name: str, lst: list, row: np.ndarray) -> Status | None:
    """Write a per-node NormalizeScore's results into ``row``; an Error if they are not one int
    (within int64) per node."""
    if len(lst) != len(row):
        return bad_return(name, "NormalizeScore", lst, f"{len(row)} NodeScores, {EXPECT_NORMALIZE}")
    vals = []
    for ns in lst:
        v = getattr(ns, "score", None)
        if type(v) is not int or not -2**63 <= v < 2**63:
            v = as_int64(v)
            if v is None:
                return bad_return(name, "NormalizeScore", ns, EXPECT_NORMALIZE)
        vals.append(v)
    row[:] = vals
    return None


def _verdict_arrays_fit(res: FilterVerdicts, m: int) -> bool:
    """Whether a FilterVerdicts's arrays are int8 codes and int32 reason ids of shape (m,)."""
    codes, rids = res.codes, res.reason_ids
    return (isinstance(codes, np.ndarray) and codes.shape == (m,) and codes.dtype == np.int8
            and isinstance(rids, np.ndarray) and rids.shape == (m,) and rids.dtype == np.int32)


def _expect_verdicts(m: int) -> str:
    return f"a FilterVerdicts with {m} verdicts (one per node), a Status or None"


def _checked_pair(name: str, label: str, out: Any, status_at: int) -> Any:
    """``Framework._timed``'s checks of a pair answer that is not an exact tuple of two with None
    or a Status at ``status_at``: a tuple subclass of two with a Status subclass there is ``out``
    itself; any other shape becomes the Error pair (a new object: callers tell it by identity)."""
    if isinstance(out, tuple) and len(out) == 2:
        s = out[status_at]
        if s is None or type(s) is Status or isinstance(s, Status):
            return out
    return _as_return(bad_return(name, label, out, _PAIRS.get(label, "a pair")), status_at)


def _as_return(status: Status, status_at: int | None):
    if status_at is None:
        return status
    return (status, 0.0) if status_at == 0 else (None, status)


def _refuses_every_pod(plugin: Any) -> bool:
    """Whether a signing plugin refuses every pod whatever its spec (``sign_refuses_every_pod``)."""
    fn = getattr(plugin, "sign_refuses_every_pod", None)
    return bool(fn()) if callable(fn) else False


class _ScorePlan:
    """The Score plugins of one skip set: (name, plugin) pairs, their names and (P,) int64 weights."""

    __slots__ = ("active", "names", "weights")

    def __init__(self, active: list[tuple[str, Any]], weights: np.ndarray):
        self.active = active
        self.names = [n for n, _ in active]
        self.weights = weights


class _CheckedPreEnqueue(PreEnqueuePlugin):
    """A PreEnqueue plugin whose ``pre_enqueue`` returns a Status or None, whatever the plugin does."""

    __slots__ = ("plugin", "_name", "per_pod_group", "pod_only")

    def __init__(self, plugin: Any):
        self.plugin = plugin
        self._name = plugin.name()
        #: the plugin declares (``pre_enqueue_per_pod_group``) that its answer for a pod group member
        #: depends on the pod only through its group: the queue then asks once for a group's members
        self.per_pod_group = bool(getattr(plugin, "pre_enqueue_per_pod_group", False))
        #: the plugin declares (``pre_enqueue_pod_only``) that its answer is a function of the pod
        #: object alone: the queue then does not ask it again for a pod object it passed
        self.pod_only = bool(getattr(plugin, "pre_enqueue_pod_only", False))

    def name(self) -> str:
        return self._name

    def pre_enqueue(self, pod: "Pod") -> Status | None:
        try:
            s = self.plugin.pre_enqueue(pod)
        except Exception as e:  # noqa: BLE001
            return _plugin_exception(e)
        if s is None or type(s) is Status:
            return s
        return checked_status(s, self._name, "PreEnqueue")

    def __getattr__(self, attr: str) -> Any:
        if attr in ("plugin", "_name"):  # not set yet (e.g. while copying): no recursion
            raise AttributeError(attr)
        return getattr(self.plugin, attr)

    def __repr__(self) -> str:
        return f"checked({self.plugin!r})"


class _CheckedLess:
    """:meth:`Framework.queue_sort_func`'s checked ``less``: an object, not a closure, so that a
    fork's copy of the queue holds a copy bound to the fork's QueueSort plugin (the fork copier
    shares functions as they are: a closure over the plugin's bound method kept the original's)."""

    __slots__ = ("name", "less", "warned")

    def __init__(self, name: str, less: Callable[[Any, Any], bool]):
        self.name = name
        self.less = less
        self.warned = False

    def __call__(self, a: Any, b: Any) -> bool:
        r: object
        try:
            r = self.less(a, b)
        except Exception as e:  # noqa: BLE001
            r = e
        if type(r) is bool:
            return r
        if isinstance(r, (bool, np.bool_)):
            return bool(r)
        if not self.warned:
            self.warned = True
            what = (f"raised {_plugin_exception(r).message()}" if isinstance(r, Exception)
                    else f"returned {describe(r)}")
            warnings.warn(RuntimeWarning(f"QueueSort plugin {go_quote(self.name)} {what} from Less: expected a bool; "
                                         f"such comparisons count as False"), stacklevel=2)
        return False


class _NominatedPodError(Exception):
    pass


class _DefaultEnqueueExtension(EnqueueExtensions):
    """Stands in for plugins without EnqueueExtensions: they are interested in every event."""

    def __init__(self, plugin_name: str):
        self._name = plugin_name

    def name(self) -> str:
        return self._name

    def events_to_register(self):
        from ..framework.interface import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
        return [ClusterEventWithHint(ClusterEvent(EventResource.WILDCARD, ActionType.ALL))]


def _valid_score_weights(plugins_map: dict[str, Any], iface: type,
                         entries: Iterable[PluginConfigEntry]) -> dict[str, int]:
    """Upstream ``getValidScoreWeights`` (v1.37): the weight of each plugin of ``iface`` (Score or
    PlacementScore) among ``entries`` (the point's own first, then MultiPoint's), 0 meaning 1, and
    the guard against an overflowing total."""
    weights: dict[str, int] = {}
    total = 0
    for e in entries:
        pg = plugins_map.get(e.name)
        if not isinstance(pg, iface):
            continue
        if e.name in weights:
            continue
        w = int(e.weight) or 1
        weights[e.name] = w
        if w * MAX_NODE_SCORE > MAX_TOTAL_SCORE - total:
            raise FrameworkError("total score of Score plugins could overflow")
        total += w * MAX_NODE_SCORE
    return weights


def _plugins_needed(plugins: Plugins) -> set[str]:
    needed: set[str] = set()
    for point in _EXTENSION_POINT_ORDER + ("multi_point",):
        needed.update(e.name for e in getattr(plugins, point).enabled)
    return needed


def _update_plugin_list(target: list, point: str, pset: PluginSet, plugins_map: dict[str, Any]) -> None:
    iface, iface_name = EXTENSION_POINT_INTERFACES[point]
    seen: set[str] = set()
    for ep in pset.enabled:
        pg = plugins_map.get(ep.name)
        if pg is None:
            raise FrameworkError(f"{iface_name} {go_quote(ep.name)} does not exist")
        if not isinstance(pg, iface):
            raise FrameworkError(f"plugin {go_quote(ep.name)} does not extend {iface_name} plugin")
        if ep.name in seen:
            raise FrameworkError(f"plugin {go_quote(ep.name)} already registered as {go_quote(iface_name)}")
        seen.add(ep.name)
        target.append(pg)


def new_framework(registry: Registry, profile: KubeSchedulerProfile | None, *,
                  snapshot_shared_lister: SharedLister | None = None, parallelism: int | None = None,
                  parallelizer: Parallelizer | None = None, pod_nominator: PodNominator | None = None,
                  pod_activator: PodActivator | None = None, extenders: Sequence[Any] = (),
                  clock: Any = None, waiting_pods: WaitingPodsMap | None = None,
                  metrics_recorder: MetricsRecorder | None = None, client: fwk.Client | None = None,
                  event_recorder: Any = None, namespaces: Any = None,
                  rng: random.Random | None = None, feature_gates: Any = None) -> Framework:
    """Build the framework for ``profile`` from ``registry`` (upstream ``NewFramework``).

    Only the plugins the profile enables are instantiated, each once, with its pluginConfig args.
    Raises :class:`FrameworkError` with upstream's message when the profile cannot be built.
    ``clock`` defaults to a :class:`~fastsched.clock.VirtualClock`; pass ``RealClock()`` for wall time.
    ``namespaces`` maps namespace names to Namespace objects (for namespaceSelectors); ``client`` is
    what DefaultBinder binds through (the scheduler's cache); ``snapshot_shared_lister`` the snapshot.
    ``feature_gates`` (a :class:`~fastsched.features.FeatureGates`, a ``{gate: bool}`` mapping or
    ``"Gate=false,..."``) are the gates the plugins see as ``handle.feature_gates`` (v1.37.2's defaults
    when None).
    """
    if parallelizer is None:
        parallelizer = Parallelizer(parallelism or DEFAULT_PARALLELISM)
    fw = Framework(registry, snapshot_shared_lister=snapshot_shared_lister, parallelizer=parallelizer,
                   pod_nominator=pod_nominator, pod_activator=pod_activator, extenders=extenders,
                   clock=clock, waiting_pods=waiting_pods, metrics_recorder=metrics_recorder,
                   client=client, event_recorder=event_recorder, namespaces=namespaces, rng=rng,
                   feature_gates=feature_gates)
    if profile is not None:
        fw._build(profile)
    return fw


__all__ = ["Framework", "FrameworkError", "new_framework", "MAX_PERMIT_TIMEOUT", "RealClock", "VirtualClock"]
