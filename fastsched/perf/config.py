"""scheduler_perf's ``performance-config.yaml``, read as upstream reads it.

The file is a YAML list of test cases, decoded the way upstream's ``getTestCases`` decodes it
(``sigs.k8s.io/yaml`` into Go structs): keys match the Go field names case-insensitively (upstream
files use lowerCamel; an exact match wins over a folded one), unknown keys are errors, numbers
that must be integers must be integers, durations are Go duration strings (``"5s"``, ``1m30s``).
Each op is decoded by its ``opcode`` into that op's struct, with unknown fields refused, and is
checked as upstream's ``isValid`` checks it. Errors are :class:`PerfConfigError` with the file
and a field path: ``performance-config.yaml: [0].workloadTemplate[2].countParam: must start with
"$"``.

Parameters (``countParam: $initPods``) are resolved per workload by :meth:`TestCase.ops_for`,
which also unrolls ``createPodSets`` (op indices, and so the default ``namespace-<index>``
namespaces, are counted after unrolling, as upstream counts them) and reports parameters that a
workload defines but no op uses, as upstream does.

Template paths stay as written; :meth:`PerfConfig.resolve` makes them absolute against the
config file's directory (upstream runs with the topic directory as working directory, so
``../templates/pod-default.yaml`` names the shared templates folder).
"""
from __future__ import annotations

import copy
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import yaml

from ..errors import FastschedError
from ..util.field import go_quote as _go_quote
from ..util.yamlsafe import checked
from ..util.goyaml import GoYAMLLoader, GoYAMLStrictLoader

__all__ = ["PerfConfigError", "PerfConfig", "TestCase", "Workload", "Op", "MetricSelector",
           "load_perf_config", "parse_go_duration", "label_filter_enabled", "NOT_MODELLED_OPCODES"]

#: Opcodes upstream has that fastsched cannot run (they profile Go): a workload using one is skipped.
NOT_MODELLED_OPCODES: dict[str, str] = {
    "startCollectingProfile": "Go profiling ops have no fastsched equivalent",
    "stopCollectingProfile": "Go profiling ops have no fastsched equivalent",
}


class PerfConfigError(FastschedError, ValueError):
    """A performance config that cannot be read: the message names the file and the field path."""


# ------------------------------------------------------------------------------------------------
# Go-style decoding helpers
# ------------------------------------------------------------------------------------------------
def _type_name(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


def _err(path: str, message: str) -> PerfConfigError:
    return PerfConfigError(f"{path}: {message}" if path else message)


#: Go's int on the 64-bit machines scheduler_perf runs on
_INT_MIN, _INT_MAX = -(2 ** 63), 2 ** 63 - 1


def _int(v: Any, path: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise _err(path, f"cannot unmarshal {_type_name(v)} into an integer")
    if isinstance(v, float) and (not math.isfinite(v) or v != int(v)):
        raise _err(path, f"cannot unmarshal number {v:g} into an integer")
    if not _INT_MIN <= v <= _INT_MAX:  # encoding/json refuses what overflows the field's int
        raise _err(path, f"cannot unmarshal number {int(v)} into an integer: out of range")
    return int(v)


def _float(v: Any, path: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise _err(path, f"cannot unmarshal {_type_name(v)} into a number")
    if not math.isfinite(v):  # JSON has no infinity: YAML's .inf or 1e999 cannot reach a float64
        raise _err(path, f"cannot unmarshal number {v} into a number")
    return float(v)


def _str(v: Any, path: str) -> str:
    if not isinstance(v, str):
        raise _err(path, f"cannot unmarshal {_type_name(v)} into a string")
    return v


def _bool(v: Any, path: str) -> bool:
    if not isinstance(v, bool):
        raise _err(path, f"cannot unmarshal {_type_name(v)} into a bool")
    return v


def _str_list(v: Any, path: str) -> list[str]:
    if v is None:
        return []
    if not isinstance(v, list):
        raise _err(path, f"cannot unmarshal {_type_name(v)} into a list of strings")
    return [_str(x, f"{path}[{i}]") for i, x in enumerate(v)]


def _str_map(v: Any, path: str) -> dict[str, str]:
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise _err(path, f"cannot unmarshal {_type_name(v)} into a map of strings")
    return {str(k): _str(x, f"{path}.{k}") for k, x in v.items()}


def _any_map(v: Any, path: str) -> dict[str, Any]:
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise _err(path, f"cannot unmarshal {_type_name(v)} into a map")
    return {str(k): x for k, x in v.items()}


_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION_PART = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_go_duration(text: str) -> float:
    """Go's ``time.ParseDuration`` in seconds: ``"1m30s"``, ``"500ms"``, ``"-2h"``, ``"0"``."""
    s = text.strip()
    if not isinstance(text, str) or not s:
        raise ValueError(f'time: invalid duration "{text}"')
    sign = -1.0 if s[0] == "-" else 1.0
    body = s[1:] if s[0] in "+-" else s
    if body == "0":
        return 0.0
    total, pos = 0.0, 0
    while pos < len(body):
        m = _DURATION_PART.match(body, pos)
        if not m:
            raise ValueError(f'time: invalid duration "{text}"' if any(c.isalpha() for c in body)
                             else f'time: missing unit in duration "{text}"')
        total += float(m.group(1)) * _DURATION_UNITS[m.group(2)]
        pos = m.end()
    if pos == 0:
        raise ValueError(f'time: invalid duration "{text}"')
    return sign * total


def _duration(v: Any, path: str) -> float:
    if not isinstance(v, str):
        raise _err(path, f"cannot unmarshal {_type_name(v)} into a duration (a string like \"10s\")")
    try:
        return parse_go_duration(v)
    except ValueError as exc:
        raise _err(path, str(exc)) from None


def _struct(value: Any, path: str, fields: Mapping[str, Callable[[Any, str], Any]]) -> dict[str, Any]:
    """Decode a JSON object into ``{field name: value}`` as Go's encoding/json does with
    DisallowUnknownFields: keys match the field names exactly, else case-insensitively."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _err(path, f"cannot unmarshal {_type_name(value)} into an object")
    folded = {name.lower(): name for name in fields}
    out: dict[str, Any] = {}
    for key, raw in value.items():
        key = str(key)
        name = key if key in fields else folded.get(key.lower())
        sub = f"{path}.{key}" if path else key
        if name is None:
            known = ", ".join(fields)
            raise _err(sub, f'unknown field "{key}" (known: {known})')
        out[name] = fields[name](raw, sub)
    return out


def _optional(decoder: Callable[[Any, str], Any]) -> Callable[[Any, str], Any]:
    return lambda v, p: None if v is None else decoder(v, p)


# ------------------------------------------------------------------------------------------------
# ops
# ------------------------------------------------------------------------------------------------
def _raw(v: Any, path: str) -> Any:
    return v


def _label_values_list(v: Any, path: str) -> list[dict] | None:
    if v is None:
        return None  # null: aggregate the whole metric family
    if isinstance(v, dict):  # the v1.3x form: one {label, values}
        v = [v]
    if not isinstance(v, list):
        raise _err(path, f"cannot unmarshal {_type_name(v)} into a list of label values")
    return [_struct(x, f"{path}[{i}]", {"label": _str, "values": _str_list}) for i, x in enumerate(v)]


_NODE_ALLOCATABLE = {"nodeAllocatable": _str_map, "csiNodeAllocatable": _any_map, "migratedPlugins": _str_list}
_LABEL_STRATEGY = {"labelKey": _str, "labelValues": _str_list}
_UNIQUE_LABEL = {"labelKey": _str}

_CREATE_PODS_FIELDS: dict[str, Callable[[Any, str], Any]] = {
    "opcode": _str, "count": _int, "countParam": _str, "countMultiplierParam": _str,
    "steadyState": _bool, "steadyStateParam": _str, "duration": _duration, "durationParam": _str,
    "collectMetrics": _bool, "namespace": _optional(_str), "podTemplatePath": _optional(_str),
    "skipWaitToCompletion": _bool, "persistentVolumeTemplatePath": _optional(_str),
    "persistentVolumeClaimTemplatePath": _optional(_str), "templateParams": _any_map,
    "signatureBatchSize": _int, "signatureBatchSizeParam": _str,
}

#: opcode -> the op's fields (upstream's struct fields, lowerCamel) and their decoders
OP_FIELDS: dict[str, dict[str, Callable[[Any, str], Any]]] = {
    "createNodes": {
        "opcode": _str, "count": _int, "countParam": _str, "nodeTemplatePath": _optional(_str),
        "nodeAllocatableStrategy": _optional(lambda v, p: _struct(v, p, _NODE_ALLOCATABLE)),
        "labelNodePrepareStrategy": _optional(lambda v, p: _struct(v, p, _LABEL_STRATEGY)),
        "uniqueNodeLabelStrategy": _optional(lambda v, p: _struct(v, p, _UNIQUE_LABEL)),
        "templateParams": _any_map,
    },
    "createNamespaces": {"opcode": _str, "prefix": _str, "count": _int, "countParam": _str,
                         "namespaceTemplatePath": _optional(_str)},
    "createPods": _CREATE_PODS_FIELDS,
    "createPodSets": {"opcode": _str, "count": _int, "countParam": _str, "namespacePrefix": _str,
                      "createPodsOp": lambda v, p: _struct(v, p, _CREATE_PODS_FIELDS)},
    "deletePods": {"opcode": _str, "namespace": _str, "labelSelector": _str_map, "skipWaitToCompletion": _bool,
                   "deletePodsPerSecond": _int},
    "churn": {"opcode": _str, "mode": _str, "number": _int, "intervalMilliseconds": _int,
              "namespace": _optional(_str), "templatePaths": _str_list},
    "barrier": {"opcode": _str, "namespaces": _str_list, "labelSelector": _str_map, "stageRequirement": _str},
    "sleep": {"opcode": _str, "duration": _duration, "durationParam": _str},
    "startCollectingMetrics": {"opcode": _str, "name": _str, "namespaces": _str_list, "labelSelector": _str_map},
    "stopCollectingMetrics": {"opcode": _str},
    "createAny": {"opcode": _str, "namespace": _str, "templatePath": _str, "count": _optional(_int),
                  "countParam": _str, "templateParams": _any_map},
    "updateAny": {"opcode": _str, "namespace": _str, "templatePath": _str, "count": _optional(_int),
                  "countParam": _str, "updatePerSecond": _int, "subresources": _str_list},
    # DRA (scheduler_perf's dra.go)
    "createResourceClaims": {"opcode": _str, "count": _int, "countParam": _str, "namespace": _str,
                             "templatePath": _str},
    "createResourceDriver": {"opcode": _str, "driverName": _str, "maxClaimsPerNode": _int,
                             "maxClaimsPerNodeParam": _str, "nodes": _str},
    "allocResourceClaims": {"opcode": _str, "namespace": _str},
    # PodGroups (GenericWorkload; operations.go: createPodGroups)
    "createPodGroups": {"opcode": _str, "namespace": _str, "templatePath": _str, "templateParams": _any_map,
                        "count": _int, "countParam": _str},
}


@dataclass
class Op:
    """One op of a workload template: ``opcode`` and its decoded fields (lowerCamel names, only
    those given); ``path`` is where it was read (for messages)."""

    opcode: str
    fields: dict[str, Any]
    path: str

    def get(self, name: str, default: Any = None) -> Any:
        v = self.fields.get(name)
        return default if v is None else v

    @property
    def collects_metrics(self) -> bool:
        """Upstream's ``collectsMetrics``: createPods (or a createPodSets' createPodsOp) with
        ``collectMetrics``, or ``stopCollectingMetrics``."""
        if self.opcode == "createPods":
            return bool(self.fields.get("collectMetrics"))
        if self.opcode == "createPodSets":
            return bool((self.fields.get("createPodsOp") or {}).get("collectMetrics"))
        return self.opcode == "stopCollectingMetrics"

    @property
    def not_modelled(self) -> str | None:
        """Why fastsched cannot run this op (None when it can)."""
        if self.opcode in NOT_MODELLED_OPCODES:
            return f"op {self.opcode}: {NOT_MODELLED_OPCODES[self.opcode]}"
        return None  # PersistentVolume(Claim)TemplatePath: fastsched models volumes (issue 15)


def _valid_count(op: Op, count_key: str = "count", param_key: str = "countParam") -> None:
    param = op.fields.get(param_key)
    if param:
        if not param.startswith("$"):
            raise _err(f"{op.path}.{param_key}", f'invalid {param_key}={param!r}: must start with "$"')
        return
    count = op.fields.get(count_key)
    if count is not None and count < 0:
        raise _err(f"{op.path}.{count_key}", f"invalid {count_key}={count}: must not be negative")


def _check_op(op: Op) -> None:
    """Upstream's ``isValid(allowParameterization=true)`` for each op."""
    f, code = op.fields, op.opcode
    if code in ("createNodes", "createNamespaces", "createPodSets"):
        _valid_count(op)
    if code == "createNodes":
        strategies = [k for k in ("nodeAllocatableStrategy", "labelNodePrepareStrategy", "uniqueNodeLabelStrategy")
                      if f.get(k) is not None]
        if len(strategies) > 1:
            raise _err(op.path, f"at most one node strategy may be set, got {', '.join(strategies)}")
        lab = f.get("labelNodePrepareStrategy")
        if lab is not None and not lab.get("labelValues"):
            raise _err(f"{op.path}.labelNodePrepareStrategy.labelValues", "must not be empty")
    if code == "createPods":
        _check_create_pods(op)
    if code == "createPodSets":
        inner = Op("createPods", f.get("createPodsOp") or {}, f"{op.path}.createPodsOp")
        if inner.fields.get("opcode") not in (None, "createPods"):
            raise _err(f"{inner.path}.opcode", f'expected "createPods", got {inner.fields.get("opcode")!r}')
        _check_create_pods(inner)
    if code == "deletePods" and (f.get("deletePodsPerSecond") or 0) < 0:
        raise _err(f"{op.path}.deletePodsPerSecond", f"invalid DeletePodsPerSecond={f['deletePodsPerSecond']}; "
                                                     "should be non-negative")
    if code == "churn":
        mode = f.get("mode")
        if mode not in ("create", "recreate"):
            raise _err(f"{op.path}.mode", f"invalid mode: {mode}. must be one of [recreate create]")
        if (f.get("number") or 0) < 0:
            raise _err(f"{op.path}.number", f"number ({f['number']}) cannot be negative")
        if mode == "recreate" and not f.get("number"):
            raise _err(f"{op.path}.number", "number cannot be 0 when mode is recreate")
        if not f.get("templatePaths"):
            raise _err(f"{op.path}.templatePaths", "at least one template spec file needs to be specified")
    if code == "barrier" and f.get("stageRequirement") not in (None, "", "Scheduled", "Attempted"):
        raise _err(f"{op.path}.stageRequirement", f"invalid StageRequirement {f['stageRequirement']}")
    if code == "sleep" and f.get("durationParam") and not f["durationParam"].startswith("$"):
        raise _err(f"{op.path}.durationParam", 'must start with "$"')
    if code == "startCollectingMetrics" and not f.get("namespaces"):
        raise _err(f"{op.path}.namespaces", "namespaces cannot be empty")
    if code == "createResourceClaims":
        _valid_count(op)
        if not f.get("namespace"):
            raise _err(f"{op.path}.namespace", "Namespace must be set")
        if not f.get("templatePath"):
            raise _err(f"{op.path}.templatePath", "TemplatePath must be set")
    if code == "createResourceDriver":
        _valid_count(op, "maxClaimsPerNode", "maxClaimsPerNodeParam")
        if not f.get("driverName"):
            raise _err(f"{op.path}.driverName", "DriverName must be set")
        if not f.get("nodes"):
            raise _err(f"{op.path}.nodes", "Nodes must be set")
    if code == "createPodGroups":  # createPodGroups.isValid, in its order
        if not f.get("templatePath"):
            raise _err(f"{op.path}.templatePath", "templatePath must be set")
        if not f.get("namespace"):
            raise _err(f"{op.path}.namespace", "namespace must be set")
        param, count = f.get("countParam"), f.get("count") or 0
        if (param and not param.startswith("$")) or (not param and count < 0):
            raise _err(op.path, f"invalid Count={count} / CountParam={_go_quote(param or '')}")
    if code in ("createAny", "updateAny"):
        if not f.get("templatePath"):
            raise _err(f"{op.path}.templatePath", "TemplatePath must be set")
        if f.get("countParam") and not f["countParam"].startswith("$"):
            raise _err(f"{op.path}.countParam", 'must start with "$"')
        if code == "updateAny" and (f.get("updatePerSecond") or 0) < 0:
            raise _err(f"{op.path}.updatePerSecond", f"invalid UpdatePerSecond={f['updatePerSecond']}; "
                                                     "should be non-negative")


def _check_create_pods(op: Op) -> None:
    f = op.fields
    _valid_count(op)
    for key in ("countMultiplierParam", "durationParam", "steadyStateParam", "signatureBatchSizeParam"):
        if f.get(key) and not f[key].startswith("$"):
            raise _err(f"{op.path}.{key}", f'invalid {key}={f[key]!r}: must start with "$"')
    if f.get("collectMetrics") and f.get("skipWaitToCompletion"):
        raise _err(op.path, "collectMetrics and skipWaitToCompletion cannot be true at the same time")
    if f.get("skipWaitToCompletion") and f.get("steadyState"):
        raise _err(op.path, "skipWaitToCompletion and steadyState cannot be true at the same time")


def _decode_op(raw: Any, path: str) -> Op:
    if not isinstance(raw, dict):
        raise _err(path, f"cannot unmarshal {_type_name(raw)} into an op")
    opcode = None
    for key, value in raw.items():  # lenient first pass, as upstream finds the opcode
        if str(key).lower() == "opcode":
            opcode = value
            if str(key) == "opcode":
                break
    if opcode is None:
        raise _err(path, 'missing "opcode"')
    if not isinstance(opcode, str):
        raise _err(f"{path}.opcode", f"cannot unmarshal {_type_name(opcode)} into a string")
    if opcode in NOT_MODELLED_OPCODES:
        return Op(opcode, dict(raw), path)  # decoded loosely: the workload is skipped anyway
    fields = OP_FIELDS.get(opcode)
    if fields is None:
        known = ", ".join([*OP_FIELDS, *NOT_MODELLED_OPCODES])
        raise _err(f"{path}.opcode", f"unknown opcode {opcode!r} (known: {known})")
    op = Op(opcode, _struct(raw, path, fields), path)
    _check_op(op)
    return op


# ------------------------------------------------------------------------------------------------
# test cases and workloads
# ------------------------------------------------------------------------------------------------
@dataclass
class MetricSelector:
    """``thresholdMetricSelector``: which data item the threshold is compared with."""

    name: str = "SchedulingThroughput"
    labels: dict[str, str] = field(default_factory=dict)
    data_bucket: str = "Average"
    expect_lower: bool = False


def _selector(v: Any, path: str) -> MetricSelector | None:
    if v is None:
        return None
    d = _struct(v, path, {"name": _str, "labels": _str_map, "dataBucket": _str, "expectLower": _bool})
    return MetricSelector(name=d.get("name", ""), labels=d.get("labels", {}),
                          data_bucket=d.get("dataBucket") or "Average", expect_lower=d.get("expectLower", False))


def _threshold(v: Any, path: str) -> tuple[float, dict[str, float]]:
    """A number, or a map of topic name -> number (newer upstream)."""
    if v is None:
        return 0.0, {}
    if isinstance(v, dict):
        return 0.0, {str(k): _float(x, f"{path}.{k}") for k, x in v.items()}
    return _float(v, path), {}


def _gates(v: Any, path: str) -> dict[str, bool]:
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise _err(path, f"cannot unmarshal {_type_name(v)} into a map of feature gates")
    return {str(k): _bool(x, f"{path}.{k}") for k, x in v.items()}


@dataclass
class Workload:
    """One workload of a test case (upstream's ``Workload``)."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)
    labels: list[str] = field(default_factory=list)
    threshold: float = 0.0
    threshold_by_topic: dict[str, float] = field(default_factory=dict)
    threshold_metric_selector: MetricSelector | None = None
    feature_gates: dict[str, bool] = field(default_factory=dict)
    path: str = ""

    def threshold_for(self, topic: str | None) -> float:
        """``thresholds.Get(topic)``: the topic's value, else the plain one (0: no check)."""
        if topic is not None and topic in self.threshold_by_topic:
            return self.threshold_by_topic[topic]
        return self.threshold

    def scaled(self, params: Sequence[str], factor: float, cluster: Sequence[str] = ()) -> "Workload":
        """A copy with each of ``params`` multiplied by ``factor`` (rounded down, at least the
        original + 1): the workload's own scale knobs turned up, the config untouched. The
        measured phase's rescaled run (:func:`fastsched.perf.runner.run_perf`'s ``rescale``).
        ``cluster`` (the cluster's size and its fill before the measured phase: node counts,
        init pods and claims) are scaled the same way, except that a 0 stays 0 (no nodes
        without devices, no init claims: none in the bigger cluster either)."""
        out = dict(self.params)
        for name in [*params, *cluster]:
            v = self.params.get(name)
            if not isinstance(v, (int, float)) or isinstance(v, bool):
                raise _err(f"{self.path}.params.{name}", f"parameter {name} has the wrong type "
                                                        f"{_type_name(v)} (want a number)")
            if v < 0:
                raise _err(f"{self.path}.params.{name}", f"parameter {name} = {v:g} cannot be scaled: "
                                                        "must not be negative")
            out[name] = 0 if name not in params and v == 0 else max(int(v * factor), int(v) + 1)
        return Workload(name=self.name, params=out, labels=list(self.labels), threshold=self.threshold,
                        threshold_by_topic=dict(self.threshold_by_topic),
                        threshold_metric_selector=self.threshold_metric_selector,
                        feature_gates=dict(self.feature_gates), path=self.path)


def _workload(v: Any, path: str) -> Workload:
    d = _struct(v, path, {"name": _str, "params": _any_map, "labels": _str_list, "threshold": _raw,
                          "thresholdMetricSelector": _selector, "featureGates": _gates})
    value, by_topic = _threshold(d.get("threshold"), f"{path}.threshold")
    if value < 0 or any(x < 0 for x in by_topic.values()):
        raise _err(f"{path}.threshold", "invalid Threshold: should be non-negative")
    if not d.get("name"):
        raise _err(f"{path}.name", "must be set")
    return Workload(name=d["name"], params=d.get("params", {}), labels=d.get("labels", []), threshold=value,
                    threshold_by_topic=by_topic, threshold_metric_selector=d.get("thresholdMetricSelector"),
                    feature_gates=d.get("featureGates", {}), path=path)


@dataclass
class ResolvedOps:
    """The ops of one workload with its parameters substituted and createPodSets unrolled."""

    ops: list[Op]
    unused_params: list[str]


@dataclass
class TestCase:
    """One test case (upstream's ``testCase``)."""

    __test__ = False  # not a pytest test class

    name: str
    workload_template: list[Op]
    workloads: list[Workload]
    feature_gates: dict[str, bool] = field(default_factory=dict)
    metrics_collector_config: dict[str, list[dict] | None] | None = None
    scheduler_config_path: str | None = None
    default_pod_template_path: str | None = None
    labels: list[str] = field(default_factory=list)
    default_threshold_metric_selector: MetricSelector | None = None
    path: str = ""

    def selector_for(self, w: Workload) -> MetricSelector:
        """``setDefaults``: the workload's selector, else the test case's, else SchedulingThroughput."""
        return w.threshold_metric_selector or self.default_threshold_metric_selector or MetricSelector()

    def not_modelled(self) -> str | None:
        """Why fastsched cannot run this test case's ops (None when it can)."""
        for op in self.workload_template:
            reason = op.not_modelled
            if reason:
                return reason
        return None

    def measured_count_params(self) -> list[str]:
        """The parameters that set how many pods a measured phase creates: the ``countParam`` of
        each createPods that collects metrics itself (``collectMetrics``) or runs between
        ``startCollectingMetrics`` and ``stopCollectingMetrics``, in the template's order. These
        are the knobs a rescaled run turns up (a phase too short for a throughput sample); a
        measured createPods with a fixed ``count`` has none."""
        out: list[str] = []
        collecting = False
        for op in self.workload_template:
            if op.opcode == "startCollectingMetrics":
                collecting = True
            elif op.opcode == "stopCollectingMetrics":
                collecting = False
            elif op.opcode == "createPods" and (collecting or op.fields.get("collectMetrics")):
                ref = op.fields.get("countParam")
                if ref and ref[1:] not in out:
                    out.append(ref[1:])
        return out

    def ops_for(self, w: Workload) -> ResolvedOps:
        """``unrollWorkloadTemplate`` + ``patchParams`` for workload ``w``: parameters substituted
        (``$name`` from ``w.params``), createPodSets expanded; errors name the op and the field."""
        used: set[str] = set()
        where = f"{self.name}/{w.name}"

        def param(op: Op, key: str, kind: type = float) -> Any:
            ref = op.fields[key]
            name = ref[1:]
            used.add(name)
            if name not in w.params:
                raise _err(f"{where}: {op.path}.{key}", f"parameter {name} is undefined (workload params: "
                                                        f"{', '.join(w.params) or 'none'})")
            value = w.params[name]
            ok = (isinstance(value, (int, float)) and not isinstance(value, bool)) if kind is float \
                else isinstance(value, kind)
            if not ok:
                want = {float: "number", str: "string", bool: "bool"}[kind]
                raise _err(f"{where}: {op.path}.{key}", f"parameter {name} has the wrong type "
                                                        f"{_type_name(value)} (want a {want})")
            if kind is float and not (math.isfinite(value) and _INT_MIN <= value < 2.0 ** 63):
                # upstream reads the float64 as int(f): out of range (or 1e999, which JSON cannot
                # hold) it is no count at all; a 2**63 count once ran for ever here
                raise _err(f"{where}: {op.path}.{key}", f"parameter {name} = {value:g} does not fit an int")
            return value

        def count_of(op: Op, key: str = "countParam", target: str = "count") -> None:
            if op.fields.get(key):
                op.fields[target] = int(param(op, key))  # JSON numbers are float64, truncated

        def template_params(op: Op) -> None:
            tp = op.fields.get("templateParams")
            if not tp:
                return
            resolved = dict(tp)
            for k, v in tp.items():
                if isinstance(v, str) and v.startswith("$"):
                    # resolveTemplateParams: "$name|default", the default in YAML, used when the
                    # workload has no such parameter (which then does not count as used)
                    name, default = v[1:], None
                    sep = name.find("|")
                    if sep > 0:
                        name, default = name[:sep], name[sep + 1:]
                    if name in w.params:
                        used.add(name)
                        resolved[k] = w.params[name]
                    elif default is not None:
                        try:
                            # yaml.Unmarshal into an interface{}: go-yaml's scalars (y is true)
                            resolved[k] = yaml.load(default, Loader=GoYAMLLoader)
                        except yaml.YAMLError as exc:
                            raise _err(f"{where}: {op.path}.templateParams.{k}",
                                       f"decoding parameter {_go_quote(name)} default {_go_quote(default)} as "
                                       f"YAML: {' '.join(str(exc).split())}") from None
                    else:
                        raise _err(f"{where}: {op.path}.templateParams.{k}", f"parameter {_go_quote(name)} not found")
            op.fields["templateParams"] = resolved

        def patch(op: Op) -> Op:
            op = Op(op.opcode, copy.deepcopy(op.fields), op.path)
            code = op.opcode
            if code in ("createNodes", "createNamespaces", "createPodSets", "createAny", "updateAny"):
                count_of(op)
            if code in ("createNodes", "createAny"):
                template_params(op)
            if code == "createPodGroups":  # patchParams, then isValid(false)
                count_of(op)
                template_params(op)
                if (op.fields.get("count") or 0) < 1:
                    raise _err(f"{where}: {op.path}", f"count must be greater than 0, got {op.fields.get('count') or 0}")
            if code == "createResourceClaims":
                count_of(op)
            if code == "createResourceDriver":
                count_of(op, "maxClaimsPerNodeParam", "maxClaimsPerNode")
            if code == "createPods":
                count_of(op)
                if op.fields.get("countMultiplierParam"):
                    op.fields["count"] = int(op.fields.get("count") or 0) * int(param(op, "countMultiplierParam"))
                if op.fields.get("signatureBatchSizeParam"):
                    op.fields["signatureBatchSize"] = int(param(op, "signatureBatchSizeParam"))
                if op.fields.get("durationParam"):
                    text = param(op, "durationParam", str)
                    try:
                        op.fields["duration"] = parse_go_duration(text)
                    except ValueError as exc:
                        raise _err(f"{where}: {op.path}.durationParam",
                                   f"parsing duration parameter {op.fields['durationParam']}: {exc}") from None
                if op.fields.get("steadyStateParam"):
                    op.fields["steadyState"] = param(op, "steadyStateParam", bool)
                template_params(op)
                if op.fields.get("steadyState") and (op.fields.get("duration") or 0) <= 0:
                    raise _err(f"{where}: {op.path}", "when creating pods in a steady state, the test duration "
                                                      "must be > 0")
                if op.fields.get("skipWaitToCompletion") and op.fields.get("steadyState"):
                    raise _err(f"{where}: {op.path}", "skipWaitToCompletion and steadyState cannot be true at "
                                                      "the same time")
            if code == "sleep" and op.fields.get("durationParam"):
                text = param(op, "durationParam", str)
                try:
                    op.fields["duration"] = parse_go_duration(text)
                except ValueError as exc:
                    raise _err(f"{where}: {op.path}.durationParam",
                               f"invalid duration parameter {op.fields['durationParam']}: {exc}") from None
            if code in NOT_MODELLED_OPCODES:
                for k, v in op.fields.items():  # count their parameters as used
                    if isinstance(v, str) and v.startswith("$") and k.lower().endswith("param"):
                        used.add(v[1:])
            return op

        unrolled: list[Op] = []
        for op in self.workload_template:
            op = patch(op)
            if op.opcode == "createPodSets":
                inner = Op("createPods", op.fields.get("createPodsOp") or {}, f"{op.path}.createPodsOp")
                for i in range(int(op.fields.get("count") or 0)):
                    one = patch(inner)
                    one.fields["namespace"] = f"{op.fields.get('namespacePrefix', '')}-{i}"
                    unrolled.append(one)
                if not op.fields.get("count"):
                    patch(inner)  # its parameters are still checked (and count as used)
                continue
            unrolled.append(op)
        unused = sorted(set(w.params) - used)
        return ResolvedOps(unrolled, unused)


def _test_case(v: Any, path: str) -> TestCase:
    d = _struct(v, path, {
        "name": _str, "featureGates": _gates, "metricsCollectorConfig": _raw,
        "workloadTemplate": _raw, "workloads": _raw, "schedulerConfigPath": _str,
        "defaultPodTemplatePath": _optional(_str), "labels": _str_list,
        "defaultThresholdMetricSelector": _selector,
    })
    name = d.get("name")
    if not name:
        raise _err(f"{path}.name", "must be set")
    mcc: dict[str, list[dict] | None] | None = None
    if d.get("metricsCollectorConfig") is not None:
        raw = _struct(d["metricsCollectorConfig"], f"{path}.metricsCollectorConfig", {"metrics": _any_map})
        mcc = {k: _label_values_list(x, f"{path}.metricsCollectorConfig.metrics.{k}")
               for k, x in (raw.get("metrics") or {}).items()}
    template = d.get("workloadTemplate")
    if template is not None and not isinstance(template, list):
        raise _err(f"{path}.workloadTemplate", f"cannot unmarshal {_type_name(template)} into a list of ops")
    ops = [_decode_op(x, f"{path}.workloadTemplate[{i}]") for i, x in enumerate(template or [])]
    raw_workloads = d.get("workloads")
    if raw_workloads is not None and not isinstance(raw_workloads, list):
        raise _err(f"{path}.workloads", f"cannot unmarshal {_type_name(raw_workloads)} into a list of workloads")
    workloads = [_workload(x, f"{path}.workloads[{i}]") for i, x in enumerate(raw_workloads or [])]
    return TestCase(name=name, workload_template=ops, workloads=workloads, feature_gates=d.get("featureGates", {}),
                    metrics_collector_config=mcc, scheduler_config_path=d.get("schedulerConfigPath") or None,
                    default_pod_template_path=d.get("defaultPodTemplatePath"), labels=d.get("labels", []),
                    default_threshold_metric_selector=d.get("defaultThresholdMetricSelector"), path=path)


@dataclass
class PerfConfig:
    """A parsed ``performance-config.yaml``: its test cases and where template paths resolve."""

    test_cases: list[TestCase]
    base_dir: Path
    source: str = "<config>"
    #: templates given in memory (path as written -> YAML text), looked up before the file system
    templates: dict[str, str] = field(default_factory=dict)

    def resolve(self, path: str) -> str:
        """A template path as written in the config, made absolute against the config's folder
        (unless given in memory)."""
        if path in self.templates:
            return path
        return os.path.normpath(os.path.join(self.base_dir, path))

    def read_template(self, path: str, what: str) -> str:
        """The text of a template file (``what`` names the field, for the error message)."""
        if path in self.templates:
            return self.templates[path]
        full = self.resolve(path)
        try:
            with open(full, encoding="utf-8") as fh:
                return fh.read()
        except FileNotFoundError:
            raise PerfConfigError(f"{self.source}: {what}: template file not found: {path} "
                                  f"(resolved to {full})") from None
        except IsADirectoryError:
            raise PerfConfigError(f"{self.source}: {what}: not a file: {path}") from None
        except UnicodeDecodeError:
            raise PerfConfigError(f"{self.source}: {what}: {path} is not UTF-8 text") from None

    def test_case(self, name: str) -> TestCase:
        for tc in self.test_cases:
            if tc.name == name:
                return tc
        raise PerfConfigError(f"{self.source}: no test case named {name!r}; known: "
                              f"{', '.join(tc.name for tc in self.test_cases)}")


def parse_perf_config(data: Any, *, base_dir: str | os.PathLike = ".", source: str = "<config>",
                      templates: Mapping[str, str] | None = None) -> PerfConfig:
    """Decode and validate already-loaded YAML (a list of test cases), as upstream's
    ``getTestCases`` + ``validateTestCases`` do."""
    try:
        if not isinstance(data, list):
            raise _err("", f"cannot unmarshal {_type_name(data)} into a list of test cases")
        cases = [_test_case(x, f"[{i}]") for i, x in enumerate(data)]
        if not cases:
            raise _err("", "no test cases defined")
        seen: set[str] = set()
        for tc in cases:
            if tc.name in seen:
                raise _err(f"{tc.path}.name", f"{tc.name}: name is not unique")
            seen.add(tc.name)
            if not tc.workloads:
                raise _err(f"{tc.path}.workloads", f"{tc.name}: no workloads defined")
            names: set[str] = set()
            for w in tc.workloads:
                if w.name in names:
                    raise _err(f"{w.path}.name", f"{tc.name}: workload name {w.name} is not unique")
                names.add(w.name)
            if not tc.workload_template:
                raise _err(f"{tc.path}.workloadTemplate", f"{tc.name}: no ops defined")
            if not any(op.collects_metrics for op in tc.workload_template):
                raise _err(f"{tc.path}.workloadTemplate", f"{tc.name}: no op in the workload template collects "
                                                          "metrics")
    except PerfConfigError as exc:
        raise PerfConfigError(f"{source}: {exc}") from None
    return PerfConfig(cases, Path(base_dir), source, dict(templates or {}))


def load_perf_config(path: str | os.PathLike) -> PerfConfig:
    """Read an upstream ``performance-config.yaml`` (template paths resolve against its folder)."""
    p = Path(path)
    if not p.exists():
        raise PerfConfigError(f"config file not found: {path}")
    if not p.is_file():
        raise PerfConfigError(f"config is not a file: {path}")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise PerfConfigError(f"{path}: not UTF-8 text") from None
    try:
        # getSpecFromFile: yaml.UnmarshalStrict, go-yaml's scalars and a key set twice an error
        data = checked(lambda: yaml.load(text, Loader=GoYAMLStrictLoader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise PerfConfigError(f"{path}: invalid YAML{where}: {problem}") from None
    return parse_perf_config(data, base_dir=p.resolve().parent, source=str(path))


def label_filter_enabled(label_filter: str, labels: list[str]) -> bool:
    """Upstream's ``enabled``: a comma list; ``x``/``+x`` must be among ``labels``, ``-x`` must not."""
    for label in label_filter.split(","):
        label = label.strip()
        if not label:
            continue
        must = label[0] != "-"
        if label[0] in "+-":
            label = label[1:]
        if (label in labels) != must:
            return False
    return True
