"""Class ``preenqueue``: pods held by PreEnqueue, then let in, against upstream's recorded answers.

``tests/oracle/recorded_named/preenqueue.jsonl.gz`` holds 40 scenarios of the named-only class
``preenqueue`` (``fastsched differential --class preenqueue --record DIR``: 30 from seed 31415940,
seeds 58213434, 58213464, 58213472 and 58213668, and 71023, 71029, 71031, 71046, 71049 and 72250238
(claims with owner references), one each) on which kube-scheduler v1.37.2 and
fastsched agreed: pods created with scheduling gates and their updates removing all or some of the
gates later, pods naming a ResourceClaim that does not exist, most of whose claims a later entry
creates (a cluster event: DynamicResources lets the pod in and it is attempted at that entry),
earlier pods waiting nominated after preemption, and a bound claim pod preempted (the last four
seeds) before a last pod asks for GPUs. Each replays through fastsched without Go.

Two harness holes the class found are pinned here: with a held pod's entry the driver must not
pop podBackoffQ (a nominated preemptor of an earlier entry would get a second attempt and bind)
nor step the clock (``run`` would advance to the first backoff's expiry and attempt that pod);
seeds 31415948, 31415954 and 31415963 (among six) differed with either hole back -- on the
scenarios the generator drew before claim pods could be victims (their claim pods then had
priority 1000), which those seeds no longer are.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fastsched.dra import controller
from fastsched.testing import oracle
from fastsched.testing.oracle_scenarios import CLASSES, NAMED_CLASSES, generate

RECORDS = oracle.read_recorded(Path(__file__).parent / "recorded_named" / "preenqueue.jsonl.gz")


def _differences(rec: dict) -> list:
    sc = rec["scenario"]
    return oracle.compare(oracle.run_fastsched(sc, sc["replay"])["attempts"], rec["attempts"])


def test_fastsched_agrees_with_the_recorded_oracle_on_preenqueue_holds():
    assert "preenqueue" in NAMED_CLASSES and "preenqueue" not in CLASSES  # only when named
    attempts = [a for r in RECORDS for a in r["attempts"]]
    held = [a["gated"]["plugin"] for a in attempts if a.get("gated")]
    # the set reaches what it is for: both holds, and pods attempted after their gates went
    assert held.count("SchedulingGates") > 40 and held.count("DynamicResources") > 5
    assert sum(bool(a.get("nominated_node")) for a in attempts) > 10
    assert sum(1 for r in RECORDS for a in r["attempts"]
               if not a.get("gated") and any(b["pod"] == a["pod"] and b.get("gated") for b in r["attempts"])) > 20
    # claims created later, each letting its held pod in (some of them bound)
    released = [r["attempts"][i] for r in RECORDS for i, e in enumerate(r["scenario"]["incoming"])
                if e.get("kind") == "ResourceClaim"]
    assert len(released) > 15 and all(not a.get("gated") and not a.get("error") for a in released)
    assert sum(bool(a.get("selected")) for a in released) > 3
    failures = [f"{r['scenario']['id']}: {json.dumps(d[:2])[:600]}" for r in RECORDS if (d := _differences(r))]
    assert not failures, f"{len(failures)} of {len(RECORDS)} scenarios differ:\n" + "\n".join(failures[:10])


def test_a_held_pod_is_reported_held_not_attempted():
    """A scenario's held pod: the attempt says which plugin holds it and why, and the pod's later
    update (gates removed) is attempted; a different message is a difference."""
    rec = next(r for r in RECORDS if r["scenario"]["id"] == "preenqueue-31415959")
    mine = oracle.run_fastsched(rec["scenario"], rec["scenario"]["replay"])["attempts"]
    i = next(i for i, a in enumerate(mine) if a.get("gated"))
    assert mine[i]["gated"]["plugin"] == "SchedulingGates"
    assert mine[i]["gated"]["message"].startswith("waiting for scheduling gates: [example.com/gate-")
    assert any(a["pod"] == mine[i]["pod"] and not a.get("gated") for a in mine[i + 1:])
    changed = json.loads(json.dumps(rec["attempts"]))
    j = next(j for j, a in enumerate(changed) if a.get("gated"))
    changed[j]["gated"]["reasons"] = ["waiting for scheduling gates: [other]"]
    assert oracle.compare(mine, changed) and not oracle.compare(mine, rec["attempts"])


def test_a_claim_created_later_is_attempted_as_its_held_pod():
    """An incoming ResourceClaim: the entry's attempt is the held pod's that names it, let in by
    the claim's event; the pod held before, attempted at the claim's entry, bound there."""
    rec, i = next((r, i) for r in RECORDS for i, e in enumerate(r["scenario"]["incoming"])
                  if e.get("kind") == "ResourceClaim" and r["attempts"][i].get("selected"))
    sc = rec["scenario"]
    mine = oracle.run_fastsched(sc, sc["replay"])["attempts"]
    claim = sc["incoming"][i]["metadata"]["name"]
    assert mine[i]["pod"] == rec["attempts"][i]["pod"] and mine[i]["selected"] == rec["attempts"][i]["selected"]
    assert any(a["pod"] == mine[i]["pod"] and a.get("gated", {}).get("plugin") == "DynamicResources"
               for a in mine[:i])
    assert any(c.startswith(f"default/{claim}=") for c in mine[i]["claim_allocations"])
    assert not oracle.compare(mine, rec["attempts"])


#: the recorded scenarios where a bound claim pod is a preemption victim and its claim's release
#: decides a later pod's outcome
VICTIM_SEEDS = (58213434, 58213464, 58213472, 58213668)


def test_a_preempted_claim_pods_claim_is_released(monkeypatch):
    """A claim pod preempted: the resourceclaim controller drops it from its claim's reservedFor
    and deallocates the claim (the oracle models upstream's controller after each preemption), so
    its GPUs are free for the last pod. fastsched agrees on each; without the release
    (``pod_removed`` a no-op) it differs on each."""
    recs = [r for r in RECORDS if int(r["scenario"]["id"].rsplit("-", 1)[1]) in VICTIM_SEEDS]
    assert len(recs) == len(VICTIM_SEEDS)
    for r in recs:
        claim_pods = {f"default/{e['metadata']['name']}" for e in r["scenario"]["incoming"]
                      if e.get("kind", "Pod") == "Pod" and e["spec"].get("resourceClaims")}
        assert claim_pods & {v for a in r["attempts"] for v in a.get("victims", [])}
    assert not [r["scenario"]["id"] for r in recs if _differences(r)]
    monkeypatch.setattr(controller, "pod_removed", lambda client, pod: None)
    assert all(_differences(r) for r in recs)


def _without_claim_owners(scenario: dict) -> dict:
    scenario = json.loads(json.dumps(scenario))
    for o in (*scenario["objects"], *scenario["incoming"]):
        if o.get("kind") == "ResourceClaim":
            o["metadata"].pop("ownerReferences", None)
    return scenario


@pytest.mark.parametrize("seed", [31415948, 31415954, 31415963, 58213434])
def test_the_generator_is_the_recorded_one(seed):
    """(Recorded before the generator drew claims' owner references, last of all: the rest is as
    it was.)"""
    rec = next(r for r in RECORDS if r["scenario"]["id"] == f"preenqueue-{seed}")
    want = {k: v for k, v in rec["scenario"].items() if k not in ("replay", "replay_nominated")}
    assert _without_claim_owners(generate("preenqueue", seed)) == want


#: the recorded scenarios whose claims have owner references (running pods that do not name
#: them, co-owners, a dangling owner, another uid, an unmodelled kind): a victim's deletion makes
#: the garbage collector delete the claims whose every owner is gone
OWNER_SEEDS = (71023, 71029, 71031, 71046, 71049, 72250238)


def test_the_garbage_collector_deletes_a_claim_with_its_last_owner():
    """``late-gpus`` (there from the start, named by the last pod) owned by a running pod that
    does not name it: its preemption deletes the claim, so the last pod is held by
    DynamicResources (``could not find ResourceClaim``) on both sides. fastsched before its fix
    (owned-not-named claims kept) differed on four of the first five; the oracle before its fix
    (every owner had to be the victim) on all five, and on 72250238 (the last pod right after the
    preemption) its cycles did not wait for the DRA manager to drop the deleted claim (flaky)."""
    recs = [r for r in RECORDS if int(r["scenario"]["id"].rsplit("-", 1)[1]) in OWNER_SEEDS]
    assert len(recs) == len(OWNER_SEEDS)
    for r in recs:
        assert any(o["metadata"].get("ownerReferences") for o in (*r["scenario"]["objects"], *r["scenario"]["incoming"])
                   if o.get("kind") == "ResourceClaim")
    held = [a for r in recs for a in r["attempts"]
            if a.get("gated", {}).get("reasons") == ['could not find ResourceClaim "default/late-gpus"']]
    assert len(held) == len(OWNER_SEEDS)
    assert not [r["scenario"]["id"] for r in recs if _differences(r)]
    for seed in OWNER_SEEDS:
        rec = next(r for r in recs if r["scenario"]["id"] == f"preenqueue-{seed}")
        want = {k: v for k, v in rec["scenario"].items() if k not in ("replay", "replay_nominated")}
        assert generate("preenqueue", seed) == want


#: ``--batching`` variants of two shrunk scenarios (seeds 81290100 and 81290109, the list and the
#: disabled mode), with kube-scheduler v1.37.2's answers: held pods whose claims incoming entries
#: create, and their copies
BATCHING = oracle.read_recorded(Path(__file__).parent / "recorded_named" / "preenqueue-batching.jsonl.gz")


def test_a_held_pods_batching_copies_wait_for_claims_of_their_own():
    """``batching_variant`` pairs each copy of a held pod with the copy of the claim an incoming
    entry creates (``missing-pod-10-r1``), as both harnesses take a claim's entry to let in the one
    held pod naming it. With the copies naming the original claim, its creation let them all in:
    fastsched's queue gave the next entry's attempt to a copy (``fastsched made no attempt`` for
    pod-11 and pod-10) where the oracle left the copies held; 105 of 300 scenarios differed."""
    assert len(BATCHING) == 2
    for rec in BATCHING:
        sc = rec["scenario"]
        mode = sc["id"].rsplit("-", 1)[1]
        base = {**{k: v for k, v in sc.items() if k != "replay"}, "id": sc["id"].rsplit("-batching", 1)[0],
                "config": {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"},
                "incoming": [e for e in sc["incoming"] if not re.search(r"-r\d+$", e["metadata"]["name"])]}
        assert oracle.batching_variant(base, mode) == {k: v for k, v in sc.items() if k != "replay"}
        for i, entry in enumerate(sc["incoming"]):
            if entry["kind"] == "ResourceClaim":  # its attempt: the one pod naming it, let in
                at = rec["attempts"][i]
                pod = next(e for e in sc["incoming"] if f"default/{e['metadata']['name']}" == at["pod"])
                assert not at.get("gated") and [c["resourceClaimName"] for c in pod["spec"]["resourceClaims"]] \
                    == [entry["metadata"]["name"]]
        mine = oracle.run_fastsched(sc, sc["replay"])["attempts"]
        assert not [a for a in mine if a.get("error")]
        assert oracle.compare(mine, rec["attempts"]) == []


def test_the_oracles_garbage_collector_looks_up_every_kind_fastsched_models():
    """The oracle's ``ownerGVR`` (``main.go``, its garbage collector's owner lookup) has every kind
    fastsched models, under the version the scenarios write and with its scope: a kind missing
    there is an owner the oracle never finds dangling (as an unmodelled kind, an MPIJob), while
    fastsched (``dra/controller.py`` ``_owner_absent``) looks it up. It had 15 of the 28: a claim
    co-owned by a victim and a PodDisruptionBudget, PersistentVolume, DeviceClass, ... that does
    not exist was kept by the oracle and deleted by fastsched (upstream's GC resolves every kind
    the API server serves, and finds such an owner dangling). ``test_live.py`` runs the cases."""
    from fastsched.api.decode import SUPPORTED_KINDS
    from fastsched.api.schema import schema_api_version
    from fastsched.framework.objects import CLUSTER_SCOPED_KINDS

    source = (Path(__file__).resolve().parents[2] / "oracle" / "main.go").read_text()
    block = source[source.index("var ownerGVR = "):]
    block = block[:block.index("\n}\n")]
    gvr = {m["kind"]: (f"{m['group']}/{m['version']}" if m["group"] else m["version"], m["resource"])
           for m in re.finditer(r'"(?P<kind>\w+)":\s*\{(?:Group: "(?P<group>[^"]*)", )?Version: "(?P<version>[^"]*)", '
                                r'Resource: "(?P<resource>[^"]*)"\}', block)}
    assert {kind: api for kind, (api, _) in gvr.items()} == {kind: schema_api_version(kind) for kind in SUPPORTED_KINDS}
    # the resource the fake clientset's tracker keeps each kind under (meta.UnsafeGuessKindToResource)
    guess = {k: k.lower()[:-1] + "ies" if k.endswith("y") else k.lower() + ("es" if k.endswith("s") else "s")
             for k in gvr}
    assert {kind: resource for kind, (_, resource) in gvr.items()} == guess
    scoped = source[source.index("var clusterScopedOwner = "):]
    scoped = set(re.findall(r'"(\w+)": true', scoped[:scoped.index("}\n")]))
    assert scoped == set(CLUSTER_SCOPED_KINDS) & set(SUPPORTED_KINDS)
