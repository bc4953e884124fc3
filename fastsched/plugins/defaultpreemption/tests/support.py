"""Test support: a fake cluster client, a fake nominator, and a framework for preemption tests.

The profile mirrors upstream's tests: PrioritySort, DefaultBinder, NodeResourcesFit at PreFilter
and Filter, DefaultPreemption at PostFilter, plus optional test plugins.
"""
from __future__ import annotations

import random
from typing import Any, Iterable, Sequence, cast

import numpy as np

from fastsched.api import Node, Pod, PodDisruptionBudget
from fastsched.config.types import KubeSchedulerProfile, Plugin, PluginConfig, Plugins, PluginSet
from fastsched.framework import CycleState, FilterPlugin, PodInfo, PodNominator, PreFilterPlugin, Status
from fastsched.framework import protocols as fwk
from fastsched.framework.status import Code, StatusError
from fastsched.framework.types import NodeToStatus
from fastsched.plugins import in_tree_registry
from fastsched.plugins.defaultpreemption import NAME
from fastsched.runtime import Registry, new_framework
from fastsched.runtime.filter_results import ArrayNodeToStatus
from fastsched.snapshot import Snapshot, build_snapshot
from fastsched.testing import make_node, make_pod

SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
TEST_PLUGIN = "test-plugin"
COUNTING_FILTER = "CountingFilter"
TRUE_FILTER, FALSE_FILTER, MATCH_FILTER = "TrueFilter", "FalseFilter", "MatchFilter"


def node(name: str, *, cpu: str = "0", memory: str = "0", pods: str = "110", labels: dict | None = None,
         **kwargs: Any) -> Node:
    """A node whose allocatable is exactly what is given (upstream ``MakeNode().Capacity``)."""
    return make_node(name, cpu=cpu, memory=memory, pods=pods, labels=labels, **kwargs)


def big_node(name: str, **kwargs: Any) -> Node:
    """A node with upstream's ``veryLargeRes`` capacity (500m cpu, 500 memory)."""
    return node(name, cpu=VERY_LARGE["cpu"], memory=VERY_LARGE["memory"], **kwargs)


def pod(name: str, *, node_name: str | None = None, priority: int | None = None, req: dict | None = None,
        labels: dict | None = None, start: float | None = None, namespace: str = "default",
        deleting: bool = False, conditions: Sequence[dict] = (), nominated: str = "",
        preemption_policy: str | None = None, **spec: Any) -> Pod:
    """A pod like upstream's ``st.MakePod()`` builder (uid = name); ``spec``: further manifest spec
    fields (``affinity``, ``topologySpreadConstraints``)."""
    if preemption_policy is not None:
        spec["preemptionPolicy"] = preemption_policy
    p = make_pod(name, namespace=namespace, uid=name, requests=dict(req or {}), labels=labels,
                 priority=priority, node_name=node_name, **spec)
    changes: dict = {}
    if start is not None:
        changes["start_time"] = start
    if deleting:
        changes["deletion_timestamp"] = 1.0
    if conditions:
        changes["conditions"] = tuple(conditions)
    if nominated:
        changes["nominated_node_name"] = nominated
    return p.replace(**changes) if changes else p


def pdb(name: str, match_labels: dict | None, *, allowed: int = 0, disrupted: Iterable[str] = (),
        namespace: str = "default") -> PodDisruptionBudget:
    manifest: dict = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                      "metadata": {"name": name, "namespace": namespace}, "spec": {},
                      "status": {"disruptionsAllowed": allowed,
                                 "disruptedPods": {p: "2024-01-01T00:00:00Z" for p in disrupted}}}
    if match_labels is not None:
        manifest["spec"]["selector"] = {"matchLabels": dict(match_labels)}
    return PodDisruptionBudget.from_manifest(manifest, validate=False)


# ------------------------------------------------------------------------------------------------
# fakes
# ------------------------------------------------------------------------------------------------
class FakeClient:
    """The cluster client DefaultPreemption reaches through ``handle.client``; records its calls."""

    def __init__(self, pods: Iterable[Pod] = (), pdbs: Iterable[PodDisruptionBudget] = ()):
        self.pods = {p.uid: p for p in pods}
        self.pdbs = list(pdbs)
        self.preempted: list[tuple[str, str, str]] = []  # (victim, preemptor, node)
        self.cleared: list[str] = []
        self.fail_preempt_of: set[str] = set()

    def get_pod_by_uid(self, uid: str) -> Pod | None:
        return self.pods.get(uid)

    def list_pdbs(self) -> list[PodDisruptionBudget]:
        return list(self.pdbs)

    def preempt_pod(self, victim: Pod, preemptor: Pod, node_name: str) -> None:
        if victim.name in self.fail_preempt_of:
            raise RuntimeError(f"cannot delete pod {victim.name}")
        self.preempted.append((victim.name, preemptor.name, node_name))
        self.pods.pop(victim.uid, None)

    def clear_nominated_node_name(self, p: Pod) -> None:
        self.cleared.append(p.name)

    def bind(self, p: Pod, node_name: str) -> None:
        pass

    @property
    def victims(self) -> list[str]:
        return [v for v, _, _ in self.preempted]


class FakeNominator(PodNominator):
    def __init__(self, nominated: dict[str, list[Pod]] | None = None):
        self.by_node = {n: [PodInfo(p) for p in pods] for n, pods in (nominated or {}).items()}

    def add_nominated_pod(self, pod_info, nominating_info) -> None:
        raise NotImplementedError

    def delete_nominated_pod_if_exists(self, p) -> None:
        raise NotImplementedError

    def update_nominated_pod(self, old_pod, new_pod_info) -> None:
        raise NotImplementedError

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return list(self.by_node.get(node_name, ()))


class FakeExtender:
    """A preemption extender keeping only the nodes ``keep`` accepts (upstream's FakeExtender)."""

    def __init__(self, keep=lambda node_name: True, *, interested: bool = True, ignorable: bool = False,
                 error: bool = False):
        self.keep, self.interested, self.ignorable, self.error = keep, interested, ignorable, error
        self.calls = 0

    def supports_preemption(self) -> bool:
        return True

    def is_interested(self, p: Pod) -> bool:
        return self.interested

    def is_ignorable(self) -> bool:
        return self.ignorable

    def process_preemption(self, p: Pod, node_name_to_victims: dict, node_infos=None) -> dict:
        self.calls += 1
        if self.error:
            raise RuntimeError("extender failed")
        return {n: v for n, v in node_name_to_victims.items() if self.keep(n)}


class ErrorOnLabelPlugin(PreFilterPlugin):
    """Upstream's TestPlugin: AddPod/RemovePod fail on nodes labelled ``error=true``."""

    def name(self) -> str:
        return TEST_PLUGIN

    def pre_filter(self, state, p, nodes):
        return None, None

    def pre_filter_extensions(self):
        return self

    def add_pod(self, state, pod_to_schedule, pod_info_to_add, node_info) -> Status | None:
        if node_info.node().labels.get("error") == "true":
            return Status.from_error(StatusError(f"failed to add pod: {pod_to_schedule.name}"))
        return None

    def remove_pod(self, state, pod_to_schedule, pod_info_to_remove, node_info) -> Status | None:
        if node_info.node().labels.get("error") == "true":
            return Status.from_error(StatusError(f"failed to remove pod: {pod_to_schedule.name}"))
        return None


class CountingFilter(FilterPlugin):
    """Upstream's FakeFilterPlugin: counts Filter calls; fails the nodes listed in ``reject``."""

    def __init__(self):
        self.calls = 0
        self.reject: dict[str, Code] = {}

    def name(self) -> str:
        return COUNTING_FILTER

    def filter(self, state, p, node_info) -> Status | None:
        self.calls += 1
        code = self.reject.get(node_info.node().name)
        return None if code is None else Status(code)


class _FixedFilter(FilterPlugin):
    """Upstream's TrueFilterPlugin / FalseFilterPlugin / MatchFilterPlugin (framework/testing):
    Success everywhere, Unschedulable everywhere, or Success only where the node is named as the pod."""

    def __init__(self, plugin_name: str):
        self._name = plugin_name

    def name(self) -> str:
        return self._name

    def filter(self, state, p, node_info) -> Status | None:
        if self._name == TRUE_FILTER or (self._name == MATCH_FILTER and node_info.node().name == p.name):
            return None
        return Status(Code.UNSCHEDULABLE)


def _fixed_filter_factory(plugin_name: str) -> Any:
    """A registry factory for :class:`_FixedFilter` ``plugin_name``."""
    def factory(_args: Any, _handle: Any) -> _FixedFilter:
        return _FixedFilter(plugin_name)
    return factory


# ------------------------------------------------------------------------------------------------
# framework
# ------------------------------------------------------------------------------------------------
def registry() -> Registry:
    """The in-tree registry."""
    return in_tree_registry()


def profile(filters: Sequence[str] = ("NodeResourcesFit",), pre_filters: Sequence[str] | None = None,
            args: Any = None) -> KubeSchedulerProfile:
    plugins = Plugins()
    plugins.queue_sort = PluginSet([Plugin("PrioritySort")])
    plugins.bind = PluginSet([Plugin("DefaultBinder")])
    plugins.pre_filter = PluginSet([Plugin(n) for n in (pre_filters if pre_filters is not None else filters)
                                    if n not in (COUNTING_FILTER, TRUE_FILTER, FALSE_FILTER, MATCH_FILTER,
                                                 "NodeUnschedulable", "TaintToleration")])
    plugins.filter = PluginSet([Plugin(n) for n in filters])
    plugins.post_filter = PluginSet([Plugin(NAME)])
    pc = [PluginConfig(NAME, args)] if args is not None else []
    return KubeSchedulerProfile(scheduler_name="test", plugins=plugins, plugin_config=pc)


class Setup:
    """A snapshot, a fake client and a framework with DefaultPreemption, for one preemptor."""

    def __init__(self, nodes: Sequence[Node], running: Sequence[Pod], preemptor: Pod | Sequence[Pod], *,
                 pdbs: Sequence[PodDisruptionBudget] = (), filters: Sequence[str] = ("NodeResourcesFit",),
                 pre_filters: Sequence[str] | None = None, args: Any = None,
                 nominated: dict[str, list[Pod]] | None = None, extenders: Sequence[Any] = (), seed: int = 0,
                 client: bool = True, snapshot: Snapshot | None = None, async_preemption: bool = False):
        """``snapshot``: a prebuilt snapshot of ``nodes`` and ``running`` (the fakes never change it).
        ``async_preemption``: the SchedulerAsyncPreemption gate (off here: these tests read the
        evictions right after PostFilter; the asynchronous ones step ``fw.clock``)."""
        self.preemptors = [preemptor] if isinstance(preemptor, Pod) else list(preemptor)
        self.pod = self.preemptors[0]
        self.snapshot = snapshot if snapshot is not None else build_snapshot(nodes, running)
        self.client = FakeClient([*self.preemptors, *running], pdbs) if client else None
        self.counting = CountingFilter()
        self.nominator = FakeNominator(nominated)
        reg = registry()
        reg.register(TEST_PLUGIN, lambda _a, _h: ErrorOnLabelPlugin())
        reg.register(COUNTING_FILTER, lambda _a, _h: self.counting)
        for fixed in (TRUE_FILTER, FALSE_FILTER, MATCH_FILTER):
            reg.register(fixed, _fixed_filter_factory(fixed))
        self.fw = new_framework(reg, profile(filters, pre_filters, args), snapshot_shared_lister=self.snapshot,
                                # a partial Client double: preemption's calls only (no API objects)
                                client=cast("fwk.Client | None", self.client), rng=random.Random(seed), pod_nominator=self.nominator,
                                extenders=extenders,
                                feature_gates={"SchedulerAsyncPreemption": async_preemption})
        self.plugin = self.fw.plugin(NAME)

    def cycle_state(self, p: Pod | None = None) -> CycleState:
        """The state of the failed cycle: PreFilter has run."""
        state = CycleState()
        _, status, _ = self.fw.run_pre_filter_plugins(state, p or self.pod, self.snapshot.batch())
        assert status is None or status.is_success(), status
        return state

    def filter_statuses(self, state: CycleState, p: Pod | None = None) -> ArrayNodeToStatus:
        """The NodeToStatus the scheduling cycle would hand to PostFilter (feasible nodes are absent:
        ``self.feasible`` counts them)."""
        batch = self.snapshot.batch()
        res = self.fw.run_filter_plugins_with_nominated_pods_vectorized(state, p or self.pod, batch)
        self.feasible = int(res.feasible().sum())
        return ArrayNodeToStatus(res, batch.names, np.flatnonzero(~res.feasible()))

    def post_filter(self, statuses: NodeToStatus | None = None, p: Pod | None = None):
        p = p or self.pod
        state = self.cycle_state(p)
        if statuses is None:
            statuses = self.filter_statuses(state, p)
        return self.plugin.post_filter(state, p, statuses)

    def dry_run(self, offset: int = 0, num_candidates: int | None = None, pdbs: Sequence[PodDisruptionBudget] = (),
                p: Pod | None = None):
        """DryRunPreemption over every node (sorted by name, as upstream's test does)."""
        p = p or self.pod
        state = self.cycle_state(p)
        nodes = sorted(self.snapshot.batch(), key=lambda v: v.name)
        if num_candidates is None:
            num_candidates = self.plugin.calculate_num_candidates(len(nodes))
        return self.plugin.evaluator.dry_run_preemption(state, p, nodes, list(pdbs), offset, num_candidates)


def unschedulable_on(*names: str, absent: Status | None = None, **codes: Code) -> NodeToStatus:
    """A NodeToStatus with the named nodes Unschedulable (others: ``codes`` or the absent status)."""
    statuses = {n: Status(Code.UNSCHEDULABLE) for n in names}
    statuses.update({n: Status(c) for n, c in codes.items()})
    return NodeToStatus(statuses, absent if absent is not None else Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE))


def names(pods: Iterable[Pod]) -> list[str]:
    return [p.name for p in pods]


def assert_placed(status, node: str, victims: int) -> None:
    """DefaultPreemption's Success at v1.37 (preemption.go Preempt, prefixed by PostFilter)."""
    from fastsched.framework import Code

    assert status is not None and status.code() == Code.SUCCESS, status
    assert status.message() == f"preemption: found a potential placement for pod on node {node}, preempting {victims} victims"
