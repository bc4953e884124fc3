"""A plugin raising where test_chaos does not make one raise: EventsToRegister (a build error at
the plugin's entry in the configuration, as upstream's scheduler.New returns the plugin's error;
it used to escape the constructor as the plugin's bare exception), NormalizeScore, Unreserve,
QueueSort's Less and a queueing hint, with many pods: run() returns, every pod has one result,
the cache holds exactly the bound pods."""
from __future__ import annotations

import contextlib
import random

import pytest

from fastsched import Scheduler
from fastsched.config import ConfigError
from fastsched.framework import Code, Status
from fastsched.framework.interface import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from fastsched.runtime import Registry
from fastsched.scheduler.result import ERROR, SCHEDULED, UNSCHEDULABLE
from fastsched.testing import config_enabling, make_node, make_pod

N_PODS = 50


def _plugin(methods: dict) -> type:
    return type("Boom", (), {"__init__": lambda self, args, handle: None, "name": lambda self: "Boom", **methods})


def test_events_to_register_raising_is_a_build_error_at_the_plugin_entry():
    def events_to_register(self):
        raise RuntimeError("informer gone")

    cls = _plugin({"filter": lambda self, state, pod, ni: None, "events_to_register": events_to_register})
    with pytest.raises(ConfigError) as err:
        Scheduler(config_enabling("Boom", "filter"), registry=Registry({"Boom": cls}))
    assert str(err.value) == ('profiles[0].plugins.filter.enabled[0].name: profile "default-scheduler": '
                              'EventsToRegister of plugin "Boom": RuntimeError: informer gone')


def _rng_raises(rng: random.Random, rate: float) -> None:
    if rng.random() < rate:
        raise RuntimeError("boom")


def _cases():
    def normalize(rate):
        rng = random.Random(1)

        def normalize_score(self, state, pod, scores):
            _rng_raises(rng, rate)
        return "score", (), {"score": lambda self, state, pod, node: (1, None),
                             "score_extensions": lambda self: self, "normalize_score": normalize_score}

    def unreserve(rate):
        rng = random.Random(2)

        def reserve(self, state, pod, node):
            return Status(Code.UNSCHEDULABLE, "no room today") if rng.random() < 0.3 else None

        def unreserve_(self, state, pod, node):
            _rng_raises(rng, rate)
        return "reserve", (), {"reserve": reserve, "unreserve": unreserve_}

    def less(rate):
        rng = random.Random(3)

        def less_(self, a, b):
            _rng_raises(rng, rate)
            return a.timestamp < b.timestamp
        return "queueSort", ("PrioritySort",), {"less": less_}

    def hint(rate):
        rng = random.Random(4)

        def filter_(self, state, pod, ni):
            return Status(Code.UNSCHEDULABLE, "not yet") if rng.random() < 0.3 else None

        def fn(pod, old, new):
            _rng_raises(rng, rate)
            return 1

        def events(self):
            return [ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ALL), fn),
                    ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ALL), fn)]
        return "filter", (), {"filter": filter_, "events_to_register": events}
    return {"normalize": normalize, "unreserve": unreserve, "less": less, "hint": hint}


@pytest.mark.parametrize("rate", [1.0, 0.3], ids=["always", "sometimes"])
@pytest.mark.parametrize("point", ["normalize", "unreserve", "less", "hint"])
def test_the_loop_survives_a_plugin_raising_and_loses_no_pod(point, rate):
    yaml_point, disabled, methods = _cases()[point](rate)
    s = Scheduler(config_enabling("Boom", yaml_point, disabled=disabled), registry=Registry({"Boom": _plugin(methods)}))
    s.add_nodes([make_node(f"n{i}", cpu="4") for i in range(5)])
    # a raising Less: the queue warns (once per site) and counts such a comparison as False
    with (pytest.warns(RuntimeWarning, match='QueueSort plugin "Boom" raised RuntimeError: boom')
          if point == "less" else contextlib.nullcontext()):
        s.add_pods([make_pod(f"p{i}", cpu="200m") for i in range(N_PODS)])
        s.run()
    s.delete_node("n0")  # a second wave after a change
    s.add_nodes([make_node("n9", cpu="4")])
    results = s.run()
    assert [r.pod.name for r in results] == [f"p{i}" for i in range(N_PODS)]
    bound = [r for r in results if r.status == SCHEDULED]
    assert {r.status for r in results} <= {SCHEDULED, UNSCHEDULABLE, ERROR}
    assert s.cache.pod_count() == len(bound)
    for r in results:
        if r.status == ERROR:
            assert "boom" in r.message  # the plugin's error, named
    if point == "normalize" and rate == 1.0:
        assert not bound and all('running Normalize on Score plugins: plugin "Boom"' in r.message for r in results)
    else:
        assert bound
