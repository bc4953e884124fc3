"""The differential's fast-path comparison: fastsched's fast paths against its recorded run.

The oracle's runs (:func:`fastsched.testing.oracle.run_fastsched`,
:func:`fastsched.testing.oracle_groups.run_fastsched_groups`) keep decision records
(``record="all"``), so every fast path steps aside: the compiled cycle
(``runtime/compiled_cycle.py``), the compiled binding path (``BindCommit.commit``), and for pod
groups the gang runs (``use_gang_runs``), the Permit run (``use_gang_permit_run``) and
``BindCommit.commit_run`` (``use_gang_bind_run``). Once the oracle has validated the recorded run,
the same scenario runs again here through a plain :class:`~fastsched.scheduler.Scheduler` with no
records and the default switches, the same seed, clock steps and harness steps, and each pod's
observable outcome (:data:`OUTCOME_FIELDS`: its status, node, message, nomination, and the pods
its attempt deleted; a group's ``PodGroupInitiallyScheduled`` condition(s)) is compared with the
recorded run's. A mismatch is a difference whose field is ``fast-path:<field>`` (``"fastsched"``:
the fast run's value, ``"oracle"``: the recorded run's, which the oracle has just validated).

Ties: the recorded run (a ``ReplayScheduler`` with no replay: generated scenarios carry none)
draws them from the scheduler's seeded ``rng`` (``_select_host``: ``seeded_tie``); the compiled
cycle draws the same number from the same generator in C (``seeded_tie``'s contract, held by
tests/oracle/test_fast_path_agrees.py), so both runs choose alike without a hook. A scenario that
carries a replay (a recorded set's) is compared with a recorded run made again without it
(:func:`fastsched.testing.oracle.check`).

:class:`FastPathStats` counts, by class-level spies (a fork of the scheduler looks methods up on
the class, so an instance wrapper would call its origin), how many of the fast run's scheduling
cycles the compiled cycle served (``CompiledCycle.schedule`` answering, or ``place_run`` placing a
gang member) and how many bindings the compiled commits made (``commit``, ``commit_run``), and how
many groups the Permit run answered: a fast run the fast paths did not serve would compare
nothing.
"""
from __future__ import annotations

import contextlib
import dataclasses
from typing import Any, Iterator

#: a pod's outcome, compared in this order (the first that differs is the difference reported)
OUTCOME_FIELDS = ("status", "node", "message", "nominated_node", "victims")
#: a group's outcome (gang classes): its PodGroup's PodGroupInitiallyScheduled condition, or a
#: CompositePodGroup's leaves' ones
GROUP_FIELDS = ("condition", "conditions")
#: the prefix of a fast-path difference's field
PREFIX = "fast-path:"


@dataclasses.dataclass
class FastPathStats:
    """What the fast runs' fast paths served (summed over scenarios)."""
    #: scheduling cycles (``_schedule_pod`` calls and gang members ``place_run`` placed)
    cycles: int = 0
    #: of them, served by the compiled cycle (``CompiledCycle.schedule`` answered, or ``place_run``)
    compiled: int = 0
    #: gang members placed by ``place_run`` (in ``compiled`` too)
    run_members: int = 0
    #: pods bound (scheduled, as the results say)
    bound: int = 0
    #: of them, bound by a compiled commit (``BindCommit.commit`` from the collapsed or placed path)
    committed: int = 0
    #: pods bound by ``BindCommit.commit_run`` (the gang members released at Permit)
    commit_run_pods: int = 0
    #: pod group submits whose Permit the Permit run answered
    permit_runs: int = 0

    def add(self, other: "FastPathStats") -> None:
        for f in dataclasses.fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def text(self) -> str:
        def share(a: int, b: int) -> str:
            return f"{a}/{b} ({100.0 * a / b:.0f}%)" if b else f"{a}/0"
        return (f"compiled cycle {share(self.compiled, self.cycles)} cycles (gang runs {self.run_members}), "
                f"compiled commits {share(self.committed + self.commit_run_pods, self.bound)} bindings "
                f"(commit_run {self.commit_run_pods}), Permit runs {self.permit_runs}")


_ACTIVE: list[FastPathStats] = []


@contextlib.contextmanager
def counted(stats: FastPathStats) -> Iterator[FastPathStats]:
    """Count into ``stats`` while the block runs: class-level spies on ``CompiledCycle.schedule``
    and ``place_run``, ``Scheduler._schedule_pod``, ``_gang_permit_run`` and ``_bind_commit``
    (replaced by a pass-through, as tests/scheduler/test_compiled_binding.py does: the compiled
    commit is a compiled class's method). None of them is one whose replacement turns a fast path
    off (``_gang_bind_run_ok``'s ``_MIXIN_METHODS``, the cache's and queue's inlined methods)."""
    from ..runtime.compiled_cycle import CompiledCycle
    from ..scheduler import Scheduler

    schedule, place_run = CompiledCycle.schedule, CompiledCycle.place_run
    schedule_pod, permit_run = Scheduler._schedule_pod, Scheduler._gang_permit_run
    inner_commit = Scheduler._bind_commit
    # what Scheduler itself defines of these (today none: the mixins' methods), put back after
    own = {name: Scheduler.__dict__[name] for name in ("_schedule_pod", "_gang_permit_run") if name in Scheduler.__dict__}

    def spy_schedule(self: Any, *args: Any, **kwargs: Any) -> Any:
        got = schedule(self, *args, **kwargs)
        if got is not None:
            stats.compiled += 1
        return got

    def spy_place_run(self: Any, *args: Any, **kwargs: Any) -> Any:
        got = place_run(self, *args, **kwargs)
        n = len(getattr(got, "hosts", None) or ()) if got is not None else 0
        stats.run_members += n
        stats.compiled += n
        stats.cycles += n
        return got

    def spy_schedule_pod(self: Any, *args: Any, **kwargs: Any) -> Any:
        stats.cycles += 1
        return schedule_pod(self, *args, **kwargs)

    def spy_permit_run(self: Any, *args: Any, **kwargs: Any) -> Any:
        got = permit_run(self, *args, **kwargs)
        stats.permit_runs += got is not None
        return got

    class Commit:
        def commit(self, *args: Any) -> Any:
            ok = inner_commit.commit(*args)
            stats.committed += bool(ok)
            return ok

        def commit_run(self, sched: Any, waiting: list, *args: Any) -> Any:
            before = sum(1 for p in sched.cluster.pods.values() if p.node_name)
            got = inner_commit.commit_run(sched, waiting, *args)
            stats.commit_run_pods += sum(1 for p in sched.cluster.pods.values() if p.node_name) - before
            return got

    CompiledCycle.schedule, CompiledCycle.place_run = spy_schedule, spy_place_run  # type: ignore[method-assign]
    Scheduler._schedule_pod, Scheduler._gang_permit_run = spy_schedule_pod, spy_permit_run  # type: ignore[method-assign]
    Scheduler._bind_commit = Commit()
    _ACTIVE.append(stats)
    try:
        yield stats
    finally:
        _ACTIVE.pop()
        CompiledCycle.schedule, CompiledCycle.place_run = schedule, place_run  # type: ignore[method-assign]
        for name in ("_schedule_pod", "_gang_permit_run"):
            if name in own:
                setattr(Scheduler, name, own[name])
            else:
                delattr(Scheduler, name)
        Scheduler._bind_commit = inner_commit


def pod_outcome(sched: Any, uid: str, key: str, running: dict[str, str]) -> dict:
    """A pod's observable outcome after its attempt: its result's status, node (when scheduled),
    message, the node it is nominated to (pending), and the running pods (``running``: uid -> key,
    taken before the attempt) its attempt deleted (preemption's victims)."""
    from ..scheduler.result import SCHEDULED

    res = sched.results.get(uid)
    pod = sched.cluster.pods.get(uid)
    victims = sorted(k for u, k in running.items()
                     if (p := sched.cluster.pods.get(u)) is None or p.deletion_timestamp is not None)
    if res is None:
        return {"pod": key, "status": "no result", "node": "", "message": "", "nominated_node": "",
                "victims": victims}
    return {"pod": key, "status": res.status,
            "node": (res.node_name or "") if res.status == SCHEDULED else "",
            "message": res.message or "",
            "nominated_node": (pod.nominated_node_name or "") if pod is not None and not pod.node_name else "",
            "victims": victims}


def running_pods(sched: Any) -> dict[str, str]:
    """The running pods (uid -> namespace/name), before an attempt (see :func:`pod_outcome`)."""
    return {p.uid: f"{p.namespace}/{p.name}" for p in sched.cluster.pods.values()
            if p.node_name and p.deletion_timestamp is None}


def group_outcome(sched: Any, group: str, leaves: list[str] | None) -> dict:
    """A pod group's outcome: its PodGroupInitiallyScheduled condition (status, reason, message),
    or each of a CompositePodGroup's leaves' (``leaves``)."""
    ns, name = group.split("/", 1)

    def condition(pg_name: str) -> list | None:
        pg = sched.cluster.get_object("PodGroup", pg_name, ns)
        cond = next((c for c in (pg.conditions if pg is not None else ())
                     if c.get("type") == "PodGroupInitiallyScheduled"), None)
        return None if cond is None else [cond["status"], cond["reason"], cond.get("message", "")]

    if leaves:
        return {"group": group, "conditions": {leaf: condition(leaf.split("/", 1)[1]) for leaf in leaves}}
    return {"group": group, "condition": condition(name)}


def compare_outcomes(fast: list[dict], recorded: list[dict]) -> list[dict]:
    """The first outcome where the fast run differs from the recorded run:
    ``[{"pod" or "group", "field": "fast-path:<field>", "fastsched": fast, "oracle": recorded}]``."""
    for i in range(max(len(fast), len(recorded))):
        if i >= len(fast) or i >= len(recorded):
            a = fast[i] if i < len(fast) else None
            b = recorded[i] if i < len(recorded) else None
            name = lambda o: None if o is None else o.get("pod") or o.get("group")  # noqa: E731
            return [{"pod": name(a) or name(b), "group": None, "field": PREFIX + "outcomes",
                     "fastsched": name(a), "oracle": name(b)}]
        a, b = fast[i], recorded[i]
        who = {"pod": a.get("pod"), "group": a.get("group")}
        if who != {"pod": b.get("pod"), "group": b.get("group")}:
            return [{**who, "field": PREFIX + "outcomes", "fastsched": a.get("pod") or a.get("group"),
                     "oracle": b.get("pod") or b.get("group")}]
        for field in OUTCOME_FIELDS + GROUP_FIELDS:
            if a.get(field) != b.get(field):
                return [{**who, "field": PREFIX + field, "fastsched": a.get(field), "oracle": b.get(field)}]
    return []
