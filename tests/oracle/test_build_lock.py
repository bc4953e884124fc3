"""build_oracle's lock: processes building the oracle at once (pytest-xdist's workers) take turns."""
import fcntl

import pytest

from fastsched.testing import oracle


def test_the_build_lock_excludes_another_holder_until_released(tmp_path):
    lock = tmp_path / ".oracle-build.lock"
    with oracle._build_lock(lock):
        with open(lock, "a") as other:  # a second open file description, as another process has
            with pytest.raises(BlockingIOError):
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
    with open(lock, "a") as other:
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free again once the block has ended
        fcntl.flock(other, fcntl.LOCK_UN)


def test_the_build_runs_under_the_lock(tmp_path, monkeypatch):
    """``go build`` is called while the lock is held (a second taker would be refused)."""
    (tmp_path / "go.mod").write_text("module oracle\n")
    monkeypatch.setattr(oracle, "ORACLE_DIR", tmp_path)
    monkeypatch.delenv("FASTSCHED_ORACLE", raising=False)
    monkeypatch.setattr(oracle.shutil, "which", lambda name: "/bin/true")
    held = []

    def fake_run(cmd, **kwargs):
        with open(tmp_path / "bin" / ".oracle-build.lock", "a") as other:
            try:
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                held.append(True)
            else:
                fcntl.flock(other, fcntl.LOCK_UN)
                held.append(False)
        return oracle.subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(oracle.subprocess, "run", fake_run)
    assert oracle.build_oracle() == tmp_path / "bin" / "oracle"
    assert held == [True]
