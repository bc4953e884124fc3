"""Categorize the differences between fastsched (v1.34 semantics) and the v1.37.2 oracle.

Reads the JSON lines /tmp/collect-style runs write (``{"cls", "seed", "id", "mine", "theirs",
"replay", "oracle_error"|"exception"}``; see ``collect`` below), walks each scenario's attempts in
order and, per attempt, takes the known release changes out one category at a time (each
normalizer rewrites the oracle's side back to what v1.34 would answer, or both sides, and says
so), then compares what is left field by field (``fastsched.testing.oracle.FIELDS``). A scenario
stops at the first attempt whose outcome (node, nomination, victims, bindings, allocations)
differs: later attempts run on diverged clusters.

    python tools/v137_categorize.py collect OUT.jsonl FIRST_SEED N [FEATURE_GATES]
    python tools/v137_categorize.py report OUT.jsonl [--samples K]

This is a porting aid for issue 27 (docs/dev/v1.37-port.md); it goes away with the port.
"""
from __future__ import annotations

import collections
import copy
import json
import re
import sys
import time

from fastsched.testing import oracle as orc

OUTCOME = ("selected", "nominated_node", "victims", "volume_bindings", "claim_allocations")


def collect(out: str, first: int, n: int, gates: str | None = None) -> None:
    with orc.Oracle(feature_gates=gates) as o, open(out, "w") as f:
        for cls in orc.CLASSES:
            t0 = time.time()
            for seed in range(first, first + n):
                sc = orc.generate(cls, seed)
                rec = {"cls": cls, "seed": seed, "id": sc["id"]}
                try:
                    mine = orc.run_fastsched(sc, sc.get("replay"))
                    theirs = o.ask(sc, mine["replay"])
                    rec.update(mine=mine["attempts"], replay=mine["replay"], theirs=theirs.get("attempts"),
                               oracle_error=theirs.get("error"))
                except Exception as exc:  # noqa: BLE001
                    rec["exception"] = f"{type(exc).__name__}: {exc}"
                f.write(json.dumps(rec) + "\n")
            print(cls, round(time.time() - t0, 1), flush=True)


# ------------------------------------------------------------------------------------------------
# normalizers: (a = fastsched's attempt, b = the oracle's) -> category names applied (in place)
# ------------------------------------------------------------------------------------------------
def _drop_score(a: dict, b: dict, plugin: str) -> bool:
    """The oracle scored with ``plugin``, fastsched did not: take its weighted score out of b's totals."""
    sb = b.get("scores") or {}
    sa = a.get("scores") or {}
    if plugin not in sb or plugin in sa:
        return False
    for node, (_raw, _norm, weighted) in sb.pop(plugin).items():
        if b.get("total") and node in b["total"]:
            b["total"][node] -= weighted
    return True


def n_dra_score(a, b):
    """DynamicResources is a Score plugin in 1.37 (weight 2)."""
    nonzero = any(v[2] for v in ((b.get("scores") or {}).get("DynamicResources") or {}).values())
    if not _drop_score(a, b, "DynamicResources"):
        return []
    return ["score: DynamicResources scores nodes (prioritized list / DRA extended resources)" if nonzero
            else "score: DynamicResources scores (new Score extension, weight 2; 0 here)"]


def n_volumebinding_score(a, b):
    """VolumeBinding PreScore no longer skips (StorageCapacityScoring on)."""
    out = []
    pa, pb = a.get("prescore_skipped") or [], b.get("prescore_skipped") or []
    if "VolumeBinding" in pa and "VolumeBinding" not in pb and b.get("total"):
        b["prescore_skipped"] = sorted(pb + ["VolumeBinding"])
        out.append("prescore_skipped: VolumeBinding not skipped (StorageCapacityScoring on)")
    sa, sb = a.get("scores") or {}, b.get("scores") or {}
    if "VolumeBinding" in sb and "VolumeBinding" in sa and sa["VolumeBinding"] != sb["VolumeBinding"]:
        for node, v in sb["VolumeBinding"].items():
            w = sa["VolumeBinding"].get(node, [0, 0, 0])[2]
            if b.get("total") and node in b["total"]:
                b["total"][node] += w - v[2]
        sb["VolumeBinding"] = copy.deepcopy(sa["VolumeBinding"])
        out.append("score: VolumeBinding capacity score (StorageCapacityScoring on)")
    else:
        nonzero = any(v[2] for v in ((b.get("scores") or {}).get("VolumeBinding") or {}).values())
        if _drop_score(a, b, "VolumeBinding"):
            out.append("score: VolumeBinding scores volumes by capacity utilization (StorageCapacityScoring on)"
                       if nonzero else "score: VolumeBinding scores every pod (StorageCapacityScoring on)")
    return out


def n_balanced(a, b):
    """NodeResourcesBalancedAllocation: the balance with and without the pod (1.36, #135573)."""
    sa, sb = a.get("scores") or {}, b.get("scores") or {}
    p = "NodeResourcesBalancedAllocation"
    if p in sa and p in sb and sa[p] != sb[p] and set(sa[p]) == set(sb[p]):
        for node, v in sb[p].items():
            if b.get("total") and node in b["total"]:
                b["total"][node] += sa[p][node][2] - v[2]
        sb[p] = copy.deepcopy(sa[p])
        return ["score: NodeResourcesBalancedAllocation raw score (balance with and without the pod)"]
    return []


_DRA_POSTFILTER = ("no new claims to deallocate, ", "still not schedulable, ")


def n_dra_postfilter_msg(a, b):
    fa, fb = a.get("fit_error") or "", b.get("fit_error") or ""
    out = []
    for m in _DRA_POSTFILTER:
        if m in fa and m not in fb:
            fa = fa.replace(m, "")
            out.append(f"fit_error: DynamicResources PostFilter message {m.strip(', ')!r} gone")
    a["fit_error"] = fa
    return out


_CEL = re.compile(r"(selector #\d+)( on device [^:]+)?: (CEL runtime error: .*?)(\. consider using CEL optional chaining.*)?$")


def _cel_norm(s: str) -> str:
    return _CEL.sub(lambda m: f"{m.group(1)}: {m.group(3)}", s)


def n_cel_msg(a, b):
    out = []
    ea, eb = a.get("error") or "", b.get("error") or ""
    if ea and eb and ea != eb and _cel_norm(ea) == _cel_norm(eb):
        b["error"] = ea
        b["errors"] = [ea if _cel_norm(e) == _cel_norm(ea) else e for e in b.get("errors") or []]
        out.append("error: DRA CEL runtime error names the device (+ optional-chaining hint)")
    elif ea and eb and ea != eb and any(_cel_norm(e) == _cel_norm(ea) for e in b.get("errors") or []):
        b["error"] = ea
        b["errors"] = [ea]
        out.append("error: DRA CEL runtime error names the device (+ optional-chaining hint)")
    return out


_PREEMPT = re.compile(r" preemption: found a potential placement for pod on node \S+, preempting \d+ victims$")


def n_preempt_msg(a, b):
    fa, fb = a.get("fit_error") or "", b.get("fit_error") or ""
    if _PREEMPT.search(fb) and not _PREEMPT.search(fa):
        b["fit_error"] = _PREEMPT.sub("", fb)
        return ["fit_error: DefaultPreemption success message ('found a potential placement ...')"]
    return []


def n_batch(a, b):
    if b.get("batch_hinted") and b.get("selected") == b.get("batch_hint") and a.get("selected") != b.get("selected"):
        return ["selected: opportunistic batching chose the hint (not fastsched's node)"]
    return []


_POOLS: dict = {}


def _dra_pools(cls: str, seed: int) -> tuple[set, set]:
    """The scenario's nodes with an incomplete pool (fewer slices than resourceSliceCount) and with
    an invalid one (a device name twice)."""
    key = (cls, seed)
    if key not in _POOLS:
        sc = orc.generate(cls, seed)
        slices = collections.defaultdict(list)
        for o in sc.get("objects", ()):
            if o.get("kind") == "ResourceSlice":
                spec = o["spec"]
                slices[(spec["driver"], spec["pool"]["name"])].append(spec)
        incomplete, invalid = set(), set()
        for _pool, specs in slices.items():
            nodes = {sp.get("nodeName") for sp in specs if sp.get("nodeName")}
            if len(specs) < specs[0]["pool"]["resourceSliceCount"]:
                incomplete |= nodes
            names = [d["name"] for sp in specs for d in sp.get("devices") or ()]
            if len(names) != len(set(names)):
                invalid |= nodes
        _POOLS[key] = (incomplete, invalid)
    return _POOLS[key]


def dra_pool_category(r: dict, a: dict, b: dict) -> list[str]:
    """The pool rules of the 1.37 allocator (structured/internal/*/allocator_*.go allocateOne):
    incomplete and invalid pools are skipped (1.34 allocated from incomplete pools, and an invalid
    pool was an Error of the cycle); an invalid pool makes its node unschedulable ("invalid
    resource pools were encountered") when nothing else fits there."""
    if r["cls"] not in ("dra", "mixed"):
        return []
    incomplete, invalid = _dra_pools(r["cls"], r["seed"])
    out = []
    fa, fb = a.get("filter") or {}, b.get("filter") or {}
    lost = {n for n, st in fb.items() if "cannot allocate all claims" in (st.get("reasons") or []) and n not in fa}
    # a node fastsched errored on (e.g. a CEL error on one of its devices) that 1.37 never evaluates
    lost |= {n for n, st in fa.items() if st.get("code") == "Error" and fb.get(n) != st and n in incomplete}
    text_a = json.dumps([a.get("error"), a.get("errors"), fa])
    text_b = json.dumps([b.get("filter"), b.get("fit_error")])
    if lost and lost <= incomplete:
        out.append("DRA: incomplete pools are not allocated from (1.34 allocated from them)")
    elif lost:
        out.append("DRA: a node lost (not an incomplete pool)")
    if "is invalid: duplicate device name" in text_a or "invalid resource pools were encountered" in text_b:
        out.append("DRA: an invalid pool is Unschedulable on its node, not a cycle Error")
    if not out and a.get("selected") == b.get("selected") and a.get("claim_allocations") != b.get("claim_allocations"):
        out.append("DRA: other devices allocated")
    return out


NORMALIZERS = [n_dra_score, n_volumebinding_score, n_balanced, n_dra_postfilter_msg, n_preempt_msg, n_cel_msg]


def _best(total: dict) -> list:
    if not total:
        return []
    m = max(total.values())
    return sorted(n for n, t in total.items() if t == m)


def diff_fields(a: dict, b: dict) -> list[str]:
    both_failed = bool(a.get("error") and b.get("error"))
    fields = ("error",) if both_failed else orc.FIELDS
    out = []
    for f in fields:
        x, y = orc._norm(f, a.get(f)), orc._norm(f, b.get(f))
        if both_failed and x != y and x in (b.get("errors") or ()):
            continue
        if x != y:
            out.append(f)
    return out


def describe(field: str, a: dict, b: dict) -> str:
    """A finer key for what is left."""
    if field == "filter":
        fa, fb = a.get("filter") or {}, b.get("filter") or {}
        keys = set()
        for n in set(fa) | set(fb):
            x, y = fa.get(n), fb.get(n)
            if orc._norm("filter", {n: x} if x else {}) != orc._norm("filter", {n: y} if y else {}):
                px = (x or {}).get("plugin") or "-"
                py = (y or {}).get("plugin") or "-"
                keys.add(f"{px}->{py}")
        return "filter " + ",".join(sorted(keys))
    if field == "scores":
        sa, sb = a.get("scores") or {}, b.get("scores") or {}
        ps = sorted(p for p in set(sa) | set(sb) if sa.get(p) != sb.get(p))
        return "scores " + ",".join(ps)
    return field


def analyze(recs: list[dict]):
    cats = collections.Counter()          # category -> attempts
    cat_scen = collections.defaultdict(set)  # category -> scenario ids
    cat_cls = collections.defaultdict(collections.Counter)
    left = collections.Counter()
    left_scen = collections.defaultdict(set)
    samples = collections.defaultdict(list)
    diverged = collections.Counter()
    scen_with_any = set()
    attempts_total = 0
    for r in recs:
        sid = r["id"]
        if r.get("exception") or r.get("oracle_error"):
            k = "EXCEPTION " + (r.get("exception") or ("oracle: " + r["oracle_error"]))[:120]
            left[k] += 1
            left_scen[k].add(sid)
            scen_with_any.add(sid)
            continue
        for a0, b0 in zip(r["mine"], r["theirs"]):
            attempts_total += 1
            a, b = copy.deepcopy(a0), copy.deepcopy(b0)
            applied = []
            for nz in NORMALIZERS:
                applied += nz(a, b)
            if b.get("total"):
                b["best"] = _best(b["total"])
            applied += n_batch(a, b)
            rest = diff_fields(a, b)
            if rest:
                dra = dra_pool_category(r, a, b)
                if dra:
                    applied += dra
                    rest = []
            if (a0.get("selected") != b0.get("selected") and not b0.get("batch_hinted") and "best" not in rest
                    and not any(c.startswith("DRA:") for c in applied)
                    and a0.get("best") != b0.get("best")):
                applied.append("selected: another node because the scores above changed the best")
                # what the other node brings along
                rest = [f for f in rest if f not in ("volume_bindings", "claim_allocations")]
            for c in applied:
                cats[c] += 1
                cat_scen[c].add(sid)
                cat_cls[c][r["cls"]] += 1
                scen_with_any.add(sid)
            for f in rest:
                k = describe(f, a, b)
                left[k] += 1
                left_scen[k].add(sid)
                cat_cls[k][r["cls"]] += 1
                scen_with_any.add(sid)
                if len(samples[k]) < 3:
                    samples[k].append({"id": sid, "pod": a["pod"], "fastsched": a.get(f), "oracle": b.get(f),
                                       "hint": b0.get("batch_hint"), "hinted": b0.get("batch_hinted")})
            if any(a0.get(f) != b0.get(f) for f in OUTCOME) and not (
                    a0.get("selected") == b0.get("selected") and not rest):
                diverged[r["cls"]] += 1
                break
    return dict(cats=cats, cat_scen=cat_scen, cat_cls=cat_cls, left=left, left_scen=left_scen, samples=samples,
                diverged=diverged, scen_with_any=scen_with_any, attempts=attempts_total, scenarios=len(recs))


def report(path: str, k: int = 2) -> None:
    recs = [json.loads(line) for line in open(path)]
    r = analyze(recs)
    print(f"{r['scenarios']} scenarios, {r['attempts']} attempts compared, {len(r['scen_with_any'])} scenarios differ")
    print("\n# categorized (attempts, scenarios, per class)")
    for c, n in r["cats"].most_common():
        print(f"{n:7d} {len(r['cat_scen'][c]):6d}  {c}  {dict(r['cat_cls'][c])}")
    print("\n# left after normalizing (attempts, scenarios, per class)")
    for c, n in r["left"].most_common():
        print(f"{n:7d} {len(r['left_scen'][c]):6d}  {c}  {dict(r['cat_cls'][c])}")
        for s in r["samples"][c][:k]:
            print("          ", json.dumps(s)[:700])
    print("\n# scenarios stopped at a diverging outcome, per class:", dict(r["diverged"]))


if __name__ == "__main__":
    if sys.argv[1] == "collect":
        collect(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] if len(sys.argv) > 5 else None)
    else:
        k = int(sys.argv[sys.argv.index("--samples") + 1]) if "--samples" in sys.argv else 2
        report(sys.argv[2], k)
