"""The differential oracle: upstream kube-scheduler (``oracle/``, Go) against fastsched, pod by pod.

A *scenario* is one JSON object: ``config`` (a v1 KubeSchedulerConfiguration), ``nodes``, bound
``pods``, other API ``objects`` (namespaces, PriorityClasses, PDBs, PVs, PVCs, StorageClasses,
CSINodes, Services, ...) and the ``incoming`` pods to schedule, in order. Both sides schedule the
incoming pods one at a time on the same cluster: each pod gets one attempt; a pod that fits is bound
where fastsched put it (the oracle takes fastsched's node when it is among its own best-scored nodes:
the ``replay``; and the node fastsched's preemption nominated when it ties with others on all of
pickOneNodeForPreemption's criteria: ``replay_nominated``), a pod that fails is dropped (no retries), and a pod whose preemption nominated a
node stays pending there, nominated (its victims are gone; later pods see the nomination, as
RunFilterPluginsWithNominatedPods does), and is not retried. A pod PreEnqueue holds (scheduling
gates, a ResourceClaim not there) gets no cycle: both sides report the plugin holding it and its
message (``gated``) and keep it; a later incoming entry of the same pod is its update (its gates
removed, say), after which PreEnqueue runs again as the queue would run it.

Per attempt, :func:`compare` checks field by field (see :data:`FIELDS`): the PreFilter verdict and
its node restriction, every rejected node's Filter status (code, reasons, plugin), the feasible
nodes, the Score plugins PreScore skipped, each Score plugin's raw, normalized and weighted score on
every feasible node, the totals, the set of nodes tied for the best total, the FitError message
(PostFilter's message included), PostFilter's nominated node and victims, the PVCs bound and the
ResourceClaim devices allocated at PreBind; an Error ends the comparison of that attempt with the
error text, which may be any node's (upstream filters in parallel). Opportunistic batching's signature
classes (protocol 3: pods share a signature on one side exactly when they do on the other), the
flushes of a signed pod's cycle, then the hint and whether it fitted (:data:`BATCH_FIELDS`) are
compared first; when both sides placed the pod on
its hint, upstream's cycle ended there, so only :data:`HINTED_FIELDS` are (the oracle retells the
full cycle for the record, fastsched does not run it). ``differential(batching=True)`` runs each
scenario's :func:`batching_variant`, whose profiles sign pods. Not compared: the scheduling
queue (order, backoff, requeueing hints: every pod gets exactly one attempt here),
percentageOfNodesToScore sampling and the start-index rotation (scenarios have < 100 nodes, so
every node is examined; except class ``sampling``, whose scenarios carry ``"sampling": true``:
100-600 nodes, the oracle retells the sampled search over the node tree's order from the start
index it keeps, a later entry of a pod waiting nominated is its retry, nominated node first, and
:data:`SAMPLING_FIELDS` are compared too), binding and the API server's timing, wall-clock timeouts, extenders.
fastsched's fast paths (the compiled cycle and binding path; recording takes the plugin calls) are
compared with the recorded run instead, with ``fast_paths`` (:func:`check_fast_paths`,
:mod:`fastsched.testing.oracle_fast`). :data:`KNOWN` lists the differences
understood and not fixed, and how the comparison sets them aside (``known=False`` does not).

Where upstream is random, the scenarios avoid depending on it: PVs of distinct sizes (equal
candidates come from an unordered index), pods started at distinct times (preemption's last tie;
except class ``preemption-ties``, whose ties are deterministic upstream too: ``sort.Slice`` and the
replayed nomination), one DRA pool per request and node (pools come in Go map order).

``fastsched differential`` (fastsched/cli/differential.py) runs :func:`differential`;
``tests/oracle`` replays a recorded set of the oracle's answers without Go. The scenario
generators (:func:`generate`, :data:`CLASSES`) are in :mod:`fastsched.testing.oracle_scenarios`.
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from ..framework.status import Code
# CLASSES and generate are re-exported (__all__): fastsched.testing.oracle is where users find them
from .oracle_scenarios import CLASSES, ZONES, _clean, _Gen, generate

__all__ = ["CLASSES", "FIELDS", "KNOWN", "NO_CHECKOUT", "Oracle", "OracleVersionError", "RECORDED_DIR", "build_oracle", "check", "compare",
           "differential", "generate", "oracle_binary", "oracle_version", "pinned_version", "read_recorded",
           "run_fastsched", "shrink", "version_skew", "write_recorded", "check_fast_paths", "run_fast"]

ORACLE_DIR = Path(__file__).resolve().parents[2] / "oracle"
#: the recorded set (in a checkout of the repository): ``<class>.jsonl.gz`` per class
RECORDED_DIR = Path(__file__).resolve().parents[2] / "tests" / "oracle" / "recorded"
#: when every scenario runs (both sides): the start time of the pods bound during it, after the
#: generated running pods' start times (preemption orders victims by start time)
NOW = "2026-06-01T00:00:00Z"
NOW_EPOCH = 1780272000.0
#: the incoming pods' start times step by a millisecond (well inside the queue's 1 s backoff)
START_STEP = 0.001
#: the attempt fields compared, in this order (the first that differs is the difference reported)
FIELDS = ("gated", "error", "prefilter", "prefilter_nodes", "filter", "feasible", "prescore_skipped", "scores",
          "total", "best", "fit_error", "nominated_node", "victims", "volume_bindings", "claim_allocations",
          "node_allocatable")

#: a ``sampling`` scenario's fields (class ``sampling``: the oracle retells percentageOfNodesToScore's
#: sampled search): the nodes the cycle judged (ScheduleResult.EvaluatedNodes, len(feasible) +
#: NodeToStatus.Len(); 0 when PreFilter rejected) and the scheduler's nextStartNodeIndex after it.
#: fastsched reports them on such scenarios only; they are compared when it does (absent = 0: the
#: recorded answers drop zeros)
SAMPLING_FIELDS = ("evaluated_nodes", "next_start")

#: opportunistic batching's fields (protocol 2), compared before the others: the node hinted from
#: the previous cycle ("" = none) and whether it passed the filters
BATCH_FIELDS = ("batch_hint", "batch_hinted")
#: the fields compared when both sides placed the pod on a hint that fitted
HINTED_FIELDS = ("gated", "error", "prefilter", "prefilter_nodes", "selected", "volume_bindings", "claim_allocations",
                 "node_allocatable")


def _norm_batch(field: str, v: Any) -> Any:
    return bool(v) if field == "batch_hinted" else (v or "")


# ------------------------------------------------------------------------------------------------
# the Go side
# ------------------------------------------------------------------------------------------------
def oracle_binary() -> Path:
    """Where ``build_oracle`` puts the binary (``$FASTSCHED_ORACLE`` overrides)."""
    env = os.environ.get("FASTSCHED_ORACLE")
    return Path(env) if env else ORACLE_DIR / "bin" / "oracle"


def build_oracle(*, quiet: bool = True) -> Path:
    """``go build`` the oracle (downloads k8s.io/kubernetes into the module cache the first time);
    raise RuntimeError when ``go`` is not on PATH or the build fails."""
    if not (ORACLE_DIR / "go.mod").is_file():
        raise RuntimeError(NO_CHECKOUT)
    go = shutil.which("go")
    if go is None:
        raise RuntimeError("the oracle needs Go: `go` is not on PATH")
    out = oracle_binary()
    out.parent.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    flags = env.get("GOFLAGS", "")
    if "-mod=" not in flags:  # go.sum is committed; -mod=mod lets go fill in what it lacks
        env["GOFLAGS"] = (flags + " -mod=mod").strip()
    # Several processes may build at once (pytest-xdist's workers, each module's live-oracle
    # fixture): one at a time, so that none runs a binary another is rewriting; after the first,
    # `go build` finds the binary up to date and leaves it alone.
    with _build_lock(out.parent / ".oracle-build.lock"):
        proc = subprocess.run([go, "build", "-o", str(out), "."], cwd=ORACLE_DIR, env=env,
                              capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"go build of the oracle failed:\n{proc.stderr[-4000:]}")
    return out


@contextlib.contextmanager
def _build_lock(path: Path) -> Iterator[None]:
    """An exclusive advisory lock on ``path`` (``fcntl.flock``) for the block; no lock where
    ``fcntl`` does not exist (Windows)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def sources_newer_than(binary: Path) -> bool:
    """Whether ``oracle/``'s Go sources or module files changed after ``binary`` was built (a pull
    that changed ``main.go`` but not the pinned release: the binary answers the old protocol)."""
    try:
        built = binary.stat().st_mtime
    except OSError:
        return True
    sources = [*ORACLE_DIR.glob("*.go"), ORACLE_DIR / "go.mod", ORACLE_DIR / "go.sum"]
    return any(src.is_file() and src.stat().st_mtime > built for src in sources)


class OracleVersionError(RuntimeError):
    """The oracle binary is not the upstream version ``oracle/go.mod`` pins (a stale build)."""


#: why the oracle cannot be built here: its Go module is part of the repository, not of the package
NO_CHECKOUT = ("the oracle's Go sources (oracle/, beside fastsched/ in a checkout of the fastsched repository) are "
               "not installed with the package: run from a checkout, or give a built oracle (--oracle PATH or "
               "$FASTSCHED_ORACLE)")


def pinned_version() -> str | None:
    """The k8s.io/kubernetes version ``oracle/go.mod`` requires (e.g. ``"v1.37.2"``); None outside a
    checkout of the repository (an installed package has no ``oracle/``)."""
    import re

    go_mod = ORACLE_DIR / "go.mod"
    if not go_mod.is_file():
        return None
    for line in go_mod.read_text().splitlines():
        m = re.match(r"\s*(?:require\s+)?k8s\.io/kubernetes\s+(v\S+)\s*(?://.*)?$", line)
        if m:
            return m.group(1)
    raise RuntimeError(f"{ORACLE_DIR / 'go.mod'} does not require k8s.io/kubernetes")


def oracle_version(binary: str | os.PathLike | None = None) -> dict | None:
    """What ``oracle --version`` answers: ``{"kubernetes": "v1.37.2", "kube_scheduler": ...,
    "protocol": 2, ...}``; None for an oracle older than the flag (protocol 1, the v1.34 one, which
    reads scenarios instead and answers nothing on an empty stdin)."""
    path = Path(binary) if binary is not None else oracle_binary()
    try:
        proc = subprocess.run([str(path), "--version"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in proc.stdout.splitlines():
        try:
            v = json.loads(line)
        except ValueError:
            continue
        if isinstance(v, dict) and "kubernetes" in v:
            return v
    return None


def _minor(version: str) -> str:
    """``"v1.37.2"`` -> ``"v1.37"``."""
    return ".".join(version.split(".")[:2])


def version_skew(version: dict | None) -> str | None:
    """Why the oracle's upstream release is not the one fastsched follows
    (``fastsched.UPSTREAM_VERSION``), or None when they agree."""
    from .. import UPSTREAM_VERSION

    got = (version or {}).get("kubernetes") or "unknown (an oracle without --version)"
    if _minor(got) == UPSTREAM_VERSION:
        return None
    return f"the oracle runs kube-scheduler {got}, fastsched follows {UPSTREAM_VERSION}"


class Oracle:
    """One running oracle process: :meth:`ask` sends a scenario, returns its answer.

    In a checkout, the binary must be the upstream version ``oracle/go.mod`` pins
    (``check_version``; otherwise :class:`OracleVersionError`: rebuild it with :func:`build_oracle`). ``feature_gates``
    (``"Gate=false,..."``; default ``$FASTSCHED_ORACLE_FEATURE_GATES``) are set on top of
    upstream's defaults, e.g. ``OpportunisticBatching=false``."""

    def __init__(self, binary: str | os.PathLike | None = None, *, feature_gates: str | None = None,
                 check_version: bool = True):
        path = Path(binary) if binary is not None else oracle_binary()
        if not path.exists():
            raise FileNotFoundError(f"no oracle binary at {path} (build it with build_oracle())")
        self.version = oracle_version(path)
        want = pinned_version() if check_version else None
        if want is not None:  # (outside a checkout there is no go.mod to be stale against)
            got = (self.version or {}).get("kubernetes")
            if got != want:
                raise OracleVersionError(
                    f"the oracle at {path} runs k8s.io/kubernetes {got or 'unknown (no --version: built before v1.37)'}"
                    f", oracle/go.mod pins {want}: rebuild it (build_oracle(), or `go build -o bin/oracle .` in oracle/)")
        if feature_gates is None:
            feature_gates = os.environ.get("FASTSCHED_ORACLE_FEATURE_GATES", "")
        args = [str(path)] + (["--feature-gates", feature_gates] if feature_gates else [])
        self.feature_gates = feature_gates
        #: the gates fastsched's side runs with when compared with this oracle (:func:`check`)
        self.fastsched_feature_gates: str | None = None
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def ask(self, scenario: dict, replay: list[str], *, bench: bool = False) -> dict:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        line = json.dumps({**_scenario_only(scenario), "replay": replay, "bench": bench}, separators=(",", ":"))
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        out = self.proc.stdout.readline()
        if not out:
            raise RuntimeError(f"the oracle exited (status {self.proc.poll()})")
        return json.loads(out)

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def __enter__(self) -> "Oracle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def informer_order(objects: Any) -> list[dict]:
    """A scenario's objects in the order the oracle's informers deliver them: every object exists
    before the informers start, so each kind arrives as its initial list, sorted by namespace and
    name (client-go's fake object tracker sorts its lists, as the API server lists etcd's keys).
    Kinds keep the order of their first appearance. Order matters where upstream's state depends
    on it: the extended-resource cache leaves a class's implicit name unmapped when another class
    with the same ``extendedResourceName`` and creation time, and a lower name, came first
    (``fastsched.dra.extended_resources``)."""
    groups: dict[str, list[dict]] = {}
    for o in objects or ():
        groups.setdefault(o.get("kind", ""), []).append(o)
    return [o for group in groups.values()
            for o in sorted(group, key=lambda o: ((o.get("metadata") or {}).get("namespace") or "",
                                                  (o.get("metadata") or {}).get("name") or ""))]


def _scenario_only(s: dict) -> dict:
    return {"now": NOW, **{k: s[k] for k in ("id", "config", "nodes", "pods", "objects", "incoming",
                                          "replay_rerun", "replay_nominated", "replay_tas", "placement_order",
                                          "placement_pick", "bind_order", "replay_composite", "sampling", "hints") if k in s}}


# ------------------------------------------------------------------------------------------------
# the fastsched side
# ------------------------------------------------------------------------------------------------
def _replay_scheduler_class():
    from ..scheduler import Scheduler

    class ReplayScheduler(Scheduler):
        """A Scheduler whose choice among the best-scored nodes can be dictated (the replay)."""

        wanted: str | None = None

        def _select_host(self, feasible, totals):  # noqa: D401 - upstream's selectHost, replayed
            host = super()._select_host(feasible, totals)
            if self.wanted and self.wanted != host:
                t = np.asarray(totals, dtype=np.int64)
                best = t.max()
                for i in np.flatnonzero(t == best).tolist():
                    if feasible.name_at(i) == self.wanted:
                        return self.wanted
            return host

    return ReplayScheduler


_REPLAY_SCHEDULER = None


def _status(st: Any, plugin: str | None = None) -> dict | None:
    if st is None or st.code() == Code.SUCCESS:
        return None
    return {"code": str(st.code()), "reasons": list(st.reasons()), "plugin": plugin if plugin is not None else st.plugin()}


def _prefilter_verdict(rec: Any) -> tuple[dict | None, list[str] | None]:
    """RunPreFilterPlugins' combined status and node restriction, from the per-plugin record."""
    ret: dict | None = None
    nodes: set[str] | None = None
    with_nodes: list[str] = []
    for plugin, st in rec.pre_filter.items():
        if st is not None and st.code() == Code.SKIP:
            continue
        if st is not None and st.code() != Code.SUCCESS:
            s = _status(st, plugin)
            if st.code() == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return s, None
            if st.code() == Code.UNSCHEDULABLE:
                ret = s
                continue
            return {"code": "Error", "reasons": list(st.reasons()), "plugin": plugin}, None
        if plugin in rec.pre_filter_nodes:
            with_nodes.append(plugin)
            got = set(rec.pre_filter_nodes[plugin])
            nodes = got if nodes is None else nodes & got
            if not nodes:
                names = sorted(with_nodes)
                msg = (f"node(s) didn't satisfy plugin {names[0]}" if len(names) == 1 else
                       f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] simultaneously")
                return {"code": "UnschedulableAndUnresolvable", "reasons": [msg], "plugin": ""}, []
    return ret, (sorted(nodes) if nodes is not None else None)


#: the oracle labels a binding cycle's failure with its stage ("reserve: " / "prebind: ", the
#: PreBind pre-flights included), upstream's framework message after it
_BINDING_CYCLE_LABELS = (("running Reserve plugin ", "reserve: "), ("running PreBindPreFlight ", "prebind: "),
                         ("running PreBind plugin ", "prebind: "))


def _binding_cycle_label(message: str) -> str:
    for prefix, label in _BINDING_CYCLE_LABELS:
        if message.startswith(prefix):
            return label + message
    return message


def _attempt_from_record(rec: Any, key: str, *, keep_scores_on_binding_error: bool = False) -> dict:
    """The attempt in the oracle's terms. ``keep_scores_on_binding_error``: a pod group member's
    record, whose binding cycle failed after the group's algorithm scored it (the oracle reports
    the algorithm's attempt, scores and all)."""
    at: dict = {"pod": key}
    at["error"] = _binding_cycle_label(rec.message) if rec.outcome == "Error" else ""
    at["prefilter"], at["prefilter_nodes"] = _prefilter_verdict(rec)
    flt: dict = {}
    feasible = []
    for i, name in enumerate(rec.filter_node_names.tolist()):
        code = int(rec.filter_codes[i])
        if code == 0:
            feasible.append(name)
            continue
        pid = int(rec.filter_plugin_ids[i])
        rid = int(rec.filter_reason_ids[i])
        flt[name] = {"code": str(Code(code)), "reasons": list(rec.filter_reasons[rid]) if rid >= 0 else [],
                     "plugin": rec.filter_plugins[pid] if pid >= 0 else ""}
    at["filter"] = flt
    at["feasible"] = sorted(feasible) if at["prefilter"] is None else []
    at["prescore_skipped"] = sorted(p for p, st in rec.pre_score.items() if st is not None and st.code() == Code.SKIP)
    scores: dict = {}
    names = rec.score_node_names.tolist()
    for p, plugin in enumerate(rec.score_plugins):
        w = int(rec.score_weights[p])
        scores[plugin] = {n: [int(rec.raw_scores[p, j]), int(rec.normalized_scores[p, j]),
                              int(rec.normalized_scores[p, j]) * w] for j, n in enumerate(names)}
    at["scores"] = scores
    totals = {n: int(t) for n, t in zip(names, rec.total_scores.tolist())}
    if not scores and len(feasible) > 1:  # no Score plugin: every node scores 1
        totals = {n: int(t) for n, t in zip(feasible, rec.total_scores.tolist())} or {n: 1 for n in feasible}
    if at["error"] and not (keep_scores_on_binding_error and rec.selected_node):
        totals = {}  # the cycle ended in PreScore/Score: no totals, no choice
    at["total"] = totals
    if totals:
        top = max(totals.values())
        at["best"] = sorted(n for n, t in totals.items() if t == top)
    else:
        at["best"] = sorted(feasible) if len(feasible) == 1 else []
    at["selected"] = rec.selected_node or ""
    at["fit_error"] = rec.message if rec.outcome == "Unschedulable" else ""
    at["nominated_node"] = rec.nominated_node_name or ""
    at["victims"] = sorted(k for k, _ in rec.victims)
    at["batch_hint"] = rec.batch_hint
    at["batch_hinted"] = rec.batch_hinted
    at["batch_signature"] = rec.batch_signature
    at["batch_flush"] = list(rec.batch_flush)
    return at


def _volume_name(sched: Any, ns: str, claim: str) -> str:
    obj = sched.get_object("PersistentVolumeClaim", claim, ns)
    return (getattr(obj, "volume_name", "") or "") if obj is not None else ""


def _claim_allocation(sched: Any, ns: str, claim: str) -> str | None:
    """"pool/device,..." of a ResourceClaim's allocation, in result order; None when unallocated."""
    for obj in sched.objects("ResourceClaim"):
        meta = obj.get("metadata", {})
        if meta.get("name") == claim and meta.get("namespace", "default") == ns:
            alloc = (obj.get("status") or {}).get("allocation")
            if not alloc:
                return None
            return ",".join(allocation_result_text(r) for r in alloc.get("devices", {}).get("results", ()))
    return None


def _reserved_for_it_alone(sched: Any, ns: str, claim: str, uid: str) -> bool:
    """Whether every ``status.reservedFor`` entry of the claim is the pod (the oracle's "fresh"
    allocation: none, or the pod only)."""
    obj = sched.get_object("ResourceClaim", claim, ns)
    return obj is not None and all(r.get("uid") == uid for r in obj.reserved_for)


def allocation_result_text(r: Any) -> str:
    """One device of a claim's allocation as the oracle prints it (``allocationResultText``):
    ``pool/device``, ``[share]`` for a share of a device allowing multiple allocations (the
    shareID is random upstream and derived here, so only its presence is compared), then the
    consumed capacity ``{name=quantity;...}`` by name (``Quantity.String()``), then
    ``<skip:op,...>`` for a device that skips node operations (DRAOptionalNodeOperations)."""
    text = f"{r['pool']}/{r['device']}"
    if r.get("shareID") is not None:
        text += "[share]"
    consumed = r.get("consumedCapacity") or {}
    if consumed:
        text += "{" + ";".join(f"{k}={consumed[k]}" for k in sorted(consumed)) + "}"
    skip = r.get("skipNodeOperations")
    if skip:  # DRAOptionalNodeOperations: the slice's list, in its order
        text += "<skip:" + ",".join(skip) + ">"
    return text


def _node_allocatable_texts(pod: Any) -> list[str]:
    """The oracle's ``nodeAllocatableStatusText`` of each of the pod's
    ``status.nodeAllocatableResourceClaimStatuses``."""
    status = ((getattr(pod, "manifest", None) or {}).get("status") or {}) if pod is not None else {}
    out = []
    for st in status.get("nodeAllocatableResourceClaimStatuses") or ():
        mapping = ",".join(f"{m['name']}={m.get('quantity', '<nil>')}" for m in st.get("mapping") or ())
        overhead = ",".join(f"{o['name']}={o.get('perPod', '-')}/{o.get('perContainer', '-')}"
                            for o in st.get("overhead") or ())
        out.append(f"{st['resourceClaimName']} [{','.join(st.get('containers') or ())}] {mapping} overhead {overhead}")
    return out


def _extended_claim_allocations(sched: Any, pod: Any) -> list[str]:
    """"ns/<generateName>*=pool/device,..." of the allocated claim DynamicResources created for
    the pod's DRA-backed extended resources (the generated suffix is the API server's, not compared)."""
    out = []
    for obj in sched.objects("ResourceClaim"):
        meta = obj.get("metadata", {})
        if (meta.get("annotations") or {}).get("resource.kubernetes.io/extended-resource-claim") != "true":
            continue
        if not any(r.get("uid") == pod.uid and r.get("controller") for r in meta.get("ownerReferences") or ()):
            continue
        alloc = (obj.get("status") or {}).get("allocation")
        if alloc:
            devices = ",".join(allocation_result_text(r) for r in alloc.get("devices", {}).get("results", ()))
            out.append(f"{meta.get('namespace', 'default')}/{meta.get('generateName', '')}*={devices}")
    return out


def run_fastsched(scenario: dict, replay: list[str] | None = None, feature_gates: Any = None) -> dict:
    """Schedule the scenario's incoming pods with fastsched, one attempt each (see the module
    docstring); ``replay`` dictates the node chosen among the best (by incoming position);
    ``feature_gates`` on top of v1.37's defaults (:class:`fastsched.features.FeatureGates`).
    Returns ``{"attempts": [...], "replay": [node or "" per attempt], "replay_nominated": [the node
    preemption nominated or "" per attempt; empty when none did]}``: upstream breaks a tie left
    after pickOneNodeForPreemption's five criteria in map order, so the oracle takes fastsched's
    nominated node when it is among the tied ones (its ``replayPreemption``). Also ``"outcomes"``
    (each pod's :func:`~fastsched.testing.oracle_fast.pod_outcome`) and ``"kept"`` (whether the pod
    stayed after its attempt), which the fast-path comparison (:mod:`.oracle_fast`) takes."""
    global _REPLAY_SCHEDULER
    if _REPLAY_SCHEDULER is None:
        _REPLAY_SCHEDULER = _replay_scheduler_class()
    from ..clock import VirtualClock
    from .oracle_fast import pod_outcome, running_pods

    sched = _REPLAY_SCHEDULER(scenario["config"], seed=int(scenario.get("seed", 0)), record="all",
                              clock=VirtualClock(start=NOW_EPOCH), feature_gates=feature_gates or None)
    sched.add(informer_order(scenario.get("objects")))
    sched.add(list(scenario["nodes"]))
    if scenario.get("pods"):
        sched.add(list(scenario["pods"]))
    attempts: list[dict] = []
    chosen: list[str] = []
    outcomes: list[dict] = []
    kept: list[bool] = []
    held: dict[str, dict] = {}  # the pods PreEnqueue holds, in entry order: key -> manifest
    for i, entry in enumerate(scenario["incoming"]):
        # pod i binds (starts) at NOW + i ms on both sides: distinct start times, so that preemption's
        # choice between equal candidates is defined (upstream breaks the last tie in map order)
        sched.clock.advance_to(NOW_EPOCH + i * START_STEP)
        sched.wanted = replay[i] if replay is not None and i < len(replay) else None
        manifest = _retry(sched, entry) if scenario.get("sampling") else None
        if manifest is _BOUND:  # a retry of a pod bound meanwhile: no attempt (the oracle says so too)
            attempts.append({"pod": _op_key(entry), "error": "bound already"})
            chosen.append("")
            kept.append(True)
            outcomes.append({"pod": _op_key(entry), "status": "no result", "node": "", "message": "",
                             "nominated_node": "", "victims": []})
            continue
        if manifest is None:
            manifest = _enter(sched, entry, held)
        if manifest is None:  # an object created that lets no held pod in
            attempts.append({"pod": _op_key(entry), "error": "no pod held for it"})
            chosen.append("")
            kept.append(True)
            outcomes.append({"pod": _op_key(entry), "status": "no result", "node": "", "message": "",
                             "nominated_node": "", "victims": []})
            continue
        meta = manifest["metadata"]
        ns = meta.get("namespace", "default")
        pod = sched.get_pod(ns, meta["name"])
        key = f"{ns}/{meta['name']}"
        held.pop(key, None)
        claims = [v["persistentVolumeClaim"]["claimName"] for v in manifest["spec"].get("volumes", ())
                  if "persistentVolumeClaim" in v]
        unbound = [c for c in claims if _volume_name(sched, ns, c) == ""]
        rc_names = [c["resourceClaimName"] for c in manifest["spec"].get("resourceClaims", ()) if c.get("resourceClaimName")]
        attempted = len(res.history) if (res := sched.results.get(pod.uid)) is not None else 0
        running = running_pods(sched)
        _run_one(sched)
        outcomes.append(pod_outcome(sched, pod.uid, key, running))
        res = sched.results.get(pod.uid)
        qpi = sched.queue.get(pod.uid)
        if qpi is not None and qpi.gated and (res is None or len(res.history) == attempted):
            # held by PreEnqueue: no cycle; it stays (a later entry may be its update)
            held[key] = manifest
            attempts.append({"pod": key, "gated": {"plugin": qpi.gating_plugin, "message": qpi.gating_message}})
            chosen.append("")
            kept.append(True)
            continue
        if res is None or len(res.history) == attempted:
            attempts.append({"pod": key, "error": "fastsched made no attempt"})
            chosen.append("")
            kept.append(False)
            sched.delete_pod(pod.uid)
            continue
        at = _attempt_from_record(res.history[attempted], key)
        at["volume_bindings"] = sorted(f"{ns}/{c}={_volume_name(sched, ns, c)}" for c in unbound
                                       if _volume_name(sched, ns, c))
        # as the oracle: the pod's allocated claims reserved for it alone (allocated by this attempt,
        # or allocated before and first reserved now)
        at["claim_allocations"] = sorted([f"{ns}/{c}={_claim_allocation(sched, ns, c)}" for c in rc_names
                                          if _reserved_for_it_alone(sched, ns, c, pod.uid)
                                          and _claim_allocation(sched, ns, c) is not None]
                                         + _extended_claim_allocations(sched, pod))
        if at["selected"]:
            # DRANodeAllocatableResources: the bound pod's claim statuses, as the oracle prints them
            at["node_allocatable"] = _node_allocatable_texts(sched.get_pod(ns, meta["name"]))
        if scenario.get("sampling"):
            # the search's trace (SAMPLING_FIELDS): every node the record has a verdict for (the
            # nominated node tried first counts once), and the start index the cycle left
            at["evaluated_nodes"] = len(set(res.history[attempted].filter_node_names.tolist()))
            at["next_start"] = sched.next_start_node_index
        attempts.append(at)
        chosen.append(at["selected"])
        kept.append(bool(at["selected"] or at["nominated_node"]))
        if at["selected"] or at["nominated_node"]:
            continue  # bound, or nominated after preemption (it waits, as its next attempt is not compared)
        sched.delete_pod(pod.uid)
    nominated = [at.get("nominated_node") or "" for at in attempts]
    return {"attempts": attempts, "replay": chosen, "replay_nominated": nominated if any(nominated) else [],
            "outcomes": outcomes, "kept": kept}


def run_fast(scenario: dict, kept: list[bool], feature_gates: Any = None,
             stats: Any = None) -> list[dict]:
    """The plain classes' fast run: the scenario's incoming pods one attempt each, as
    :func:`run_fastsched` gives them (same seed, clock steps), through a
    plain Scheduler with no records; a pod is kept after its attempt exactly when the recorded run
    kept it (``kept``; the first outcome that differs is reported, later ones may follow from it).
    Returns each pod's :func:`pod_outcome`."""
    from ..clock import VirtualClock
    from ..scheduler import Scheduler
    from .oracle_fast import FastPathStats, counted, pod_outcome, running_pods

    stats = stats if stats is not None else FastPathStats()
    with counted(stats):
        sched = Scheduler(scenario["config"], seed=int(scenario.get("seed", 0)),
                          clock=VirtualClock(start=NOW_EPOCH), feature_gates=feature_gates or None)
        sched.add(informer_order(scenario.get("objects")))
        sched.add(list(scenario["nodes"]))
        if scenario.get("pods"):
            sched.add(list(scenario["pods"]))
        outcomes: list[dict] = []
        held: dict[str, dict] = {}
        for i, entry in enumerate(scenario["incoming"]):
            sched.clock.advance_to(NOW_EPOCH + i * START_STEP)
            manifest = _retry(sched, entry) if scenario.get("sampling") else None  # (as run_fastsched)
            if manifest is _BOUND:
                outcomes.append({"pod": _op_key(entry), "status": "no result", "node": "", "message": "",
                                 "nominated_node": "", "victims": []})
                continue
            if manifest is None:
                manifest = _enter(sched, entry, held)
            if manifest is None:
                outcomes.append({"pod": _op_key(entry), "status": "no result", "node": "", "message": "",
                                 "nominated_node": "", "victims": []})
                continue
            meta = manifest["metadata"]
            ns = meta.get("namespace", "default")
            key = f"{ns}/{meta['name']}"
            pod: Any = sched.get_pod(ns, meta["name"])
            running = running_pods(sched)
            _run_one(sched)
            outcomes.append(pod_outcome(sched, pod.uid, key, running))
            qpi = sched.queue.get(pod.uid)
            if qpi is not None and qpi.gated:
                held[key] = manifest
            else:
                held.pop(key, None)
            if i < len(kept) and kept[i]:
                continue
            sched.delete_pod(pod.uid)
        stats.bound += sum(o["node"] != "" for o in outcomes)
    return outcomes


def _op_key(entry: dict) -> str:
    """An incoming object's name in the attempts: ``Kind ns/name``."""
    meta = entry["metadata"]
    return f"{entry['kind']} {meta.get('namespace', 'default')}/{meta['name']}"


def _enter(sched: Any, entry: dict, held: dict[str, dict]) -> dict | None:
    """An incoming entry through the API. A pod: created, or updated when seen before (a pod
    PreEnqueue held: its gates removed, say). Another object (a ResourceClaim): created, a cluster
    event whose handlers may let a held pod in; the entry's attempt is then that of the first held
    pod (``held``: in entry order) naming the claim, whose manifest is returned (None when there is
    none). The oracle does the same (``main.go``: an incoming object)."""
    if entry.get("kind", "Pod") != "Pod":
        ns = entry["metadata"].get("namespace", "default")
        name = entry["metadata"]["name"]
        sched.add(entry)
        for key, m in held.items():
            if key.split("/", 1)[0] == ns and any(c.get("resourceClaimName") == name
                                                  for c in m["spec"].get("resourceClaims", ())):
                return m
        return None
    meta = entry["metadata"]
    if sched.get_pod(meta.get("namespace", "default"), meta["name"]) is not None:
        sched.update_pod(entry)
    else:
        sched.add(entry)
    return entry


#: :func:`_retry`'s answer for a pod bound before its retry's entry
_BOUND: dict = {}


def _retry(sched: Any, entry: dict) -> dict | None:
    """A ``sampling`` scenario's later entry of a pod waiting nominated after its preemption: its
    retry. The queue hands it out again (activated: PodActivator's move to activeQ, as when its
    backoff is over) with its nominated node, which the cycle judges first (evaluateNominatedNode),
    or none if a later preemption of a higher priority on that node cleared it (the pod waits on);
    the entry's manifest when it is such a retry, :data:`_BOUND` when the pod is bound already (no
    attempt), else None (the entry goes through :func:`_enter`: a pod dropped after it failed is
    created anew). The oracle does the same (``main.go``: ``retried``)."""
    if entry.get("kind", "Pod") != "Pod":
        return None
    meta = entry["metadata"]
    pod = sched.get_pod(meta.get("namespace", "default"), meta["name"])
    if pod is not None and pod.node_name:
        return _BOUND
    if pod is None:
        return None
    sched.queue.activate([pod])
    return entry


def _run_one(sched: Any) -> None:
    """The entry's one attempt. The oracle attempts each incoming pod once and nothing else: a pod
    left waiting nominated after preemption is never attempted again. With SchedulerPopFromBackoffQ
    an empty activeQ (the entry held by PreEnqueue: no cycle) would hand the attempt to
    podBackoffQ's head, such a waiting preemptor, which would bind and change what the later pods
    see; so podBackoffQ is not popped here (it holds only earlier entries' pods), and the clock
    does not step (``run`` would advance it to the first backoff's expiry and attempt that pod). As
    ``oracle_groups._run_batch`` does for a pod group's batch."""
    active_q = sched.queue._active_q
    popper, active_q._backoff_q_popper = active_q._backoff_q_popper, None
    try:
        sched.run(until=sched.clock.now(), max_attempts=1)
    finally:
        active_q._backoff_q_popper = popper


# ------------------------------------------------------------------------------------------------
# comparison
# ------------------------------------------------------------------------------------------------
#: Differences understood and not fixed here, normalized away before comparing (both sides), each
#: with the upstream line it comes from: name -> explanation. ``differential`` counts the scenarios
#: they touched (``--raw`` compares without them). v1.34.4's TaintToleration reason and the
#: DefaultTolerationSeconds admission plugin, the two listed before, are now what fastsched does;
#: "batch-expired" is not a difference of fastsched's but of the oracle's wall clock (compare() sets
#: such a scenario aside from the attempt on).
KNOWN: dict[str, str] = {
    "batch-expired": "OpportunisticBatching's maxBatchAge (500 ms, batch.go: batchStateCompatible) is wall "
                     "time in upstream; the oracle's steps run at the busy machine's pace, fastsched's on "
                     "its clock (1 ms a pod here): when the oracle's batch expired and fastsched's did not, "
                     "the hint differs and the scenario diverges from that attempt on (it is set aside).",
}
#: the normalizers of the KNOWN differences, applied in order to each attempt of both sides
_NORMALIZERS: list[Callable[[dict], dict]] = []


def _apply_known(at: dict) -> dict:
    for normalize in _NORMALIZERS:
        at = normalize(at)
    return at


def _norm(field: str, v: Any) -> Any:
    if field in SAMPLING_FIELDS:
        return v or 0
    if v is None:
        return {"filter": {}, "scores": {}, "total": {}, "prescore_skipped": [], "best": [], "victims": [],
                "selected": "",
                "feasible": [], "error": "", "fit_error": "", "nominated_node": "", "volume_bindings": [],
                "claim_allocations": [], "node_allocatable": []}.get(field)
    if field == "scores":
        return {p: {n: list(x) for n, x in per.items()} for p, per in v.items()}
    if field == "filter":
        # NodeResourcesFit lists the extended resources in Go map order (random): compared as a set
        return {n: {"code": s["code"], "plugin": s.get("plugin") or "",
                    "reasons": sorted(s.get("reasons") or []) if s.get("plugin") == "NodeResourcesFit"
                    else list(s.get("reasons") or [])}
                for n, s in v.items()}
    if field == "prefilter":
        return {"code": v["code"], "reasons": list(v.get("reasons") or []), "plugin": v.get("plugin") or ""}
    if field == "gated":  # the holding plugin and its message (the oracle's status: its reasons, joined)
        return {"plugin": v.get("plugin") or "",
                "message": v["message"] if "message" in v else ", ".join(v.get("reasons") or ())}
    return v


def compare(fs_attempts: list[dict], oracle_attempts: list[dict], *, known: bool = True) -> list[dict]:
    """The differences of the first attempt where the two sides differ (later attempts ran on
    states that may have diverged): ``[{"pod", "field", "fastsched", "oracle"}]``; [] when equal.
    ``known`` normalizes the :data:`KNOWN` differences away first."""
    sig_fs: dict[str, str] = {}  # signature classes: fastsched's digest -> the oracle's, and back
    sig_or: dict[str, str] = {}
    # an oracle of protocol 3 reports them (the compact recorded answers drop empty fields: any will do)
    protocol3 = any("batch_signature" in x or "batch_flush" in x for x in oracle_attempts)
    for i in range(max(len(fs_attempts), len(oracle_attempts))):
        if i >= len(fs_attempts) or i >= len(oracle_attempts):
            mine = fs_attempts[i]["pod"] if i < len(fs_attempts) else None
            theirs = oracle_attempts[i]["pod"] if i < len(oracle_attempts) else None
            return [{"pod": mine or theirs, "field": "attempts", "fastsched": mine, "oracle": theirs}]
        a, b = fs_attempts[i], oracle_attempts[i]
        if known:
            a, b = _apply_known(a), _apply_known(b)
        diffs = []
        # a cycle that ended in an Error: upstream filters in parallel and stops at the first error,
        # so which other nodes were judged is not defined and any node's error may be the one; the
        # error is compared with every node's (the oracle's "errors")
        both_failed = bool(a.get("error") and b.get("error"))
        # opportunistic batching (protocol 3): pods sign alike on both sides exactly when they
        # sign alike on the other (the digests differ: fastsched's values are not upstream's JSON)
        mine_sig, their_sig = a.get("batch_signature") or "", b.get("batch_signature") or ""
        if protocol3:
            if (bool(mine_sig) != bool(their_sig) or sig_fs.setdefault(mine_sig, their_sig) != their_sig
                    or sig_or.setdefault(their_sig, mine_sig) != mine_sig):
                return [{"pod": a["pod"], "field": "batch_signature", "fastsched": mine_sig or None,
                         "oracle": their_sig or None}]
            # the flushes of a signed pod's cycle; an "expired" only the oracle saw is its wall clock
            mine_fl, their_fl = sorted(a.get("batch_flush") or ()), sorted(b.get("batch_flush") or ())
            if known and "expired" in their_fl and "expired" not in mine_fl:
                return []
            if their_sig and mine_fl != their_fl:
                return [{"pod": a["pod"], "field": "batch_flush", "fastsched": mine_fl, "oracle": their_fl}]
        # opportunistic batching: the hint and whether it fitted are decisions of their own
        for field in BATCH_FIELDS:
            x, y = _norm_batch(field, a.get(field)), _norm_batch(field, b.get(field))
            if x != y:
                return [{"pod": a["pod"], "field": field, "fastsched": x, "oracle": y}]
        # a hint that fitted ends upstream's cycle there (no other node filtered or scored): the
        # oracle retells the full cycle anyway, fastsched does not run it
        hinted = bool(a.get("batch_hinted")) and bool(b.get("batch_hinted"))
        fields: tuple[str, ...] = ("error",) if both_failed else HINTED_FIELDS if hinted else FIELDS
        if "next_start" in a:  # (a sampling scenario: fastsched reports them)
            fields = fields + SAMPLING_FIELDS
        for field in fields:
            x, y = _norm(field, a.get(field)), _norm(field, b.get(field))
            if both_failed and x != y and x in (b.get("errors") or ()):
                continue
            if x != y:
                diffs.append({"pod": a["pod"], "field": field, "fastsched": _narrow(field, x, y),
                              "oracle": _narrow(field, y, x)})
        if diffs:
            return diffs
    return []


def _narrow(field: str, x: Any, y: Any) -> Any:
    """For maps, only the keys where the two sides differ (reproducers stay readable)."""
    if isinstance(x, dict) and isinstance(y, dict) and field in ("filter", "scores", "total"):
        return {k: x.get(k) for k in sorted(set(x) | set(y)) if x.get(k) != y.get(k)}
    return x


def check(scenario: dict, oracle: Oracle, *, known: bool = True, fast_paths: Any = None
          ) -> tuple[list[dict], dict, dict]:
    """Run both sides on one scenario: (differences, fastsched's answer, the oracle's answer);
    ``known=False`` counts the :data:`KNOWN` differences too. ``fast_paths`` (a
    :class:`~fastsched.testing.oracle_fast.FastPathStats`, which it adds to): when the sides agree,
    the scenario again through fastsched's fast paths, each pod's outcome compared with the recorded
    run's (:func:`check_fast_paths`; differences ``fast-path:<field>``)."""
    gates = getattr(oracle, "fastsched_feature_gates", None)
    mine = run_fastsched(scenario, scenario.get("replay"), gates)
    theirs = oracle.ask({**scenario, "replay_nominated": mine.get("replay_nominated") or []}, mine["replay"])
    if theirs.get("error"):
        return ([{"pod": None, "field": "oracle error", "fastsched": None, "oracle": theirs["error"]}],
                mine, theirs)
    diffs = compare(mine["attempts"], theirs["attempts"], known=known)
    if not diffs and fast_paths is not None:
        diffs = check_fast_paths(scenario, mine, gates, fast_paths)
    return diffs, mine, theirs


def check_fast_paths(scenario: dict, recorded: dict | None = None, feature_gates: Any = None,
                     stats: Any = None) -> list[dict]:
    """The fast-path comparison (:mod:`fastsched.testing.oracle_fast`): the scenario through a
    plain Scheduler (no records, fast paths on), each pod's outcome against ``recorded`` (a
    :func:`run_fastsched` answer without replay, which the oracle validated; made here when None).
    A scenario that carries a replay is compared with a recorded run made again without it: the
    fast run draws its ties from the seeded RNG as the recorded run does, it has no replay."""
    from .oracle_fast import compare_outcomes

    if recorded is None or scenario.get("replay"):
        recorded = run_fastsched(scenario, None, feature_gates)
    fast = run_fast(scenario, recorded["kept"], feature_gates, stats)
    return compare_outcomes(fast, recorded["outcomes"])


# ------------------------------------------------------------------------------------------------
# shrinking
# ------------------------------------------------------------------------------------------------
def shrink(scenario: dict, still_differs: Callable[[dict], bool], *, budget: int = 200) -> dict:
    """Greedy: drop incoming pods, bound pods, objects and nodes one at a time while the scenario
    still differs (at most ``budget`` trials)."""
    cur = json.loads(json.dumps(scenario))
    cur.pop("replay", None)
    trials = 0
    changed = True
    while changed and trials < budget:
        changed = False
        for part in ("incoming", "pods", "objects", "nodes"):
            i = len(cur.get(part, ())) - 1
            while i >= 0 and trials < budget:
                if part in ("incoming", "nodes") and len(cur[part]) == 1:
                    break
                cand = dict(cur)
                cand[part] = cur[part][:i] + cur[part][i + 1:]
                if part == "nodes":  # bound pods of a removed node go with it
                    gone = cur["nodes"][i]["metadata"]["name"]
                    cand["pods"] = [p for p in cur.get("pods", ()) if p["spec"].get("nodeName") != gone]
                trials += 1
                try:
                    keep = still_differs(cand)
                except Exception:  # noqa: BLE001 - a candidate fastsched refuses is not smaller
                    keep = False
                if keep:
                    cur = cand
                    changed = True
                i -= 1
    return cur


# ------------------------------------------------------------------------------------------------
# the differential run
# ------------------------------------------------------------------------------------------------
@dataclasses.dataclass
class ClassSummary:
    scenarios: int = 0
    pods: int = 0
    differences: int = 0
    #: scenarios that agree only once the KNOWN differences are normalized away
    known: int = 0
    seconds: float = 0.0
    #: with the fast-path comparison: the scenarios it found different (in ``differences`` too)
    fast_differences: int = 0
    #: ... and what the fast paths served (a :class:`~fastsched.testing.oracle_fast.FastPathStats`)
    fast: Any = None


#: what ``batching_variant`` does to PodTopologySpread, by seed parity: its defaults cleared
#: (``defaultingType: List``, ``defaultConstraints: []``, as upstream's batching tests) or disabled
BATCHING_MODES = ("list", "disabled")
#: how many times ``batching_variant`` repeats each incoming pod (same spec, so same signature)
BATCHING_REPEAT = 3


def batching_variant(scenario: dict, mode: str = "list", repeat: int = BATCHING_REPEAT) -> dict:
    """The scenario with a profile that signs pods (OpportunisticBatching fires): every profile's
    PodTopologySpread without default constraints (``mode="list"``) or disabled
    (``mode="disabled"``), and each incoming pod followed by ``repeat - 1`` copies of itself
    (names ``<name>-r1``, ...), so that batches of equal signatures come one after another.

    An incoming object (a ResourceClaim the ``preenqueue`` class creates later) is copied the
    same way, and a pod's copy names the claim's copy (``resourceClaimName`` ``<claim>-r1``, ...)
    unless the claim exists from the start (``objects``: the copies share it): both sides' harnesses
    take an incoming claim's attempt to be the one held pod naming it (``_enter``; the oracle's
    ``main.go`` says the scenarios name each claim in one pod). Copies naming the original claim
    were held with it and let in by its creation too: fastsched's queue then had them in activeQ
    and gave the next entry's attempt to one of them (a higher priority than the entry's pod, or
    before it in the queue), where the oracle, which attempts only the entry's pod, left them held
    (105 of 300 ``preenqueue --batching`` scenarios differed, seed 81290100)."""
    if mode not in BATCHING_MODES:
        raise ValueError(f"batching mode {mode!r}: want one of {', '.join(BATCHING_MODES)}")
    sc = json.loads(json.dumps(scenario))
    cfg = sc.setdefault("config", {"apiVersion": "kubescheduler.config.k8s.io/v1",
                                   "kind": "KubeSchedulerConfiguration"})
    profiles = cfg.get("profiles") or [{"schedulerName": "default-scheduler"}]
    cfg["profiles"] = profiles
    for prof in profiles:
        if mode == "disabled":
            plugins = prof.setdefault("plugins", {})
            mp = plugins.setdefault("multiPoint", {})
            mp.setdefault("disabled", []).append({"name": "PodTopologySpread"})
            continue
        pcs = prof.setdefault("pluginConfig", [])
        entry = next((pc for pc in pcs if pc.get("name") == "PodTopologySpread"), None)
        if entry is None:
            entry = {"name": "PodTopologySpread", "args": {}}
            pcs.append(entry)
        args = entry.setdefault("args", {})
        args["defaultingType"] = "List"
        args["defaultConstraints"] = []
    existing = {(o["metadata"].get("namespace", "default"), o["metadata"]["name"])
                for o in sc.get("objects", ()) if o.get("kind") == "ResourceClaim"}
    incoming = []
    for pod in sc.get("incoming", ()):
        incoming.append(pod)
        ns = pod["metadata"].get("namespace", "default")
        for r in range(1, repeat):
            copy = json.loads(json.dumps(pod))
            meta = copy["metadata"]
            meta["name"] = f"{meta['name']}-r{r}"
            if meta.get("uid"):
                meta["uid"] = f"{meta['uid']}-r{r}"
            if copy.get("kind", "Pod") == "Pod":
                for ref in copy["spec"].get("resourceClaims", ()):
                    if ref.get("resourceClaimName") and (ns, ref["resourceClaimName"]) not in existing:
                        ref["resourceClaimName"] = f"{ref['resourceClaimName']}-r{r}"
            incoming.append(copy)
    sc["incoming"] = incoming
    sc["id"] = f"{sc.get('id', 'scenario')}-batching-{mode}"
    return sc


def differential(classes: Iterable[str], scenarios: int, seed: int, out: str | os.PathLike | None,
                 *, oracle: Oracle | None = None, shrink_budget: int = 150, record: str | os.PathLike | None = None,
                 log: Callable[[str], None] | None = None, known: bool = True,
                 batching: bool = False, fast_paths: bool = False) -> dict[str, ClassSummary]:
    """Run ``scenarios`` scenarios per class (seeds ``seed``, ``seed + 1``, ...) on both sides;
    write each difference, shrunk, as ``<out>/<class>-<seed>.json``. With ``record``, write every
    agreeing scenario and the oracle's answer to ``<record>/<class>.jsonl.gz`` (replacing it).
    ``batching`` runs each scenario's :func:`batching_variant` (the mode alternating by seed).
    ``fast_paths``: each scenario the oracle agrees with goes through fastsched's fast paths too
    (:func:`check_fast_paths`); the summary's ``fast`` says how much they served."""
    from .oracle_fast import PREFIX, FastPathStats

    own = oracle is None
    orc = oracle or Oracle()
    summary: dict[str, ClassSummary] = {}
    outdir = Path(out) if out is not None else None
    try:
        for cls in classes:
            s = summary[cls] = ClassSummary()
            stats = s.fast = FastPathStats() if fast_paths else None
            recorded: list[dict] = []
            t0 = time.perf_counter()
            for k in range(scenarios):
                sc = generate(cls, seed + k)
                if batching:
                    sc = batching_variant(sc, BATCHING_MODES[(seed + k) % 2])
                try:
                    diffs, mine, theirs = check(sc, orc, known=known, fast_paths=stats)
                except Exception as exc:  # noqa: BLE001 - fastsched refused the scenario: a difference too
                    diffs, mine, theirs = [{"pod": None, "field": "fastsched exception",
                                            "fastsched": f"{type(exc).__name__}: {exc}", "oracle": None}], {}, {}
                s.scenarios += 1
                s.pods += len(theirs.get("attempts", ()))
                if diffs:
                    s.differences += 1
                    s.fast_differences += any(d["field"].startswith(PREFIX) for d in diffs)
                    if outdir is not None:
                        _write_reproducer(outdir, sc, diffs, orc, shrink_budget, known, fast_paths)
                    if log:
                        d = diffs[0]
                        log(f"  {sc['id']}: {d['pod']} {d['field']}: fastsched {_short(d['fastsched'])} "
                            f"oracle {_short(d['oracle'])}")
                    continue
                if compare(mine["attempts"], theirs["attempts"], known=False):
                    s.known += 1
                if record is not None:
                    replayed = {"replay_nominated": mine["replay_nominated"]} if mine.get("replay_nominated") else {}
                    recorded.append({"scenario": {**sc, "replay": mine["replay"], **replayed},
                                     "attempts": [_compact(a) for a in theirs["attempts"]]})
            s.seconds = time.perf_counter() - t0
            if record is not None:
                write_recorded(Path(record) / f"{cls}.jsonl.gz", recorded)
    finally:
        if own:
            orc.close()
    return summary


def _compact(at: dict) -> dict:
    """An oracle attempt without its empty fields and the fields not compared."""
    return {k: v for k, v in at.items()
            if v not in (None, "", [], {}, False)
            and (k in FIELDS or k in SAMPLING_FIELDS
                 or k in ("pod", "selected", "errors", "batch_hint", "batch_hinted", "batch_signature", "batch_flush"))}


def write_recorded(path: Path, records: list[dict]) -> None:
    """A recorded set: JSON lines, gzip-compressed reproducibly (same records, same bytes)."""
    import gzip

    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r, separators=(",", ":"), sort_keys=True) + "\n" for r in records)
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as f:
        f.write(text.encode())


def read_recorded(path: str | os.PathLike) -> list[dict]:
    """The records of a file :func:`write_recorded` wrote."""
    import gzip

    with gzip.open(path, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


# ------------------------------------------------------------------------------------------------
# --bench: upstream's scheduling cycles and fastsched's on the same cluster
# ------------------------------------------------------------------------------------------------
#: workload -> default (nodes, init pods, pods), scheduler_perf's 500Nodes sizes
BENCH_WORKLOADS = {"SchedulingBasic": (500, 500, 1000), "SchedulingPodAntiAffinity": (500, 100, 400)}


def bench_scenario(workload: str, nodes: int | None = None, init_pods: int | None = None,
                   pods: int | None = None) -> dict:
    """A scheduler_perf-like cluster: ``nodes`` nodes (4 cpu, 32Gi, 110 pods, three zones),
    ``init_pods`` pods bound round-robin, ``pods`` pods to schedule (100m cpu, 500Mi); None takes
    the workload's size (:data:`BENCH_WORKLOADS`). For SchedulingPodAntiAffinity every pod carries
    ``color: green`` and a required anti-affinity to it per hostname (so at most one per node)."""
    if workload not in BENCH_WORKLOADS:
        raise ValueError(f"unknown bench workload {workload!r} (workloads: {', '.join(BENCH_WORKLOADS)})")
    d_nodes, d_init, d_pods = BENCH_WORKLOADS[workload]
    nodes = d_nodes if nodes is None else nodes
    init_pods = d_init if init_pods is None else init_pods
    pods = d_pods if pods is None else pods
    g = _Gen("bench", 0)
    for i in range(nodes):
        g.node(cpu="4", memory="32Gi", pods="110", zone=False, labels={"topology.kubernetes.io/zone": ZONES[i % 3]})
    anti = workload == "SchedulingPodAntiAffinity"
    spec: dict = {}
    labels = None
    if anti:
        labels = {"color": "green"}
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"color": "green"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    for i in range(init_pods):
        g.pod(node=g.nodes[i % nodes]["metadata"]["name"], requests={"cpu": "100m", "memory": "500Mi"},
              labels=labels, name=f"init-{i}", **spec)
    for i in range(pods):
        g.pod(requests={"cpu": "100m", "memory": "500Mi"}, labels=labels, name=f"pod-{i}", **spec)
    sc = g.scenario()
    sc["id"] = f"bench-{workload}"
    return _clean(sc)


def bench(oracle: Oracle, workload: str, nodes: int | None = None, init_pods: int | None = None,
          pods: int | None = None) -> dict:
    """Time upstream's scheduling cycles (the oracle, in process) and fastsched's ``Scheduler.run()``
    on the same cluster and pods: seconds (wall and CPU) and pods scheduled on each side."""
    from ..config import load_config
    from ..scheduler import Scheduler

    sc = bench_scenario(workload, nodes, init_pods, pods)
    theirs = oracle.ask(sc, [], bench=True)
    if theirs.get("error"):
        raise RuntimeError(f"oracle: {theirs['error']}")
    sched = Scheduler(load_config(sc["config"]), seed=0)
    sched.add(sc["nodes"])
    sched.add(sc["pods"])
    sched.add(sc["incoming"])
    wall, cpu = time.perf_counter(), time.process_time()
    results = sched.run()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    placed = sum(1 for r in results if r.node_name and r.pod.name.startswith("pod-"))
    return {"workload": workload, "nodes": len(sc["nodes"]), "init_pods": len(sc["pods"]), "pods": len(sc["incoming"]),
            "upstream": {"scheduled": theirs["bench"]["scheduled"], "seconds": theirs["bench"]["seconds"],
                         "cpu_seconds": theirs["bench"]["cpu_seconds"]},
            "fastsched": {"scheduled": placed, "seconds": wall, "cpu_seconds": cpu}}


def _short(v: Any, n: int = 160) -> str:
    text = json.dumps(v, sort_keys=True)
    return text if len(text) <= n else text[: n - 3] + "..."


def _write_reproducer(outdir: Path, sc: dict, diffs: list[dict], orc: Oracle, budget: int,
                      known: bool = True, fast_paths: bool = False) -> None:
    from .oracle_fast import FastPathStats

    fields = {d["field"] for d in diffs}

    def fast() -> Any:  # (the counts of the shrinking's runs are not the run's)
        return FastPathStats() if fast_paths else None

    def still(cand: dict) -> bool:
        got, _, _ = check(cand, orc, known=known, fast_paths=fast())
        return bool(got) and bool(fields & {d["field"] for d in got})

    small = shrink(sc, still, budget=budget)
    try:
        d2, mine, theirs = check(small, orc, known=known, fast_paths=fast())
    except Exception as exc:  # noqa: BLE001
        small, d2, mine, theirs = sc, diffs, {}, {"error": repr(exc)}
    outdir.mkdir(parents=True, exist_ok=True)
    doc = {"id": sc["id"], "differences": d2 or diffs, "scenario": {**small, "replay": mine.get("replay")},
           "fastsched": mine.get("attempts"), "oracle": theirs.get("attempts"),
           "original_size": {k: len(sc.get(k, ())) for k in ("nodes", "pods", "objects", "incoming")}}
    (outdir / f"{sc['id']}.json").write_text(json.dumps(doc, indent=1, sort_keys=True))
