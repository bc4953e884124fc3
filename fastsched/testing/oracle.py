"""The differential oracle: upstream kube-scheduler (``oracle/``, Go) against fastsched, pod by pod.

A *scenario* is one JSON object: ``config`` (a v1 KubeSchedulerConfiguration), ``nodes``, bound
``pods``, other API ``objects`` (namespaces, PriorityClasses, PDBs, PVs, PVCs, StorageClasses,
CSINodes, Services, ...) and the ``incoming`` pods to schedule, in order. Both sides schedule the
incoming pods one at a time on the same cluster: each pod gets one attempt; a pod that fits is bound
where fastsched put it (the oracle takes fastsched's node when it is among its own best-scored nodes:
the ``replay``), a pod that fails is dropped (no retries), and a pod whose preemption nominated a
node stays pending there, nominated (its victims are gone; later pods see the nomination, as
RunFilterPluginsWithNominatedPods does), and is not retried.

Per attempt, :func:`compare` checks field by field (see :data:`FIELDS`): the PreFilter verdict and
its node restriction, every rejected node's Filter status (code, reasons, plugin), the feasible
nodes, the Score plugins PreScore skipped, each Score plugin's raw, normalized and weighted score on
every feasible node, the totals, the set of nodes tied for the best total, the FitError message
(PostFilter's message included), PostFilter's nominated node and victims, the PVCs bound and the
ResourceClaim devices allocated at PreBind; an Error ends the comparison of that attempt with the
error text, which may be any node's (upstream filters in parallel). Not compared: the scheduling
queue (order, backoff, requeueing hints: every pod gets exactly one attempt here),
percentageOfNodesToScore sampling and the start-index rotation (scenarios have < 100 nodes, so
every node is examined), binding and the API server's timing, wall-clock timeouts, extenders, and
fastsched's compiled cycle (recording takes the plugin calls). :data:`KNOWN` lists the differences
understood and not fixed, and how the comparison sets them aside (``known=False`` does not).

Where upstream is random, the scenarios avoid depending on it: PVs of distinct sizes (equal
candidates come from an unordered index), pods started at distinct times (preemption's last tie),
one DRA pool per request and node (pools come in Go map order).

``fastsched differential`` (fastsched/cli.py) runs :func:`differential`; ``tests/oracle`` replays
a recorded set of the oracle's answers without Go.
"""
from __future__ import annotations

import dataclasses
import json
import os
import random
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from ..framework.status import Code

__all__ = ["CLASSES", "FIELDS", "KNOWN", "Oracle", "OracleVersionError", "RECORDED_DIR", "build_oracle", "check", "compare",
           "differential", "generate", "oracle_binary", "oracle_version", "pinned_version", "read_recorded",
           "run_fastsched", "shrink", "version_skew", "write_recorded"]

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
FIELDS = ("error", "prefilter", "prefilter_nodes", "filter", "feasible", "prescore_skipped", "scores",
          "total", "best", "fit_error", "nominated_node", "victims", "volume_bindings", "claim_allocations")


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
    go = shutil.which("go")
    if go is None:
        raise RuntimeError("the oracle needs Go: `go` is not on PATH")
    out = oracle_binary()
    out.parent.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    flags = env.get("GOFLAGS", "")
    if "-mod=" not in flags:  # go.sum is committed; -mod=mod lets go fill in what it lacks
        env["GOFLAGS"] = (flags + " -mod=mod").strip()
    proc = subprocess.run([go, "build", "-o", str(out), "."], cwd=ORACLE_DIR, env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"go build of the oracle failed:\n{proc.stderr[-4000:]}")
    return out


class OracleVersionError(RuntimeError):
    """The oracle binary is not the upstream version ``oracle/go.mod`` pins (a stale build)."""


def pinned_version() -> str:
    """The k8s.io/kubernetes version ``oracle/go.mod`` requires (e.g. ``"v1.37.2"``)."""
    import re

    for line in (ORACLE_DIR / "go.mod").read_text().splitlines():
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

    The binary must be the upstream version ``oracle/go.mod`` pins (``check_version``; otherwise
    :class:`OracleVersionError`: rebuild it with :func:`build_oracle`). ``feature_gates``
    (``"Gate=false,..."``; default ``$FASTSCHED_ORACLE_FEATURE_GATES``) are set on top of
    upstream's defaults, e.g. ``OpportunisticBatching=false``."""

    def __init__(self, binary: str | os.PathLike | None = None, *, feature_gates: str | None = None,
                 check_version: bool = True):
        path = Path(binary) if binary is not None else oracle_binary()
        if not path.exists():
            raise FileNotFoundError(f"no oracle binary at {path} (build it with build_oracle())")
        self.version = oracle_version(path)
        if check_version:
            want = pinned_version()
            got = (self.version or {}).get("kubernetes")
            if got != want:
                raise OracleVersionError(
                    f"the oracle at {path} runs k8s.io/kubernetes {got or 'unknown (no --version: built before v1.37)'}"
                    f", oracle/go.mod pins {want}: rebuild it (build_oracle(), or `go build -o bin/oracle .` in oracle/)")
        if feature_gates is None:
            feature_gates = os.environ.get("FASTSCHED_ORACLE_FEATURE_GATES", "")
        args = [str(path)] + (["--feature-gates", feature_gates] if feature_gates else [])
        self.feature_gates = feature_gates
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


def _scenario_only(s: dict) -> dict:
    return {"now": NOW, **{k: s[k] for k in ("id", "config", "nodes", "pods", "objects", "incoming") if k in s}}


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
            return {"code": "Error", "reasons": s["reasons"], "plugin": plugin}, None
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


def _attempt_from_record(rec: Any, key: str) -> dict:
    at: dict = {"pod": key}
    at["error"] = rec.message if rec.outcome == "Error" else ""
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
    if at["error"]:  # the cycle ended in PreScore/Score: no totals, no choice
        totals = {}
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
            return ",".join(f"{r['pool']}/{r['device']}" for r in alloc.get("devices", {}).get("results", ()))
    return None


def run_fastsched(scenario: dict, replay: list[str] | None = None) -> dict:
    """Schedule the scenario's incoming pods with fastsched, one attempt each (see the module
    docstring); ``replay`` dictates the node chosen among the best (by incoming position).
    Returns ``{"attempts": [...], "replay": [node or "" per attempt]}``."""
    global _REPLAY_SCHEDULER
    from ..config import load_config

    if _REPLAY_SCHEDULER is None:
        _REPLAY_SCHEDULER = _replay_scheduler_class()
    from ..clock import VirtualClock

    sched = _REPLAY_SCHEDULER(load_config(scenario["config"]), seed=int(scenario.get("seed", 0)), record="all",
                              clock=VirtualClock(start=NOW_EPOCH))
    sched.add(list(scenario.get("objects", ())))
    sched.add(list(scenario["nodes"]))
    if scenario.get("pods"):
        sched.add(list(scenario["pods"]))
    attempts: list[dict] = []
    chosen: list[str] = []
    for i, manifest in enumerate(scenario["incoming"]):
        # pod i binds (starts) at NOW + i ms on both sides: distinct start times, so that preemption's
        # choice between equal candidates is defined (upstream breaks the last tie in map order)
        sched.clock.advance_to(NOW_EPOCH + i * START_STEP)
        sched.wanted = replay[i] if replay is not None and i < len(replay) else None
        meta = manifest["metadata"]
        ns = meta.get("namespace", "default")
        sched.add(manifest)
        pod = sched.get_pod(ns, meta["name"])
        key = f"{ns}/{meta['name']}"
        claims = [v["persistentVolumeClaim"]["claimName"] for v in manifest["spec"].get("volumes", ())
                  if "persistentVolumeClaim" in v]
        unbound = [c for c in claims if _volume_name(sched, ns, c) == ""]
        rc_names = [c["resourceClaimName"] for c in manifest["spec"].get("resourceClaims", ()) if c.get("resourceClaimName")]
        unallocated = [c for c in rc_names if _claim_allocation(sched, ns, c) is None]
        sched.run(max_attempts=1)
        res = sched.results.get(pod.uid)
        if res is None or not res.history:
            attempts.append({"pod": key, "error": "fastsched made no attempt"})
            chosen.append("")
            sched.delete_pod(pod.uid)
            continue
        at = _attempt_from_record(res.history[0], key)
        at["volume_bindings"] = sorted(f"{ns}/{c}={_volume_name(sched, ns, c)}" for c in unbound
                                       if _volume_name(sched, ns, c))
        at["claim_allocations"] = sorted(f"{ns}/{c}={_claim_allocation(sched, ns, c)}" for c in unallocated
                                         if _claim_allocation(sched, ns, c) is not None)
        attempts.append(at)
        chosen.append(at["selected"])
        if at["selected"] or at["nominated_node"]:
            continue  # bound, or nominated after preemption (it waits, as its next attempt is not compared)
        sched.delete_pod(pod.uid)
    return {"attempts": attempts, "replay": chosen}


# ------------------------------------------------------------------------------------------------
# comparison
# ------------------------------------------------------------------------------------------------
#: Differences understood and not fixed here, normalized away before comparing (both sides), each
#: with the upstream line it comes from: name -> explanation. ``differential`` counts the scenarios
#: they touched (``--raw`` compares without them). None at the moment: v1.34.4's TaintToleration
#: reason and the DefaultTolerationSeconds admission plugin, the two listed before, are now what
#: fastsched does.
KNOWN: dict[str, str] = {}
#: the normalizers of the KNOWN differences, applied in order to each attempt of both sides
_NORMALIZERS: list[Callable[[dict], dict]] = []


def _apply_known(at: dict) -> dict:
    for normalize in _NORMALIZERS:
        at = normalize(at)
    return at


def _norm(field: str, v: Any) -> Any:
    if v is None:
        return {"filter": {}, "scores": {}, "total": {}, "prescore_skipped": [], "best": [], "victims": [],
                "feasible": [], "error": "", "fit_error": "", "nominated_node": "", "volume_bindings": [],
                "claim_allocations": []}.get(field)
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
    return v


def compare(fs_attempts: list[dict], oracle_attempts: list[dict], *, known: bool = True) -> list[dict]:
    """The differences of the first attempt where the two sides differ (later attempts ran on
    states that may have diverged): ``[{"pod", "field", "fastsched", "oracle"}]``; [] when equal.
    ``known`` normalizes the :data:`KNOWN` differences away first."""
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
        fields = ("error",) if both_failed else FIELDS
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


def check(scenario: dict, oracle: Oracle, *, known: bool = True) -> tuple[list[dict], dict, dict]:
    """Run both sides on one scenario: (differences, fastsched's answer, the oracle's answer);
    ``known=False`` counts the :data:`KNOWN` differences too."""
    mine = run_fastsched(scenario, scenario.get("replay"))
    theirs = oracle.ask(scenario, mine["replay"])
    if theirs.get("error"):
        return ([{"pod": None, "field": "oracle error", "fastsched": None, "oracle": theirs["error"]}],
                mine, theirs)
    return compare(mine["attempts"], theirs["attempts"], known=known), mine, theirs


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
# scenario generators
# ------------------------------------------------------------------------------------------------
ZONES = ("zone-a", "zone-b", "zone-c")
NAMESPACES = ("default", "prod", "dev")
APPS = ("web", "db", "cache", "batch")
CONFIG_V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


class _Gen:
    """Helpers shared by the class generators: a seeded RNG and manifest builders."""

    def __init__(self, cls: str, seed: int):
        self.cls = cls
        self.seed = seed
        self.rng = random.Random(f"{cls}:{seed}")
        self.nodes: list[dict] = []
        self.pods: list[dict] = []
        self.objects: list[dict] = []
        self.incoming: list[dict] = []
        self.config: dict = dict(CONFIG_V1)
        self._n = 0

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def node(self, *, cpu: str = "4", memory: str = "8Gi", pods: str = "110", extra: dict | None = None,
             labels: dict | None = None, taints: list | None = None, unschedulable: bool = False,
             images: list | None = None, zone: bool = True) -> dict:
        name = f"node-{len(self.nodes)}"
        lab = {"kubernetes.io/hostname": name}
        if zone:
            lab["topology.kubernetes.io/zone"] = self.rng.choice(ZONES)
        lab.update(labels or {})
        alloc = {"cpu": cpu, "memory": memory, "pods": pods, **(extra or {})}
        m: dict = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": lab},
                   "spec": {}, "status": {"allocatable": dict(alloc), "capacity": dict(alloc)}}
        if taints:
            m["spec"]["taints"] = taints
        if unschedulable:
            m["spec"]["unschedulable"] = True
        if images:
            m["status"]["images"] = [{"names": list(n), "sizeBytes": s} for n, s in images]
        self.nodes.append(m)
        return m

    def pod(self, *, node: str | None = None, ns: str = "default", requests: dict | None = None,
            labels: dict | None = None, priority: int | None = None, images: Iterable[str] = ("busybox",),
            ports: list | None = None, init: list | None = None, overhead: dict | None = None,
            name: str | None = None, **spec: Any) -> dict:
        self._n += 1
        name = name or (f"run-{self._n}" if node else f"pod-{self._n}")
        containers = []
        for i, image in enumerate(images):
            c: dict = {"name": f"c{i}", "image": image}
            if i == 0 and requests:
                c["resources"] = {"requests": dict(requests)}
                fixed = {k: v for k, v in requests.items() if "/" in k and not k.endswith("kubernetes.io")
                         or k.startswith("hugepages-")}
                if fixed:
                    c["resources"]["limits"] = fixed
            if i == 0 and ports:
                c["ports"] = ports
            containers.append(c)
        s: dict = {"containers": containers, **spec}
        if init:
            s["initContainers"] = init
        if overhead:
            s["overhead"] = overhead
        if priority is not None:
            s["priority"] = priority
        if node:
            s["nodeName"] = node
        meta: dict = {"name": name, "namespace": ns, "uid": f"uid-{ns}-{name}"}
        if labels:
            meta["labels"] = dict(labels)
        m = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": s}
        if node:  # running: distinct start times, so that preemption's victim order is defined
            m["status"] = {"phase": "Running", "startTime": f"2026-01-01T00:{self._n // 60:02d}:{self._n % 60:02d}Z"}
        (self.pods if node else self.incoming).append(m)
        return m

    def namespaces(self, names: Iterable[str] = NAMESPACES) -> None:
        for ns in names:
            labels = {"kubernetes.io/metadata.name": ns, "env": self.rng.choice(("prod", "test"))}
            if self.chance(0.5):
                labels["team"] = self.rng.choice(("a", "b"))
            self.objects.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": labels}})

    def profile(self, **kw: Any) -> None:
        self.config = {**CONFIG_V1, "profiles": [{"schedulerName": "default-scheduler", **kw}]}

    def scenario(self) -> dict:
        return {"id": f"{self.cls}-{self.seed}", "class": self.cls, "seed": self.seed, "config": self.config,
                "nodes": self.nodes, "pods": self.pods, "objects": self.objects, "incoming": self.incoming}


def _qty_cpu(g: _Gen) -> str:
    return g.rng.choice(("0", "100m", "250m", "500m", "1", "1500m", "2", "3", "4"))


def _qty_mem(g: _Gen) -> str:
    return g.rng.choice(("0", "64Mi", "256Mi", "512Mi", "1Gi", "2Gi", "3Gi", "6Gi"))


def _requests(g: _Gen, extended: bool = True) -> dict:
    r: dict = {}
    if g.chance(0.85):
        r["cpu"] = _qty_cpu(g)
    if g.chance(0.8):
        r["memory"] = _qty_mem(g)
    if extended and g.chance(0.2):
        r["example.com/foo"] = str(g.rng.choice((1, 2, 3)))
    if extended and g.chance(0.15):
        r["nvidia.com/gpu"] = str(g.rng.choice((1, 2)))
    if extended and g.chance(0.15):
        r["ephemeral-storage"] = g.rng.choice(("1Gi", "10Gi", "50Gi"))
    if extended and g.chance(0.05):
        r["hugepages-2Mi"] = g.rng.choice(("2Mi", "1Gi"))
        r.setdefault("memory", "64Mi")  # the API server: HugePages require cpu or memory
    return r


def _basic_nodes(g: _Gen, n: int, **kw: Any) -> None:
    for _ in range(n):
        extra = {}
        if g.chance(0.4):
            extra["example.com/foo"] = str(g.rng.choice((0, 1, 2, 4)))
        if g.chance(0.3):
            extra["nvidia.com/gpu"] = str(g.rng.choice((0, 1, 2, 4)))
        if g.chance(0.5):
            extra["ephemeral-storage"] = g.rng.choice(("0", "20Gi", "100Gi"))
        if g.chance(0.1):
            extra["hugepages-2Mi"] = g.rng.choice(("0", "1Gi"))
        g.node(cpu=g.rng.choice(("1", "2", "4", "8", "3500m")), memory=g.rng.choice(("2Gi", "4Gi", "8Gi", "16Gi")),
               pods=g.rng.choice(("3", "10", "110", "110")), extra=extra, **kw)


def _fill(g: _Gen, k: int, **kw: Any) -> None:
    """k bound pods on random nodes, with random requests."""
    for _ in range(k):
        node = g.rng.choice(g.nodes)["metadata"]["name"]
        g.pod(node=node, requests=_requests(g), labels={"app": g.rng.choice(APPS)}, **kw)


ODD_CPU = ("1.5", "0.5", "1500m", "0.001", "2000m", "1e-1", "100m", "3")
ODD_MEM = ("100M", "1G", "1e9", "2Ki", "512Mi", "1.5Gi", "0", "128974848")


def _odd_requests(g: _Gen) -> dict:
    r: dict = {}
    if g.chance(0.8):
        r["cpu"] = g.rng.choice(ODD_CPU)
    if g.chance(0.8):
        r["memory"] = g.rng.choice(ODD_MEM)
    return r


def gen_resources(g: _Gen) -> None:
    _basic_nodes(g, g.rng.randint(2, 8))
    if g.chance(0.2):  # a node with nothing allocatable, or no room for pods
        g.nodes[0]["status"]["allocatable"].update({"cpu": "0", "pods": g.rng.choice(("0", "1"))})
    _fill(g, g.rng.randint(0, 14))
    for _ in range(g.rng.randint(1, 8)):
        kw: dict = {}
        if g.chance(0.2):
            kw["init"] = [{"name": "init", "image": "busybox", "resources": {"requests": {"cpu": _qty_cpu(g),
                                                                                          "memory": _qty_mem(g)}}}]
            if g.chance(0.5):
                kw["init"][0]["restartPolicy"] = "Always"  # a sidecar
            if g.chance(0.3):
                kw["init"].append({"name": "init2", "image": "busybox",
                                   "resources": {"requests": _odd_requests(g)} if g.chance(0.7) else {}})
        if g.chance(0.1):
            kw["overhead"] = {"cpu": "100m", "memory": "64Mi"}
        requests = _requests(g) if g.chance(0.7) else _odd_requests(g)
        images = g.rng.sample(("busybox", "nginx:1.25", "redis:7"), g.rng.randint(1, 2))
        m = g.pod(requests=requests, images=images, **kw)
        c0 = m["spec"]["containers"][0]
        if g.chance(0.15) and "cpu" in requests:  # limits only: the API server defaults requests to them
            c0["resources"] = {"limits": {k: v for k, v in c0["resources"]["requests"].items()}}
        if len(m["spec"]["containers"]) > 1 and g.chance(0.5):
            m["spec"]["containers"][1]["resources"] = {"requests": _odd_requests(g)}
        if g.chance(0.12):  # pod-level resources (PodLevelResources, beta and on in v1.34)
            c0["resources"] = {"requests": {"cpu": "100m", "memory": "64Mi"}}
            for c in m["spec"]["containers"][1:]:
                c.pop("resources", None)
            m["spec"]["resources"] = {"requests": {"cpu": g.rng.choice(("500m", "1", "2")),
                                                   "memory": g.rng.choice(("256Mi", "1Gi"))}}
            m["spec"].pop("initContainers", None)
            m["spec"].pop("overhead", None)


TAINTS = (
    {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
    {"key": "dedicated", "value": "infra", "effect": "NoExecute"},
    {"key": "spot", "value": "true", "effect": "PreferNoSchedule"},
    {"key": "maintenance", "effect": "PreferNoSchedule"},
    {"key": "flaky", "value": "yes", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"},
)


def _toleration(g: _Gen) -> dict:
    t = dict(g.rng.choice(TAINTS))
    if g.chance(0.3):
        t = {"key": t["key"], "operator": "Exists"}
        if g.chance(0.5):
            t["effect"] = g.rng.choice(("NoSchedule", "PreferNoSchedule", "NoExecute"))
    elif g.chance(0.1):
        t = {"operator": "Exists"}
    else:
        t["operator"] = "Equal"
        t.setdefault("value", "")
        if g.chance(0.3):
            t.pop("effect")
    if t.get("effect") == "NoExecute" and g.chance(0.3):
        t["tolerationSeconds"] = 60
    return t


PREFER_TAINTS = tuple({"key": f"soft-{i}", "value": v, "effect": "PreferNoSchedule"}
                      for i, v in enumerate(("a", "b", "", "c")))


def gen_taints(g: _Gen) -> None:
    for _ in range(g.rng.randint(2, 8)):
        taints = g.rng.sample(TAINTS, g.rng.choice((0, 1, 1, 2, 3)))
        if g.chance(0.4):
            taints += g.rng.sample(PREFER_TAINTS, g.rng.randint(1, 4))
        g.node(taints=[dict(t) for t in taints] or None, unschedulable=g.chance(0.1))
    _fill(g, g.rng.randint(0, 4))
    for _ in range(g.rng.randint(1, 6)):
        tol = [_toleration(g) for _ in range(g.rng.choice((0, 1, 2, 3)))]
        if g.chance(0.1):
            tol.append({"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"})
        if g.chance(0.3):
            t = dict(g.rng.choice(PREFER_TAINTS))
            tol.append(g.rng.choice(({**t, "operator": "Equal"}, {"key": t["key"], "operator": "Exists"},
                                     {"operator": "Exists", "effect": "PreferNoSchedule"},
                                     {"key": t["key"], "operator": "Equal", "value": "zz", "effect": "PreferNoSchedule"})))
        g.pod(requests={"cpu": "100m"}, **({"tolerations": tol} if tol else {}))


NODE_LABELS = {"disktype": ("ssd", "hdd", "nvme"), "tier": ("1", "2", "3", "10", "high", "007"), "gpu": ("true", "false"),
               "arch": ("amd64", "arm64")}


def _node_labels(g: _Gen) -> dict:
    return {k: g.rng.choice(v) for k, v in NODE_LABELS.items() if g.chance(0.6)}


def _selector_req(g: _Gen, *, fields: bool = False, required: bool = False) -> dict:
    if fields and g.chance(0.7):
        return {"key": "metadata.name", "operator": g.rng.choice(("In", "NotIn")),
                "values": [f"node-{g.rng.randint(0, 7)}"]}
    key = g.rng.choice(list(NODE_LABELS) + ["topology.kubernetes.io/zone"])
    vals = NODE_LABELS.get(key, ZONES)
    op = g.rng.choice(("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt") if key == "tier" else
                      ("In", "NotIn", "Exists", "DoesNotExist"))
    r: dict = {"key": key, "operator": op}
    if op in ("In", "NotIn"):
        r["values"] = g.rng.sample(list(vals), g.rng.randint(1, 2))
    elif op in ("Gt", "Lt"):
        # the API server refuses values that are not label values in required terms only
        r["values"] = [str(g.rng.randint(0 if required else -1, 5))]
    return r


def _node_selector_term(g: _Gen, required: bool = False) -> dict:
    term: dict = {}
    if g.chance(0.85):
        term["matchExpressions"] = [_selector_req(g, required=required) for _ in range(g.rng.randint(1, 2))]
    if g.chance(0.3) or not term:
        f = _selector_req(g, fields=True, required=required)
        if f["key"] == "metadata.name":
            term["matchFields"] = [f]
        elif not term:
            term["matchExpressions"] = [f]
    return term


def gen_affinity(g: _Gen) -> None:
    for _ in range(g.rng.randint(2, 8)):
        g.node(labels=_node_labels(g))
    _fill(g, g.rng.randint(0, 4))
    for _ in range(g.rng.randint(1, 6)):
        spec: dict = {}
        if g.chance(0.35):
            spec["nodeSelector"] = {k: g.rng.choice(v) for k, v in g.rng.sample(sorted(NODE_LABELS.items()), 1)}
        aff: dict = {}
        if g.chance(0.5):
            aff["requiredDuringSchedulingIgnoredDuringExecution"] = {
                "nodeSelectorTerms": [_node_selector_term(g, True) for _ in range(g.rng.randint(1, 2))]}
        if g.chance(0.6):
            aff["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": g.rng.randint(1, 100), "preference": _node_selector_term(g)}
                for _ in range(g.rng.randint(1, 3))]
        if aff:
            spec["affinity"] = {"nodeAffinity": aff}
        g.pod(requests={"cpu": "100m"}, **spec)


TOPOLOGY_KEYS = ("kubernetes.io/hostname", "topology.kubernetes.io/zone")


def _label_selector(g: _Gen) -> dict:
    c = g.rng.random()
    if c < 0.5:
        return {"matchLabels": {"app": g.rng.choice(APPS)}}
    if c < 0.8:
        return {"matchExpressions": [{"key": "app", "operator": g.rng.choice(("In", "NotIn")),
                                      "values": g.rng.sample(APPS, g.rng.randint(1, 2))}]}
    if c < 0.9:
        return {"matchExpressions": [{"key": "team", "operator": g.rng.choice(("Exists", "DoesNotExist"))}]}
    return {}


def _pod_term(g: _Gen) -> dict:
    t: dict = {"topologyKey": g.rng.choice(TOPOLOGY_KEYS), "labelSelector": _label_selector(g)}
    c = g.rng.random()
    if c < 0.2:
        t["namespaces"] = g.rng.sample(NAMESPACES, g.rng.randint(1, 2))
    elif c < 0.35:
        t["namespaceSelector"] = g.rng.choice(({}, {"matchLabels": {"env": "prod"}},
                                               {"matchExpressions": [{"key": "team", "operator": "Exists"}]}))
    if g.chance(0.1):
        t["matchLabelKeys"] = ["version"]
    elif g.chance(0.05):
        t["mismatchLabelKeys"] = ["version"]
    return t


def _pod_affinity(g: _Gen, existing: bool = False) -> dict:
    aff: dict = {}
    for kind in g.rng.sample(("podAffinity", "podAntiAffinity"), g.rng.randint(1, 2)):
        terms: dict = {}
        if g.chance(0.5):
            terms["requiredDuringSchedulingIgnoredDuringExecution"] = [_pod_term(g)]
        if g.chance(0.7):
            terms["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": g.rng.randint(1, 100), "podAffinityTerm": _pod_term(g)} for _ in range(g.rng.randint(1, 2))]
        if terms:
            aff[kind] = terms
    return aff


def _pod_labels(g: _Gen) -> dict:
    labels = {"app": g.rng.choice(APPS)}
    if g.chance(0.4):
        labels["team"] = g.rng.choice(("a", "b"))
    if g.chance(0.3):
        labels["version"] = g.rng.choice(("v1", "v2"))
    return labels


def gen_podaffinity(g: _Gen) -> None:
    g.namespaces()
    for _ in range(g.rng.randint(2, 9)):
        g.node(zone=g.chance(0.9))
    for _ in range(g.rng.randint(0, 12)):
        spec: dict = {}
        if g.chance(0.35):
            aff = _pod_affinity(g, existing=True)
            if aff:
                spec["affinity"] = aff
        g.pod(node=g.rng.choice(g.nodes)["metadata"]["name"], ns=g.rng.choice(NAMESPACES), labels=_pod_labels(g),
              requests={"cpu": "100m"}, **spec)
    for _ in range(g.rng.randint(1, 6)):
        spec = {}
        aff = _pod_affinity(g)
        if aff and g.chance(0.85):
            spec["affinity"] = aff
        labels = _pod_labels(g)
        if g.chance(0.15):  # a pod whose required affinity only it matches (the first of its group)
            labels["group"] = "g1"
            spec["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"group": "g1"}}, "topologyKey": g.rng.choice(TOPOLOGY_KEYS)}]}}
        g.pod(ns=g.rng.choice(NAMESPACES), labels=labels, requests={"cpu": "100m"}, **spec)


def _spread_constraint(g: _Gen, key: str, unsat: str) -> dict:
    c: dict = {"maxSkew": g.rng.choice((1, 1, 2, 3)), "topologyKey": key, "whenUnsatisfiable": unsat,
               "labelSelector": _label_selector(g)}
    if unsat == "DoNotSchedule" and g.chance(0.25):
        c["minDomains"] = g.rng.randint(1, 5)
    if g.chance(0.2):
        c["nodeAffinityPolicy"] = g.rng.choice(("Honor", "Ignore"))
    if g.chance(0.2):
        c["nodeTaintsPolicy"] = g.rng.choice(("Honor", "Ignore"))
    if g.chance(0.2):
        c["matchLabelKeys"] = ["version"]
    return c


def gen_spread(g: _Gen) -> None:
    g.namespaces(("default", "prod"))
    for _ in range(g.rng.randint(2, 16)):
        taints = [dict(TAINTS[0])] if g.chance(0.15) else None
        g.node(zone=g.chance(0.85), labels=_node_labels(g) if g.chance(0.5) else None, taints=taints)
    for _ in range(g.rng.randint(0, 20)):
        m = g.pod(node=g.rng.choice(g.nodes)["metadata"]["name"], labels=_pod_labels(g), requests={"cpu": "100m"},
                  ns="prod" if g.chance(0.15) else "default")
        if g.chance(0.08):  # terminating: still on its node, not counted by spreading
            m["metadata"]["deletionTimestamp"] = "2026-05-31T23:59:00Z"
            m["metadata"]["deletionGracePeriodSeconds"] = 30
    if g.chance(0.3):  # system default spreading: a Service selects the pods
        app = g.rng.choice(APPS)
        g.objects.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": f"svc-{app}", "namespace": "default"},
                          "spec": {"selector": {"app": app}, "ports": [{"port": 80}]}})
    for _ in range(g.rng.randint(1, 6)):
        spec: dict = {}
        if g.chance(0.8):
            pairs = g.rng.sample([(k, u) for k in TOPOLOGY_KEYS for u in ("DoNotSchedule", "ScheduleAnyway")],
                                 g.rng.randint(1, 2))
            spec["topologySpreadConstraints"] = [_spread_constraint(g, k, u) for k, u in pairs]
        if g.chance(0.2):
            spec["nodeSelector"] = {"disktype": g.rng.choice(NODE_LABELS["disktype"])}
        elif g.chance(0.2):  # required node affinity (what nodeAffinityPolicy Honor filters domains by)
            spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [_node_selector_term(g, True)]}}}
        if g.chance(0.2):
            spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
        g.pod(labels=_pod_labels(g), requests={"cpu": "100m"}, **spec)


def _ports(g: _Gen) -> list:
    out = []
    for _ in range(g.rng.randint(1, 2)):
        p: dict = {"containerPort": g.rng.choice((80, 443, 8080)), "hostPort": g.rng.choice((80, 443, 8080, 9000))}
        if g.chance(0.3):
            p["protocol"] = g.rng.choice(("UDP", "SCTP", "TCP"))
        if g.chance(0.3):
            p["hostIP"] = g.rng.choice(("0.0.0.0", "10.0.0.1", "10.0.0.2"))
        out.append(p)
    # the API server refuses duplicate (hostPort, protocol, hostIP) within a pod
    seen, uniq = set(), []
    for p in out:
        k = (p["hostPort"], p.get("protocol", "TCP"), p.get("hostIP", ""))
        if k not in seen:
            seen.add(k)
            uniq.append(p)
    return uniq


def gen_ports(g: _Gen) -> None:
    for _ in range(g.rng.randint(2, 6)):
        g.node()
    for _ in range(g.rng.randint(0, 8)):
        g.pod(node=g.rng.choice(g.nodes)["metadata"]["name"], ports=_ports(g) if g.chance(0.6) else None)
    for _ in range(g.rng.randint(1, 6)):
        if g.chance(0.15):  # host network: the API server defaults each containerPort's hostPort to it
            g.pod(ports=[{"containerPort": g.rng.choice((80, 443, 9000))}], requests={"cpu": "100m"}, hostNetwork=True)
            continue
        kw: dict = {}
        if g.chance(0.2):  # an init container's hostPort (a sidecar's counts, a plain one's does not)
            kw["init"] = [{"name": "init", "image": "busybox", "ports": _ports(g),
                           **({"restartPolicy": "Always"} if g.chance(0.6) else {})}]
        g.pod(ports=_ports(g) if g.chance(0.8) else None, requests={"cpu": "100m"}, **kw)


IMAGES = (("nginx:1.25", 60 * 2**20), ("docker.io/library/redis:7", 120 * 2**20), ("busybox:latest", 2 * 2**20),
          ("postgres:16", 400 * 2**20), ("tensorflow/tensorflow:2.15.0-gpu", 3 * 2**30),
          ("registry.k8s.io/pause:3.9", 700 * 2**10), ("example.com/big:1", 1500 * 2**20),
          ("nginx@sha256:" + "ab" * 32, 61 * 2**20), ("docker.io/library/nginx:latest", 70 * 2**20),
          ("quay.io/org/app:2", 30 * 2**20), ("tiny:1", 10 * 2**20))


def gen_images(g: _Gen) -> None:
    for _ in range(g.rng.randint(2, 8)):
        imgs = g.rng.sample(IMAGES, g.rng.randint(0, 4))
        g.node(images=[((n,) if not n.startswith("docker.io/library/") else (n, n.split("/")[-1]), s)
                       for n, s in imgs])
    for _ in range(g.rng.randint(1, 6)):
        names = [n for n, _ in g.rng.sample(IMAGES, g.rng.randint(1, 3))]
        names = [n.replace("docker.io/library/", "") if g.chance(0.5) else n for n in names]
        names = [n.replace(":latest", "") if g.chance(0.5) else n for n in names]
        kw: dict = {}
        if g.chance(0.3):  # init containers' and sidecars' images
            kw["init"] = [{"name": f"init{j}", "image": n, **({"restartPolicy": "Always"} if g.chance(0.5) else {})}
                          for j, (n, _) in enumerate(g.rng.sample(IMAGES, g.rng.randint(1, 2)))]
        g.pod(images=names, requests={"cpu": "100m"}, **kw)


def gen_preemption(g: _Gen) -> None:
    g.namespaces(("default",))
    prios = (0, 10, 100, 500, 1000)
    for p in prios:
        g.objects.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                          "metadata": {"name": f"prio-{p}"}, "value": p})
        # a class that never preempts: the Priority admission plugin gives its pods that policy (and
        # refuses a pod that asks for another one in its spec)
        g.objects.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                          "metadata": {"name": f"prio-{p}-never"}, "value": p, "preemptionPolicy": "Never"})
    for _ in range(g.rng.randint(1, 6)):
        g.node(cpu=g.rng.choice(("1", "2", "4")), memory="8Gi", pods=g.rng.choice(("4", "110")),
               taints=[dict(TAINTS[0])] if g.chance(0.1) else None)
    for _ in range(g.rng.randint(len(g.nodes) * 2, len(g.nodes) * 5)):
        g.pod(node=g.rng.choice(g.nodes)["metadata"]["name"], labels={"app": g.rng.choice(APPS)},
              requests={"cpu": g.rng.choice(("250m", "500m", "1")), "memory": g.rng.choice(("256Mi", "2Gi"))},
              priority=g.rng.choice(prios), priorityClassName=None)
    for p in g.pods:
        pr = p["spec"]["priority"]
        p["spec"].pop("priorityClassName", None)
        p["spec"]["priorityClassName"] = f"prio-{pr}"
        p["spec"]["terminationGracePeriodSeconds"] = 0
    for app in g.rng.sample(APPS, g.rng.choice((0, 1, 1, 2))):
        g.objects.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                          "metadata": {"name": f"pdb-{app}", "namespace": "default"},
                          "spec": {"selector": {"matchLabels": {"app": app}}, "minAvailable": 1},
                          "status": {"disruptionsAllowed": g.rng.choice((0, 1)), "currentHealthy": 1,
                                     "desiredHealthy": 1, "expectedPods": 1}})
    for _ in range(g.rng.randint(1, 5)):
        pr = g.rng.choice((10, 100, 500, 1000, 1000))
        never = g.chance(0.15)
        spec: dict = {"priorityClassName": f"prio-{pr}-never" if never else f"prio-{pr}"}
        if never:  # as the admission plugin writes it
            spec["preemptionPolicy"] = "Never"
        spec["terminationGracePeriodSeconds"] = 0  # a victim later on goes at once, on both sides
        g.pod(labels={"app": g.rng.choice(APPS)}, requests={"cpu": g.rng.choice(("500m", "1", "2")), "memory": "256Mi"},
              priority=pr, **spec)


def gen_profiles(g: _Gen) -> None:
    """Non-default plugin args and weights, and a second profile the pods may name."""
    strategy = g.rng.choice(("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"))
    fit_args: dict = {"scoringStrategy": {"type": strategy,
                                          "resources": [{"name": "cpu", "weight": g.rng.randint(1, 5)},
                                                        {"name": "memory", "weight": g.rng.randint(1, 5)}]}}
    if strategy == "RequestedToCapacityRatio":
        points = sorted(g.rng.sample(range(0, 101), g.rng.choice((2, 3, 4))))
        fit_args["scoringStrategy"]["requestedToCapacityRatio"] = {
            "shape": [{"utilization": u, "score": g.rng.randint(0, 10)} for u in points]}
    if g.chance(0.2):
        fit_args["ignoredResources"] = ["example.com/foo"]
    elif g.chance(0.2):
        fit_args["ignoredResourceGroups"] = ["example.com"]
    if g.chance(0.3):
        fit_args["scoringStrategy"]["resources"].append({"name": "example.com/foo", "weight": 2})
    plugin_config = [{"name": "NodeResourcesFit", "args": fit_args}]
    if g.chance(0.4):
        plugin_config.append({"name": "NodeResourcesBalancedAllocation",
                              "args": {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1},
                                                     *([{"name": "example.com/foo", "weight": 1}] if g.chance(0.5) else [])]}})
    if g.chance(0.4):
        plugin_config.append({"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": g.rng.choice((0, 1, 50, 100)),
                                                                   "ignorePreferredTermsOfExistingPods": g.chance(0.5)}})
    if g.chance(0.4):
        added: dict = {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 10, "preference": _node_selector_term(g, True)}]}
        if g.chance(0.3):
            added["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "arch", "operator": "NotIn", "values": ["arm64"]}]}]}
        plugin_config.append({"name": "NodeAffinity", "args": {"addedAffinity": added}})
    if g.chance(0.3):
        plugin_config.append({"name": "PodTopologySpread", "args": {"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"}]}})
    score: dict = {}
    if g.chance(0.6):
        score["enabled"] = [{"name": n, "weight": g.rng.randint(1, 10)} for n in
                            g.rng.sample(("NodeResourcesFit", "ImageLocality", "TaintToleration", "NodeAffinity",
                                          "PodTopologySpread", "InterPodAffinity", "NodeResourcesBalancedAllocation"),
                                         g.rng.randint(1, 3))]
    if g.chance(0.3):
        score["disabled"] = [{"name": g.rng.choice(("ImageLocality", "NodeResourcesBalancedAllocation", "TaintToleration"))}]
        if score.get("enabled"):
            score["enabled"] = [e for e in score["enabled"] if e["name"] != score["disabled"][0]["name"]]
    prof: dict = {"schedulerName": "default-scheduler", "pluginConfig": plugin_config}
    if score:
        prof["plugins"] = {"score": score}
    other = {"schedulerName": "other-scheduler",
             "plugins": {"multiPoint": {"disabled": [{"name": "NodeResourcesBalancedAllocation"}]},
                         "score": {"enabled": [{"name": "NodeResourcesFit", "weight": 5}]}}}
    g.config = {**CONFIG_V1, "profiles": [prof, other]}
    g.namespaces(("default",))
    _basic_nodes(g, g.rng.randint(2, 8), labels=None)
    for n in g.nodes:
        n["metadata"]["labels"].update(_node_labels(g))
        if g.chance(0.3):
            n["status"]["images"] = [{"names": [m], "sizeBytes": s} for m, s in g.rng.sample(IMAGES, 2)]
    _fill(g, g.rng.randint(0, 10))
    for _ in range(g.rng.randint(0, 6)):  # running pods with affinity terms, for InterPodAffinity's args
        aff = _pod_affinity(g)
        g.pod(node=g.rng.choice(g.nodes)["metadata"]["name"], labels=_pod_labels(g), requests={"cpu": "100m"},
              **({"affinity": aff} if aff else {}))
    for _ in range(g.rng.randint(1, 6)):
        spec: dict = {}
        if g.chance(0.3):
            spec["schedulerName"] = "other-scheduler"
        if g.chance(0.3):
            spec["affinity"] = _pod_affinity(g) or None
            if spec["affinity"] is None:
                spec.pop("affinity")
        g.pod(requests=_requests(g), labels=_pod_labels(g), **spec)


def gen_volumes(g: _Gen) -> None:
    g.namespaces(("default",))
    n_nodes = g.rng.randint(2, 6)
    for i in range(n_nodes):
        g.node(labels={"topology.kubernetes.io/region": g.rng.choice(("region-1", "region-2"))} if g.chance(0.6) else None)
        if g.chance(0.15):  # a node with the beta zone label only
            lab = g.nodes[-1]["metadata"]["labels"]
            if "topology.kubernetes.io/zone" in lab:
                lab["failure-domain.beta.kubernetes.io/zone"] = lab.pop("topology.kubernetes.io/zone")
    driver = "ebs.csi.example.com"
    for n in g.nodes:
        if g.chance(0.7):
            alloc = {"count": g.rng.randint(0, 3)} if g.chance(0.8) else None
            d: dict = {"name": driver, "nodeID": n["metadata"]["name"], "topologyKeys": ["topology.kubernetes.io/zone"]}
            if alloc is not None:
                d["allocatable"] = alloc
            drivers = [d]
            if g.chance(0.5):  # the CSI drivers in-tree AWS EBS and GCE PD volumes migrate to
                for name in ("ebs.csi.aws.com", "pd.csi.storage.gke.io"):
                    drivers.append({"name": name, "nodeID": n["metadata"]["name"],
                                    "allocatable": {"count": g.rng.randint(0, 2)}})
            g.objects.append({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": n["metadata"]["name"]},
                              "spec": {"drivers": drivers}})
    g.objects.append({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "wait"},
                      "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"})
    g.objects.append({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "now"},
                      "provisioner": driver, "volumeBindingMode": "Immediate"})
    claims: list[str] = []
    if g.chance(0.5):  # dynamic provisioning at the first consumer, perhaps limited by published capacity
        sc: dict = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "provisioned"},
                    "provisioner": driver, "volumeBindingMode": "WaitForFirstConsumer", "reclaimPolicy": "Delete"}
        if g.chance(0.4):
            sc["allowedTopologies"] = [{"matchLabelExpressions": [
                {"key": "topology.kubernetes.io/zone", "values": g.rng.sample(ZONES, g.rng.randint(1, 2))}]}]
        g.objects.append(sc)
        if g.chance(0.6):
            g.objects.append({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": driver},
                              "spec": {"storageCapacity": True, "attachRequired": True}})
            for j, zone in enumerate(g.rng.sample(ZONES, g.rng.randint(1, 3))):
                cap: dict = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
                             "metadata": {"name": f"cap-{j}", "namespace": "default"},
                             "storageClassName": "provisioned",
                             "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": zone}},
                             "capacity": g.rng.choice(("0", "2Gi", "5Gi", "20Gi"))}
                if g.chance(0.3):
                    cap["maximumVolumeSize"] = g.rng.choice(("1Gi", "4Gi"))
                g.objects.append(cap)
        for k in range(g.rng.randint(1, 3)):
            name = f"dyn-{k}"
            g.objects.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                              "metadata": {"name": name, "namespace": "default", "uid": f"uid-dyn-{k}"},
                              "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "provisioned",
                                       "resources": {"requests": {"storage": g.rng.choice(("1Gi", "3Gi", "8Gi"))}}},
                              "status": {"phase": "Pending"}})
            claims.append(name)
    n_pvs = g.rng.randint(1, 6)
    # distinct sizes: among equally small matching PVs upstream takes the first of an unordered index
    sizes = g.rng.sample(range(1, 21), n_pvs)
    for i in range(n_pvs):
        zone = g.rng.choice(ZONES)
        cls = g.rng.choice(("wait", "now"))
        pv: dict = {"apiVersion": "v1", "kind": "PersistentVolume",
                    "metadata": {"name": f"pv-{i}", "labels": {}},
                    "spec": {"capacity": {"storage": f"{sizes[i]}Gi"},
                             "accessModes": [g.rng.choice(("ReadWriteOnce", "ReadWriteOncePod", "ReadOnlyMany"))],
                             "storageClassName": cls, "persistentVolumeReclaimPolicy": "Retain"}}
        if cls == "wait":
            pv["spec"]["local"] = {"path": f"/mnt/{i}"}
            pv["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "kubernetes.io/hostname", "operator": "In",
                 "values": [g.rng.choice(g.nodes)["metadata"]["name"]]}]}]}}
        else:
            pv["spec"]["csi"] = {"driver": driver, "volumeHandle": f"vol-{i}"}
            if g.chance(0.6):
                pv["metadata"]["labels"]["topology.kubernetes.io/zone"] = zone
                if g.chance(0.3):  # the in-tree multi-zone form, and a region
                    pv["metadata"]["labels"]["topology.kubernetes.io/zone"] = "__".join(sorted(g.rng.sample(ZONES, 2)))
                if g.chance(0.3):
                    pv["metadata"]["labels"]["topology.kubernetes.io/region"] = g.rng.choice(("region-1", "region-2"))
                if g.chance(0.2):  # the beta label VolumeZone also reads
                    pv["metadata"]["labels"]["failure-domain.beta.kubernetes.io/zone"] = \
                        pv["metadata"]["labels"].pop("topology.kubernetes.io/zone")
        pvc: dict = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                     "metadata": {"name": f"claim-{i}", "namespace": "default", "uid": f"uid-claim-{i}"},
                     "spec": {"accessModes": pv["spec"]["accessModes"], "storageClassName": cls,
                              "resources": {"requests": {"storage": "1Gi"}}}}
        if cls == "now" or g.chance(0.3):  # bound already
            pvc["spec"]["volumeName"] = pv["metadata"]["name"]
            pvc["status"] = {"phase": "Bound", "accessModes": pv["spec"]["accessModes"],
                             "capacity": pv["spec"]["capacity"]}
            pv["spec"]["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": "default", "name": pvc["metadata"]["name"],
                                      "uid": f"uid-claim-{i}"}
            pv["status"] = {"phase": "Bound"}
            pvc["metadata"]["uid"] = f"uid-claim-{i}"
            pvc["metadata"]["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}  # the PV controller's
        else:
            pvc["status"] = {"phase": "Pending"}
            pv["status"] = {"phase": "Available"}
        g.objects += [pv, pvc]
        claims.append(pvc["metadata"]["name"])
    for _ in range(g.rng.randint(0, 5)):
        c = g.rng.choice(claims)
        pvc = next(o for o in g.objects if o["kind"] == "PersistentVolumeClaim" and o["metadata"]["name"] == c)
        if "volumeName" in pvc["spec"]:
            g.pod(node=g.rng.choice(g.nodes)["metadata"]["name"],
                  volumes=[{"name": "v", "persistentVolumeClaim": {"claimName": c}}])
    if g.chance(0.15):  # a claim being deleted
        pvc = next(o for o in g.objects if o["kind"] == "PersistentVolumeClaim")
        pvc["metadata"]["deletionTimestamp"] = "2026-05-31T23:59:00Z"
        pvc["metadata"]["finalizers"] = ["kubernetes.io/pvc-protection"]
    def inline_volume(j: int) -> dict:  # in-tree volumes VolumeRestrictions checks for conflicts
        kind = g.rng.choice(("gce", "aws", "iscsi", "rbd"))
        if kind == "gce":
            src = {"gcePersistentDisk": {"pdName": g.rng.choice(("disk-a", "disk-b")), "readOnly": g.chance(0.5)}}
        elif kind == "aws":
            src = {"awsElasticBlockStore": {"volumeID": g.rng.choice(("vol-a", "vol-b"))}}
        elif kind == "iscsi":
            src = {"iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.2026-01.com.example:t", "lun": g.rng.choice((0, 1)),
                             "readOnly": g.chance(0.5)}}
        else:
            src = {"rbd": {"monitors": ["10.0.0.2:6789"], "pool": "rbd", "image": g.rng.choice(("img-a", "img-b")),
                           "readOnly": g.chance(0.5)}}
        return {"name": f"inline{j}", **src}

    for _ in range(g.rng.randint(0, 3)):
        g.pod(node=g.rng.choice(g.nodes)["metadata"]["name"], volumes=[inline_volume(0)])
    for _ in range(g.rng.randint(1, 4)):
        if g.chance(0.25):
            g.pod(requests={"cpu": "100m"}, volumes=[inline_volume(j) for j in range(g.rng.randint(1, 2))])
            continue
        names = g.rng.sample(claims, g.rng.randint(1, min(3, len(claims))))
        if g.chance(0.04):
            names.append("missing-claim")
        vols = [{"name": f"v{j}", "persistentVolumeClaim": {"claimName": c}} for j, c in enumerate(names)]
        g.pod(requests={"cpu": "100m"}, volumes=vols)


DRA_DRIVER = "gpu.example.com"
_A = f'device.attributes["{"gpu.example.com"}"]'
_C = f'device.capacity["{"gpu.example.com"}"]'
#: claim selectors beyond equality: string and list functions, regexes, quantities, semver,
#: arithmetic, presence tests, conditionals, and CEL's error absorption by && and ||
CEL_SELECTORS = (
    f'{_A}.model.startsWith("a")', f'{_A}.model in ["a100", "h100"]', f'{_A}.model.matches("^h")',
    f'{_C}.memory.isGreaterThan(quantity("20Gi"))', f'{_C}.memory.compareTo(quantity("40Gi")) == 0',
    f'{_A}.index % 2 == 0', f'size({_A}.model) == 4', f'"numa" in {_A}', f'has({_A}.numa)',
    f'{_A}.driverVersion.isGreaterThan(semver("1.2.0"))', f'{_A}.driverVersion.major() >= 2',
    f'{_A}.missing == 1 || true', f'{_A}.missing == 1 && false', f'{_A}.index > 1 && {_A}.model == "t4"',
    f'{_A}.model == "a100" ? {_A}.index < 2 : true', f'{_A}.model.endsWith("00") && {_A}.numa == 1',
    f'{_C}.memory.asApproximateFloat() > 30e9', f'{_A}.model.contains("1")',
    f'{_A}.driverVersion.isLessThan(semver("2.0.0"))', f'{_A}.driverVersion.compareTo(semver("2.0.0-rc.1")) == 0',
    f'{_A}.driverVersion.minor() == 2', f'{_C}.memory.asInteger() > 40000000000',
    f'{_C}.memory.add(quantity("1Gi")).isGreaterThan(quantity("80Gi"))', f'sign({_C}.memory.sub(quantity("16Gi"))) == 0',
    f'[1, 2, 3].exists(x, x == {_A}.index)', f'{_A}.model.lowerAscii() == "a100"', f'{_A}.index / {_A}.numa > 0',
    f'{_A}.model < "b"', f'{_A}.index + {_A}.numa >= 3', f'{_C}.memory.isInteger()',
    f'size({_A}.label) == 5', f'{_A}.label.charAt(4) == "é"', f'{_A}.driverVersion == semver("2.1.0+other")',
    f'{_A}.index / 0 > 1', f'{_A}.index % 0 == 1', f'{_A}.index + 9223372036854775807 > 0',
    f'semver({_A}.model) == semver("1.0.0")', f'quantity({_A}.model).isInteger()', f'int({_A}.model) > 0',
    f'{_A}.label.matches("^gpu-\\\\pL$")', f'{_A}.label.indexOf("é") == 4',
)
NIC_DRIVER = "nic.example.com"


def gen_dra(g: _Gen) -> None:
    """Structured parameters: a DeviceClass, one ResourceSlice per node (GPUs with model, NUMA node
    and memory), and claims the pods name (some shared by two pods) asking for counts, models,
    memory, all of a node's devices, devices on one NUMA node, the first available of several
    subrequests, or admin access; incomplete and (rarely) invalid pools; a network-attached slice."""
    g.namespaces(("default",))
    g.objects[-1]["metadata"]["labels"]["resource.kubernetes.io/admin-access"] = "true"
    res = "resource.k8s.io/v1"
    classes = [{"apiVersion": res, "kind": "DeviceClass", "metadata": {"name": "gpu"},
                "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRA_DRIVER}"'}}]}}]
    if g.chance(0.5):
        classes.append({"apiVersion": res, "kind": "DeviceClass", "metadata": {"name": "big-gpu"},
                        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRA_DRIVER}"'}},
                                               {"cel": {"expression": f'device.capacity["{DRA_DRIVER}"].memory'
                                                                      f'.compareTo(quantity("40Gi")) >= 0'}}]}})
    g.objects += classes
    fabric, invalid = g.chance(0.25), False
    for _ in range(g.rng.randint(1, 6)):
        node = g.node(cpu="16", memory="64Gi")
        name = node["metadata"]["name"]
        n = g.rng.choice((0, 1, 2, 4, 4, 8))
        if n == 0 and g.chance(0.5):
            continue  # no slice at all
        model = g.rng.choice(("a100", "h100", "t4"))
        mem = {"a100": "40Gi", "h100": "80Gi", "t4": "16Gi"}[model]
        version = g.rng.choice(("1.0.0", "1.2.3", "2.0.0-rc.1", "2.1.0", "2.1.0+build.7"))
        devices = [{"name": f"gpu-{i}", "attributes": {"model": {"string": model}, "numa": {"int": i * 2 // max(n, 1)},
                                                       "index": {"int": i}, "driverVersion": {"version": version},
                                                       "label": {"string": "gpu-é"}},
                    "capacity": {"memory": {"value": mem}}} for i in range(n)]
        # an invalid pool: two slices naming the same device. At most one, and not beside the
        # network-attached slice: upstream filters nodes in parallel and reports the first error
        # any node meets, so two nodes failing differently would make its message random
        if n >= 1 and not fabric and not invalid and g.chance(0.03):
            invalid = True
            for k in range(2):
                g.objects.append({"apiVersion": res, "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpus-{k}"},
                                  "spec": {"driver": DRA_DRIVER, "nodeName": name,
                                           "pool": {"name": name, "generation": 1, "resourceSliceCount": 2},
                                           "devices": devices[:1]}})
            continue
        if n >= 2 and not fabric and g.chance(0.2):
            # an incomplete pool: one of its two slices published. (Not both: upstream lists a pool's
            # slices in informer order, so which slice's devices come first would be random.)
            g.objects.append({"apiVersion": res, "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpus-0"},
                              "spec": {"driver": DRA_DRIVER, "nodeName": name,
                                       "pool": {"name": name, "generation": 1, "resourceSliceCount": 2},
                                       "devices": devices[: n // 2]}})
            continue
        g.objects.append({"apiVersion": res, "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpus"},
                          "spec": {"driver": DRA_DRIVER, "nodeName": name,
                                   "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                                   "devices": devices}})
    if fabric:
        # network-attached devices: a slice for the nodes a selector picks. Another driver and class:
        # with two pools a request could use, upstream's choice would follow Go map order (random)
        g.objects.append({"apiVersion": res, "kind": "DeviceClass", "metadata": {"name": "nic"},
                          "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{NIC_DRIVER}"'}}]}})
        classes.append(g.objects[-1])
        g.objects.append({"apiVersion": res, "kind": "ResourceSlice", "metadata": {"name": "fabric"},
                          "spec": {"driver": NIC_DRIVER, "pool": {"name": "fabric", "generation": 1,
                                                                  "resourceSliceCount": 1},
                                   "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
                                       {"key": "topology.kubernetes.io/zone", "operator": "In",
                                        "values": [g.rng.choice(ZONES)]}]}]},
                                   "devices": [{"name": f"nic-{i}", "attributes": {"model": {"string": "nic"},
                                                                                   "index": {"int": i}}}
                                               for i in range(g.rng.randint(1, 3))]}})
    n_claims = g.rng.randint(1, 5)
    for i in range(n_claims):
        req: dict = {"deviceClassName": g.rng.choice([c["metadata"]["name"] for c in classes])}
        if not fabric and g.chance(0.15):
            # (not beside the network-attached slice: on one node, "All" over an incomplete pool and
            # a selector failing on the other driver's devices would be two errors, and upstream
            # meets first whichever pool Go's map order puts first)
            req["allocationMode"] = "All"
        else:
            req["allocationMode"] = "ExactCount"
            req["count"] = g.rng.choice((1, 1, 2, 3))
        sels = []
        if g.chance(0.3):
            sels.append(f'device.attributes["{DRA_DRIVER}"].model == "{g.rng.choice(("a100", "h100", "t4"))}"')
        if g.chance(0.15):
            sels.append(f'device.attributes["{DRA_DRIVER}"].index >= {g.rng.randint(0, 3)}')
        if g.chance(0.35):
            sels.append(g.rng.choice(CEL_SELECTORS))
        if sels:
            req["selectors"] = [{"cel": {"expression": e}} for e in sels]
        if g.chance(0.1):  # admin access: devices in use stay allocatable (namespace labelled for it)
            req["adminAccess"] = True
        devices: dict = {"requests": [{"name": "gpus", "exactly": req}]}
        if g.chance(0.2):  # firstAvailable: the first subrequest that can be satisfied
            subs = []
            for j, model in enumerate(g.rng.sample(("h100", "a100", "t4", "nic"), g.rng.randint(2, 3))):
                subs.append({"name": f"s{j}", "deviceClassName": "gpu", "count": g.rng.choice((1, 2)),
                             "selectors": [{"cel": {"expression": f'device.attributes["{DRA_DRIVER}"].model == "{model}"'}}]})
            devices = {"requests": [{"name": "gpus", "firstAvailable": subs}]}
        elif g.chance(0.25):
            devices["constraints"] = [{"requests": ["gpus"], "matchAttribute": f"{DRA_DRIVER}/numa"}]
        g.objects.append({"apiVersion": res, "kind": "ResourceClaim",
                          "metadata": {"name": f"claim-{i}", "namespace": "default", "uid": f"uid-rc-{i}"},
                          "spec": {"devices": devices}})
    users = list(range(n_claims)) + [g.rng.randrange(n_claims) for _ in range(g.rng.randint(0, 2))]
    g.rng.shuffle(users)
    for i in users:
        m = g.pod(requests={"cpu": "1"}, resourceClaims=[{"name": "gpus", "resourceClaimName": f"claim-{i}"}])
        m["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpus"}]
    for _ in range(g.rng.randint(0, 2)):
        g.pod(requests={"cpu": "1"})


def gen_mixed(g: _Gen) -> None:
    """Everything at once on a bigger cluster (10-40 nodes, sometimes 60-99; up to 60 running pods, 4-12 incoming):
    resources, taints, node labels and images on nodes; affinity, anti-affinity, spreading,
    tolerations, node affinity and host ports on pods; a Service for default spreading."""
    g.namespaces()
    n_nodes = g.rng.randint(60, 99) if g.chance(0.15) else g.rng.randint(10, 40)  # < 100: every node scored
    for _ in range(n_nodes):
        taints = [dict(t) for t in g.rng.sample(TAINTS + PREFER_TAINTS, g.rng.choice((0, 0, 0, 1, 2)))]
        imgs = [((n,), sz) for n, sz in g.rng.sample(IMAGES, g.rng.randint(0, 3))]
        g.node(cpu=g.rng.choice(("2", "4", "8", "16")), memory=g.rng.choice(("4Gi", "8Gi", "32Gi")),
               pods=g.rng.choice(("10", "110")), labels=_node_labels(g), taints=taints or None, images=imgs or None,
               zone=g.chance(0.9))
    for _ in range(g.rng.randint(0, 60)):
        spec: dict = {}
        if g.chance(0.15):
            aff = _pod_affinity(g)
            if aff:
                spec["affinity"] = aff
        if g.chance(0.1):
            spec["tolerations"] = [{"operator": "Exists"}]
        m = g.pod(node=g.rng.choice(g.nodes)["metadata"]["name"], ns=g.rng.choice(NAMESPACES), labels=_pod_labels(g),
                  requests=_requests(g, extended=False), ports=_ports(g) if g.chance(0.1) else None, **spec)
        if g.chance(0.05):  # terminating: on its node still
            m["metadata"]["deletionTimestamp"] = "2026-05-31T23:59:00Z"
            m["metadata"]["deletionGracePeriodSeconds"] = 30
    if g.chance(0.5):
        app = g.rng.choice(APPS)
        g.objects.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": f"svc-{app}", "namespace": "default"},
                          "spec": {"selector": {"app": app}, "ports": [{"port": 80}]}})
    for _ in range(g.rng.randint(4, 12)):
        spec = {}
        aff: dict = {}
        if g.chance(0.4):
            aff.update(_pod_affinity(g))
        if g.chance(0.4):
            na: dict = {}
            if g.chance(0.5):
                na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [_node_selector_term(g, True)]}
            na["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": g.rng.randint(1, 100), "preference": _node_selector_term(g, True)}]
            aff["nodeAffinity"] = na
        if aff:
            spec["affinity"] = aff
        if g.chance(0.4):
            pairs = g.rng.sample([(k, u) for k in TOPOLOGY_KEYS for u in ("DoNotSchedule", "ScheduleAnyway")],
                                 g.rng.randint(1, 2))
            spec["topologySpreadConstraints"] = [_spread_constraint(g, k, u) for k, u in pairs]
        if g.chance(0.4):
            spec["tolerations"] = [_toleration(g) for _ in range(g.rng.randint(1, 3))]
        images = [n for n, _ in g.rng.sample(IMAGES, g.rng.randint(1, 2))]
        g.pod(ns=g.rng.choice(NAMESPACES), labels=_pod_labels(g), requests=_requests(g, extended=False),
              images=images, ports=_ports(g) if g.chance(0.15) else None, **spec)


#: class name -> generator filling a _Gen
CLASSES: dict[str, Callable[[_Gen], None]] = {
    "resources": gen_resources, "taints": gen_taints, "affinity": gen_affinity, "podaffinity": gen_podaffinity,
    "spread": gen_spread, "ports": gen_ports, "images": gen_images, "volumes": gen_volumes,
    "preemption": gen_preemption, "profiles": gen_profiles, "dra": gen_dra, "mixed": gen_mixed,
}


def generate(cls: str, seed: int) -> dict:
    """The scenario of class ``cls`` for ``seed`` (deterministic)."""
    g = _Gen(cls, seed)
    CLASSES[cls](g)
    return _clean(g.scenario())


def _clean(x: Any) -> Any:
    """Drop None values (manifests as a client would send them)."""
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items() if v is not None}
    if isinstance(x, list):
        return [_clean(v) for v in x]
    return x


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


def differential(classes: Iterable[str], scenarios: int, seed: int, out: str | os.PathLike | None,
                 *, oracle: Oracle | None = None, shrink_budget: int = 150, record: str | os.PathLike | None = None,
                 log: Callable[[str], None] | None = None, known: bool = True) -> dict[str, ClassSummary]:
    """Run ``scenarios`` scenarios per class (seeds ``seed``, ``seed + 1``, ...) on both sides;
    write each difference, shrunk, as ``<out>/<class>-<seed>.json``. With ``record``, write every
    agreeing scenario and the oracle's answer to ``<record>/<class>.jsonl.gz`` (replacing it)."""
    own = oracle is None
    orc = oracle or Oracle()
    summary: dict[str, ClassSummary] = {}
    outdir = Path(out) if out is not None else None
    try:
        for cls in classes:
            s = summary[cls] = ClassSummary()
            recorded: list[dict] = []
            t0 = time.perf_counter()
            for k in range(scenarios):
                sc = generate(cls, seed + k)
                try:
                    diffs, mine, theirs = check(sc, orc, known=known)
                except Exception as exc:  # noqa: BLE001 - fastsched refused the scenario: a difference too
                    diffs, mine, theirs = [{"pod": None, "field": "fastsched exception",
                                            "fastsched": f"{type(exc).__name__}: {exc}", "oracle": None}], {}, {}
                s.scenarios += 1
                s.pods += len(theirs.get("attempts", ()))
                if diffs:
                    s.differences += 1
                    if outdir is not None:
                        _write_reproducer(outdir, sc, diffs, orc, shrink_budget, known)
                    if log:
                        d = diffs[0]
                        log(f"  {sc['id']}: {d['pod']} {d['field']}: fastsched {_short(d['fastsched'])} "
                            f"oracle {_short(d['oracle'])}")
                    continue
                if compare(mine["attempts"], theirs["attempts"], known=False):
                    s.known += 1
                if record is not None:
                    recorded.append({"scenario": {**sc, "replay": mine["replay"]},
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
            and (k in FIELDS or k in ("pod", "selected", "errors", "batch_hint", "batch_hinted"))}


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
                      known: bool = True) -> None:
    fields = {d["field"] for d in diffs}

    def still(cand: dict) -> bool:
        got, _, _ = check(cand, orc, known=known)
        return bool(got) and bool(fields & {d["field"] for d in got})

    small = shrink(sc, still, budget=budget)
    try:
        d2, mine, theirs = check(small, orc, known=known)
    except Exception as exc:  # noqa: BLE001
        small, d2, mine, theirs = sc, diffs, {}, {"error": repr(exc)}
    outdir.mkdir(parents=True, exist_ok=True)
    doc = {"id": sc["id"], "differences": d2 or diffs, "scenario": {**small, "replay": mine.get("replay")},
           "fastsched": mine.get("attempts"), "oracle": theirs.get("attempts"),
           "original_size": {k: len(sc.get(k, ())) for k in ("nodes", "pods", "objects", "incoming")}}
    (outdir / f"{sc['id']}.json").write_text(json.dumps(doc, indent=1, sort_keys=True))
