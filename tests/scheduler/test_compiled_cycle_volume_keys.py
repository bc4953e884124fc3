"""CompiledCycle._shared_key_of_last: a pod whose spec differs from the last keyed pod's only in
fields no static plan part reads (scheduler_perf's volume cases: each pod mounts its own claim)
takes the last shared key instead of computing it; the key must be the one the full computation
gives, for pods it serves and for those it must not."""
from __future__ import annotations

from fastsched import load_config
from fastsched.runtime.compiled_cycle import SPEC_FIELDS, _spec_of
from fastsched.scheduler import Scheduler
from fastsched.testing import make_node, make_pod

V1 = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def _claim(name):
    return {"name": "vol", "persistentVolumeClaim": {"claimName": name}}


def _image(ref):
    return {"name": "img", "image": {"reference": ref}}


def _engine_and_table():
    s = Scheduler(load_config(V1), seed=0)
    s.add_nodes([make_node(f"n{i}", cpu="8", memory="32Gi") for i in range(4)])
    s.add_pods([make_pod("warm", requests={"cpu": "100m"})])
    s.run()  # binds the engine to the snapshot's table
    (fw,) = s.profiles.values()
    engine = fw.compiled_cycle
    return engine, engine._table


def _key(engine, pod, table, node_version=None):
    spec = _spec_of(pod)
    ids = tuple(map(id, spec))
    values = engine._memo_guards(pod, spec, ids, table)[1]
    version = table.node_version if node_version is None else node_version
    return spec, (*ids, version, *values)


def _full(engine, pod, table, node_version=None):
    """The key as computed without the last one (and without the form memo)."""
    saved_last, saved_memo = engine._last_shared, dict(engine._form_memo)
    engine._last_shared = None
    engine._form_memo.clear()
    try:
        spec, key = _key(engine, pod, table, node_version)
        return engine._shared_key(pod, spec, table, key)
    finally:
        engine._last_shared = saved_last
        engine._form_memo.clear()
        engine._form_memo.update(saved_memo)


def test_pods_differing_in_their_claims_take_the_last_key_and_others_their_own():
    engine, table = _engine_and_table()
    base = make_pod("p", requests={"cpu": "100m", "memory": "64Mi"})
    pods = [
        ("claim c0", base.replace(name="p0", uid="p0", volumes=(_claim("c0"),)), False),
        ("claim c1", base.replace(name="p1", uid="p1", volumes=(_claim("c1"),)), True),
        ("claim c2", base.replace(name="p2", uid="p2", volumes=(_claim("c2"),)), True),
        # no claim: the volume plugins' forms change (Skip instead of each cycle)
        ("secret", base.replace(name="p3", uid="p3", volumes=({"name": "s", "secret": {"secretName": "s"}},)), False),
        ("claim c3", base.replace(name="p4", uid="p4", volumes=(_claim("c3"),)), False),
        # an image volume: ImageLocality's static Score reads the volumes, so they are in the key
        ("image a", base.replace(name="p5", uid="p5", volumes=(_image("img-a:1"),)), False),
        ("image b", base.replace(name="p6", uid="p6", volumes=(_image("img-b:1"),)), False),
        ("claim c4", base.replace(name="p7", uid="p7", volumes=(_claim("c4"),)), False),
        ("claim c5", base.replace(name="p8", uid="p8", volumes=(_claim("c5"),)), True),
        # other requests: the containers are read (a static part) and the requests are in the key
        ("claim c6, more cpu", make_pod("p9", requests={"cpu": "2"}).replace(volumes=(_claim("c6"),)), False),
    ]
    assert all(p.containers is base.containers for _, p, _ in pods[:-1])
    keys = []
    for what, pod, reused in pods:
        last = engine._last_shared[5] if engine._last_shared is not None else None
        spec, key = _key(engine, pod, table)
        got = engine._shared_key(pod, spec, table, key)
        assert got == _full(engine, pod, table), what
        assert (got is last) == reused, what
        keys.append(got)
    assert keys[0] == keys[1] == keys[2] == keys[4] == keys[7] == keys[8]   # one plan for the claims
    assert keys[3] != keys[0] and keys[5] != keys[6] and keys[9] != keys[8]


def test_a_changed_node_set_or_guard_value_is_not_the_last_key():
    engine, table = _engine_and_table()
    base = make_pod("p", requests={"cpu": "100m"})
    a = base.replace(name="a", uid="a", volumes=(_claim("ca"),))
    b = base.replace(name="b", uid="b", volumes=(_claim("cb"),))
    spec, key = _key(engine, a, table)
    first = engine._shared_key(a, spec, table, key)
    other = table.node_version + 1
    spec, key = _key(engine, b, table, node_version=other)
    got = engine._shared_key(b, spec, table, key)
    assert got is not first and got == _full(engine, b, table, node_version=other)
    assert got != first


def test_a_changed_request_field_is_never_taken_as_unread():
    """Even when no static part read it there, a request field that changed changes the pod's
    request totals, which the key holds whenever some request field is read."""
    engine, table = _engine_and_table()
    base = make_pod("p", requests={"cpu": "100m"})
    a = base.replace(name="a", uid="a", volumes=(_claim("ca"),))
    spec, key = _key(engine, a, table)
    engine._shared_key(a, spec, table, key)
    table_, last_spec, tail, forms, read, shared, mounts_read = engine._last_shared
    # as if only the containers were read: the overhead (another request field) differs
    engine._last_shared = (table_, last_spec, tail, forms, frozenset({"containers"}), shared, mounts_read)
    b = a.replace(name="b", uid="b", overhead={"cpu": 1})
    assert _spec_of(b)[SPEC_FIELDS.index("overhead")] is not last_spec[SPEC_FIELDS.index("overhead")]
    spec, key = _key(engine, b, table)
    assert engine._shared_key_of_last(b, spec, table, key) is None
