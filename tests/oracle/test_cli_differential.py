"""``fastsched differential`` end to end without Go: a stand-in oracle answers with fastsched's own
answers (so every scenario agrees), or with one score changed (so every scenario differs). It
reports the release oracle/go.mod pins (``--version``), or ``STAND_IN_VERSION``."""
from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from fastsched.cli import main
from fastsched.testing import oracle

#: the oracle's Go module, in the checkout beside tests/: its go.mod pins the release
#: (oracle.ORACLE_DIR is found from the package's location, which is not a checkout when the suite
#: runs against an installed wheel)
ORACLE_DIR = Path(__file__).resolve().parents[2] / "oracle"

STAND_IN = '''#!{python}
import json, os, pathlib, sys
from fastsched.testing import oracle
oracle.ORACLE_DIR = pathlib.Path({oracle_dir!r})
corrupt = os.environ.get("STAND_IN_CORRUPT") == "1"
if "--version" in sys.argv:
    print(json.dumps({{"kubernetes": os.environ.get("STAND_IN_VERSION") or oracle.pinned_version(), "protocol": 2}}))
    sys.exit(0)
for line in sys.stdin:
    sc = json.loads(line)
    out = oracle.run_fastsched(sc, sc.get("replay"))
    if corrupt:
        for a in out["attempts"]:
            a["fit_error"] = (a.get("fit_error") or "") + " (changed)"
            break
    print(json.dumps({{"id": sc["id"], "attempts": out["attempts"]}}), flush=True)
'''


@pytest.fixture()
def stand_in(tmp_path):
    path = tmp_path / "oracle-stand-in"
    path.write_text(STAND_IN.format(python=sys.executable, oracle_dir=str(ORACLE_DIR)))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture(autouse=True)
def checkout_oracle_dir(monkeypatch):
    monkeypatch.setattr(oracle, "ORACLE_DIR", ORACLE_DIR)


def _lines(text: str) -> list[str]:
    """The output without the release-skew note (go.mod may pin a release fastsched does not follow yet)."""
    return [line for line in text.strip().splitlines() if not line.endswith("(--allow-skew)")]


def test_agreeing_oracle(stand_in, tmp_path, capsys):
    out = tmp_path / "diffs"
    code = main(["differential", "--oracle", str(stand_in), "--class", "resources", "--class", "taints",
                 "--scenarios", "3", "--seed", "5", "--out", str(out), "--allow-skew"])
    text = capsys.readouterr().out
    assert code == 0, text
    lines = _lines(text)
    assert lines[0] == "differential: seed 5, classes resources, taints"
    assert lines[1].startswith("resources: 3 scenarios, ") and lines[2].startswith("taints: 3 scenarios, ")
    last = lines[-1]
    assert last.startswith("differential: 6 scenarios, ") and last.endswith(" 0 differences")
    pods = int(last.split(", ")[1].split()[0])
    assert pods > 0
    assert not out.exists() or not list(out.iterdir())


def test_differing_oracle_writes_shrunk_reproducers(stand_in, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("STAND_IN_CORRUPT", "1")
    out = tmp_path / "diffs"
    code = main(["differential", "--oracle", str(stand_in), "--class", "resources", "--scenarios", "2",
                 "--seed", "1", "--out", str(out), "--allow-skew"])
    text = capsys.readouterr().out
    assert code == 1
    assert text.strip().splitlines()[-1].endswith(" 2 differences")
    files = sorted(out.glob("resources-*.json"))
    assert [f.name for f in files] == ["resources-1.json", "resources-2.json"]
    doc = json.loads(files[0].read_text())
    assert doc["differences"][0]["field"] == "fit_error"
    assert doc["differences"][0]["oracle"].endswith(" (changed)")
    small, big = doc["scenario"], doc["original_size"]
    assert len(small["incoming"]) == 1 and len(small["nodes"]) <= big["nodes"]
    assert doc["fastsched"] and doc["oracle"]


def test_missing_oracle_is_a_one_line_error(tmp_path, capsys):
    code = main(["differential", "--oracle", str(tmp_path / "nope"), "--scenarios", "1"])
    assert code == 1
    assert capsys.readouterr().err.strip() == f"fastsched: error: oracle binary not found: {tmp_path / 'nope'}"


def test_unknown_class_is_a_one_line_error(capsys):
    assert main(["differential", "--class", "nope", "--scenarios", "1"]) == 1
    assert "unknown scenario class 'nope'" in capsys.readouterr().err


def test_sampling_with_batching_is_a_one_line_error(tmp_path, capsys):
    """Class sampling's batching hints are not retold (refused before any oracle is looked for)."""
    assert main(["differential", "--class", "sampling", "--batching", "--scenarios", "1",
                 "--oracle", str(tmp_path / "nope")]) == 1
    assert capsys.readouterr().err.strip() == ("fastsched: error: --batching does not run class sampling (its "
                                               "batching hints are not retold for a sampled search)")


def test_stale_oracle_is_refused(stand_in, capsys, monkeypatch):
    """A binary built from another go.mod (here: one reporting v1.34.4) answers for another release."""
    monkeypatch.setenv("STAND_IN_VERSION", "v1.34.4")
    assert main(["differential", "--oracle", str(stand_in), "--scenarios", "1", "--allow-skew"]) == 1
    err = capsys.readouterr().err
    assert "runs k8s.io/kubernetes v1.34.4" in err and "oracle/go.mod pins" in err and "rebuild" in err


def test_release_skew_needs_allow_skew(stand_in, tmp_path, capsys, monkeypatch):
    """An oracle of another release than fastsched follows is refused without --allow-skew. (Given
    outside a checkout, where no go.mod pins the build; in one, the pin refuses it first.)"""
    from fastsched import UPSTREAM_VERSION

    monkeypatch.setattr(oracle, "ORACLE_DIR", tmp_path / "not-a-checkout")
    monkeypatch.setenv("STAND_IN_VERSION", "v1.99.0")
    assert main(["differential", "--oracle", str(stand_in), "--scenarios", "1", "--class", "resources"]) == 1
    err = capsys.readouterr().err
    assert f"runs kube-scheduler v1.99.0, fastsched follows {UPSTREAM_VERSION}" in err and "--allow-skew" in err
    assert main(["differential", "--oracle", str(stand_in), "--scenarios", "1", "--class", "resources",
                 "--allow-skew"]) == 0
    assert "(--allow-skew)" in capsys.readouterr().out


def test_outside_a_checkout_the_oracle_cannot_be_built(tmp_path, capsys, monkeypatch):
    """An installed package has no oracle/ (the Go module is the repository's): building it, or
    running the differential without --oracle, says so instead of failing on a missing go.mod."""
    monkeypatch.setattr(oracle, "ORACLE_DIR", tmp_path / "not-a-checkout")
    monkeypatch.delenv("FASTSCHED_ORACLE", raising=False)
    assert oracle.pinned_version() is None
    with pytest.raises(RuntimeError, match="checkout of the fastsched repository"):
        oracle.build_oracle()
    assert main(["differential", "--scenarios", "1"]) == 1
    assert capsys.readouterr().err.strip() == f"fastsched: error: {oracle.NO_CHECKOUT}"


def test_version_skew():
    from fastsched import UPSTREAM_VERSION
    from fastsched.testing import oracle

    assert oracle.version_skew({"kubernetes": UPSTREAM_VERSION + ".9"}) is None
    assert "v1.99.0" in oracle.version_skew({"kubernetes": "v1.99.0"})
    assert "without --version" in oracle.version_skew(None)


def test_sources_newer_than_the_binary_make_it_stale(tmp_path, monkeypatch):
    """A pull that changes oracle/main.go but not the pinned release leaves a binary speaking the
    old protocol: `fastsched differential` rebuilds it when a Go source or module file is newer."""
    source_dir = tmp_path / "oracle"
    source_dir.mkdir()
    monkeypatch.setattr(oracle, "ORACLE_DIR", source_dir)
    for name in ("main.go", "go.mod", "go.sum"):
        (source_dir / name).write_text("x")
        os.utime(source_dir / name, (1_000_000, 1_000_000))
    binary = tmp_path / "oracle-bin"
    assert oracle.sources_newer_than(binary)  # no binary at all
    binary.write_text("built")
    os.utime(binary, (2_000_000, 2_000_000))
    assert not oracle.sources_newer_than(binary)
    os.utime(source_dir / "main.go", (3_000_000, 3_000_000))
    assert oracle.sources_newer_than(binary)


def test_fast_paths_agree_and_say_what_they_served(stand_in, capsys):
    code = main(["differential", "--oracle", str(stand_in), "--class", "resources", "--scenarios", "3", "--seed", "5",
                 "--fast-paths", "--allow-skew"])
    lines = _lines(capsys.readouterr().out)
    assert code == 0, lines
    assert lines[2].startswith("  fast paths: 0 differences; compiled cycle "), lines
    served, cycles = map(int, lines[2].split("compiled cycle ")[1].split()[0].split("/"))
    assert 0 < served <= cycles, lines
    assert lines[-1].startswith("differential: fast paths compiled cycle "), lines


def test_fast_paths_report_a_tie_flipped_in_the_compiled_cycle(stand_in, capsys, monkeypatch):
    """The mutant of test_fast_paths_differential.py (the compiled cycle's tie draw, only there):
    the oracle agrees with the recorded run, the fast run differs."""
    from fastsched.runtime import compiled_cycle
    from fastsched.scheduler import schedule_one  # (its seeded_tie, the recorded run's, stays: imported first)

    def flipped(totals, n, best, ties, rng):
        k = (int(rng.integers(ties)) + 1) % ties
        return int(compiled_cycle.np.flatnonzero(totals[:n] == best)[k])

    monkeypatch.setattr(compiled_cycle, "seeded_tie", flipped)
    monkeypatch.setattr(compiled_cycle.CompiledCycle, "_capsule_for",
                        lambda self, rng: setattr(self, "_capsule_rng", None) or None)
    assert schedule_one.seeded_tie is not flipped
    code = main(["differential", "--oracle", str(stand_in), "--class", "mixed", "--scenarios", "2", "--seed", "5",
                 "--fast-paths", "--allow-skew"])
    lines = _lines(capsys.readouterr().out)
    assert code == 1, lines
    assert any(" fast-path:" in line for line in lines), lines
    assert any(line.startswith("  fast paths: ") and not line.startswith("  fast paths: 0 ") for line in lines), lines
