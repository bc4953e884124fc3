"""The guarded attribute sites of ``_kernels/_fastattr.h`` (the compiled commit's reads and writes,
``_kernels/_bind.pyx``) and the compiled field getters (``_kernels/_getters.pyx``
``tuple_getter``) against ``getattr``/``setattr``/``operator.attrgetter``.

A site keeps what the type's lookup found (a slot's offset, an instance-dict entry's index, a
method) for one type version tag; these tests change classes (a slot or a class attribute
replaced by a property, a method replaced, ``__getattr__`` added) and instances (values added,
deleted, a dict made and its entries moved, ``__dict__`` swapped) between the calls of live sites,
at random (seeded), and compare every answer with the generic path's. Then the same at scheduler
level: a class the commit reads changed in the middle of ``run()`` must be seen by the pods bound
after it.

Mutants these tests kill (each tried, then reverted): ``fa_get`` re-resolving a site only when it
is empty, not on a new tag (``test_a_scheduler_attribute_turned_property_mid_run``; the probes
crash); ``fa_set`` likewise (``test_a_result_field_turned_property_mid_run``; the probes);
``fa_type_attr`` answering the kept entry without the tag test (``test_a_method_replaced_mid_run``,
the probes); a dict object's entry hint taken without checking that the entry holds the name (the
four mid-run tests, the probes); the inline values' hint likewise
(``test_probes_alternating_inline_values_and_a_dict_object``); ``TupleGetter.get`` not resolving
its class again on a new tag (``test_tuple_getter_equals_attrgetter``).
"""
import gc
import operator
import random

import pytest

from fastsched import Scheduler, load_config
from fastsched._kernels import _getters
from fastsched.api.objects import Pod
from fastsched.runtime.compiled_cycle import SPEC_FIELDS
from fastsched.scheduler.result import PodResult
from fastsched.scheduler.scheduler import SchedulerMetrics
from fastsched.snapshot.lazy import _DERIVED_FIELDS
from fastsched.testing import make_node, make_pod

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}

_MISSING = object()


def _outcome(fn, *args):
    """What ``fn(*args)`` returns, or the type of the exception it raises."""
    try:
        return ("value", fn(*args))
    except Exception as e:  # noqa: BLE001 - the exception's type is the answer compared
        return ("raised", type(e))


def _mro_entry(obj, name):
    for c in type(obj).__mro__:
        if name in c.__dict__:
            return c.__dict__[name]
    return None


def _classes():
    """Fresh classes of each layout (new each call: a test's changes stay its own)."""
    log = []

    class Slotted:
        __slots__ = ("x", "y", "other")

    class SlottedSub(Slotted):
        __slots__ = ("z",)

    class Plain:  # a managed dict (3.11: values stored inline)
        def f(self):
            return 1

    class WithDefault:
        x = "class default"

    class PlainSub(Plain):
        pass

    class DictSlot:  # __slots__ with __dict__: a dict at tp_dictoffset, not a managed one
        __slots__ = ("y", "__dict__")

    class Hooked:
        def __getattr__(self, name):
            log.append(("getattr", name))
            if name == "x":
                return "hooked"
            raise AttributeError(name)

    return [Slotted, SlottedSub, Plain, WithDefault, PlainSub, DictSlot, Hooked], log


def _prop(log):
    def get(self):
        log.append("get")
        return self.__dict__.get("_px", "from property") if hasattr(self, "__dict__") else "from property"

    def set_(self, value):
        log.append(("set", value))
        if hasattr(self, "__dict__"):
            self.__dict__["_px"] = value
    return property(get, set_)


def _mutate(rng, classes, objs, log):
    """One random change of a class or an instance."""
    kind = rng.randrange(11)
    cls = rng.choice(classes)
    obj = rng.choice(objs)
    try:
        if kind == 0:
            setattr(obj, "x", rng.randrange(100))
        elif kind == 1:
            delattr(obj, "x")
        elif kind == 2:
            setattr(cls, "x", _prop(log))  # a data descriptor over the slot or the dict entry
        elif kind == 3 and "x" in cls.__dict__ and not isinstance(cls.__dict__["x"], type(Pod.name)):
            delattr(cls, "x")  # (a slot's member descriptor stays: deleting it breaks the layout)
        elif kind == 4:
            setattr(cls, "x", f"class value {rng.randrange(10)}")  # a plain class attribute
        elif kind == 5:
            setattr(cls, f"unrelated{rng.randrange(3)}", 1)  # a new tag, the same answers
        elif kind == 6 and hasattr(obj, "__dict__"):
            d = vars(obj)  # the dict object made; its entries moved
            for k in list(d)[:rng.randrange(1 + len(d))]:
                d[k] = d.pop(k)
        elif kind == 7 and hasattr(obj, "__dict__"):
            obj.__dict__ = {("x" if rng.random() < 0.5 else "w"): rng.randrange(100), "other": 1}
        elif kind == 8:
            setattr(cls, "f", (lambda self: 2) if rng.random() < 0.5 else _prop(log))
        elif kind == 9 and "f" in cls.__dict__:
            delattr(cls, "f")
        elif kind == 10:
            for i in range(rng.randrange(1, 6)):
                setattr(obj, f"a{rng.randrange(40)}", i)  # more entries (values, then a dict)
    except (AttributeError, TypeError):
        pass  # (a change the layout refuses: nothing changed)


@pytest.mark.parametrize("seed", range(6))
def test_probes_follow_class_and_instance_changes(seed):
    rng = random.Random(seed)
    classes, log = _classes()
    objs = [cls() for cls in classes for _ in range(2)]
    for step in range(400):
        _mutate(rng, classes, objs, log)
        obj = rng.choice(objs)
        op = rng.randrange(4)
        log.clear()
        if op == 0:
            got = _outcome(_getters.probe_get_x, obj)
            got_log = list(log)
            log.clear()
            want = _outcome(getattr, obj, "x")
            assert got == want and got_log == log, (seed, step, type(obj).__name__, got, want)
        elif op == 1:
            value = rng.randrange(1000)
            twin_state = _outcome(getattr, obj, "x")
            log.clear()
            got = _outcome(_getters.probe_set_x, obj, value)
            got_log, after = list(log), _outcome(getattr, obj, "x")
            # the same write through setattr must leave what the probe left
            log.clear()
            want = _outcome(setattr, obj, "x", value)
            want_after = _outcome(getattr, obj, "x")
            assert (got, after) == (want, want_after), (seed, step, type(obj).__name__, twin_state)
            assert [e for e in got_log if e != "get"] == [e for e in log if e != "get"], (seed, step)
        elif op == 2:
            assert _getters.probe_type_f(obj) is _mro_entry(obj, "f"), (seed, step, type(obj).__name__)
        elif hasattr(obj, "__dict__"):
            assert _outcome(_getters.probe_dict_get_x, obj) == _outcome(lambda o: o.__dict__.get("x"), obj), (seed, step)


def test_probes_on_unset_slots_and_foreign_objects():
    classes, _ = _classes()
    slotted = classes[0]()
    assert _outcome(_getters.probe_get_x, slotted) == ("raised", AttributeError)
    slotted.x = 5
    assert _getters.probe_get_x(slotted) == 5
    # the same site, other types one after another: each re-resolved, the answers getattr's
    for obj in (classes[2](), 3, "s", classes[0](), slotted, classes[3]()):
        assert _outcome(_getters.probe_get_x, obj) == _outcome(getattr, obj, "x")
    with pytest.raises(AttributeError):
        _getters.probe_set_x(3, 1)


def test_probes_alternating_inline_values_and_a_dict_object():
    """Two instances of one class, one keeping its values inline (at the class's shared key
    order) and one with a dict object whose entries were moved: one site alternating between
    them must find ``x`` in each (an entry hint is checked against the name each time)."""
    class C:
        def __init__(self):
            self.a, self.b, self.c, self.x = "a", "b", "c", "x"
    inline, moved, swapped = C(), C(), C()
    d = vars(moved)  # (a split dict: its entries keep the shared keys' indices)
    for k in ("x", "c", "b"):
        d[k] = d.pop(k)
    moved.x = "moved x"
    swapped.__dict__ = {"a": "a", "x": "swapped x", "c": "c"}  # x at another index than C's
    for _ in range(3):
        for obj in (moved, inline, swapped, inline, moved, moved, swapped, swapped, inline):
            assert _getters.probe_get_x(obj) == obj.x
            assert _getters.probe_dict_get_x(obj) == obj.x
        _getters.probe_set_x(inline, inline.x + "!")
        _getters.probe_set_x(moved, moved.x + "?")
        _getters.probe_set_x(swapped, swapped.x + "+")
    assert (inline.x, moved.x, swapped.x, inline.a, moved.c, swapped.c) == (
        "x!!!", "moved x???", "swapped x+++", "a", "c", "c")


def _slot_class(rng):
    names = [f"f{i}" for i in range(rng.randrange(2, 9))]
    namespace = {"__slots__": tuple(names)}
    if rng.random() < 0.3:
        namespace["computed"] = property(lambda self: ("computed", id(self)))
        names.append("computed")
    return type("Rand", (), namespace), names


@pytest.mark.parametrize("seed", range(5))
def test_tuple_getter_equals_attrgetter(seed):
    rng = random.Random(seed)
    cls, names = _slot_class(rng)
    picked = tuple(rng.sample(names, rng.randrange(2, len(names) + 1)))
    getter, want = _getters.tuple_getter(cls, picked), operator.attrgetter(*picked)
    sub = type("Sub", (cls,), {"__slots__": ()})
    objs = [cls() for _ in range(3)] + [sub()]
    for step in range(200):
        obj = rng.choice(objs)
        x = rng.random()
        slots = [n for n in names if n != "computed"]
        if x < 0.5:
            setattr(obj, rng.choice(slots), rng.randrange(5))
        elif x < 0.6:
            name = rng.choice(slots)
            if hasattr(obj, name):
                delattr(obj, name)  # an unset slot again: attrgetter's AttributeError
        elif x < 0.65:
            # a slot field turned into a property on the class (the member descriptor moved aside:
            # the layout stays), then back
            member = cls.__dict__.get(picked[-1])
            if member is not None and isinstance(member, type(Pod.name)):
                setattr(cls, picked[-1], property(lambda self: "shadowed"))
                assert _outcome(getter, obj) == _outcome(want, obj), (seed, step)
                setattr(cls, picked[-1], member)
        elif x < 0.7:
            setattr(cls, f"unrelated{step % 3}", step)
        got, expected = _outcome(getter, obj), _outcome(want, obj)
        assert got == expected, (seed, step, got, expected)
        if got[0] == "value":
            assert all(a is b for a, b in zip(got[1], expected[1]))


def test_tuple_getter_on_pods():
    pod = make_pod("p", cpu="100m", labels={"app": "a"})
    for names in (SPEC_FIELDS, _DERIVED_FIELDS):
        got = _getters.tuple_getter(Pod, names)(pod)
        assert len(got) == len(names)
        assert all(a is b for a, b in zip(got, operator.attrgetter(*names)(pod)))
    assert _getters.tuple_getter(int, ("real", "imag"))(3) == (3, 0)  # (no slots: the attrgetter)


# -- at scheduler level: the compiled commit sees classes and instances changed mid-run -------------

def _scheduler(n_nodes=6, n_pods=30):
    s = Scheduler(load_config(V1), seed=3)
    s.add_nodes([make_node(f"n{i}", cpu="8", memory="16Gi") for i in range(n_nodes)])
    s.add_pods([make_pod(f"p{i}", cpu="100m", memory="64Mi") for i in range(n_pods)])
    return s


def _commits(s):
    """Count the compiled commits that bound a pod (the commit is a compiled class's method: the
    scheduler's instance attribute is replaced by a counting wrapper)."""
    inner = s._bind_commit
    counter = {"done": 0}

    class Counting:
        def commit(self, *args):
            ok = inner.commit(*args)
            counter["done"] += bool(ok)
            return ok

        def commit_run(self, *args):
            return inner.commit_run(*args)
    s._bind_commit = Counting()
    return counter


def _at_bound(s, k, change):
    """Call ``change()`` once, from the bound callback of the ``k``-th bound pod."""
    bound = []

    def cb(r):
        bound.append(r.pod.uid)
        if len(bound) == k:
            change()
    s.bound_callbacks.append(cb)
    return bound


def test_a_result_field_turned_property_mid_run(monkeypatch):
    s = _scheduler()
    counter = _commits(s)
    sets = []

    def get(self):
        # (the pods bound before the change hold theirs in the instance's own entry)
        return self.__dict__.get("_bound_at_seen", self.__dict__.get("bound_at"))

    def set_(self, value):
        sets.append(self.pod.name if self.pod is not None else None)
        self.__dict__["_bound_at_seen"] = value
    _at_bound(s, 10, lambda: monkeypatch.setattr(PodResult, "bound_at", property(get, set_)))
    results = s.run()
    assert all(r.status == "Scheduled" for r in results)
    assert counter["done"] >= 25  # the compiled commit bound the pods on both sides of the change
    # every pod bound after the change wrote its bound_at through the property's setter
    assert len(sets) == 20, sets
    assert all(r.bound_at is not None for r in results)


def test_a_method_replaced_mid_run(monkeypatch):
    s = _scheduler()
    counter = _commits(s)
    cls = type(s.cluster)
    original = cls.store_bound
    stored = []

    def store_bound(self, pod):
        stored.append(pod.name)
        original(self, pod)
    _at_bound(s, 10, lambda: monkeypatch.setattr(cls, "store_bound", store_bound))
    results = s.run()
    assert all(r.status == "Scheduled" for r in results)
    # the commit inlines Cluster.store_bound only while it is that function: after the change every
    # pod went through the replacement (the Python path), none through the inlined store
    assert len(stored) == 20, stored
    assert counter["done"] == 10, counter


def test_an_instance_dict_reordered_mid_run():
    s = _scheduler()
    counter = _commits(s)
    replaced = SchedulerMetrics()

    def change():
        d = vars(s)  # the dict object made, then entries moved: the sites' hints go stale
        assert "metrics" in d and "_change_seq" in d
        for k in ["metrics", "_change_seq", "cache", "queue", "cluster", *list(d)[:5]]:
            d[k] = d.pop(k)
        d["metrics"] = replaced
        gc.collect()
    _at_bound(s, 10, change)
    seq_before = s._change_seq
    results = s.run()
    assert all(r.status == "Scheduled" for r in results)
    assert counter["done"] == 30
    assert replaced.attempts["scheduled"] == 20
    assert len(replaced.attempt_latencies) == 20
    assert s._change_seq == seq_before + 30


def test_a_scheduler_attribute_turned_property_mid_run(monkeypatch):
    s = _scheduler()
    counter = _commits(s)
    first = s.metrics
    replaced = SchedulerMetrics()
    reads = []

    def get(self):
        reads.append(1)
        return replaced
    # a data descriptor on the class wins over the instance's own ``metrics`` from then on
    _at_bound(s, 10, lambda: monkeypatch.setattr(type(s), "metrics", property(get), raising=False))
    results = s.run()
    assert all(r.status == "Scheduled" for r in results)
    assert counter["done"] == 30
    assert first.attempts["scheduled"] == 10
    assert replaced.attempts["scheduled"] == 20 and len(replaced.attempt_latencies) == 20
    assert reads
