"""``fastsched differential``: compare fastsched with upstream kube-scheduler (the Go oracle).

One module per command (see :mod:`fastsched.cli`); the shared helpers are in
:mod:`fastsched.cli.common`.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .common import CLIError


def cmd_differential(args: argparse.Namespace) -> int:
    """Upstream kube-scheduler (the Go oracle) against fastsched on generated scenarios; exit
    status 1 when any scenario differs (the reproducers are in --out)."""
    import random as _random
    import shutil

    from ..testing import oracle as orc
    from ..testing.oracle_groups import (GANG_CLAIMS_CLASS, GANG_CLASS, GANG_COMPOSITE_CLASS,
                                         GANG_COMPOSITE_POLICY_CLASS, GANG_NAR_CLASS, GANG_POLICY_CLASS,
                                         GANG_TAS_CLASS)
    from ..testing.oracle_scenarios import CLASSES, GATED_CLASSES, NAMED_CLASSES

    groups = (GANG_CLASS, GANG_TAS_CLASS, GANG_POLICY_CLASS, GANG_CLAIMS_CLASS, GANG_NAR_CLASS, GANG_COMPOSITE_CLASS,
              GANG_COMPOSITE_POLICY_CLASS)
    classes = args.classes or list(CLASSES)
    from ..testing.oracle_hints import HINTS_CLASSES

    unknown = [c for c in classes if c not in CLASSES and c not in groups and c not in GATED_CLASSES
               and c not in NAMED_CLASSES and c not in HINTS_CLASSES]
    if unknown:
        gated = "".join(f", {c} (with {gates} on both sides)" for c, (_, gates) in GATED_CLASSES.items())
        raise CLIError(f"unknown scenario class {unknown[0]!r} (classes: {', '.join(CLASSES)}; and "
                       f"{', '.join(NAMED_CLASSES)}, {', '.join(HINTS_CLASSES)}, {GANG_CLASS}, "
                       f"with GenericWorkload on, {GANG_TAS_CLASS}, with TopologyAwareWorkloadScheduling too, "
                       f"{GANG_POLICY_CLASS}, with PodGroupPreemptionPolicy too, {GANG_CLAIMS_CLASS}, with "
                       f"DRAWorkloadResourceClaims too, {GANG_NAR_CLASS}, with DRANodeAllocatableResources "
                       f"too, {GANG_COMPOSITE_CLASS}, with CompositePodGroup and "
                       f"TopologyAwareWorkloadScheduling too, {GANG_COMPOSITE_POLICY_CLASS}, with "
                       f"PodGroupPreemptionPolicy as well{gated}, only when named)")
    if args.batching and "sampling" in classes:
        # the hint among nodes tied on the previous cycle's total comes from the order of its score
        # list (upstream's heap has no randomizer without extenders), which the oracle does not
        # retell for a sampled search: every such scenario differs on the hint
        raise CLIError("--batching does not run class sampling (its batching hints are not retold for a "
                       "sampled search)")
    binary = Path(args.oracle) if args.oracle else orc.oracle_binary()
    pinned = orc.pinned_version()  # (None outside a checkout: then the binary must be given or built)
    stale = binary.exists() and not args.oracle and pinned is not None and (
        (orc.oracle_version(binary) or {}).get("kubernetes") != pinned or orc.sources_newer_than(binary))
    if not binary.exists() or stale:  # missing, built from another go.mod or older sources: (re)build
        if args.oracle:
            raise CLIError(f"oracle binary not found: {args.oracle}")
        if pinned is None:  # an installed package: the oracle's Go module is in the repository only
            raise CLIError(orc.NO_CHECKOUT)
        if shutil.which("go") is None:
            raise CLIError("the oracle is not built (or is stale) and `go` is not on PATH (it needs Go to build: "
                           "see oracle/)")
        try:
            binary = orc.build_oracle()
        except RuntimeError as exc:
            raise CLIError(str(exc)) from None
    try:
        oracle = orc.Oracle(binary, feature_gates=args.oracle_feature_gates or args.feature_gates)
    except orc.OracleVersionError as exc:
        raise CLIError(str(exc)) from None
    oracle.fastsched_feature_gates = args.feature_gates
    skew = orc.version_skew(oracle.version)
    if skew is not None and not args.allow_skew:
        oracle.close()
        raise CLIError(f"{skew}: differences would be the releases' (pass --allow-skew to run anyway)")
    out = sys.stdout
    if skew is not None:
        out.write(f"differential: {skew} (--allow-skew)\n")
    if args.bench:
        with oracle:
            for workload in orc.BENCH_WORKLOADS:
                r = orc.bench(oracle, workload, args.bench_nodes, args.bench_init_pods, args.bench_pods)
                line = [f"bench {workload} ({r['nodes']} nodes, {r['init_pods']} init pods, {r['pods']} pods):"]
                for side in ("upstream", "fastsched"):
                    s = r[side]
                    rate = s["scheduled"] / s["seconds"] if s["seconds"] > 0 else float("inf")
                    line.append(f"{side} {s['scheduled']} scheduled in {s['seconds']:.3f} s "
                                f"({rate:,.0f} pods/s, {s['cpu_seconds']:.3f} s CPU)")
                out.write(" ".join(line[:1]) + " " + "; ".join(line[1:]) + "\n")
                out.flush()
        return 0
    seed = args.seed if args.seed is not None else _random.SystemRandom().randrange(1 << 31)
    out.write(f"differential: seed {seed}, classes {', '.join(classes)}"
              f"{' (batching variants)' if args.batching else ''}\n")
    out.flush()
    def log(line: str) -> None:
        out.write(line + "\n")
        out.flush()

    with oracle:
        summary = orc.differential([c for c in classes if c not in groups and c not in GATED_CLASSES
                                    and c not in HINTS_CLASSES],
                                   args.scenarios, seed, args.out,
                                   oracle=oracle, record=args.record, log=log, known=not args.raw,
                                   batching=args.batching, fast_paths=args.fast_paths)
    for cls in (c for c in classes if c in GATED_CLASSES):
        # its gates on both sides, on top of what was given: an oracle of its own
        gates = ",".join(g for g in (args.feature_gates, GATED_CLASSES[cls][1]) if g)
        oracle_gates = ",".join(g for g in (args.oracle_feature_gates or args.feature_gates, GATED_CLASSES[cls][1]) if g)
        with orc.Oracle(binary, feature_gates=oracle_gates) as gated_oracle:
            gated_oracle.fastsched_feature_gates = gates
            summary.update(orc.differential([cls], args.scenarios, seed, args.out, oracle=gated_oracle,
                                            record=args.record, log=log, known=not args.raw, batching=args.batching,
                                            fast_paths=args.fast_paths))
    for cls in (c for c in classes if c in HINTS_CLASSES):
        # the queueing hints (fastsched.testing.oracle_hints): an oracle at v1.37's default gates
        # (the plain classes' oracle turns SchedulerAsyncPreemption off, which changes what
        # DefaultPreemption registers), with the class's gates on both sides
        from ..testing.oracle_hints import HINTS_ORACLE_GATES, differential_hints

        gates = ",".join(g for g in (args.feature_gates, HINTS_CLASSES[cls]) if g)
        oracle_gates = ",".join(g for g in (HINTS_ORACLE_GATES, args.oracle_feature_gates or args.feature_gates,
                                            HINTS_CLASSES[cls]) if g)
        with orc.Oracle(binary, feature_gates=oracle_gates) as hints_oracle:
            try:
                summary[cls] = differential_hints(args.scenarios, seed, args.out, oracle=hints_oracle,
                                                  record=args.record, log=log, feature_gates=gates or None, cls=cls)
            except RuntimeError as exc:
                raise CLIError(str(exc)) from None
    for cls in groups:  # pod groups: an oracle with GenericWorkload on (fastsched.testing.oracle_groups)
        if cls not in classes:
            continue
        from ..testing.oracle_groups import differential_groups

        summary[cls] = differential_groups(args.scenarios, seed, args.out, binary=binary,
                                           feature_gates=args.oracle_feature_gates, record=args.record,
                                           log=lambda line: (out.write(line + "\n"), out.flush()),
                                           tas=cls == GANG_TAS_CLASS,
                                           policy=cls in (GANG_POLICY_CLASS, GANG_COMPOSITE_POLICY_CLASS),
                                           claims=cls == GANG_CLAIMS_CLASS, nar=cls == GANG_NAR_CLASS,
                                           composite=cls in (GANG_COMPOSITE_CLASS, GANG_COMPOSITE_POLICY_CLASS),
                                           fast_paths=args.fast_paths)
    from ..testing.oracle_fast import FastPathStats

    total = orc.ClassSummary()
    fast = FastPathStats()
    for cls, s in summary.items():
        known = f", {s.known} known" if s.known else ""
        unit = "cases" if cls in HINTS_CLASSES else "pods"  # (a hints scenario's cases: changes asked about)
        out.write(f"{cls}: {s.scenarios} scenarios, {s.pods} {unit}, {s.differences} differences{known} "
                  f"({s.seconds:.1f} s)\n")
        if s.fast is not None:  # --fast-paths: what the fast runs' fast paths served
            out.write(f"  fast paths: {s.fast_differences} differences; {s.fast.text()}\n")
            fast.add(s.fast)
        total.scenarios += s.scenarios
        total.pods += s.pods
        total.differences += s.differences
    out.write(f"differential: {total.scenarios} scenarios, {total.pods} pods, {total.differences} differences\n")
    if args.fast_paths:
        out.write(f"differential: fast paths {fast.text()}\n")
    return 1 if total.differences else 0
