"""A scenario's arrival streams: rate and interval streams, trace replays, and their durations.

:class:`ArrivalStream` draws pods at a Poisson ``rate`` or a fixed ``interval`` from a template or
a weighted mix, :class:`TraceStream` replays a CSV or JSON trace, :class:`Duration` samples how
long their pods run, and :class:`Priorities` applies the Priority admission plugin's defaulting to
every pod they make. They are kept apart from :mod:`fastsched.sim.scenario`, which parses a
scenario document into them, because how pods are drawn lazily chunk by chunk is its own
concern, and a large one. ``fastsched.sim.scenario`` re-exports the public names.
"""
from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from ..api import Container, FrozenDict, Pod, PriorityClass
from ..api.objects import SYSTEM_PRIORITY_CLASSES
from .events import PodArrival
from .generators import PodFactory
from .spec import Fields, SpecError, amount, check_number, check_string_map, child, type_name, yaml_number
from .storage import ClaimSpec

__all__ = ["Duration", "ArrivalStream", "TraceStream", "MixEntry", "Priorities", "read_trace",
           "CHUNK", "EXACT_REPLAY_LIMIT"]

#: Arrival instants drawn per chunk: a stream holds at most this many pending arrivals in memory.
CHUNK = 4096
#: Streams of at most this many pods are replayed (without building pods) to count their mix
#: entries and find their last arrival exactly; larger ones use expected numbers.
EXACT_REPLAY_LIMIT = 2_000_000


# --------------------------------------------------------------------------------------------
# durations
# --------------------------------------------------------------------------------------------
_DISTRIBUTIONS = {
    "constant": ("value",),
    "exponential": ("mean",),
    "uniform": ("min", "max"),
    "normal": ("mean", "stddev", "min"),
    "lognormal": ("median", "sigma"),
    "choice": ("values", "probabilities"),
}


@dataclass(frozen=True)
class Duration:
    """How long pods run: a distribution (``forever`` for None)."""

    distribution: str = "forever"
    params: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def parse(cls, raw: Any, path: str) -> "Duration":
        if raw is None or raw == "forever":
            return cls()
        raw = yaml_number(raw)
        if isinstance(raw, (int, float)) and not isinstance(raw, bool):
            return cls("constant", (("value", check_number(raw, path, minimum=0)),))
        if not isinstance(raw, Mapping):
            raise SpecError(path, f"must be seconds, a distribution mapping or 'forever', got {type_name(raw)}")
        kind = raw.get("distribution")
        if not isinstance(kind, str) or kind not in _DISTRIBUTIONS:
            raise SpecError(child(path, "distribution"),
                            f"must be one of {', '.join(_DISTRIBUTIONS)}; got {kind!r}")
        f = Fields(raw, path, ("distribution",) + _DISTRIBUTIONS[kind])
        p: dict[str, Any] = {}
        if kind == "constant":
            p["value"] = _required_number(f, "value", minimum=0)
        elif kind == "exponential":
            p["mean"] = _required_number(f, "mean", above=0)
        elif kind == "uniform":
            p["min"] = _required_number(f, "min", minimum=0)
            p["max"] = _required_number(f, "max", minimum=0)
            if p["max"] < p["min"]:
                raise SpecError(f.at("max"), f"must be >= min ({p['min']:g})")
        elif kind == "normal":
            p["mean"] = _required_number(f, "mean", minimum=0)
            p["stddev"] = _required_number(f, "stddev", minimum=0)
            p["min"] = f.number("min", 0.0, minimum=0)
        elif kind == "lognormal":
            p["median"] = _required_number(f, "median", above=0)
            p["sigma"] = _required_number(f, "sigma", minimum=0)
        else:
            values = f.list("values")
            if not values:
                raise SpecError(f.at("values"), "required: a non-empty list of seconds")
            p["values"] = tuple(check_number(v, child(f.at("values"), i), minimum=0) for i, v in enumerate(values))
            probs = f.get("probabilities")
            if probs is not None:
                if not isinstance(probs, (list, tuple)) or len(probs) != len(values):
                    raise SpecError(f.at("probabilities"), f"must be a list of {len(values)} numbers")
                probs = tuple(check_number(x, child(f.at("probabilities"), i), minimum=0) for i, x in enumerate(probs))
                if sum(probs) <= 0:
                    raise SpecError(f.at("probabilities"), "must not all be zero")
            p["probabilities"] = probs
        return cls(kind, tuple(p.items()))

    def sample(self, rng: np.random.Generator, n: int) -> list[float | None]:
        p = dict(self.params)
        kind = self.distribution
        if kind == "forever":
            return [None] * n
        if kind == "constant":
            out = np.full(n, float(p["value"]))
        elif kind == "exponential":
            out = rng.exponential(p["mean"], n)
        elif kind == "uniform":
            out = rng.uniform(p["min"], p["max"], n)
        elif kind == "normal":
            out = np.maximum(rng.normal(p["mean"], p["stddev"], n), p["min"])
        elif kind == "lognormal":
            out = rng.lognormal(math.log(p["median"]), p["sigma"], n)
        else:
            probs = p["probabilities"]
            if probs is not None:
                probs = np.asarray(probs, dtype=float) / sum(probs)
            out = np.asarray(p["values"], dtype=float)[rng.choice(len(p["values"]), size=n, p=probs)]
        return out.tolist()


def _required_number(f: Fields, name: str, **limits: Any) -> float:
    if name not in f:
        raise SpecError(f.at(name), "required")
    return f.number(name, **limits)


# --------------------------------------------------------------------------------------------
# arrival streams
# --------------------------------------------------------------------------------------------
@dataclass
class MixEntry:
    factory: PodFactory
    weight: float
    duration: Duration | None
    labels: dict[str, str] | None
    priority: int | None


@dataclass
class ArrivalStream:
    """Pods arriving at a Poisson ``rate`` or a fixed ``interval`` (``batch`` pods per arrival)."""

    name: str
    path: str
    index: int
    mix: list[MixEntry]
    duration: Duration
    rate: float | None = None
    interval: float | None = None
    count: int | None = None
    start: float = 0.0
    end: float | None = None
    batch: int = 1
    namespace: str | None = None
    #: each pod's claims (``claims``), mounted as volumes of their names
    claims: list[ClaimSpec] = field(default_factory=list)

    def _end(self, until: float | None) -> float:
        return min(x for x in (self.end, until, math.inf) if x is not None)

    def _instants_bound(self, until: float | None) -> float:
        """How many arrival instants there are at most (interval streams: exactly, before the
        count cap; rate streams: the expected number when only time bounds them)."""
        end = self._end(until)
        by_count = math.inf if self.count is None else -(-self.count // self.batch)
        if end == math.inf:
            return by_count
        if self.rate is not None:
            by_time = self.rate * (end - self.start)
        else:
            assert self.interval is not None  # a stream has a rate or an interval (validated at load)
            by_time = math.floor((end - self.start) / self.interval) + 1
        return min(by_count, by_time)

    def pod_bound(self, until: float | None) -> float:
        """The number of pods this stream makes (exact for interval streams and counts; the
        expected number for a Poisson stream bounded by time)."""
        n = self._instants_bound(until) * self.batch
        return n if self.count is None else min(n, self.count)

    def _name_width(self, until: float | None) -> int:
        n = self.pod_bound(until)
        return max(5, len(str(int(n) - 1))) if n != math.inf and n >= 1 else 5

    def pod_times(self, seed: int, until: float | None) -> Iterator[np.ndarray]:
        """The pods' arrival times, chunk by chunk (at most CHUNK arrival instants per chunk):
        the same chunks for the same seed, so replays (:meth:`entry_counts`) see the same draws."""
        rng = np.random.default_rng([int(seed), 100, self.index, 0])
        end = self._end(until)
        remaining = self.count  # pods still to make (None: bounded by time only)
        batch = self.batch
        if self.rate is not None:
            last, scale = self.start, 1.0 / self.rate
            while True:
                k = CHUNK if remaining is None else min(CHUNK, -(-remaining // batch))
                if k <= 0:
                    return
                times: np.ndarray = last + np.cumsum(rng.exponential(scale, k))
                last = float(times[-1])
                done = last > end
                if done:
                    times = times[times <= end]
                pods = np.repeat(times, batch) if batch > 1 else times
                if remaining is not None:
                    pods = pods[:remaining]
                    remaining -= len(pods)
                    done = done or remaining <= 0
                if len(pods):
                    yield pods
                if done:
                    return
        instants = self._instants_bound(until)
        assert self.interval is not None  # no rate: an interval stream (validated at load)
        lo = 0
        while lo < instants:
            hi = int(min(lo + CHUNK, instants))
            due = self.start + self.interval * np.arange(lo, hi)
            times = due[due <= end]
            pods = np.repeat(times, batch) if batch > 1 else times
            if remaining is not None:
                pods = pods[:remaining]
                remaining -= len(pods)
            if len(pods):
                yield pods
            if len(times) < hi - lo or (remaining is not None and remaining <= 0):
                return
            lo = hi

    def _which(self, rng: np.random.Generator, n: int) -> list[int]:
        if len(self.mix) == 1:
            return [0] * n
        return rng.choice(len(self.mix), size=n, p=_normalized([m.weight for m in self.mix])).tolist()

    def arrivals(self, seed: int, until: float | None, priorities: "Priorities") -> Iterator[PodArrival]:
        """The stream's arrivals in time order, made lazily (one chunk of pods at a time)."""
        which_rng = np.random.default_rng([int(seed), 100, self.index, 1])
        duration_rng = np.random.default_rng([int(seed), 100, self.index, 2])
        width = self._name_width(until)
        own = [(k, entry.duration) for k, entry in enumerate(self.mix) if entry.duration is not None]
        j = 0
        for times in self.pod_times(seed, until):
            n = len(times)
            which = self._which(which_rng, n)
            durations = self.duration.sample(duration_rng, n)
            for k, own_duration in own:
                positions = [i for i in range(n) if which[i] == k]
                for i, d in zip(positions, own_duration.sample(duration_rng, len(positions))):
                    durations[i] = d
            for i, t in enumerate(times.tolist()):
                entry = self.mix[which[i]]
                overrides: dict[str, Any] = {}
                if entry.priority is not None:
                    overrides["priority"] = entry.priority
                name = f"{self.name}-{j:0{width}d}"
                claims: tuple[dict, ...] = ()
                delete: tuple[str, ...] = ()
                if self.claims:
                    overrides["volumes"] = entry.factory.template.volumes + tuple(c.volume(name) for c in self.claims)
                    namespace = self.namespace or entry.factory.template.namespace
                    persistent = [c for c in self.claims if not c.ephemeral]
                    claims = tuple(c.manifest(name, namespace) for c in persistent)
                    delete = tuple(c.claim_name(name) for c in persistent if c.when_deleted == "Delete")
                pod = entry.factory.make(name, self.namespace, labels=entry.labels, **overrides)
                yield PodArrival(round(t, 9), priorities.admit(pod, self.path), durations[i], self.name,
                                 claims, delete)
                j += 1

    def entry_counts(self, seed: int, until: float | None, exact_limit: float = EXACT_REPLAY_LIMIT) -> list[float]:
        """How many pods each mix entry makes: counted by replaying the (cheap, pod-free) draws of
        :meth:`arrivals` when the stream makes at most ``exact_limit`` pods, else expected numbers."""
        bound = self.pod_bound(until)
        weights = _normalized([m.weight for m in self.mix])
        if bound > exact_limit:
            return (weights * bound).tolist()
        counts = np.zeros(len(self.mix))
        which_rng = np.random.default_rng([int(seed), 100, self.index, 1])
        for times in self.pod_times(seed, until):
            counts += np.bincount(self._which(which_rng, len(times)), minlength=len(self.mix))
        return counts.tolist()

    def last_time(self, seed: int, until: float | None, exact_limit: float = EXACT_REPLAY_LIMIT) -> float | None:
        """The time of the last arrival (None when there is none); replayed up to ``exact_limit``
        pods, beyond that an upper bound (the end) or the expected time of the last arrival."""
        if self.pod_bound(until) > exact_limit:
            end = self._end(until)
            if end != math.inf:
                return float(end)
            assert self.count is not None  # no end and no count would make pod_bound infinite, beyond any limit
            instants = -(-self.count // self.batch)
            if self.rate is not None:
                return float(self.start + instants / self.rate)
            assert self.interval is not None  # no rate: an interval stream (validated at load)
            return float(self.start + (instants - 1) * self.interval)
        last = None
        for times in self.pod_times(seed, until):
            last = float(times[-1])
        return None if last is None else round(last, 9)


def _normalized(weights: Sequence[float]) -> np.ndarray:
    w = np.asarray(weights, dtype=float)
    return w / w.sum()


@dataclass
class TraceStream:
    """Pods replayed from a CSV or JSON trace (one row per pod)."""

    name: str
    path: str
    index: int
    rows: list[dict]
    base: PodFactory
    speedup: float = 1.0
    start: float = 0.0
    namespace: str | None = None
    _sorted: list[int] | None = field(default=None, repr=False, compare=False)

    def _time(self, row: Mapping) -> float:
        return self.start + row["arrival_time"] / self.speedup

    def _order(self) -> list[int]:
        """Row indices in arrival order (rows of a trace need not be sorted; ties keep file order)."""
        if self._sorted is None:
            self._sorted = sorted(range(len(self.rows)), key=lambda j: (round(self._time(self.rows[j]), 9), j))
        return self._sorted

    def arrivals(self, seed: int, until: float | None, priorities: "Priorities") -> Iterator[PodArrival]:
        """The trace's arrivals in time order, made lazily."""
        containers: dict[tuple, tuple[Container, ...]] = {}
        template = self.base.template.containers[0]
        width = max(5, len(str(len(self.rows) - 1)))
        for j in self._order():
            row = self.rows[j]
            t = self._time(row)
            if until is not None and t > until:
                continue
            key = tuple(sorted(row["requests"].items()))
            cs = containers.get(key)
            if cs is None:
                # GPUs cannot be overcommitted: the API server requires their limit equal to the request
                gpus = {k: v for k, v in row["requests"].items() if k == "nvidia.com/gpu"}
                cs = containers[key] = (Container(name=template.name, image=template.image,
                                                  requests=FrozenDict(row["requests"]),
                                                  limits=FrozenDict({**template.limits, **gpus})),)
            overrides: dict[str, Any] = {"containers": cs}
            if row.get("priority") is not None:
                overrides["priority"] = row["priority"]
            labels = row.get("labels")
            pod = self.base.make(row.get("name") or f"{self.name}-{j:0{width}d}",
                                 row.get("namespace") or self.namespace,
                                 labels=FrozenDict({**self.base.template.labels, **labels}) if labels else None,
                                 **overrides)
            duration = row.get("duration")
            yield PodArrival(round(t, 9), priorities.admit(pod, self.path),
                             None if duration is None else duration / self.speedup, self.name)

    def last_time(self, seed: int, until: float | None) -> float | None:
        times = [t for t in (self._time(row) for row in self.rows) if until is None or t <= until]
        return round(max(times), 9) if times else None


_TRACE_COLUMNS = ("arrival_time", "cpu", "memory", "duration", "name", "namespace", "labels", "priority", "gpu")


def read_trace(file: Path, fmt: str, path: str) -> list[dict]:
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError(path, f"cannot read trace {str(file)!r}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise SpecError(path, f"cannot read trace {str(file)!r}: not a UTF-8 text file (CSV or JSON)") from None
    records: list[tuple[str, Mapping]] = []
    if fmt == "json":
        try:
            data = json.loads(text) if text.strip() else []
        except json.JSONDecodeError as exc:
            raise SpecError(path, f"invalid JSON in {file.name}: {exc}") from None
        if isinstance(data, Mapping):
            data = data.get("pods", data.get("items"))
        if not isinstance(data, list):
            raise SpecError(path, f"{file.name}: expected a list of objects (or {{pods: [...]}})")
        records = [(f"item {i}", r) for i, r in enumerate(data)]
    else:
        reader = csv.DictReader(io.StringIO(text))
        if reader.fieldnames is None:
            return []
        names = [h.strip() for h in reader.fieldnames]
        unknown = [h for h in names if h not in _TRACE_COLUMNS]
        if unknown:
            raise SpecError(path, f"{file.name}: unknown column(s) {', '.join(unknown)} "
                                  f"(known: {', '.join(_TRACE_COLUMNS)})")
        if "arrival_time" not in names:
            raise SpecError(path, f"{file.name}: missing column arrival_time")
        for i, raw in enumerate(reader):
            row = {k.strip(): (v.strip() if isinstance(v, str) else v) for k, v in raw.items() if k is not None}
            records.append((f"line {i + 2}", {k: v for k, v in row.items() if v not in ("", None)}))
    return [_trace_row(where, rec, f"{path} ({file.name}, {where})", fmt) for where, rec in records]


def _trace_row(where: str, rec: Any, path: str, fmt: str) -> dict:
    if not isinstance(rec, Mapping):
        raise SpecError(path, f"must be an object, got {type_name(rec)}")
    unknown = [k for k in rec if k not in _TRACE_COLUMNS]
    if unknown:
        raise SpecError(path, f"unknown field(s) {', '.join(map(str, unknown))}")
    if "arrival_time" not in rec:
        raise SpecError(child(path, "arrival_time"), "required")
    row: dict[str, Any] = {"arrival_time": _trace_number(rec["arrival_time"], child(path, "arrival_time"))}
    if "duration" in rec and rec["duration"] is not None:
        row["duration"] = _trace_number(rec["duration"], child(path, "duration"))
    requests = {}
    if rec.get("cpu") is not None:
        requests["cpu"] = amount("cpu", _quantity(rec["cpu"]), child(path, "cpu"))
    if rec.get("memory") is not None:
        requests["memory"] = amount("memory", _quantity(rec["memory"]), child(path, "memory"))
    if rec.get("gpu") is not None:
        gpus = amount("nvidia.com/gpu", _quantity(rec["gpu"]), child(path, "gpu"))
        if gpus:
            requests["nvidia.com/gpu"] = gpus
    row["requests"] = requests
    for key in ("name", "namespace"):
        if rec.get(key) is not None:
            row[key] = str(rec[key])
    if rec.get("priority") is not None:
        row["priority"] = int(_trace_number(rec["priority"], child(path, "priority"), integer=True, signed=True))
    if rec.get("labels") is not None:
        row["labels"] = _trace_labels(rec["labels"], child(path, "labels"))
    return row


def _quantity(value: Any) -> Any:
    # CSV cells are text; a bare number such as "0.5" is a quantity as it is.
    return value


def _trace_number(value: Any, path: str, integer: bool = False, signed: bool = False) -> float:
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise SpecError(path, f"must be a number, got {value!r}") from None
    return check_number(value, path, minimum=None if signed else 0, integer=integer)


def _trace_labels(value: Any, path: str) -> dict[str, str]:
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("{"):
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                raise SpecError(path, f"invalid JSON: {exc}") from None
        else:
            out = {}
            for part in filter(None, (p.strip() for p in text.replace(",", ";").split(";"))):
                if "=" not in part:
                    raise SpecError(path, f"expected key=value pairs separated by ';', got {part!r}")
                k, v = part.split("=", 1)
                out[k.strip()] = v.strip()
            return out
    return check_string_map(value, path)




# --------------------------------------------------------------------------------------------
# priorities (the Priority admission plugin's defaulting)
# --------------------------------------------------------------------------------------------
class Priorities:
    def __init__(self, classes: Sequence[PriorityClass]):
        # the system classes exist in every cluster (kube-apiserver creates them at start)
        self.by_name = {**SYSTEM_PRIORITY_CLASSES, **{pc.name: pc for pc in classes}}
        defaults = [pc for pc in classes if pc.global_default]
        self.default = max(defaults, key=lambda pc: pc.value) if defaults else None

    def admit(self, pod: Pod, path: str) -> Pod:
        if pod.priority_class_name:
            pc = self.by_name.get(pod.priority_class_name)
            if pc is None:
                raise SpecError(path, f"pod {pod.key}: no PriorityClass named {pod.priority_class_name!r}")
            if pod.priority is None:
                return pod.replace(priority=pc.value, preemption_policy=pc.preemption_policy)
        elif pod.priority is None and self.default is not None:
            return pod.replace(priority=self.default.value, priority_class_name=self.default.name,
                               preemption_policy=self.default.preemption_policy)
        return pod
