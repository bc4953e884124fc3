"""Upstream's scheduler_perf configurations, run on fastsched (``fastsched perf``).

::

    from fastsched.perf import load_perf_config, run_perf

    config = load_perf_config("scheduler_perf/misc/performance-config.yaml")
    report = run_perf(config, name="SchedulingBasic", label_filter="performance")
    for r in report.results:
        print(r.name, r.status, r.measured, r.threshold)
    report.data_items_json()     # upstream's {"version": "v1", "dataItems": [...]}

- :mod:`.config`: the file format (test cases, workloads, ops, params), decoded as upstream does;
- :mod:`.gotemplate`: the Go text/template renderer for node/pod/object templates;
- :mod:`.runner`: the executor and the entry points (:func:`run_perf`, :func:`run_workload`);
- :mod:`.ops`: the executor's op handlers, one per opcode;
- :mod:`.metrics`: the collectors, the thresholds and the results;
- :mod:`.gates`: the feature gates fastsched models;
- :mod:`.report`: the terminal table and the JSON file.
"""
from .config import (NOT_MODELLED_OPCODES, MetricSelector, Op, PerfConfig, PerfConfigError, TestCase, Workload,
                     label_filter_enabled, load_perf_config, parse_go_duration, parse_perf_config)
from .gotemplate import Template, TemplateError, render
from .errors import WorkloadError
from .metrics import DataItem, PerfReport, PhaseStats, WorkloadResult, apply_threshold
from .runner import rescale_workload, run_perf, run_workload, select_workloads

__all__ = ["NOT_MODELLED_OPCODES", "MetricSelector", "Op", "PerfConfig", "PerfConfigError", "TestCase", "Workload",
           "label_filter_enabled", "load_perf_config", "parse_go_duration", "parse_perf_config", "Template",
           "TemplateError", "render", "DataItem", "PerfReport", "PhaseStats", "WorkloadError", "WorkloadResult",
           "apply_threshold", "rescale_workload", "run_perf", "run_workload", "select_workloads"]
