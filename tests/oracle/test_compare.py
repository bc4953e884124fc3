"""The differential oracle's own machinery, without Go: generators, comparison, known differences, shrinking."""
from __future__ import annotations

import json

import pytest

from fastsched.testing import oracle


@pytest.mark.parametrize("cls", sorted(oracle.CLASSES))
def test_generators_are_seeded_and_valid(cls):
    a, b = oracle.generate(cls, 7), oracle.generate(cls, 7)
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    assert json.dumps(a, sort_keys=True) != json.dumps(oracle.generate(cls, 8), sort_keys=True)
    assert a["nodes"] and a["incoming"] and a["id"] == f"{cls}-7"
    out = oracle.run_fastsched(a)  # fastsched accepts what the generator makes (validation included)
    assert len(out["attempts"]) >= 1 and len(out["replay"]) == len(out["attempts"])


def test_known_differences_are_normalized_away_unless_raw(monkeypatch):
    """A KNOWN difference's normalizer runs on both sides before comparing; ``known=False`` (the
    CLI's ``--raw``) compares without it."""
    a = {"pod": "default/p", "fit_error": "0/1 nodes are available: 1 old wording."}
    b = {"pod": "default/p", "fit_error": "0/1 nodes are available: 1 new wording."}
    assert [d["field"] for d in oracle.compare([a], [b])] == ["fit_error"]
    monkeypatch.setattr(oracle, "_NORMALIZERS",
                        [lambda at: {**at, "fit_error": at["fit_error"].replace("old", "new")}])
    assert oracle.compare([a], [b]) == []
    assert [d["field"] for d in oracle.compare([a], [b], known=False)] == ["fit_error"]


def test_fastsched_prints_v1_34_4s_taint_reason_and_admits_default_tolerations():
    """Once KNOWN differences (v1.34.0's taint reason, no DefaultTolerationSeconds): a taints
    scenario's answers carry upstream's reason and the pods tolerate not-ready/unreachable."""
    for seed in range(40):
        out = oracle.run_fastsched(oracle.generate("taints", seed))
        reasons = [r for at in out["attempts"] for st in (at.get("filter") or {}).values()
                   if st.get("plugin") == "TaintToleration" for r in st.get("reasons") or ()]
        if reasons:
            break
    assert reasons and set(reasons) == {"node(s) had untolerated taint(s)"}
    assert set(oracle.KNOWN) == {"batch-expired"}  # the only one left: the oracle's wall clock


def test_compare_reports_the_first_differing_attempt_only():
    same = {"pod": "default/a", "best": ["n1"], "selected": "n1"}
    a2 = {"pod": "default/b", "best": ["n1", "n2"], "total": {"n1": 5, "n2": 5}}
    b2 = {"pod": "default/b", "best": ["n1"], "total": {"n1": 5, "n2": 4}}
    a3 = {"pod": "default/c", "fit_error": "x"}
    diffs = oracle.compare([same, a2, a3], [same, b2, {"pod": "default/c"}])
    assert [d["field"] for d in diffs] == ["total", "best"]
    assert diffs[0]["fastsched"] == {"n2": 5} and diffs[0]["oracle"] == {"n2": 4}
    assert oracle.compare([same], [same, a3])[0]["field"] == "attempts"


def test_extended_resource_reasons_compare_as_a_set():
    a = {"pod": "p", "filter": {"n": {"code": "Unschedulable", "plugin": "NodeResourcesFit",
                                      "reasons": ["Insufficient b.com/x", "Insufficient a.com/y"]}}}
    b = {"pod": "p", "filter": {"n": {"code": "Unschedulable", "plugin": "NodeResourcesFit",
                                      "reasons": ["Insufficient a.com/y", "Insufficient b.com/x"]}}}
    assert oracle.compare([a], [b]) == []
    c = {"pod": "p", "filter": {"n": {"code": "Unschedulable", "plugin": "VolumeBinding", "reasons": ["x", "y"]}}}
    d = {"pod": "p", "filter": {"n": {"code": "Unschedulable", "plugin": "VolumeBinding", "reasons": ["y", "x"]}}}
    assert oracle.compare([c], [d]) != []


def test_shrink_keeps_what_the_difference_needs():
    sc = oracle.generate("resources", 3)
    assert len(sc["nodes"]) >= 2
    keep = sc["nodes"][-1]["metadata"]["name"]

    def still(cand):  # "differs" while the last node is there
        return any(n["metadata"]["name"] == keep for n in cand["nodes"])

    small = oracle.shrink(sc, still)
    assert [n["metadata"]["name"] for n in small["nodes"]] == [keep]
    assert len(small["incoming"]) == 1 and small["pods"] == [p for p in small["pods"]
                                                               if p["spec"]["nodeName"] == keep]


def test_an_error_matches_any_node_error_upstream_could_have_met():
    """Upstream filters in parallel and ends the cycle at whichever node's Error it meets first:
    fastsched's error may be any of the oracle's ``errors``; another text is a difference."""
    theirs = {"pod": "p", "error": "running \"X\" filter plugin: a", "errors": ["running \"X\" filter plugin: a",
                                                                             "running \"X\" filter plugin: b"]}
    assert oracle.compare([{"pod": "p", "error": "running \"X\" filter plugin: b"}], [theirs]) == []
    diffs = oracle.compare([{"pod": "p", "error": "running \"X\" filter plugin: c"}], [theirs])
    assert [d["field"] for d in diffs] == ["error"]
    # an error on one side only is a difference, with the other fields
    assert oracle.compare([{"pod": "p", "best": ["n"]}], [theirs])[0]["field"] == "error"


# ------------------------------------------------------------------------------------------------
# opportunistic batching
# ------------------------------------------------------------------------------------------------
def test_batch_fields_are_compared_first_and_a_used_hint_skips_the_full_cycle_fields():
    hinted = {"pod": "default/p", "batch_hint": "n2", "batch_hinted": True, "selected": "n2",
              "feasible": ["n2"], "best": ["n2"], "total": {}}
    # the oracle retells the full cycle; fastsched did not run it: not compared when both used the hint
    full = {**hinted, "feasible": ["n1", "n2", "n3"], "best": ["n1"], "total": {"n1": 300, "n2": 290, "n3": 200}}
    assert oracle.compare([hinted], [full]) == []
    # ... but the choice is
    assert [d["field"] for d in oracle.compare([{**hinted, "selected": "n3"}], [full])] == ["selected"]
    # another hint, or a hint one side used and the other did not, is a difference of its own
    assert [d["field"] for d in oracle.compare([{**hinted, "batch_hint": "n3"}], [full])] == ["batch_hint"]
    assert [d["field"] for d in oracle.compare([{**hinted, "batch_hinted": False}], [full])] == ["batch_hinted"]
    # no hint on either side: absent and empty are alike
    assert oracle.compare([{"pod": "default/p"}], [{"pod": "default/p", "batch_hint": "", "batch_hinted": False}]) == []


@pytest.mark.parametrize("mode", oracle.BATCHING_MODES)
def test_batching_variant_makes_pods_signable_and_repeats_them(mode):
    sc = oracle.generate("resources", 3)
    v = oracle.batching_variant(sc, mode)
    assert len(v["incoming"]) == oracle.BATCHING_REPEAT * len(sc["incoming"])
    names = [p["metadata"]["name"] for p in v["incoming"]]
    assert len(set(names)) == len(names) and names[1] == names[0] + "-r1"
    assert v["id"] == f"resources-3-batching-{mode}" and sc["id"] == "resources-3"  # the original is untouched
    prof = v["config"]["profiles"][0]
    if mode == "list":
        args = next(pc["args"] for pc in prof["pluginConfig"] if pc["name"] == "PodTopologySpread")
        assert args == {"defaultingType": "List", "defaultConstraints": []}
    else:
        assert {"name": "PodTopologySpread"} in prof["plugins"]["multiPoint"]["disabled"]
    out = oracle.run_fastsched(v)
    assert sum(bool(at.get("batch_hinted")) for at in out["attempts"]) > 0
    with pytest.raises(ValueError, match="batching mode"):
        oracle.batching_variant(sc, "other")


def test_default_profile_scenarios_get_no_hint():
    for cls in ("resources", "ports", "images"):
        out = oracle.run_fastsched(oracle.generate(cls, 5))
        assert not any(at.get("batch_hint") for at in out["attempts"])


def test_signature_classes_must_agree_protocol_3():
    # digests differ between the sides (fastsched's values are not upstream's JSON): the classes count
    theirs = [{"pod": f"default/p{i}", "batch_signature": s, "batch_flush": []} for i, s in enumerate("AAB")]
    same = [{"pod": f"default/p{i}", "batch_signature": s, "batch_flush": []} for i, s in enumerate("xxy")]
    assert oracle.compare(same, theirs) == []
    merged = [{"pod": f"default/p{i}", "batch_signature": s, "batch_flush": []} for i, s in enumerate("xxx")]
    assert [(d["pod"], d["field"]) for d in oracle.compare(merged, theirs)] == [("default/p2", "batch_signature")]
    split = [{"pod": f"default/p{i}", "batch_signature": s, "batch_flush": []} for i, s in enumerate("xyy")]
    assert [(d["pod"], d["field"]) for d in oracle.compare(split, theirs)] == [("default/p1", "batch_signature")]
    unsigned = [{"pod": "default/p0", "batch_signature": "", "batch_flush": []}, *same[1:]]
    assert [d["field"] for d in oracle.compare(unsigned, theirs)] == ["batch_signature"]
    # a protocol 2 oracle reports neither field: nothing to compare
    assert oracle.compare(merged, [{"pod": f"default/p{i}"} for i in range(3)]) == []


def test_flushes_of_signed_pods_compared_and_an_oracle_only_expiry_set_aside():
    mine = [{"pod": "default/p0", "batch_signature": "x", "batch_flush": ["pod_incompatible"]},
            {"pod": "default/p1", "batch_signature": "x", "batch_flush": [], "batch_hint": "n1", "batch_hinted": True}]
    theirs = [{"pod": "default/p0", "batch_signature": "A", "batch_flush": ["pod_incompatible"]},
              {"pod": "default/p1", "batch_signature": "A", "batch_flush": [], "batch_hint": "n1", "batch_hinted": True}]
    assert oracle.compare(mine, theirs) == []
    other = [{**theirs[0], "batch_flush": ["pod_skipped"]}, theirs[1]]
    assert [d["field"] for d in oracle.compare(mine, other)] == ["batch_flush"]
    # the oracle's batch expired on its wall clock: its hint differs, the scenario is set aside as known
    expired = [theirs[0], {"pod": "default/p1", "batch_signature": "A", "batch_flush": ["expired"]}]
    assert oracle.compare(mine, expired) == []
    assert [d["field"] for d in oracle.compare(mine, expired, known=False)] == ["batch_flush"]
    assert "batch-expired" in oracle.KNOWN
