"""``run(until=t)`` in steps decides as one ``run()`` for the same timed events: many pods of three
priorities (preemption), events on the virtual clock that add pods, delete pods (pending or
bound) and nodes, add nodes back and cordon them; every attempt costs modelled time, so events
fall between and during attempts. Stopping at a step's end must change nothing: each pod ends
with the same status, node and message, after the same number of attempts, at the same time.
Drawn by hypothesis (derandomized): the seed of the history and the step.
"""
from __future__ import annotations

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.reliability.test_timed_races import Race

HORIZON = 10.0


def _history(seed: int, step: float | None) -> list:
    race = Race(seed)
    for _ in range(20):
        race.add_pod()
    for _ in range(40):
        race.s.clock.schedule(race.rng.uniform(0, HORIZON), race.event)
    if step is not None:
        t = 0.0
        while t < HORIZON:
            t += step
            race.s.run(until=t)
    race.s.run()
    s = race.s
    assert race.added > 20
    return [s.clock.now(), sorted((r.pod.name, r.status, r.node_name or "", r.message, r.attempts)
                                  for r in s.results.values())]


# (no shrinking: a failing draw shrinks for minutes; the printed draw is enough to reproduce it)
@settings(max_examples=3, deadline=None, derandomize=True, database=None,
          phases=(Phase.explicit, Phase.generate), suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 100_000), st.floats(0.05, 1.5))
def test_run_until_in_steps_decides_as_one_run(seed, step):
    assert _history(seed, step) == _history(seed, None)
