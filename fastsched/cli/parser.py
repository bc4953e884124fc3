"""The ``fastsched`` argument parser and entry point: :func:`build_parser`, :func:`main`.

:func:`main` parses the command line and runs the command (each in its own module of
:mod:`fastsched.cli`), turning every :class:`~fastsched.errors.FastschedError` into one line on
stderr; ``fastsched.cli:main`` is the console script.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Sequence

from ..errors import NOT_UTF8_TEXT, FastschedError
from .bench import cmd_bench
from .capacity import cmd_capacity
from .common import DEFAULT_OUT, EXPLAIN_LIMIT, PROG, CLIError, _error, _one_line
from .config import cmd_config_defaults, cmd_config_validate
from .differential import cmd_differential
from .explain import cmd_explain
from .perf import cmd_perf
from .simulate import cmd_simulate
from .sweep import cmd_sweep


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, no usage dump
        self.exit(2, f"{PROG}: error: {message} (see '{self.prog} --help')\n")


def _pos_int(text: str) -> int:
    v = _nonneg_int(text)
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {v}")
    return v


def _nonneg_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {v}")
    return v


def build_parser() -> argparse.ArgumentParser:
    from .. import UPSTREAM_VERSION, __version__

    p = _Parser(prog=PROG, description=f"fastsched {__version__}: the kube-scheduler {UPSTREAM_VERSION} "
                                       "scheduling framework on vectorized kernels — simulate, benchmark, "
                                       "explain and plan capacity.")
    p.add_argument("--version", action="version", version=f"{PROG} {__version__} (kube-scheduler {UPSTREAM_VERSION})")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    s = sub.add_parser("simulate", help="run a scenario in virtual time and write a report",
                       description="Run a scenario (cluster, configuration, pod arrivals, node events, modelled "
                                   "scheduler time) in virtual time and write a report: report.html (open it "
                                   "offline), summary.json, pods.csv, timeseries.csv, metrics.json, records.json "
                                   "and PNG plots.",
                       epilog="The scenario format, every field, is documented in docs/scenario.md; the report's "
                              "files and every CSV column in docs/report.md (in the fastsched repository; "
                              "examples/scenario.yaml is a scenario to start from).")
    s.add_argument("scenario", nargs="?", metavar="SCENARIO", help="scenario YAML file (default: the built-in one)")
    s.add_argument("--out", default=DEFAULT_OUT, metavar="DIR", help=f"report directory (default ./{DEFAULT_OUT})")
    s.add_argument("--seed", type=_nonneg_int, default=None, help="override the scenario's seed (arrivals, node-event picks, scheduler ties; "
                                                                "the initial cluster is kept)")
    s.add_argument("--record", choices=("all", "failures", "none"), default="failures",
                   help="decision records to keep and show in report.html: every attempt of every pod (all), "
                        "the attempts of pods that failed at least once (failures, the default), or none")
    s.add_argument("--quiet", action="store_true", help="no progress bar and no summary table")
    s.set_defaults(func=cmd_simulate)

    b = sub.add_parser("bench", help="time one built-in scheduler_perf workload (an alias of perf)")
    b.add_argument("workload", metavar="WORKLOAD", help="a scheduler_perf workload name, e.g. SchedulingBasic")
    b.add_argument("--nodes", type=_nonneg_int, default=None, help="nodes (default: upstream's size)")
    b.add_argument("--pods", type=_nonneg_int, default=None, help="measured pods (default: scaled with --nodes)")
    b.add_argument("--init-pods", type=_nonneg_int, default=None, help="init pods (default: scaled with --nodes)")
    b.add_argument("--seed", type=_nonneg_int, default=0)
    b.add_argument("--schedule-init", action="store_true",
                   help="schedule the init pods through the scheduler instead of prebinding them")
    b.add_argument("--json", action="store_true", help="machine-readable output")
    b.set_defaults(func=cmd_bench)

    pf = sub.add_parser("perf", help="run an upstream scheduler_perf performance-config.yaml")
    pf.add_argument("config", metavar="CONFIG", help="an upstream performance-config.yaml (template paths "
                                                     "resolve against its folder)")
    pf.add_argument("--name", metavar="TEST", help="run only this test case (e.g. SchedulingBasic)")
    pf.add_argument("--workload", metavar="NAME", help="run only workloads of this name (e.g. 5000Nodes_10000Pods)")
    pf.add_argument("--label", metavar="FILTER", default=None,
                    help="upstream's label filter: comma list, x/+x required, -x excluded (default "
                         "'performance', or none with --workload; '' selects every workload)")
    pf.add_argument("--out", metavar="FILE", help="write upstream's data-items JSON here (a directory gets "
                                                  "upstream's file name)")
    pf.add_argument("--fail-under-threshold", action="store_true",
                    help="exit with status 1 when a workload is below its threshold")
    pf.add_argument("--topic", metavar="T", help="threshold topic (default: the config's folder name)")
    pf.add_argument("--seed", type=_nonneg_int, default=0, help="seed for generated names and ties")
    pf.add_argument("--json", action="store_true", help="print results and data items as JSON, no table")
    pf.add_argument("--list", action="store_true", help="list the selected workloads and exit")
    pf.add_argument("--cpu-time", action="store_true",
                    help="count fastsched's work in this process's CPU time instead of wall time (rates "
                         "not lowered by other load on the machine)")
    pf.add_argument("--rescale-no-sample", nargs="?", const=4.0, default=None, type=float, metavar="FACTOR",
                    help="a workload whose measured phase keeps no throughput sample is run again with its "
                         "measured pods' count parameters times FACTOR (default 4; again, up to 3 runs, while it "
                         "keeps too few samples: times FACTOR after a run without one, else by a step from the "
                         "samples it kept, see --min-samples); that run's metric is shown beside 'no sample', "
                         "not in its place. If its pods do not fit (they stay unschedulable), the cluster's node "
                         "counts and init pods and claims are scaled with them, and its row says 'cluster "
                         "scaled' with the values the cluster got")
    pf.add_argument("--min-samples", type=_pos_int, default=1, metavar="N",
                    help="with --rescale-no-sample: also rescale a workload whose measured phase keeps fewer than "
                         "N throughput samples, and rescale until N are kept (default 1; a phase of one or two "
                         "samples is measured by its tail, not its rate). A run keeping k samples, 0 < k < N, is "
                         "followed by one m times bigger, the smallest m >= 2 with (k+1)*m >= N+2, not by FACTOR "
                         "again")
    pf.set_defaults(func=cmd_perf)

    e = sub.add_parser("explain", help="every plugin's verdict and score for one pod on a cluster")
    e.add_argument("--cluster", required=True, metavar="PATH",
                   help="a manifest file, cluster dump or directory: nodes, running pods, namespaces, workloads")
    e.add_argument("--pod", required=True, metavar="FILE", help="the pod manifest")
    e.add_argument("--config", metavar="FILE", help="KubeSchedulerConfiguration (default: the default one)")
    e.add_argument("--profile", metavar="NAME", help="profile (default: the pod's schedulerName)")
    shown = e.add_mutually_exclusive_group()
    shown.add_argument("--limit", type=_nonneg_int, default=EXPLAIN_LIMIT, metavar="N",
                       help=f"show the N best nodes (default {EXPLAIN_LIMIT}; 0: all)")
    shown.add_argument("--all", action="store_true", help="show every node")
    e.add_argument("--seed", type=_nonneg_int, default=0, help="seed for generated names and ties")
    e.add_argument("--strict", action="store_true",
                   help="unknown manifest fields and keys set twice are errors (the API server's strict "
                        "field validation), not warnings")
    e.add_argument("--json", action="store_true", help="machine-readable output")
    e.set_defaults(func=cmd_explain)

    c = sub.add_parser("capacity", help="how many pods fit; whether workloads fit; how many nodes to add")
    c.add_argument("--cluster", required=True, metavar="PATH",
                   help="a manifest file, cluster dump or directory: nodes, running pods, namespaces, "
                        "priority classes, workloads")
    c.add_argument("--pod", required=True, action="append", metavar="FILE", help="a pod manifest (repeatable)")
    c.add_argument("--replicas", action="append", type=_nonneg_int, metavar="N",
                   help="replicas of the matching --pod (repeatable, in the same order)")
    c.add_argument("--node-template", metavar="FILE", help="a Node manifest: how many such nodes must be added")
    c.add_argument("--gang-size", type=_nonneg_int, metavar="N",
                   help="how many whole gangs of N copies of --pod fit (a PodGroup per gang, all or nothing; "
                        "GenericWorkload on)")
    c.add_argument("--min-count", type=_nonneg_int, metavar="M",
                   help="with --gang-size: the gang's minCount (default N): a gang starts with M members bound")
    c.add_argument("--max-nodes", type=_nonneg_int, default=1000, metavar="N",
                   help="give up beyond this many added nodes (default 1000)")
    c.add_argument("--config", metavar="FILE", help="KubeSchedulerConfiguration (default: the default one)")
    c.add_argument("--seed", type=_nonneg_int, default=0)
    c.add_argument("--strict", action="store_true",
                   help="unknown manifest fields and keys set twice are errors (the API server's strict "
                        "field validation), not warnings")
    c.add_argument("--per-node", action="store_true",
                   help="list every node's copies (default: the top nodes and a histogram)")
    c.add_argument("--json", action="store_true", help="machine-readable output (every node's copies)")
    c.set_defaults(func=cmd_capacity)

    w = sub.add_parser("sweep", help="run many simulations (a grid or list of runs) on processes or Dask")
    w.add_argument("file", metavar="SWEEP", help="a sweep file (YAML): scenario, runs and/or grid")
    w.add_argument("--out", required=True, metavar="DIR", help="results.csv and one report folder per run")
    where = w.add_mutually_exclusive_group()
    where.add_argument("--dask", metavar="ADDRESS", help="a Dask scheduler address (pip install 'fastsched[dask]')")
    where.add_argument("--local-dask", type=_nonneg_int, metavar="N", help="a local Dask cluster of N workers")
    w.add_argument("--workers", type=_nonneg_int, metavar="N",
                   help="worker processes without Dask (default: the CPU count)")
    w.add_argument("--no-resume", action="store_true", help="run every run again, even those already finished")
    w.add_argument("--report", choices=("full", "data"), default="full",
                   help="per-run report: full (plots, report.html) or data (summary.json and CSVs; faster)")
    w.add_argument("--json", action="store_true", help="machine-readable output")
    w.set_defaults(func=cmd_sweep)

    df = sub.add_parser("differential", help="compare fastsched with upstream kube-scheduler (the Go oracle) "
                                             "on generated scenarios")
    df.add_argument("--class", dest="classes", action="append", metavar="C",
                    help="a scenario class (repeatable; default: all): resources, taints, affinity, podaffinity, "
                         "spread, ports, images, volumes, preemption, preemption-ties, profiles, dra, mixed; and "
                         "preenqueue (pods held by PreEnqueue: created with scheduling gates that a later update "
                         "removes, or naming a ResourceClaim that does not exist), sampling (100-600 nodes where "
                         "upstream samples: percentageOfNodesToScore, the start index across cycles, preemptors "
                         "attempted again on their nominated node; not with --batching), hints (the queueing hints: "
                         "each plugin's registered events and its QueueingHintFns' answers on drawn cluster "
                         "changes), hints-gangs (the same on pod groups' clusters, GenericWorkload on both sides), "
                         "gangs (pod groups, the oracle with GenericWorkload on), gangs-tas (with TopologyAwareWorkloadScheduling "
                         "too: topology constraints), gangs-policy (with PodGroupPreemptionPolicy too: PodGroups' "
                         "preemptionPolicy), gangs-claims (with DRAWorkloadResourceClaims too: claims a PodGroup names, "
                         "reserved for the group), gangs-nar (gangs-claims with DRANodeAllocatableResources too: "
                         "the members' GPUs taking cpu and memory from their nodes), gangs-composite (with "
                         "CompositePodGroup and TopologyAwareWorkloadScheduling too: trees of CompositePodGroups over "
                         "PodGroups), gangs-composite-policy (the same with PodGroupPreemptionPolicy: the root "
                         "CompositePodGroups' preemptionPolicy), dra-alpha (the dra scenarios with "
                         "DRA's alpha gates on both sides: DRAListTypeAttributes, DRADeviceCompatibilityGroups, "
                         "DRAOptionalNodeOperations), dra-derived (the dra-alpha scenarios with DRADerivedAttributes on "
                         "too: claims with derived attributes) and dra-nar (the dra scenarios with "
                         "DRANodeAllocatableResources on both sides: devices taking cpu and memory from the node), run "
                         "only when named")
    df.add_argument("--scenarios", type=_nonneg_int, default=20, metavar="N", help="scenarios per class (default 20)")
    df.add_argument("--seed", type=_nonneg_int, default=None, metavar="S",
                    help="first seed (default: a fresh random one, printed)")
    df.add_argument("--out", default=None, metavar="DIR", help="write each difference, shrunk, as DIR/<class>-<seed>.json")
    df.add_argument("--record", default=None, metavar="DIR",
                    help="write the agreeing scenarios and the oracle's answers to DIR/<class>.jsonl.gz "
                         "(the recorded set tests/oracle replays)")
    df.add_argument("--oracle", default=None, metavar="PATH",
                    help="the oracle binary (default: oracle/bin/oracle, built with `go build` when missing)")
    df.add_argument("--feature-gates", default=None, metavar="G",
                    help="feature gates both sides set on top of v1.37's defaults, e.g. DRADeviceTaintRules=false "
                         "(fastsched's switchable gates; the oracle's unless --oracle-feature-gates)")
    df.add_argument("--oracle-feature-gates", default=None, metavar="G",
                    help="feature gates the oracle sets on top of upstream's defaults, e.g. OpportunisticBatching=false "
                         "(default: $FASTSCHED_ORACLE_FEATURE_GATES)")
    df.add_argument("--allow-skew", action="store_true",
                    help="run even when the oracle's kube-scheduler release is not the one fastsched follows "
                         "(fastsched.UPSTREAM_VERSION)")
    df.add_argument("--raw", action="store_true",
                    help="count the known differences too (fastsched.testing.oracle.KNOWN; normalized away by default)")
    df.add_argument("--batching", action="store_true",
                    help="give every profile a PodTopologySpread that lets pods be signed (defaultingType: List "
                         "with no default constraints, or disabled, by seed parity) and repeat each incoming pod "
                         "three times, so that opportunistic batching fires on both sides")
    df.add_argument("--fast-paths", action=argparse.BooleanOptionalAction, default=False,
                    help="then run each scenario the oracle agrees with again through a plain Scheduler with no "
                         "decision records (the compiled cycle, the compiled binding path, the gang runs, the Permit "
                         "run and commit_run on) and compare each pod's outcome, and each pod group's condition, "
                         "with the recorded run's: a mismatch is a difference 'fast-path:<field>'; prints the share "
                         "of cycles and bindings the fast paths served")
    df.add_argument("--bench", action="store_true",
                    help="instead: time upstream's scheduling cycles (in process) and fastsched's on the same "
                         "SchedulingBasic-like and pod anti-affinity clusters")
    df.add_argument("--bench-nodes", type=_nonneg_int, default=None, metavar="N", help="--bench: nodes (default 500)")
    df.add_argument("--bench-init-pods", type=_nonneg_int, default=None, metavar="K",
                    help="--bench: pods bound beforehand (default 500; 100 with anti-affinity)")
    df.add_argument("--bench-pods", type=_nonneg_int, default=None, metavar="M",
                    help="--bench: pods scheduled and timed (default 1000; 400 with anti-affinity)")
    df.set_defaults(func=cmd_differential)

    g = sub.add_parser("config", help="validate a configuration or print the defaults")
    gsub = g.add_subparsers(dest="config_command", metavar="ACTION", parser_class=_Parser)
    v = gsub.add_parser("validate", help="check a KubeSchedulerConfiguration file")
    v.add_argument("file", metavar="FILE")
    v.set_defaults(func=cmd_config_validate)
    d = gsub.add_parser("defaults", help="print the defaulted configuration as YAML")
    d.set_defaults(func=cmd_config_defaults)
    g.set_defaults(func=None, _help=g)
    p.set_defaults(func=None, _help=p)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (the console script exits with it)."""
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as exc:  # --help, --version, usage errors
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    if args.func is None:
        args._help.print_help(sys.stderr)
        return 2
    import warnings

    from ..api import ManifestWarning

    with warnings.catch_warnings():
        warnings.simplefilter("always", ManifestWarning)
        warnings.showwarning = _show_warning
        return _run(args)


def _show_warning(message: Any, category: type, filename: str, lineno: int, file: Any = None,
                  line: Any = None) -> None:
    """Warnings as one ``fastsched: warning: ...`` line each, as kubectl prints its warnings."""
    sys.stderr.write(f"{PROG}: warning: {_one_line(str(message))}\n")


def _run(args: argparse.Namespace) -> int:
    try:
        return int(args.func(args) or 0)
    except CLIError as exc:
        _error(str(exc))
        return 1
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
    except BrokenPipeError:
        return 1
    except Exception as exc:  # noqa: BLE001 - one line, never a traceback (unless FASTSCHED_DEBUG)
        if os.environ.get("FASTSCHED_DEBUG"):
            raise
        if isinstance(exc, FastschedError):
            _error(str(exc))
        elif isinstance(exc, OSError):
            _error(f"{exc.strerror or exc}: {exc.filename or ''}")
        elif isinstance(exc, UnicodeDecodeError):  # a file that is not text, wherever it was read
            _error(f"cannot read a file: {NOT_UTF8_TEXT}")
        else:
            _error(f"internal error: {type(exc).__name__}: {exc} (FASTSCHED_DEBUG=1 shows the traceback)")
        return 1
