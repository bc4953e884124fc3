"""Shared test helpers: small manifests for pods and nodes; and, when the suite runs against an
installed wheel (.ci/run sets FASTSCHED_EXPECT_INSTALLED=1), the check that it does."""
from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

import pytest

# The CLI sizes its Rich tables by $COLUMNS when set, else 200 columns when piped or captured (the
# tests read whole table rows). pytest-xdist's workers start with COLUMNS=80 and LINES=24 in their
# environment, which is no user's terminal: without them the workers' CLI output is the captured
# one the tests expect, as in a run in one process.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.pop("COLUMNS", None)
    os.environ.pop("LINES", None)

#: .ci/run runs the suite a second time against the wheel installed in a fresh virtual environment,
#: from a copy of tests/ beside the checkout's other directories (not fastsched/): every fastsched
#: module the run imports, the plugins' tests included, must come from that environment's
#: site-packages, never from a checkout, or the run proves nothing about the wheel.
EXPECT_INSTALLED = os.environ.get("FASTSCHED_EXPECT_INSTALLED") == "1"


def _not_installed() -> list[str]:
    """The loaded fastsched modules whose file is not in this interpreter's site-packages."""
    site = {Path(sysconfig.get_paths()[key]).resolve() for key in ("purelib", "platlib")}
    wrong = []
    for name, module in list(sys.modules.items()):
        if module is None or (name != "fastsched" and not name.startswith("fastsched.")):
            continue
        file = getattr(module, "__file__", None)
        if file is None:  # a namespace package has no __file__: it must not be one
            wrong.append(f"{name} (no __file__: {getattr(module, '__path__', None)})")
        elif not any(Path(file).resolve().is_relative_to(s) for s in site):
            wrong.append(f"{name} from {file}")
    return wrong


def _say(session, line: str) -> None:
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.ensure_newline()
        reporter.write_line(line)


def pytest_sessionstart(session):
    if EXPECT_INSTALLED:
        import fastsched

        wrong = _not_installed()
        if wrong:
            pytest.exit("FASTSCHED_EXPECT_INSTALLED=1 but fastsched is not the installed one: "
                        + "; ".join(wrong), returncode=1)
        _say(session, f"fastsched {fastsched.__version__} under test from {Path(fastsched.__file__).parent}")


def pytest_collection_finish(session):
    # every test module is imported by now, the plugins' (fastsched.plugins.*.tests) included
    if EXPECT_INSTALLED and (wrong := _not_installed()):
        pytest.exit("FASTSCHED_EXPECT_INSTALLED=1 but these modules are not the installed ones: "
                    + "; ".join(wrong), returncode=1)


#: what pytest-xdist's workers found at their end (the controller's list; see pytest_testnodedown)
_WORKERS_NOT_INSTALLED: list[str] = []


def pytest_sessionfinish(session, exitstatus):
    # and the modules the tests imported as they ran
    if not EXPECT_INSTALLED:
        return
    wrong = _not_installed()
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        # an xdist worker: its exit status does not reach the run's, so hand the list to the
        # controller (the modules a worker's tests imported are only loaded in that worker)
        workeroutput["fastsched_not_installed"] = wrong
        return
    wrong += _WORKERS_NOT_INSTALLED
    if wrong:
        _say(session, "FASTSCHED_EXPECT_INSTALLED=1 but these modules are not the installed ones: " + "; ".join(wrong))
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(optionalhook=True)  # (pytest-xdist's hook, on the controller, as each worker ends)
def pytest_testnodedown(node, error):
    _WORKERS_NOT_INSTALLED.extend(getattr(node, "workeroutput", {}).get("fastsched_not_installed", ()))


def pod_manifest(name="p", namespace="default", uid=None, priority=None, node_name=None,
                 cpu=None, memory=None, labels=None, scheduler_name=None, **spec):
    container = {"name": "c", "image": "busybox"}
    requests = {}
    if cpu is not None:
        requests["cpu"] = cpu
    if memory is not None:
        requests["memory"] = memory
    if requests:
        container["resources"] = {"requests": requests}
    s = {"containers": [container], **spec}
    if priority is not None:
        s["priority"] = priority
    if node_name is not None:
        s["nodeName"] = node_name
    if scheduler_name is not None:
        s["schedulerName"] = scheduler_name
    meta = {"name": name, "namespace": namespace, "uid": uid or f"uid-{namespace}-{name}"}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": s}


def node_manifest(name="n", cpu="4", memory="8Gi", pods="110", labels=None, taints=None, **spec):
    meta = {"name": name}
    if labels:
        meta["labels"] = labels
    s = dict(spec)
    if taints:
        s["taints"] = taints
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": s,
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods},
                       "capacity": {"cpu": cpu, "memory": memory, "pods": pods}}}


@pytest.fixture
def make_pod():
    from fastsched.api import Pod

    return lambda *a, **kw: Pod.from_manifest(pod_manifest(*a, **kw))


@pytest.fixture
def make_node():
    from fastsched.api import Node

    return lambda *a, **kw: Node.from_manifest(node_manifest(*a, **kw))
