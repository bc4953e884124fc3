"""Configurable test plugins (in the spirit of upstream framework_test.go's TestPlugin)."""
from __future__ import annotations

from dataclasses import dataclass, field

from fastsched.framework import (BindPlugin, Code, FilterPlugin, PermitPlugin, PostBindPlugin,
                                 PostFilterPlugin, PreBindPlugin, PreEnqueuePlugin,
                                 PreFilterExtensions, PreFilterPlugin, PreScorePlugin, QueueSortPlugin,
                                 ReservePlugin, ScoreExtensions, ScorePlugin, Status)
from fastsched.runtime import Registry


@dataclass
class Injected:
    """What a TestPlugin returns from each method (None = Success)."""

    pre_filter_status: Status | None = None
    pre_filter_result: object = None
    filter_status: Status | None = None
    post_filter_status: Status | None = None
    post_filter_result: object = None
    pre_score_status: Status | None = None
    score: int = 0
    score_status: Status | None = None
    normalize: object = None  # callable(list[NodeScore]) or None
    normalize_status: Status | None = None
    reserve_status: Status | None = None
    permit_status: Status | None = None
    permit_timeout: float = 0.0
    pre_bind_pre_flight_status: Status | None = None
    pre_bind_status: Status | None = None
    bind_status: Status | None = None
    add_pod_status: Status | None = None
    raise_in: set = field(default_factory=set)


class Calls(list):
    """A shared call log: (plugin, method) tuples in call order."""


class TestPlugin(PreEnqueuePlugin, PreFilterPlugin, FilterPlugin, PostFilterPlugin,
                 PreScorePlugin, ScorePlugin, ReservePlugin, PermitPlugin, PreBindPlugin, BindPlugin,
                 PostBindPlugin, PreFilterExtensions, ScoreExtensions):
    __test__ = False

    def __init__(self, name: str, inj: Injected | None = None, calls: Calls | None = None, args=None,
                 handle=None):
        self._name = name
        self.inj = inj or Injected()
        self.calls = calls if calls is not None else Calls()
        self.args = args
        self.handle = handle

    def name(self):
        return self._name

    def _log(self, method):
        self.calls.append((self._name, method))
        if method in self.inj.raise_in:
            raise RuntimeError(f"{self._name}.{method} exploded")

    def pre_enqueue(self, pod):
        self._log("pre_enqueue")
        return None

    def pre_filter(self, state, pod, nodes):
        self._log("pre_filter")
        return self.inj.pre_filter_result, self.inj.pre_filter_status

    def pre_filter_extensions(self):
        return self

    def add_pod(self, state, pod_to_schedule, pod_info_to_add, node_info):
        self._log("add_pod")
        return self.inj.add_pod_status

    def remove_pod(self, state, pod_to_schedule, pod_info_to_remove, node_info):
        self._log("remove_pod")
        return None

    def filter(self, state, pod, node_info):
        self._log("filter")
        return self.inj.filter_status

    def post_filter(self, state, pod, m):
        self._log("post_filter")
        return self.inj.post_filter_result, self.inj.post_filter_status

    def pre_score(self, state, pod, nodes):
        self._log("pre_score")
        return self.inj.pre_score_status

    def score(self, state, pod, node_info):
        self._log("score")
        s = self.inj.score
        return (s(node_info) if callable(s) else s), self.inj.score_status

    def score_extensions(self):
        return self if (self.inj.normalize is not None or self.inj.normalize_status is not None) else None

    def normalize_score(self, state, pod, scores):
        self._log("normalize_score")
        if self.inj.normalize is not None:
            self.inj.normalize(scores)
        return self.inj.normalize_status

    def reserve(self, state, pod, node_name):
        self._log("reserve")
        return self.inj.reserve_status

    def unreserve(self, state, pod, node_name):
        self._log("unreserve")

    def permit(self, state, pod, node_name):
        self._log("permit")
        return self.inj.permit_status, self.inj.permit_timeout

    def pre_bind_pre_flight(self, state, pod, node_name):
        self._log("pre_bind_pre_flight")
        return self.inj.pre_bind_pre_flight_status

    def pre_bind(self, state, pod, node_name):
        self._log("pre_bind")
        return self.inj.pre_bind_status

    def bind(self, state, pod, node_name):
        self._log("bind")
        return self.inj.bind_status

    def post_bind(self, state, pod, node_name):
        self._log("post_bind")


class OnlyFilter(FilterPlugin):
    """A plugin with one extension point, to check interface detection."""

    def __init__(self, name="OnlyFilter"):
        self._name = name

    def name(self):
        return self._name

    def filter(self, state, pod, node_info):
        return None


class QueueSortAndBind(QueueSortPlugin, BindPlugin):
    def __init__(self, name="QSB"):
        self._name = name

    def name(self):
        return self._name

    def less(self, a, b):
        return False

    def bind(self, state, pod, node_name):
        return None


def registry_of(*plugins) -> Registry:
    """A registry whose factories return the given instances (and record the args they got)."""
    r = Registry()
    for p in plugins:
        def factory(args, handle, p=p):
            p.args, p.handle = args, handle
            return p
        r.register(p.name(), factory)
    r.register("QSB", lambda args, handle: QueueSortAndBind())
    return r


def unschedulable(msg="no"):
    return Status(Code.UNSCHEDULABLE, msg)
