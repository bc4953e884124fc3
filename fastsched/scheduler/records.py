"""Decision records: what each scheduling attempt of a pod saw and decided, per extension point.

``Scheduler(record="all")`` keeps one :class:`AttemptRecord` per attempt of every pod;
``record="failures"`` keeps the attempts of pods that failed at least once (from their first
failure on, so a pod that made it on a retry shows every attempt); ``record=None`` (the default)
keeps nothing and costs one attribute test per attempt. ``PodResult.history`` lists a pod's
records, oldest first.

An attempt records, as upstream's kube-scheduler-simulator does:

* ``time`` (scheduler clock at the start of the attempt), ``attempt`` (the queue's count),
  ``profile``;
* PreFilter: each plugin's status and the nodes its PreFilterResult narrowed to;
* Filter: for every node examined, in the order it was examined, the final code, the plugin that
  rejected it and the reasons. The plugins run in profile order and stop at the first rejection,
  as upstream's ``RunFilterPlugins``, so the plugins before the rejecting one passed the node and
  the ones after it did not run (:meth:`AttemptRecord.filter_verdicts` spells that out per node);
  ``nodes_total`` and ``nodes_not_examined`` say how many nodes the cycle never looked at
  (upstream stops after ``numFeasibleNodesToFind`` feasible nodes) or PreFilter ruled out;
* the nominated node tried first (a pod nominated by an earlier preemption) and its verdict;
* opportunistic batching's hint (``batch_hint``) and whether it passed the filters (``batch_hinted``),
  the pod's signature digest (``batch_signature``) and the batch flushes of the cycle (``batch_flush``);
* extenders' filter (kept, failed, failed-and-unresolvable nodes) and prioritize (scores, weight);
* PreScore: each plugin's status;
* Score: raw, normalized and weighted scores per plugin for the scored nodes and their totals
  (extenders' weighted scores included);
* the selected node; Reserve, Permit (with wait timeouts), the Permit wait's outcome, PreBind and
  Bind: each plugin's status, in call order, up to the one that failed;
* PostFilter: each plugin's status, the nominated node and the preemption victims;
* the outcome: ``Scheduled``, ``Unschedulable`` or ``Error``, and the message.

Memory: the per-node parts are NumPy arrays, never a dict per node. For ``E`` nodes examined and
``S`` nodes scored by ``P`` Score plugins an attempt holds ``15 E`` bytes for Filter (an 8-byte
reference to the node's name, already interned in the node table, a 1-byte code, a 2-byte plugin
id, a 4-byte reason id) and ``8 S (2 P + 2)`` bytes for Score (int64 raw and normalized scores per
plugin, the names' references and the totals; weighted scores are derived on export), plus about
2 KB of fixed overhead (the per-plugin statuses and the distinct reason tuples), plus ``8 P``
for the weights. The default profile on 1,000 nodes filters a plain pod on 420 nodes and scores
them with 4 plugins (PreScore skips three): 39,932 bytes, as :meth:`AttemptRecord.nbytes` reports.
``Scheduler.record_top_scores`` keeps only the best-scored nodes of a kept record and
``Scheduler.record_max_attempts`` a pod's first and latest attempts, to bound long runs.

Recording a pod takes the plugin-call path instead of the fused compiled cycle (which does not run
the plugins one by one): the placement is the same (``tests/scheduler/test_compiled_cycle.py``),
only slower for those pods.

Exports: :meth:`AttemptRecord.as_dict` (plain JSON) and :func:`kss_annotations` — the annotation
keys and JSON shapes of kube-scheduler-simulator (``kube-scheduler-simulator.sigs.k8s.io/filter-result``,
...), with its ``kube-scheduler-simulator.sigs.k8s.io/result-history`` list of every attempt;
``legacy_keys=True`` writes the ``scheduler-simulator/`` keys of KSS before v0.4.0.
"""
from __future__ import annotations

import json
from typing import Any, Iterable

import numpy as np

from ..framework.status import Code, Status
from ..runtime.waiting_pods import format_go_duration

__all__ = ["AttemptRecord", "RECORD_MODES", "kss_annotations", "kss_attempt_annotations", "kss_keys",
           "kss_result_history_key", "KSS_KEYS", "KSS_LEGACY_KEYS", "KSS_RESULT_HISTORY_KEY",
           "KSS_LEGACY_RESULT_HISTORY_KEY", "KSS_PREFIX", "KSS_LEGACY_PREFIX", "record_mode"]

#: accepted values of ``Scheduler(record=...)``: None/False/"off" keep nothing
RECORD_MODES = ("all", "failures")

# kube-scheduler-simulator's annotation keys (simulator/scheduler/plugin/annotation, the extender's
# annotation package and storereflector's result history). Since KSS v0.4.0 (#387, November 2024)
# every key is under kube-scheduler-simulator.sigs.k8s.io/; earlier versions wrote (and read) every
# one under scheduler-simulator/.
KSS_PREFIX = "kube-scheduler-simulator.sigs.k8s.io/"
KSS_LEGACY_PREFIX = "scheduler-simulator/"
_KSS_KEY_NAMES = {
    "prefilter_status": "prefilter-result-status",
    "prefilter_result": "prefilter-result",
    "filter": "filter-result",
    "postfilter": "postfilter-result",
    "prescore": "prescore-result",
    "score": "score-result",
    "finalscore": "finalscore-result",
    "reserve": "reserve-result",
    "permit": "permit-result",
    "permit_timeout": "permit-result-timeout",
    "prebind": "prebind-result",
    "bind": "bind-result",
    "selected_node": "selected-node",
    "extender_filter": "extender-filter-result",
    "extender_prioritize": "extender-prioritize-result",
    "extender_preempt": "extender-preempt-result",
    "extender_bind": "extender-bind-result",
}


def kss_keys(legacy_keys: bool = False) -> dict[str, str]:
    """The annotation keys by result (``"filter"`` -> ``kube-scheduler-simulator.sigs.k8s.io/filter-result``);
    with ``legacy_keys``, as KSS before v0.4.0 wrote them (``scheduler-simulator/filter-result``)."""
    prefix = KSS_LEGACY_PREFIX if legacy_keys else KSS_PREFIX
    return {name: prefix + key for name, key in _KSS_KEY_NAMES.items()}


def kss_result_history_key(legacy_keys: bool = False) -> str:
    """The key of the list of every attempt's annotations (storereflector's ``result-history``)."""
    return (KSS_LEGACY_PREFIX if legacy_keys else KSS_PREFIX) + "result-history"


KSS_KEYS = kss_keys()
KSS_LEGACY_KEYS = kss_keys(legacy_keys=True)
KSS_RESULT_HISTORY_KEY = kss_result_history_key()
KSS_LEGACY_RESULT_HISTORY_KEY = kss_result_history_key(legacy_keys=True)
KSS_PASSED = "passed"
KSS_SUCCESS = "success"
KSS_WAIT = "wait"
KSS_PREEMPTION_VICTIM = "preemption victim"

_NO_NAMES = np.empty(0, dtype=object)


def record_mode(value: Any) -> str | None:
    """The normalized ``record=`` option: "all", "failures" or None (off); anything else is an error."""
    if value is None or value is False or value == "off":
        return None
    if value is True:
        return "all"
    if value in RECORD_MODES:
        return value
    raise ValueError(f"record must be one of 'all', 'failures' or None (off), got {value!r}")


def _status_text(s: Status | None) -> str:
    """KSS's text for a plugin status: "success" for Success, "wait" for Wait, else its message."""
    if s is None or s.code() == Code.SUCCESS:
        return KSS_SUCCESS
    if s.code() == Code.WAIT:
        return KSS_WAIT
    return s.message()  # KSS writes status.Message(): "" for a Skip


def _status_dict(s: Status | None) -> dict | None:
    if s is None:
        return None
    return {"code": str(s.code()), "reasons": list(s.reasons()), "plugin": s.plugin()}


class AttemptRecord:
    """One scheduling attempt of one pod (see the module docstring for every field)."""

    __slots__ = (
        "pod_key", "pod_uid", "attempt", "time", "profile",
        "pre_filter", "pre_filter_nodes",
        "nominated_node", "nominated_node_status", "batch_hint", "batch_hinted", "batch_signature", "batch_flush",
        "nodes_total", "filter_plugins", "filter_node_names", "filter_codes", "filter_plugin_ids",
        "filter_reason_ids", "filter_reasons", "filter_skipped",
        "extender_filter", "extender_prioritize",
        "pre_score", "score_plugins", "score_weights", "score_node_names", "raw_scores",
        "normalized_scores", "total_scores",
        "selected_node", "reserve", "permit", "permit_timeouts", "permit_wait", "pre_bind", "bind",
        "post_filter", "nominated_node_name", "victims",
        "outcome", "message", "scored_nodes_total",
    )

    def __init__(self, pod_key: str, pod_uid: str, attempt: int, time: float, profile: str):
        self.pod_key = pod_key
        self.pod_uid = pod_uid
        self.attempt = attempt
        self.time = time
        self.profile = profile
        #: PreFilter: plugin -> its Status (None = Success), in call order
        self.pre_filter: dict[str, Status | None] = {}
        #: PreFilter: plugin -> the node names its PreFilterResult allows (sorted); absent = all nodes
        self.pre_filter_nodes: dict[str, list[str]] = {}
        self.nominated_node = ""
        self.nominated_node_status: Status | None = None
        #: opportunistic batching: the node hinted from the previous cycle ("" = none), and whether
        #: it passed the filters (then it is the only node examined and the choice)
        self.batch_hint = ""
        self.batch_hinted = False
        #: the pod's signature as a digest ("" unsigned) and the batch flushes of the cycle (sorted)
        self.batch_signature = ""
        self.batch_flush: list[str] = []
        self.nodes_total = 0
        #: Filter: plugin names in profile order (the ids of filter_plugin_ids index this list)
        self.filter_plugins: list[str] = []
        #: the nodes examined, in the order Filter saw them
        self.filter_node_names: np.ndarray = _NO_NAMES
        #: per examined node: int8 Code (0 = passed every plugin)
        self.filter_codes = np.zeros(0, dtype=np.int8)
        #: per examined node: int16 index into filter_plugins of the rejecting plugin (-1 = none)
        self.filter_plugin_ids = np.zeros(0, dtype=np.int16)
        #: per examined node: int32 index into filter_reasons (-1 = none)
        self.filter_reason_ids = np.zeros(0, dtype=np.int32)
        self.filter_reasons: list[tuple[str, ...]] = []
        #: Filter plugins PreFilter skipped (they ran on no node)
        self.filter_skipped: frozenset[str] = frozenset()
        #: per filtering extender: {"name", "kept": [...], "failed": {...}, "failed_unresolvable": {...}, "error"}
        self.extender_filter: list[dict] = []
        #: per prioritizing extender: {"name", "weight", "scores": {node: score}, "error"}
        self.extender_prioritize: list[dict] = []
        self.pre_score: dict[str, Status | None] = {}
        self.score_plugins: list[str] = []
        self.score_weights = np.zeros(0, dtype=np.int64)
        self.score_node_names: np.ndarray = _NO_NAMES
        #: (P, S) int64: Score's raw output per plugin and scored node
        self.raw_scores = np.zeros((0, 0), dtype=np.int64)
        #: (P, S) int64: after NormalizeScore (before the weight)
        self.normalized_scores = np.zeros((0, 0), dtype=np.int64)
        #: (S,) int64: the totals selectHost compared (weighted plugin scores + extenders')
        self.total_scores = np.zeros(0, dtype=np.int64)
        self.selected_node = ""
        self.reserve: dict[str, Status | None] = {}
        self.permit: dict[str, Status | None] = {}
        #: Permit plugins that asked to wait: plugin -> timeout seconds
        self.permit_timeouts: dict[str, float] = {}
        #: how a Permit wait ended ("allowed", or the rejection / timeout message); "" = no wait
        self.permit_wait = ""
        self.pre_bind: dict[str, Status | None] = {}
        #: Bind plugins and extenders (an extender binder as "extender:<name>")
        self.bind: dict[str, Status | None] = {}
        self.post_filter: dict[str, Status | None] = {}
        #: the node PostFilter nominated ("" = none)
        self.nominated_node_name = ""
        #: preemption victims: (namespace/name, node)
        self.victims: list[tuple[str, str]] = []
        #: Scheduled, Unschedulable or Error; "" while the attempt is in flight
        self.outcome = ""
        self.message = ""
        #: nodes scored, when trim_scores kept only the best ones (None: all are kept)
        self.scored_nodes_total: int | None = None

    # -- recording (called by the scheduler) ------------------------------------------------------
    def plugin_status(self, point: str, plugin: str, status: Status | None, timeout: float | None = None) -> None:
        """One plugin's status at a per-node-free extension point (Reserve, Permit, PreBind, Bind, PostFilter)."""
        getattr(self, _POINT_FIELDS[point])[plugin] = status
        if timeout is not None:
            self.permit_timeouts[plugin] = float(timeout)

    def record_pre_filter(self, per_plugin: dict) -> None:
        for name, (result, status) in per_plugin.items():
            self.pre_filter[name] = status
            if result is not None and getattr(result, "node_names", None) is not None:
                self.pre_filter_nodes[name] = sorted(result.node_names)

    def record_filter(self, results: Any, examined: Any, count: int, skipped: Iterable[str]) -> None:
        """The verdicts of the first ``count`` nodes of ``examined`` (a NodeBatch) from ``results``
        (FilterResults over ``examined``)."""
        names = examined.table.node_names[examined.rows[:count]] if hasattr(examined, "rows") else \
            np.array([ni.node().name for ni in list(examined)[:count]], dtype=object)
        self._append_filter(list(results.plugin_names), names, results.codes[:count],
                            results.plugin_ids[:count], results.reason_ids[:count], results.reasons)
        self.filter_skipped = frozenset(skipped)

    def record_filter_all_pass(self, examined: Any, count: int, plugins: list[str], skipped: Iterable[str]) -> None:
        """``count`` nodes of ``examined`` passed (a profile with no Filter plugin, or all passed)."""
        names = examined.table.node_names[examined.rows[:count]]
        self._append_filter(plugins, names, np.zeros(count, dtype=np.int8), np.full(count, -1, dtype=np.int16),
                            np.full(count, -1, dtype=np.int32), [])
        self.filter_skipped = frozenset(skipped)

    def _append_filter(self, plugins, names, codes, plugin_ids, reason_ids, reasons) -> None:
        if not len(self.filter_codes):
            self.filter_plugins = plugins
            self.filter_node_names = np.asarray(names, dtype=object)
            self.filter_codes = np.array(codes, dtype=np.int8)
            self.filter_plugin_ids = np.array(plugin_ids, dtype=np.int16)
            self.filter_reason_ids = np.array(reason_ids, dtype=np.int32)
            self.filter_reasons = list(reasons)
            return
        # a second part (the nominated node was tried first): remap its plugin and reason ids
        remap = []
        for name in plugins:
            if name not in self.filter_plugins:
                self.filter_plugins.append(name)
            remap.append(self.filter_plugins.index(name))
        pid_map = np.array(remap + [-1], dtype=np.int16)
        offset = len(self.filter_reasons)
        self.filter_node_names = np.concatenate([self.filter_node_names, np.asarray(names, dtype=object)])
        self.filter_codes = np.concatenate([self.filter_codes, codes])
        self.filter_plugin_ids = np.concatenate([self.filter_plugin_ids, pid_map[np.asarray(plugin_ids)]])
        rids = np.asarray(reason_ids, dtype=np.int32)
        self.filter_reason_ids = np.concatenate([self.filter_reason_ids, np.where(rids >= 0, rids + offset, -1)])
        self.filter_reasons.extend(reasons)

    def record_scores(self, matrix: Any, weights: dict[str, int]) -> None:
        self.score_plugins = list(matrix.plugin_names)
        self.score_weights = np.array([weights.get(n, 1) for n in self.score_plugins], dtype=np.int64)
        nodes = matrix.nodes
        self.score_node_names = (nodes.table.node_names[nodes.rows] if hasattr(nodes, "rows")
                                 else np.array(matrix.node_names, dtype=object))
        self.raw_scores = np.array(matrix.raw, dtype=np.int64)
        self.normalized_scores = np.array(matrix.normalized, dtype=np.int64)

    def record_extender_filter(self, name: str, kept: Any, failed: dict, unresolvable: dict, error: str = "") -> None:
        kept_names = list(kept.names) if kept is not None and hasattr(kept, "names") else \
            [ni.node().name for ni in kept] if kept is not None else []
        self.extender_filter.append({"name": name, "kept": kept_names, "failed": dict(failed),
                                     "failed_unresolvable": dict(unresolvable), "error": error})

    def record_extender_prioritize(self, name: str, scores: dict, weight: int, error: str = "") -> None:
        self.extender_prioritize.append({"name": name, "weight": int(weight),
                                         "scores": {k: int(v) for k, v in scores.items()}, "error": error})

    def finish(self, outcome: str, message: str) -> None:
        self.outcome, self.message = outcome, message

    def trim_scores(self, top: int) -> None:
        """Keep the score columns of the ``top`` best totals only (and the selected node's): bounds
        a kept record's memory; ``nodes_scored`` still says how many nodes were scored."""
        n = len(self.score_node_names)
        if n <= top or not len(self.total_scores):
            return
        order = np.argsort(-self.total_scores, kind="stable")[:top]
        if self.selected_node:
            chosen = np.flatnonzero(self.score_node_names == self.selected_node)
            if chosen.size and chosen[0] not in order:
                order = np.concatenate([order[:top - 1], chosen[:1]])
        order = np.sort(order)
        self.scored_nodes_total = n
        self.score_node_names = self.score_node_names[order]
        self.raw_scores = self.raw_scores[:, order]
        self.normalized_scores = self.normalized_scores[:, order]
        self.total_scores = self.total_scores[order]

    # -- reading ---------------------------------------------------------------------------------
    @property
    def nodes_examined(self) -> int:
        return len(self.filter_codes)

    @property
    def nodes_scored(self) -> int:
        return self.scored_nodes_total if self.scored_nodes_total is not None else len(self.score_node_names)

    @property
    def nodes_not_examined(self) -> int:
        """Nodes of the cluster whose Filter verdict this attempt never computed."""
        return max(self.nodes_total - self.nodes_examined, 0)

    @property
    def weighted_scores(self) -> np.ndarray:
        """(P, S) int64: normalized score x the plugin's weight."""
        return self.normalized_scores * self.score_weights[:, None] if self.score_plugins else self.normalized_scores

    def nbytes(self) -> int:
        """Bytes held by the per-node arrays of this record (the node names are shared references)."""
        arrays = (self.filter_node_names, self.filter_codes, self.filter_plugin_ids, self.filter_reason_ids,
                  self.score_node_names, self.raw_scores, self.normalized_scores, self.total_scores,
                  self.score_weights)
        return int(sum(a.nbytes for a in arrays))

    def rejected_by(self) -> dict[str, dict[str, str]]:
        """Filter plugin -> {node: reason} of the nodes it rejected (extenders as ``extender:<name>``)."""
        out: dict[str, dict[str, str]] = {}
        failed = np.flatnonzero(self.filter_codes != 0)
        for i in failed.tolist():
            pid = int(self.filter_plugin_ids[i])
            plugin = self.filter_plugins[pid] if pid >= 0 else ""
            out.setdefault(plugin, {})[self.filter_node_names[i]] = self._reason(i)
        for ext in self.extender_filter:
            merged = {**ext["failed"], **ext["failed_unresolvable"]}
            if merged:
                out.setdefault(f"extender:{ext['name']}", {}).update(merged)
        return out

    def _reason(self, i: int) -> str:
        rid = int(self.filter_reason_ids[i])
        return ", ".join(self.filter_reasons[rid]) if rid >= 0 else str(Code(int(self.filter_codes[i])))

    def filter_verdicts(self) -> dict[str, dict[str, str]]:
        """Node -> plugin -> "passed" or the rejection reason, for the plugins that ran on it (KSS's shape)."""
        out: dict[str, dict[str, str]] = {}
        active = [p for p in self.filter_plugins if p not in self.filter_skipped]
        order = {p: k for k, p in enumerate(active)}
        for i, name in enumerate(self.filter_node_names.tolist()):
            pid = int(self.filter_plugin_ids[i])
            verdicts: dict[str, str] = {}
            if pid < 0:
                for p in active:
                    verdicts[p] = KSS_PASSED
            else:
                rejecting = self.filter_plugins[pid]
                stop = order.get(rejecting, len(active))
                for p in active[:stop]:
                    verdicts[p] = KSS_PASSED
                verdicts[rejecting] = self._reason(i)
            out[name] = verdicts
        for ext in self.extender_filter:
            for node, msg in {**ext["failed"], **ext["failed_unresolvable"]}.items():
                out.setdefault(node, {})[f"extender:{ext['name']}"] = msg
        return out

    def feasible_nodes(self) -> list[str]:
        """Nodes that passed Filter and every filtering extender."""
        names = self.filter_node_names[self.filter_codes == 0].tolist()
        for ext in self.extender_filter:
            if ext["error"]:
                continue
            gone = set(ext["failed"]) | set(ext["failed_unresolvable"])
            names = [n for n in names if n not in gone]
        return names

    def score_table(self, top: int | None = None) -> list[dict]:
        """The scored nodes by total, highest first: {"node", "total", "plugins": {name: {raw, normalized, weighted}}}."""
        if not len(self.score_node_names):
            return []
        order = np.argsort(-self.total_scores, kind="stable") if len(self.total_scores) else \
            np.arange(len(self.score_node_names))
        if top is not None:
            order = order[:top]
        weighted = self.weighted_scores
        rows = []
        for i in order.tolist():
            plugins = {p: {"raw": int(self.raw_scores[j, i]), "normalized": int(self.normalized_scores[j, i]),
                           "weighted": int(weighted[j, i])} for j, p in enumerate(self.score_plugins)}
            rows.append({"node": self.score_node_names[i],
                         "total": int(self.total_scores[i]) if len(self.total_scores) else None,
                         "plugins": plugins})
        return rows

    def as_dict(self, *, max_nodes: int | None = None) -> dict:
        """The record as plain JSON values. ``max_nodes`` bounds the per-node lists (the rejected
        nodes first) for reports of large clusters; None keeps all."""
        def statuses(d: dict) -> dict:
            return {k: _status_dict(v) for k, v in d.items()}

        rejected = np.flatnonzero(self.filter_codes != 0)
        passed = np.flatnonzero(self.filter_codes == 0)
        shown = np.concatenate([rejected, passed])
        if max_nodes is not None:
            shown = shown[:max_nodes]
        filter_nodes = []
        for i in np.sort(shown).tolist():
            pid = int(self.filter_plugin_ids[i])
            filter_nodes.append({"node": self.filter_node_names[i],
                                 "code": str(Code(int(self.filter_codes[i]))),
                                 "plugin": self.filter_plugins[pid] if pid >= 0 else None,
                                 "reason": self._reason(i) if pid >= 0 or self.filter_codes[i] else None})
        scores = self.score_table(top=max_nodes)
        return {
            "pod": self.pod_key, "uid": self.pod_uid, "attempt": self.attempt, "time": self.time,
            "profile": self.profile,
            "pre_filter": statuses(self.pre_filter), "pre_filter_nodes": dict(self.pre_filter_nodes),
            "nominated_node": self.nominated_node or None,
            "nominated_node_status": _status_dict(self.nominated_node_status),
            "batch_hint": self.batch_hint or None, "batch_hinted": self.batch_hinted,
            "batch_signature": self.batch_signature or None, "batch_flush": list(self.batch_flush),
            "nodes_total": self.nodes_total, "nodes_examined": self.nodes_examined,
            "nodes_not_examined": self.nodes_not_examined,
            "filter_plugins": [p for p in self.filter_plugins if p not in self.filter_skipped],
            "filter_skipped": sorted(self.filter_skipped),
            "filter": filter_nodes, "filter_nodes_shown": len(filter_nodes),
            "rejected_by": {p: len(nodes) for p, nodes in self.rejected_by().items()},
            "extender_filter": self.extender_filter, "extender_prioritize": self.extender_prioritize,
            "pre_score": statuses(self.pre_score),
            "score_plugins": self.score_plugins,
            "score_weights": dict(zip(self.score_plugins, self.score_weights.tolist())),
            "scores": scores, "nodes_scored": self.nodes_scored,
            "selected_node": self.selected_node or None,
            "reserve": statuses(self.reserve), "permit": statuses(self.permit),
            "permit_timeouts": dict(self.permit_timeouts), "permit_wait": self.permit_wait or None,
            "pre_bind": statuses(self.pre_bind), "bind": statuses(self.bind),
            "post_filter": statuses(self.post_filter), "nominated_node_name": self.nominated_node_name or None,
            "victims": [{"pod": k, "node": n} for k, n in self.victims],
            "outcome": self.outcome, "message": self.message,
        }

    def __repr__(self) -> str:
        return (f"AttemptRecord({self.pod_key} #{self.attempt} at {self.time:g}: {self.outcome or 'in flight'}"
                f"{' on ' + self.selected_node if self.selected_node else ''})")

    def _repr_html_(self) -> str:
        from .display import NOTEBOOK_STYLE, record_html

        return NOTEBOOK_STYLE + record_html(self)


_POINT_FIELDS = {"Reserve": "reserve", "Permit": "permit", "PreBind": "pre_bind", "Bind": "bind",
                 "PostFilter": "post_filter"}


# ------------------------------------------------------------------------------------------------
# kube-scheduler-simulator export
# ------------------------------------------------------------------------------------------------
def kss_attempt_annotations(rec: AttemptRecord, *, legacy_keys: bool = False) -> dict[str, str]:
    """One attempt as kube-scheduler-simulator writes it on the pod: annotation key -> JSON text.
    Keys are under ``kube-scheduler-simulator.sigs.k8s.io/`` (KSS v0.4.0 and later);
    ``legacy_keys=True`` writes them under ``scheduler-simulator/``, for older KSS versions."""
    keys = KSS_LEGACY_KEYS if legacy_keys else KSS_KEYS

    def dump(value: Any) -> str:
        return json.dumps(value, separators=(",", ":"), sort_keys=True)

    filter_result = {node: {p: v for p, v in verdicts.items() if not p.startswith("extender:")}
                     for node, verdicts in rec.filter_verdicts().items()}
    filter_result = {k: v for k, v in filter_result.items() if v}
    post_filter: dict[str, dict[str, str]] = {}
    if rec.post_filter:
        # KSS lists every node that was filtered, and marks the nominated one per PostFilter plugin
        for node in rec.filter_node_names.tolist():
            post_filter[node] = {}
        if rec.nominated_node_name:
            for plugin, status in rec.post_filter.items():
                if status is None or status.code() == Code.SUCCESS:
                    post_filter.setdefault(rec.nominated_node_name, {})[plugin] = KSS_PREEMPTION_VICTIM
    score: dict[str, dict[str, str]] = {}
    final: dict[str, dict[str, str]] = {}
    weighted = rec.weighted_scores
    for i, node in enumerate(rec.score_node_names.tolist()):
        score[node] = {p: str(int(rec.raw_scores[j, i])) for j, p in enumerate(rec.score_plugins)}
        final[node] = {p: str(int(weighted[j, i])) for j, p in enumerate(rec.score_plugins)}
    extender_filter = {}
    for ext in rec.extender_filter:
        extender_filter[ext["name"]] = {"Nodes": None, "NodeNames": ext["kept"], "FailedNodes": ext["failed"],
                                        "FailedAndUnresolvableNodes": ext["failed_unresolvable"] or None,
                                        "Error": ext["error"]}
    extender_prioritize = {ext["name"]: [{"Host": h, "Score": s} for h, s in ext["scores"].items()]
                           for ext in rec.extender_prioritize}
    extender_bind = {name[len("extender:"):]: {"Error": "" if st is None else st.message()}
                     for name, st in rec.bind.items() if name.startswith("extender:")}
    plugin_bind = {k: _status_text(v) for k, v in rec.bind.items() if not k.startswith("extender:")}
    return {
        keys["prefilter_status"]: dump({k: _status_text(v) for k, v in rec.pre_filter.items()}),
        keys["prefilter_result"]: dump(rec.pre_filter_nodes),
        keys["filter"]: dump(filter_result),
        keys["postfilter"]: dump(post_filter),
        keys["prescore"]: dump({k: _status_text(v) for k, v in rec.pre_score.items()}),
        keys["score"]: dump(score),
        keys["finalscore"]: dump(final),
        keys["reserve"]: dump({k: _status_text(v) for k, v in rec.reserve.items()}),
        keys["permit"]: dump({k: _status_text(v) for k, v in rec.permit.items()}),
        keys["permit_timeout"]: dump({k: format_go_duration(rec.permit_timeouts.get(k, 0.0)) for k in rec.permit}),
        keys["prebind"]: dump({k: _status_text(v) for k, v in rec.pre_bind.items()}),
        keys["bind"]: dump(plugin_bind),
        keys["selected_node"]: rec.selected_node,
        keys["extender_filter"]: dump(extender_filter),
        keys["extender_prioritize"]: dump(extender_prioritize),
        keys["extender_preempt"]: dump({}),
        keys["extender_bind"]: dump(extender_bind),
    }


def kss_annotations(history: Iterable[AttemptRecord], *, legacy_keys: bool = False) -> dict[str, str]:
    """A pod's records as kube-scheduler-simulator's annotations: the last attempt's keys, and
    ``kube-scheduler-simulator.sigs.k8s.io/result-history`` holding every attempt's (oldest first).

    Every key is under ``kube-scheduler-simulator.sigs.k8s.io/``, where KSS v0.4.0 and later read
    them; ``legacy_keys=True`` writes every key under ``scheduler-simulator/`` instead, as KSS
    versions before v0.4.0 read them."""
    attempts = [kss_attempt_annotations(r, legacy_keys=legacy_keys) for r in history]
    if not attempts:
        return {}
    out = dict(attempts[-1])
    out[kss_result_history_key(legacy_keys)] = json.dumps(attempts, separators=(",", ":"))
    return out
