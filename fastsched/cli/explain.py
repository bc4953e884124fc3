"""``fastsched explain``: every plugin's verdict and score for one pod on a cluster.

One module per command (see :mod:`fastsched.cli`); the shared helpers are in
:mod:`fastsched.cli.common`.
"""
from __future__ import annotations

import argparse
from typing import Any

from .common import CLIError, _config, _console, _json_out, _objects, _one_line, _one_pod


def _cluster_scheduler(args: argparse.Namespace, cfg: Any, objs: list, gates: Any) -> Any:
    """A Scheduler holding ``--cluster`` as it runs (what ``Scheduler.add`` reads: nodes, running
    pods, namespaces, workloads whose controllers create pods, ...)."""
    from ..api import ManifestError, Node
    from ..sim.capacity import cluster_scheduler

    if not any(isinstance(o, Node) for o in objs):
        raise CLIError(f"cluster {args.cluster}: no Node objects")
    try:
        return cluster_scheduler(objs, cfg, seed=args.seed, feature_gates=gates)
    except ManifestError as exc:
        raise CLIError(f"cluster {_one_line(str(exc))}") from None


def _workload_gates(objs: list) -> Any:
    """A cluster holding PodGroups is explained with workload-aware scheduling on (GenericWorkload,
    and TopologyAwareWorkloadScheduling when a group has a topology constraint), as ``simulate``
    runs gang streams: then a member's explanation carries its group's verdict. None otherwise."""
    from ..api.scheduling import PodGroup
    from ..sim.gangs import workload_gates

    groups = [o for o in objs if isinstance(o, PodGroup)]
    if not groups:
        return None
    return workload_gates(topology=any(g.scheduling_constraints is not None and g.scheduling_constraints.topology
                                       for g in groups))


def _status_text(s: Any) -> str | None:
    if s is None:
        return None
    return f"{s.code()}: {s.message()}" if s.message() else str(s.code())


def _camel_lines(name: str, width: int = 10) -> str:
    """``NodeResourcesBalancedAllocation`` -> ``Node\nResources\nBalanced\nAllocation`` (narrow headers)."""
    import re

    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+|.", name)
    lines: list[str] = []
    for w in words:
        if lines and len(lines[-1]) + len(w) <= width:
            lines[-1] += w
        else:
            lines.append(w)
    return "\n".join(lines)


def cmd_explain(args: argparse.Namespace) -> int:
    pod = _one_pod(args.pod, args.strict)  # (the pod first: its errors before the cluster's warnings)
    objs = _objects(args.cluster, "cluster", args.strict, directory=True)
    gates = _workload_gates(objs)
    if gates is not None:  # both read again as an API server with the gates reads them
        import warnings

        with warnings.catch_warnings():  # (their warnings were given once, above)
            warnings.simplefilter("ignore")
            pod = _one_pod(args.pod, args.strict, feature_gates=gates)
            objs = _objects(args.cluster, "cluster", args.strict, directory=True, feature_gates=gates)
    cfg = _config(args.config, feature_gates=gates)
    profile = args.profile or pod.scheduler_name
    try:
        cfg.profile(profile)
    except KeyError:
        names = ", ".join(p.scheduler_name for p in cfg.profiles)
        raise CLIError(f"no profile named {profile!r} in the configuration (profiles: {names})") from None
    e = _cluster_scheduler(args, cfg, objs, gates).explain(pod, profile=profile)
    feasible = set(e.feasible)
    order = sorted(e.node_names, key=lambda n: (n not in feasible, -e.total.get(n, 0), e.node_names.index(n)))
    limit = None if args.all or args.limit == 0 else args.limit
    if limit is not None:
        order = order[:limit]
    if args.json:
        rows = {r["node"]: r for r in e.table()}
        _json_out({"pod": pod.key, "profile": e.profile, "admission_error": e.admission_error,
                   "prefilter": {k: _status_text(v) for k, v in e.prefilter.items()},
                   "prefilter_status": _status_text(e.prefilter_status),
                   "prefilter_nodes": None if e.prefilter_result is None or e.prefilter_result.node_names is None
                   else sorted(e.prefilter_result.node_names),
                   "prescore": {k: _status_text(v) for k, v in e.prescore.items()},
                   "error": _status_text(e.error), "feasible": e.feasible, "best_nodes": e.best_nodes,
                   "nodes": [{**rows[n], "feasible": n in feasible} for n in order],
                   "nodes_total": len(e.node_names), "nodes_not_shown": len(e.node_names) - len(order),
                   **({} if e.pod_group is None else {"pod_group": _pod_group_json(e.pod_group)}),
                   **({} if e.preemption is None else {"preemption": _preemption_json(e.preemption)})})
        return 0
    _print_explanation(e, order, feasible)
    return 0


def _preemption_json(p: Any) -> dict:
    return {"attempted": p.attempted, "reason": p.reason, "status": p.status, "message": p.message,
            "nominated_node": p.nominated_node, "victims": [{"pod": k, "node": n} for k, n in p.victims]}


def _print_preemption(p: Any) -> None:
    con = _console()
    if not p.attempted:
        con.print(f"no attempt would run now: {p.reason}")
        return
    if p.nominated_node:
        con.print(f"[bold]preemption[/]: an attempt now would nominate the pod to {p.nominated_node}, evicting "
                  f"{len(p.victims)} pod(s): {', '.join(k for k, _ in p.victims)}")
    else:
        con.print("[bold]preemption[/]: would not help; an attempt now leaves the pod "
                  f"{p.status}: {p.message}")


def _pod_group_json(g: Any) -> dict:
    return {"name": f"{g.namespace}/{g.name}", "policy": g.policy, "min_count": g.min_count,
            "cycle_ran": g.cycle_ran, "reason": g.reason,
            "members": [{"pod": k, "status": st, "node": node, "message": msg}
                        for k, (st, node, msg) in g.members.items()]}


def _print_pod_group(g: Any) -> None:
    con = _console()
    policy = "no such PodGroup" if g.policy is None else (
        f"gang, minCount {g.min_count}" if g.policy == "gang" else "basic")
    con.print(f"[bold]pod group {g.namespace}/{g.name}[/] ({policy}): the group is scheduled in one cycle")
    if not g.cycle_ran:
        con.print(f"  no group cycle would run now: {g.reason}")
        return
    con.print(f"  its cycle now would schedule {len(g.scheduled)} of {len(g.members)} member(s):")
    for key, (status, node, message) in g.members.items():
        con.print(f"  {key}: {status}{f' on {node}' if node and status in ('Scheduled', 'Waiting') else ''}"
                  f"{'' if status == 'Scheduled' else f': {message}'}")


def _print_explanation(e: Any, order: list[str], feasible: set[str]) -> None:
    from rich.table import Table

    con = _console()
    if e.admission_error:  # (no plugin ran: the API server does not create the pod)
        con.print(f"[bold]{e.pod.key}[/]: [bold red]refused at admission[/]: {e.admission_error}")
        con.print("the API server does not create the pod: no scheduler sees it (add() gives it this Error result)")
        return
    con.print(f"[bold]{e.pod.key}[/] with profile [bold]{e.profile}[/]: {len(feasible)}/{len(e.node_names)} "
              f"nodes feasible")
    from ..framework.status import Code

    failed_pre = {k: v for k, v in e.prefilter.items() if v is not None and v.code() != Code.SKIP}
    for plugin, s in failed_pre.items():
        con.print(f"  PreFilter {plugin}: {_status_text(s)}")
    if e.prefilter_status is not None and e.prefilter_status.code() != Code.SUCCESS and not failed_pre:
        con.print(f"  PreFilter: {_status_text(e.prefilter_status)}")
    if e.prefilter_result is not None and e.prefilter_result.node_names is not None:
        con.print(f"  PreFilter restricts the pod to {len(e.prefilter_result.node_names)} node(s)")
    filter_plugins: list[str] = []
    for verdicts in e.filter.values():
        for p in verdicts:
            if p not in filter_plugins:
                filter_plugins.append(p)
    rejecting = [p for p in filter_plugins if any(v.get(p) is not None for v in e.filter.values())]
    passing = [p for p in filter_plugins if p not in rejecting]
    t = Table(title="Filter verdicts and weighted scores per node", show_lines=False)
    t.add_column("node", no_wrap=True)
    t.add_column("feasible")
    for p in rejecting:
        t.add_column(f"filter\n{_camel_lines(p)}")
    for p in e.scores:
        t.add_column(f"score\n{_camel_lines(p)}", justify="right")
    t.add_column("total", justify="right")
    for n in order:
        cells = [n, "[green]yes[/]" if n in feasible else "[red]no[/]"]
        for p in rejecting:
            s = e.filter.get(n, {}).get(p, "skipped")
            cells.append("ok" if s is None else ("-" if s == "skipped" else f"[red]{s.message()}[/]"))
        for p, per_node in e.scores.items():
            d = per_node.get(n)
            cells.append("" if d is None else str(d.weighted))
        cells.append(str(e.total[n]) if n in e.total else "")
        t.add_row(*cells)
    con.print(t)
    if passing:
        con.print(f"filters passed on every node: {', '.join(passing)}")
    if len(order) < len(e.node_names):
        left = len(e.node_names) - len(order)
        con.print(f"({left} more node{'s' if left > 1 else ''} not shown: the best {len(order)} of "
                  f"{len(e.node_names)} are; --limit N shows N, --all shows every node)")
    if e.error is not None:
        con.print(f"[red]scoring error[/]: {_status_text(e.error)}")
    if e.best_nodes:
        best = e.total[e.best_nodes[0]]
        con.print(f"[bold]best node{'s' if len(e.best_nodes) > 1 else ''}[/] (total {best}): "
                  f"{', '.join(e.best_nodes)}")
    else:
        con.print("[bold red]no feasible node[/]: the pod is unschedulable on this cluster")
    if e.pod_group is not None:
        _print_pod_group(e.pod_group)
    if e.preemption is not None:
        _print_preemption(e.preemption)
