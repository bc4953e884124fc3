"""The ``dra-alpha`` differential class: the ``dra`` scenarios with DRA's alpha gates on both
sides (DRAListTypeAttributes), so that upstream runs its experimental allocator for every claim.
Checked here without Go: the generator draws list-valued attributes and the claims that read them
on top of ``dra``'s draws, the class is only run when named, and the CLI starts the oracle and
fastsched's side with the class's gates (a stand-in oracle that fails without them)."""
from __future__ import annotations

import stat
import sys
from pathlib import Path

from fastsched.cli import main
from fastsched.testing import oracle
from fastsched.testing.oracle_scenarios import CLASSES, GATED_CLASSES, generate

ORACLE_DIR = Path(__file__).resolve().parents[2] / "oracle"

STAND_IN = '''#!{python}
import json, pathlib, sys
from fastsched.testing import oracle
oracle.ORACLE_DIR = pathlib.Path({oracle_dir!r})
if "--version" in sys.argv:
    print(json.dumps({{"kubernetes": oracle.pinned_version(), "protocol": 2}}))
    sys.exit(0)
gates = sys.argv[sys.argv.index("--feature-gates") + 1] if "--feature-gates" in sys.argv else ""
if "DRAListTypeAttributes=true,DRADeviceCompatibilityGroups=true,DRAOptionalNodeOperations=true" not in gates:
    sys.exit(3)
for line in sys.stdin:
    sc = json.loads(line)
    out = oracle.run_fastsched(sc, sc.get("replay"), gates)
    print(json.dumps({{"id": sc["id"], "attempts": out["attempts"]}}), flush=True)
'''


def test_generation():
    assert "dra-alpha" not in CLASSES
    assert GATED_CLASSES["dra-alpha"][1] == ("DRAListTypeAttributes=true,DRADeviceCompatibilityGroups=true,"
                                             "DRAOptionalNodeOperations=true")
    kinds, selectors, constraints, grouped, skipping, declaring, allocated = set(), 0, 0, 0, 0, 0, 0
    for seed in range(30):
        sc = generate("dra-alpha", seed)
        assert sc == generate("dra-alpha", seed)  # deterministic
        declaring += sum("DRAOptionalNodeOperations" in n["status"].get("declaredFeatures", ()) for n in sc["nodes"])
        for o in sc["objects"]:
            if o["kind"] == "ResourceSlice":
                kinds |= {k for d in o["spec"].get("devices", ()) for a in (d.get("attributes") or {}).values()
                          for k in a}
                grouped += sum("compatibilityGroups" in c for d in o["spec"].get("devices", ())
                               for c in d.get("consumesCounters", ()))
                skipping += bool(o["spec"].get("skipNodeOperations"))
            if o["kind"] == "ResourceClaim":
                allocated += "status" in o
                constraints += len(o["spec"]["devices"].get("constraints", ()))
                selectors += sum("includes(" in s["cel"]["expression"] or " in device" in s["cel"]["expression"]
                                 for r in o["spec"]["devices"]["requests"]
                                 for s in (r.get("exactly") or {}).get("selectors", ()))
    assert {"ints", "strings", "versions", "bools", "string"} <= kinds
    assert selectors > 5 and constraints > 10 and grouped > 20
    assert skipping > 10 and declaring > 10 and allocated > 2


def test_cli_runs_the_class_with_its_gates(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(oracle, "ORACLE_DIR", ORACLE_DIR)
    path = tmp_path / "oracle-stand-in"
    path.write_text(STAND_IN.format(python=sys.executable, oracle_dir=str(ORACLE_DIR)))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    code = main(["differential", "--oracle", str(path), "--class", "dra-alpha", "--scenarios", "3", "--seed", "11",
                 "--allow-skew"])
    text = capsys.readouterr().out
    assert code == 0, text
    assert "dra-alpha: 3 scenarios, " in text and text.strip().endswith(" 0 differences")


def test_dra_nar_generation():
    """The ``dra-nar`` class (DRANodeAllocatableResources on both sides): devices with mappings by
    device count and by consumed capacity, overheads, pods with more cpu, pod-level requests and a
    second container naming the claim; only run when named."""
    assert "dra-nar" not in CLASSES
    assert GATED_CLASSES["dra-nar"][1] == "DRANodeAllocatableResources=true"
    by_count = by_capacity = overheads = pod_level = second = 0
    for seed in range(40):
        sc = generate("dra-nar", seed)
        assert sc == generate("dra-nar", seed)
        for o in sc["objects"]:
            for d in (o["spec"].get("devices", ()) if o["kind"] == "ResourceSlice" else ()):
                for entry in (d.get("nodeAllocatableResources") or {}).values():
                    mapping = entry.get("mapping") or {}
                    by_count += "deviceMultiplier" in mapping
                    by_capacity += "capacityKey" in mapping
                    overheads += "overhead" in entry
        for p in sc["incoming"]:
            pod_level += "resources" in p["spec"]
            second += any(c["name"] == "sidecar" for c in p["spec"]["containers"])
    assert by_count > 20 and by_capacity > 5 and overheads > 10 and pod_level > 3 and second > 3


def test_dra_derived_generation():
    """The ``dra-derived`` class (dra-alpha's gates and DRADerivedAttributes on both sides): claims
    whose requests and subrequests carry derived attributes (own names and shadowing ones), each
    referenced by a constraint, so that every claim is valid with the gate on; only run when named;
    with the gate off they are dropped on create."""
    from fastsched.api.resource import parse_resource_claim
    from fastsched.api.strategy import prepare_for_create, validate

    assert "dra-derived" not in CLASSES
    assert GATED_CLASSES["dra-derived"][1] == GATED_CLASSES["dra-alpha"][1] + ",DRADerivedAttributes=true"
    on = {"DRADerivedAttributes": True, "DRAListTypeAttributes": True}
    with_derived = shadowing = on_subrequests = distinct = 0
    for seed in range(25):
        sc = generate("dra-derived", seed)
        assert sc == generate("dra-derived", seed)
        for o in sc["objects"]:
            if o["kind"] != "ResourceClaim":
                continue
            claim = prepare_for_create(parse_resource_claim(o), on)
            assert validate(claim, on) == [], o
            bodies = [r.exactly for r in claim.requests if r.exactly is not None]
            subs = [s for r in claim.requests for s in r.first_available]
            names = [n for b in bodies + subs for n, _ in b.derived_attributes]
            with_derived += bool(names)
            shadowing += sum(n.startswith("gpu.example.com/") for n in names)
            on_subrequests += sum(bool(s.derived_attributes) for s in subs)
            distinct += sum(bool(c.distinct_attribute) and c.distinct_attribute in names for c in claim.constraints)
            if names:
                off = prepare_for_create(parse_resource_claim(o), {"DRADerivedAttributes": False})
                assert not any(b.derived_attributes for r in off.requests
                               for b in ([r.exactly] if r.exactly else []) + list(r.first_available))
    assert with_derived > 25 and shadowing > 10 and on_subrequests > 2 and distinct > 5
