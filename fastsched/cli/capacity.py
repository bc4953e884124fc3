"""``fastsched capacity``: how many pods fit, whether workloads fit, how many nodes to add.

One module per command (see :mod:`fastsched.cli`); the shared helpers are in
:mod:`fastsched.cli.common`.
"""
from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

from .common import CLIError, _config, _console, _json_out, _objects, _one_line, _one_pod


def cmd_capacity(args: argparse.Namespace) -> int:
    from ..api import Node
    from ..sim.capacity import fits_together, max_replicas, nodes_needed

    objs = _objects(args.cluster, "cluster", args.strict, directory=True)
    if not any(isinstance(o, Node) for o in objs) and not args.node_template:
        raise CLIError(f"cluster {args.cluster}: no Node objects")
    pods = [_one_pod(p, args.strict) for p in args.pod]
    replicas = args.replicas or []
    if args.gang_size is not None or args.min_count is not None:
        return _gangs(args, objs, pods, replicas)
    cfg = _config(args.config)
    if any(r < 0 for r in replicas):
        raise CLIError("--replicas must not be negative")
    template = None
    if args.node_template:
        found = [o for o in _objects(args.node_template, "node template", args.strict) if isinstance(o, Node)]
        if len(found) != 1:
            raise CLIError(f"node template {args.node_template}: expected exactly one Node manifest")
        template = found[0]

    if not replicas:
        if len(pods) != 1:
            raise CLIError("give --replicas for each --pod when asking about several pods")
        if template is not None:
            raise CLIError("--node-template needs --replicas (how many copies must fit)")
        with _CapacityProgress("placing copies") as progress:
            r = max_replicas(objs, pods[0], config=cfg, seed=args.seed, progress=progress)
        report = {"mode": "max_replicas", "pod": r.pod, "placed": r.placed, "per_node": r.per_node,
                  "stop_reason": r.stop_reason}
        if args.json:
            _json_out(report)
            return 0
        con = _console()
        con.print(f"[bold]{r.placed:,}[/] more copies of {r.pod} fit on the cluster")
        _print_distribution(r, all_nodes=args.per_node)
        if r.stop_reason:
            con.print(f"the next copy does not fit: {r.stop_reason}")
        return 0

    if len(replicas) != len(pods):
        raise CLIError(f"{len(pods)} --pod but {len(replicas)} --replicas: give one --replicas per --pod")
    workloads = list(zip(pods, replicas))
    if template is not None:
        try:
            with _CapacityProgress("trying node counts") as progress:
                rep = nodes_needed(objs, workloads, template, config=cfg, max_nodes=args.max_nodes, seed=args.seed,
                                   progress=progress)
        except ValueError as exc:
            raise CLIError(_one_line(str(exc))) from None
        mode = "nodes_needed"
    else:
        with _CapacityProgress("placing replicas") as progress:
            rep = fits_together(objs, workloads, config=cfg, seed=args.seed, progress=progress)
        mode = "fits_together"
    data = {"mode": mode, **rep.as_dict()}
    if template is not None:
        data["node_template"] = template.name
    if args.json:
        _json_out(data)
        return 0
    con = _console()
    if template is not None:  # mode == "nodes_needed"
        con.print(f"[bold]{rep.nodes_added}[/] node(s) like {template.name} must be added for every workload to fit")
    else:
        con.print("all workloads fit together" if rep.all_fit else "[red]the workloads do not all fit together[/]")
    for w in rep.workloads:
        mark = "[green]fit[/]" if w.all_fit else "[red]does not fit[/]"
        con.print(f"{w.pod}: {w.placed:,}/{w.requested:,} replicas placed — {mark}")
        _print_distribution(w, indent="  ", all_nodes=args.per_node)
        if w.stop_reason:
            con.print(f"  stopped by: {w.stop_reason}")
    return 0


def _gangs(args: argparse.Namespace, objs: list, pods: list, replicas: list) -> int:
    """``--gang-size N [--min-count M]``: how many whole gangs of the pod fit."""
    from ..config import ConfigError
    from ..scheduler.config_check import check_config
    from ..sim.capacity import max_gangs
    from ..sim.gangs import workload_gates
    from .common import _file

    if args.gang_size is None:
        raise CLIError("--min-count needs --gang-size")
    if args.gang_size < 1:
        raise CLIError("--gang-size must be at least 1")
    if len(pods) != 1 or replicas or args.node_template:
        raise CLIError("--gang-size takes one --pod, and neither --replicas nor --node-template")
    if args.min_count is not None and not 1 <= args.min_count <= args.gang_size:
        raise CLIError(f"--min-count must be between 1 and --gang-size ({args.gang_size})")
    cfg = None
    if args.config is not None:  # loaded with GenericWorkload on: GangScheduling is a default plugin
        try:
            cfg = check_config(_file(args.config, "config"), feature_gates=workload_gates())
        except ConfigError as exc:
            raise CLIError(f"invalid config {args.config}: {_one_line(str(exc))}") from None
    with _CapacityProgress("placing gangs") as progress:
        r = max_gangs(objs, pods[0], args.gang_size, min_count=args.min_count, config=cfg, seed=args.seed,
                      progress=progress)
    if args.json:
        _json_out({"mode": "max_gangs", **r.as_dict()})
        return 0
    con = _console()
    con.print(f"[bold]{r.gangs:,}[/] whole gang(s) of {r.pods_per_gang} x {r.pod} fit (minCount {r.min_count}; "
              f"{r.members:,} members bound)")
    _print_distribution(r, all_nodes=args.per_node)
    if r.stop_reason:
        con.print(f"the next gang does not fit: {r.stop_reason}")
    return 0


def _print_distribution(result: Any, indent: str = "", all_nodes: bool = False) -> None:
    """Where the copies went: the nodes with the most (all of them with ``all_nodes``) and, when
    some are left out, how many nodes got how many copies."""
    from rich.table import Table

    from ..sim.capacity import TOP_NODES

    per_node = result.per_node
    if not per_node:
        return
    con = _console()
    shown = result.top_nodes(len(per_node) if all_nodes else TOP_NODES)
    t = Table(show_header=True, box=None, padding=(0, 2))
    t.add_column(f"{indent}node")
    t.add_column("copies", justify="right")
    for n, c in shown:
        t.add_row(f"{indent}{n}", f"{c:,}")
    con.print(t)
    if len(shown) == len(per_node):
        return
    con.print(f"{indent}... and {len(per_node) - len(shown):,} more nodes (--per-node lists them all); "
              f"{len(per_node):,} nodes got copies:")
    h = Table(show_header=True, box=None, padding=(0, 2))
    h.add_column(f"{indent}copies per node", justify="right")
    h.add_column("nodes", justify="right")
    for copies, nodes in result.histogram().items():
        h.add_row(f"{indent}{copies:,}", f"{nodes:,}")
    con.print(h)


class _CapacityProgress:
    """A progress bar on stderr while capacity works (on a terminal only); yields the callback."""

    def __init__(self, what: str):
        self.what = what
        self._progress: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> Callable[[int, int | None], None] | None:
        con = _console(stderr=True)
        if not con.is_terminal:
            return None
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._progress = Progress(TextColumn(self.what), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                  console=con, transient=True)
        self._progress.start()
        self._task = self._progress.add_task(self.what, total=None)
        return self._update

    def _update(self, done: int, total: int | None) -> None:
        assert self._progress is not None and self._task is not None  # handed out by __enter__ after both are set
        self._progress.update(self._task, completed=done, total=total)

    def __exit__(self, *exc: object) -> None:  # None: exceptions propagate
        if self._progress is not None:
            self._progress.stop()
