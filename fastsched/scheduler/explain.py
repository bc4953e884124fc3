"""explain(): what every plugin said about every node for one pod.

Upstream users get this only from kube-scheduler-simulator. Unlike a scheduling cycle, explain
evaluates every node (no percentageOfNodesToScore sampling) and runs every Filter plugin on every
node, so each plugin's own verdict is visible; ``best_nodes`` still follows upstream's rule (a node
failing any filter is infeasible) and scores are normalized over the feasible nodes only.
Extenders are consulted as the scheduling cycle consults them: filtering extenders, in order, on
the nodes that passed the plugins (their verdicts appear as ``extender <name>`` beside the
plugins'), prioritizing extenders on the feasible nodes (``scores["extender <name>"]``, weighted
as upstream: score x weight x MaxNodeScore / MaxExtenderPriority).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..api import Namespace, Node, Pod, objects_of
from ..config import load_config
from ..config.types import KubeSchedulerConfiguration
from ..extender.extender import weighted_extender_score
from ..framework.cycle_state import CycleState
from ..framework.status import Code, Status
from ..framework.objects import ObjectStore
from ..framework.types import PreFilterResult
from ..runtime import Registry
from ..snapshot import build_snapshot
from .display import explanation_html
from .profile import build_profiles, profile_or_error


@dataclass(frozen=True)
class ScoreDetail:
    """One plugin's score for one node: raw, after NormalizeScore, and times the plugin's weight."""

    raw: int
    normalized: int
    weighted: int


@dataclass
class PodGroupExplanation:
    """For a member of a PodGroup (GenericWorkload): the group's own verdict, which the per-pod
    explanation cannot give. A group is scheduled in one cycle, all members together (a gang
    binds none below ``minCount``), so a pod feasible on its own may still be unschedulable.
    ``Scheduler.explain`` answers it with a dry run of the group's scheduling cycle on a fork
    (the scheduler itself is untouched): ``members`` maps each member's ``namespace/name`` to
    ``(status, node, message)`` as ``run()`` would leave them after that cycle (``Scheduled``,
    ``Unschedulable``, ``Error``, ``Waiting`` at Permit, or ``Pending`` when the cycle did not
    reach the member). ``cycle_ran`` is False when no cycle would run now; ``reason`` says why
    (the PodGroup does not exist, PreEnqueue holds the group, nothing of it is queued)."""

    namespace: str
    name: str
    #: ``"gang"`` or ``"basic"``; None when the PodGroup does not exist
    policy: str | None
    min_count: int
    cycle_ran: bool = False
    reason: str = ""
    members: dict[str, tuple[str, str, str]] = field(default_factory=dict)

    @property
    def scheduled(self) -> list[str]:
        """The members the cycle scheduled (or left waiting at Permit), in member order."""
        return [k for k, (status, _, _) in self.members.items() if status in ("Scheduled", "Waiting")]


@dataclass
class PreemptionExplanation:
    """For a pod that fits no node now: what one scheduling attempt would do about it, PostFilter
    (preemption) included, which the per-node verdicts cannot say. ``Scheduler.explain`` answers
    it with a dry run of the pod's attempt on a fork (the scheduler itself is untouched): the
    attempt's ``status`` and ``message`` as ``run()`` would leave them (the FitError with
    PostFilter's words: ``... preemption: 0/3 nodes are available: ...``), the node the pod would
    be nominated to, and the pods preemption would evict, with their nodes, in eviction order.
    ``attempted`` is False when no attempt would run now; ``reason`` says why (PreEnqueue holds
    the pod)."""

    attempted: bool = False
    reason: str = ""
    #: ``Unschedulable``, ``Error``, or ``Scheduled`` when the attempt places the pod after all
    status: str = ""
    message: str = ""
    nominated_node: str | None = None
    #: (victim ``namespace/name``, its node), in the order preemption evicts them
    victims: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Explanation:
    """The decision explanation for one pod; see :func:`explain`."""

    pod: Pod
    profile: str
    node_names: list[str]
    #: PreFilter plugin -> its own status (None = Success); plugins after an unresolvable one are absent
    prefilter: dict[str, Status | None] = field(default_factory=dict)
    #: the combined PreFilter status (None = Success) and node restriction (None = all nodes)
    prefilter_status: Status | None = None
    prefilter_result: PreFilterResult | None = None
    #: node -> Filter plugin -> status (None = passed); plugins skipped at PreFilter are absent
    filter: dict[str, dict[str, Status | None]] = field(default_factory=dict)
    #: PreScore plugin -> its own status (Skip: its Score is skipped)
    prescore: dict[str, Status | None] = field(default_factory=dict)
    #: Score plugin -> node -> ScoreDetail, over the feasible nodes
    scores: dict[str, dict[str, ScoreDetail]] = field(default_factory=dict)
    #: feasible node -> total weighted score
    total: dict[str, int] = field(default_factory=dict)
    best_nodes: list[str] = field(default_factory=list)
    #: an Error met at PreScore/Score (the cycle would fail with it)
    error: Status | None = None
    #: for a member of a PodGroup (GenericWorkload, ``Scheduler.explain``): the group cycle's verdict
    pod_group: PodGroupExplanation | None = None
    #: for a pod no node fits (``Scheduler.explain``, not a group member): what its attempt, with
    #: preemption, would do
    preemption: PreemptionExplanation | None = None
    #: ``Scheduler.explain`` of a pod its queue holds before scheduling (a PreEnqueue plugin:
    #: scheduling gates, DynamicResources waiting for a claim): why, as its PodResult says; the
    #: verdicts above are what an attempt would find once it is released
    gated: str = ""
    #: ``Scheduler.explain`` of a pod the API server refuses to create (an admission plugin:
    #: Priority's missing PriorityClass, RuntimeClass's missing RuntimeClass): its message, as the
    #: Error result ``add()`` gives the pod says it. No plugin ran: the pod never reaches a queue
    #: (no verdicts, no feasible node)
    admission_error: str = ""

    @property
    def feasible(self) -> list[str]:
        """Nodes that pass every filter (and the PreFilter restriction), in snapshot order; none when
        PreFilter rejected the pod."""
        return [n for n in self.node_names if n in self._feasible_set]

    @property
    def _feasible_set(self) -> set[str]:
        s = self.prefilter_status
        if s is not None and s.code() != Code.SUCCESS:
            # upstream findNodesThatFitPod: a PreFilter rejection (or error) is every node's
            # status, and no Filter runs (the verdicts above are empty, not passed)
            return set()
        return {n for n, verdicts in self.filter.items()
                if all(s is None for s in verdicts.values()) and self._allowed(n)}

    def _allowed(self, node: str) -> bool:
        r = self.prefilter_result
        return r is None or r.node_names is None or node in r.node_names

    def _repr_html_(self) -> str:
        """Notebooks: the rejections by plugin and reason, and the best-scored nodes' breakdown."""
        return explanation_html(self)

    def table(self) -> list[dict[str, Any]]:
        """One row per node: each filter's verdict ('ok' or the reasons) and each plugin's weighted score."""
        rows = []
        for n in self.node_names:
            row: dict[str, Any] = {"node": n}
            for plugin, s in self.filter.get(n, {}).items():
                row[f"filter:{plugin}"] = "ok" if s is None else f"{s.code()}: {s.message()}"
            for plugin, per_node in self.scores.items():
                if n in per_node:
                    row[f"score:{plugin}"] = per_node[n].weighted
            if n in self.total:
                row["total"] = self.total[n]
            rows.append(row)
        return rows


def explain(pod: Any, nodes: Any, existing_pods: Any = (), namespaces: Any = (), config: Any = None,
            registry: Registry | None = None, profile: str = "default-scheduler",
            extenders: list | None = None, objects: Any = ()) -> Explanation:
    """Explain how ``profile`` judges ``pod`` on ``nodes``: every plugin, every node.

    ``pod``, ``nodes``, ``existing_pods`` and ``namespaces`` take manifests (dicts, YAML text or
    files) or fastsched objects; pods in ``existing_pods`` run on their ``spec.nodeName``.
    ``objects`` takes the other API objects the plugins read (PersistentVolumes, claims, storage
    classes, CSINodes, ResourceSlices, ...), in any form :func:`~fastsched.api.objects_of` reads;
    the plugins see them through an :class:`~fastsched.framework.objects.ObjectStore`.
    ``config`` takes what :func:`~fastsched.load_config` takes (or a KubeSchedulerConfiguration);
    ``registry`` is merged into the in-tree registry; the configuration's extenders are consulted
    (``extenders`` replaces them with already built ones). An unknown ``profile`` is a
    :class:`~fastsched.config.ConfigError` naming the profiles there are.
    """
    (the_pod,) = objects_of(pod, Pod) or [None]
    if the_pod is None:
        raise ValueError("explain needs a pod")
    node_list = objects_of(nodes, Node)
    pods = objects_of(existing_pods, Pod)
    ns_map = {ns.name: ns for ns in objects_of(namespaces, Namespace)}
    cfg = config if isinstance(config, KubeSchedulerConfiguration) else load_config(
        config, registry_names=list(registry or ()))
    snapshot = build_snapshot(node_list, pods)
    # built as the Scheduler builds its profiles (extenders' ignored resources included), so that
    # explain and run() judge a pod alike
    built = build_profiles(cfg, registry, extenders=extenders, snapshot_shared_lister=snapshot,
                           namespaces=ns_map, client=ObjectStore(objects))
    fw = profile_or_error(built.frameworks, profile)
    extenders = built.extenders
    return explain_with_framework(fw, snapshot, the_pod, extenders)


def explain_with_framework(fw: Any, snapshot: Any, pod: Pod, extenders: Any = ()) -> Explanation:
    """:func:`explain` on an already built framework and snapshot (the scheduler uses this)."""
    batch = snapshot.batch()
    names = batch.names
    e = Explanation(pod=pod, profile=fw.profile_name(), node_names=list(names))
    state = CycleState()
    record: dict = {}
    result, status, _ = fw.run_pre_filter_plugins(state, pod, batch, record=record)
    e.prefilter = {name: s for name, (_, s) in record.items()}
    e.prefilter_status, e.prefilter_result = status, result

    rejected_at_prefilter = status is not None and status.code() != Code.SUCCESS
    skip = state.skip_filter_plugins
    verdicts: dict[str, list[Status | None]] = {}
    if not rejected_at_prefilter:
        for pl in fw.filter_plugins:
            name = pl.name()
            if name in skip:
                continue
            res = fw.run_filter_plugins_vectorized(state, pod, batch, only=[name])
            verdicts[name] = [res.status(i) for i in range(len(batch))]
        _with_nominated_pods(fw, state, pod, batch, verdicts)
    e.filter = {n: {p: v[i] for p, v in verdicts.items()} for i, n in enumerate(names)}
    if rejected_at_prefilter:
        return e

    feasible = np.array([i for i, n in enumerate(names)
                         if e._allowed(n) and all(v[i] is None for v in verdicts.values())], dtype=np.int64)
    if feasible.size == 0:
        return e
    fb = batch.select(feasible)
    fb = _filter_through_extenders(e, pod, fb, extenders)
    if fb is None or len(fb) == 0:
        return e
    pre_record: dict = {}
    s = fw.run_pre_score_plugins(state, pod, fb, record=pre_record)
    e.prescore = pre_record
    if s is not None and s.code() != Code.SUCCESS:
        e.error = s
        return e
    m, s = fw.run_score_plugins_matrix(state, pod, fb)
    if m is None:
        e.error = s
        return e
    fnames = fb.names
    for j, plugin in enumerate(m.plugin_names):
        raw, norm, wt = m.raw[j].tolist(), m.normalized[j].tolist(), m.weighted[j].tolist()
        e.scores[plugin] = {n: ScoreDetail(raw[i], norm[i], wt[i]) for i, n in enumerate(fnames)}
    totals = m.totals.tolist()
    _prioritize_with_extenders(e, pod, fb, extenders, totals)
    e.total = dict(zip(fnames, totals))
    best = max(totals)
    e.best_nodes = [n for n, t in zip(fnames, totals) if t == best]
    return e


def _with_nominated_pods(fw: Any, state: CycleState, pod: Pod, batch: Any,
                         verdicts: dict[str, list[Status | None]]) -> None:
    """Upstream's findNodesThatPassFilters runs RunFilterPluginsWithNominatedPods: on a node
    holding a nominated pod of at least this pod's priority, the Filter plugins first see those
    pods there too, and the node must pass both ways. ``verdicts`` (each plugin's, without them)
    get the first pass's rejections on such nodes (in place)."""
    for i in fw._nodes_with_ge_nominated_pods(pod, batch):
        added, state_with, node_with = fw._add_ge_nominated_pods(pod, state, batch[i])
        if not added:
            continue
        for name, per_node in verdicts.items():
            if per_node[i] is None:
                per_node[i] = fw.run_filter_plugins_vectorized(state_with, pod, [node_with], only=[name]).status(0)


def _filter_through_extenders(e: Explanation, pod: Pod, feasible: Any, extenders: Any) -> Any:
    """Upstream ``findNodesThatPassExtenders`` for :func:`explain`: the nodes an extender removes
    get its verdict (``extender <name>``); an error from a non-ignorable extender is ``e.error``
    (None is returned)."""
    for ext in extenders:
        if len(feasible) == 0:
            break
        if not ext.is_interested(pod) or not getattr(ext, "filter_verb", ""):
            continue
        key = f"extender {ext.name()}"
        try:
            kept, failed, failed_unresolvable = ext.filter(pod, feasible)
        except Exception as exc:  # noqa: BLE001 - transport errors, timeouts, garbage answers
            if ext.is_ignorable():
                continue
            e.error = Status(Code.ERROR, str(exc))
            return None
        kept_names = set(kept.names)
        for name in feasible.names:
            if name in kept_names:
                e.filter[name][key] = None
            elif name in failed_unresolvable:
                e.filter[name][key] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, failed_unresolvable[name])
            else:
                e.filter[name][key] = Status(Code.UNSCHEDULABLE, failed.get(name) or f"removed by {key}")
        feasible = kept
    return feasible


def _prioritize_with_extenders(e: Explanation, pod: Pod, feasible: Any, extenders: Any, totals: list) -> None:
    """Add each prioritizing extender's weighted scores to ``totals`` (in place), as upstream's
    ``prioritizeNodes`` does; an extender that fails is skipped, as upstream skips it."""
    position = {name: i for i, name in enumerate(feasible.names)}
    for ext in extenders:
        if not getattr(ext, "prioritize_verb", "") or not ext.is_interested(pod):
            continue
        try:
            scores, weight = ext.prioritize(pod, feasible)
            detail = {name: ScoreDetail(int(score), int(score),
                                        weighted_extender_score(ext.name(), name, score, weight))
                      for name, score in scores.items() if name in position}
        except Exception:  # noqa: BLE001 - upstream ignores prioritize errors, this extender's scores too
            continue
        for name, score in detail.items():
            totals[position[name]] += score.weighted
        e.scores[f"extender {ext.name()}"] = detail
