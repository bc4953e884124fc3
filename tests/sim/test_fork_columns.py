"""Forks share the node table's columns copy-on-write (fastsched/snapshot/cow.py).

A fork and its original hold the same read-only arrays until one side writes a column: that side
then copies it (its own, writable). The same holds for the table's per-node containers (``row_of``,
and per label key its value -> code dict and value list) and for the snapshot's node-order arrays.
Checked here: what is shared right after a fork and after each kind of write; that no write on
either side (binds, deletions, node adds / updates / removals / renames, new label keys, values and
resources, growth) ever shows on the other; that each side ends exactly where a scheduler never
forked ends; and that a write path which forgot to take ownership fails loudly.
"""
from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from fastsched import Scheduler
from fastsched.sim.generators import upstream_nodes
from fastsched.snapshot.cow import (
    ACCOUNTS_COLUMNS,
    LABEL_PREFIX,
    ROW_OF,
    SHARED_COLUMNS,
    SHAPE_COLUMNS,
    VALUES_PREFIX,
    SharedWriteError,
    _Index,
    _SharedIndex,
    _SharedValues,
    _Values,
)
from fastsched.testing import make_node, make_pod


NODE = "scheduler-perf-%05d"


def build() -> Scheduler:
    """Templated nodes (bulk, scheduler_perf's), nodes kept with manifests (labels, taints, an
    extended resource, images), bulk pods of one template, pods placed by the scheduler."""
    s = Scheduler(seed=3)
    s.add_nodes(upstream_nodes(30, label_key="topology.kubernetes.io/zone", label_values=["z1", "z2", "z3"]))
    s.add_nodes([make_node(f"kept-{i}", cpu="8", memory="16Gi", extra={"example.com/foo": "2"},
                           labels={"disk": "ssd" if i % 2 else "hdd"}, images=[("img:1", 10_000_000)],
                           taints=[{"key": "dedicated", "value": "x", "effect": "NoSchedule"}] if i == 3 else [])
                 for i in range(6)])
    bulk = make_pod("bulk", cpu="200m", memory="256Mi")
    # bound in bulk: records of one template
    s.add_pods([bulk.replace(name=f"bulk-{i}", uid=f"bulk-uid-{i}", node_name=NODE % (i % 30), manifest={})
                for i in range(40)])
    s.add_pods([make_pod(f"web-{i}", cpu="300m", memory="512Mi", labels={"app": "web"}) for i in range(25)])
    s.run()
    return s


def columns(s: Scheduler) -> dict[str, np.ndarray]:
    """Every shared-by-fork column's values (copies), label columns included."""
    t = s.snapshot.table
    out = {name: np.array(t.__dict__[name], copy=True) for name in SHARED_COLUMNS}
    out.update({LABEL_PREFIX + key: np.array(col, copy=True) for key, col in t.label_codes.items()})
    return out


def containers(s: Scheduler) -> dict[str, list]:
    """The table's per-node containers (as lists of items, in order) and the snapshot's node-order
    arrays."""
    t, snap = s.snapshot.table, s.snapshot
    out = {ROW_OF: list(t.row_of.items())}
    for key in t._label_value_code:
        out["codes:" + key] = list(t._label_value_code[key].items())
        out["values:" + key] = list(t.label_values[key])
    out["order"] = snap.order().tolist()
    n = t.capacity  # (beyond the table's capacity: rows never used)
    out["row_zone"] = snap._row_zone[:n].tolist()
    out["row_seq"] = snap._row_seq[:n].tolist()
    return out


def container_objects(t) -> dict[str, object]:
    """The container objects of a table, by name."""
    out = {ROW_OF: t.row_of}
    for key in t._label_value_code:
        out["codes:" + key] = t._label_value_code[key]
        out["values:" + key] = t.label_values[key]
    return out


def diff(a: dict, b: dict) -> list[str]:
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


def same_columns(a: dict, b: dict) -> list[str]:
    """Names whose values differ (shape or content)."""
    return sorted(k for k in set(a) | set(b)
                  if k not in a or k not in b or a[k].shape != b[k].shape or not np.array_equal(a[k], b[k]))


def placements(s: Scheduler) -> list:
    return sorted((p.name, p.node_name) for p in s.pods.values())


# ------------------------------------------------------------------------------------------------
# what each write does to the sharing
# ------------------------------------------------------------------------------------------------
def bind_pods(s):
    tag = len(s.pods)  # (names unique on a scheduler, the same on its twin)
    s.add_pods([make_pod(f"new-{tag}-{i}", cpu="250m", memory="128Mi") for i in range(5)])
    s.run()


def bulk_pods(s):
    proto = make_pod("later", cpu="100m", memory="64Mi")
    s.add_pods([proto.replace(name=f"later-{i}", uid=f"later-uid-{i}", manifest={}) for i in range(300)])
    s.run()


def delete_pod(s):
    s.delete_pod(sorted((p for p in s.pods.values() if p.node_name), key=lambda p: p.name)[0])


def add_node(s):
    s.add_node(make_node("fresh", cpu="16", memory="64Gi", labels={"topology.kubernetes.io/zone": "z9"}))


def add_node_new_label_key_and_resource(s):
    s.add_node(make_node("gpu-node", cpu="16", memory="64Gi", extra={"nvidia.com/gpu": "4"},
                         labels={"accelerator": "a100"}))


def update_node(s):
    s.update_node(make_node("kept-1", cpu="12", memory="16Gi", extra={"example.com/foo": "3"},
                            labels={"disk": "nvme"}, unschedulable=True))


def update_templated_node(s):  # a templated row: its Node is rebuilt (node_template written) first
    node = next(n for n in s.nodes() if n.name == NODE % 4)
    s.update_node(node.replace(labels={**node.labels, "topology.kubernetes.io/zone": "z7"}))


def remove_node(s):
    s.delete_node("kept-2")


def remove_templated_node(s):
    s.delete_node(NODE % 7)


def rename_node(s):  # a node removed and added again under another name, same labels
    node = next(n for n in s.nodes() if n.name == "kept-4")
    s.delete_node("kept-4")
    s.add_node(node.replace(name="kept-4-renamed", uid="kept-4-renamed-uid"))


def add_nodes_new_label_values_and_key(s):  # in bulk: new values of known keys, a new key
    s.add_nodes([make_node(f"rack-node-{i}", cpu="4", memory="8Gi",
                           labels={"topology.kubernetes.io/zone": "z1" if i % 2 else "z8", "rack": f"r{i % 3}",
                                   "kubernetes.io/hostname": f"rack-node-{i}"})
                 for i in range(7)])


def relabel_templated_node_new_key(s):  # a templated node gets a new key and loses one
    node = next(n for n in s.nodes() if n.name == NODE % 9)
    labels = {k: v for k, v in node.labels.items() if k != "topology.kubernetes.io/zone"}
    s.update_node(node.replace(labels={**labels, "pool": "blue"}))


def grow(s):  # past the row capacity: every row column reallocated
    s.add_nodes(upstream_nodes(200, prefix="more-"))
    s.run()


def read_only(s):  # reads that build lazy objects (Nodes, PodInfo lists) write some columns
    s.nodes()
    table = s.snapshot.table
    for row in range(len(table.pods)):
        table.pods[row]


OPERATIONS = [bind_pods, bulk_pods, delete_pod, add_node, add_node_new_label_key_and_resource, update_node,
              update_templated_node, remove_node, remove_templated_node, rename_node,
              add_nodes_new_label_values_and_key, relabel_templated_node_new_key, grow, read_only]


def test_a_fork_shares_every_column_until_one_side_writes_it():
    s = build()
    table = s.snapshot.table
    fork = s.fork()
    ft = fork.snapshot.table
    expected = set(SHARED_COLUMNS) | {LABEL_PREFIX + key for key in table.label_codes}
    assert table.shared_columns() == ft.shared_columns() == expected
    for name in SHARED_COLUMNS:
        assert table.__dict__[name] is ft.__dict__[name], name
        assert not table.__dict__[name].flags.writeable, name
    for key, col in table.label_codes.items():
        assert ft.label_codes[key] is col and not col.flags.writeable
    # the per-node containers: the same objects, read-only, in both tables
    expected_containers = {ROW_OF} | {VALUES_PREFIX + key for key in table._label_value_code}
    assert table.shared_containers() == ft.shared_containers() == expected_containers
    assert set(table._label_value_code) == set(table.label_codes) == set(table.label_values)
    objects = container_objects(table)
    for name, obj in container_objects(ft).items():
        assert obj is objects[name], name
        assert type(obj) in (_SharedIndex, _SharedValues), name
    # (their key dicts are the fork's own: a new key on one side is not seen on the other)
    assert ft._label_value_code is not table._label_value_code and ft.label_values is not table.label_values
    # and the snapshot's node-order arrays
    for name in ("_row_zone", "_row_seq", "_order"):
        assert getattr(fork.snapshot, name) is getattr(s.snapshot, name), name
        assert not getattr(s.snapshot, name).flags.writeable, name
    before = columns(s)
    before_containers = containers(s)

    bind_pods(fork)
    # the fork copied what the bookkeeping writes (and the shapes of the new pods); nothing else
    owned = set(ACCOUNTS_COLUMNS) | set(SHAPE_COLUMNS) | {"has_host_ports"}
    assert expected - ft.shared_columns() <= owned
    assert set(ACCOUNTS_COLUMNS) <= expected - ft.shared_columns()
    for name in ACCOUNTS_COLUMNS:
        assert ft.__dict__[name].flags.writeable and not np.shares_memory(ft.__dict__[name], table.__dict__[name])
    for name in ("alloc", "live", "taint_set", "allowed_pods", "node_names", "unschedulable", "node_template"):
        assert ft.__dict__[name] is table.__dict__[name], name
    assert all(ft.label_codes[k] is table.label_codes[k] for k in table.label_codes)
    # binding writes no container
    assert ft.shared_containers() == expected_containers
    assert all(obj is objects[name] for name, obj in container_objects(ft).items())
    # the original did not change (and still shares what it shared)
    assert same_columns(columns(s), before) == []
    assert diff(containers(s), before_containers) == []
    assert table.shared_columns() == expected
    assert table.shared_containers() == expected_containers

    # the original's own writes copy its columns too, and leave the fork's alone
    fork_before = columns(fork)
    bind_pods(s)
    assert same_columns(columns(fork), fork_before) == []
    assert not np.shares_memory(table.requested, ft.requested)
    assert table.alloc is ft.alloc

    # a new node (a new value of the zone key): the fork owns row_of and that key's values, only
    add_node(fork)
    assert ft.shared_containers() == expected_containers - {ROW_OF, VALUES_PREFIX + "topology.kubernetes.io/zone",
                                                           VALUES_PREFIX + "kubernetes.io/hostname"}
    assert type(ft.row_of) is _Index and type(table.row_of) is _SharedIndex
    assert "fresh" in ft.row_of and "fresh" not in table.row_of
    assert "z9" in ft.label_values["topology.kubernetes.io/zone"]
    assert "z9" not in table.label_values["topology.kubernetes.io/zone"]
    assert ft.label_values["disk"] is table.label_values["disk"]
    assert diff(containers(s), before_containers) == []  # (binding wrote no container)
    assert table.shared_containers() == expected_containers



@pytest.mark.parametrize("op", OPERATIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("writer", ["fork", "original"])
def test_writes_on_either_side_never_show_on_the_other(op, writer):
    s = build()
    fork = s.fork()
    reference = build()  # never forked
    target, other = (fork, s) if writer == "fork" else (s, fork)
    other_before, other_placements, other_containers = columns(other), placements(other), containers(other)
    op(target)
    op(reference)
    assert same_columns(columns(other), other_before) == []
    assert diff(containers(other), other_containers) == []
    assert placements(other) == other_placements
    assert same_columns(columns(target), columns(reference)) == []
    assert diff(containers(target), containers(reference)) == []
    assert placements(target) == placements(reference)
    # and then each side goes on as a scheduler never forked would
    for sched in (target, other):
        twin = build()
        if sched is target:
            op(twin)
        bind_pods(sched)
        bind_pods(twin)
        delete_pod(sched)
        delete_pod(twin)
        add_nodes_new_label_values_and_key(sched) if "rack-node-0" not in sched.snapshot.table.row_of else None
        add_nodes_new_label_values_and_key(twin) if "rack-node-0" not in twin.snapshot.table.row_of else None
        bind_pods(sched)
        bind_pods(twin)
        assert same_columns(columns(sched), columns(twin)) == []
        assert diff(containers(sched), containers(twin)) == []
        assert placements(sched) == placements(twin)


def test_every_operation_in_turn_on_both_sides_and_forks_of_forks():
    s = build()
    reference = build()
    f1 = s.fork()
    f2 = f1.fork()
    twins = {id(s): reference, id(f1): build(), id(f2): build()}
    for i, op in enumerate(OPERATIONS):
        for k, sched in enumerate((s, f1, f2)):
            if (i + k) % 2 == 0:  # each scheduler takes a different subset of the operations
                op(sched)
                op(twins[id(sched)])
    for sched in (s, f1, f2):
        assert same_columns(columns(sched), columns(twins[id(sched)])) == []
        assert diff(containers(sched), containers(twins[id(sched)])) == []
        assert placements(sched) == placements(twins[id(sched)])


def test_transactions_share_columns_and_revert_exactly():
    s = build()
    before, before_containers = columns(s), containers(s)
    with s.transaction():
        bind_pods(s)
        remove_node(s)
        add_node_new_label_key_and_resource(s)
        add_nodes_new_label_values_and_key(s)
        assert same_columns(columns(s), before) != []
        assert diff(containers(s), before_containers) != []
    assert same_columns(columns(s), before) == []
    assert diff(containers(s), before_containers) == []
    with s.transaction() as tx:
        rename_node(s)
        update_templated_node(s)
        tx.rollback()
        assert diff(containers(s), before_containers) == []
        rename_node(s)
        tx.commit()
    reference = build()
    rename_node(reference)
    bind_pods(s)
    bind_pods(reference)
    assert same_columns(columns(s), columns(reference)) == []
    assert diff(containers(s), containers(reference)) == []


def test_a_write_that_skips_taking_ownership_fails_loudly():
    s = build()
    fork = s.fork()
    for sched in (s, fork):
        table = sched.snapshot.table
        with pytest.raises(ValueError, match="read-only"):
            table.requested[0, 0] += 1
        with pytest.raises(ValueError, match="read-only"):
            table.label_codes["kubernetes.io/hostname"][0] = 5
        assert not table._acc.writable
        with pytest.raises(RuntimeError, match="shared with a fork"):
            table._acc.add(0, 0, table.version + 1)
        with pytest.raises(RuntimeError, match="shared with a fork"):
            table._acc.remove(int(np.flatnonzero(table.pod_row >= 0)[0]), table.version + 1)
        # reading through the bookkeeping works on shared columns
        row = table.row_of["kept-0"]
        assert table.pod_records(row) == s.snapshot.table.pod_records(row)
    # taking ownership makes it writable again (here and only here)
    fork.snapshot.table._own_accounts()
    assert fork.snapshot.table._acc.writable and not s.snapshot.table._acc.writable


def _container_writes(table) -> list:
    """Every way of writing the shared containers (each a function of no argument)."""
    codes = table._label_value_code["disk"]
    values = table.label_values["disk"]
    row_of = table.row_of

    def ior():
        d = row_of
        d |= {"x": 1}

    def iadd():
        v = values
        v += ["x"]

    def imul():
        v = values
        v *= 2

    return [lambda: row_of.__setitem__("x", 1), lambda: row_of.__delitem__("kept-0"), lambda: row_of.pop("kept-0"),
            row_of.popitem, lambda: row_of.setdefault("x", 1), lambda: row_of.update(x=1), row_of.clear, ior,
            lambda: codes.__setitem__("x", 9), lambda: codes.pop("ssd"),
            lambda: values.append("x"), lambda: values.extend(["x"]), lambda: values.insert(0, "x"),
            lambda: values.__setitem__(0, "x"), lambda: values.__setitem__(slice(0, 1), ["x"]),
            lambda: values.__delitem__(0), values.pop, lambda: values.remove("ssd"), values.sort, values.reverse,
            values.clear, iadd, imul]


def test_a_container_write_that_skips_taking_ownership_fails_loudly():
    s = build()
    fork = s.fork()
    before = containers(s)
    for sched in (s, fork):
        table = sched.snapshot.table
        for write in _container_writes(table):
            with pytest.raises(SharedWriteError, match="shared with a fork"):
                write()
        with pytest.raises(ValueError, match="read-only"):  # (SharedWriteError is a ValueError)
            table.row_of["x"] = 1
        with pytest.raises(ValueError, match="read-only"):
            sched.snapshot._row_zone[0] = 5
        with pytest.raises(ValueError, match="read-only"):
            sched.snapshot.order()[0] = 5
    assert diff(containers(s), before) == diff(containers(fork), before) == []
    # reads are those of plain containers
    t = s.snapshot.table
    assert t.row_of["kept-0"] == fork.snapshot.table.row_of["kept-0"] and t.row_of.get("nope") is None
    assert t.label_values["disk"][t._label_value_code["disk"]["ssd"]] == "ssd"
    assert dict(t.row_of) == t.row_of and list(t.label_values["disk"]) == t.label_values["disk"]
    # taking ownership makes them writable again (here and only here)
    ft = fork.snapshot.table
    ft._own(ROW_OF, VALUES_PREFIX + "disk")
    assert type(ft.row_of) is _Index and type(ft.label_values["disk"]) is _Values
    ft.row_of["x"] = 1
    ft.label_values["disk"].append("x")
    assert "x" not in t.row_of and "x" not in t.label_values["disk"]
    for write in _container_writes(t):
        with pytest.raises(SharedWriteError):
            write()
    fork.snapshot._own_tree()
    fork.snapshot._row_zone[0] = 5
    assert s.snapshot._row_zone[0] != 5


def test_shared_containers_pickle_and_copy_as_writable_ones():
    s = build()
    fork = s.fork()
    t = s.snapshot.table
    for obj in (t.row_of, t._label_value_code["disk"], t.label_values["disk"], t._label_value_code,
                t.label_values):
        for deep, clone in ((True, pickle.loads(pickle.dumps(obj))), (False, copy.copy(obj)),
                            (True, copy.deepcopy(obj))):
            assert clone == obj and clone is not obj
            inners = list(clone.values()) if deep and type(clone) is dict else []  # (a key dict's)
            for inner in [clone] + inners:
                assert type(inner) not in (_SharedIndex, _SharedValues)
            if type(obj) is _SharedIndex:
                clone["x"] = 1  # writable
                assert "x" not in obj
    # a fork of a fork: still equal
    f2 = fork.fork()
    assert diff(containers(f2), containers(s)) == []


def test_a_fork_shares_a_table_container_reached_before_the_table():
    """A container some other part of the state holds (reached by the fork's walk before the
    table) is copied there, writable: the fork's table holds that copy and does not share it."""
    s = build()
    s._probe = (s.snapshot.table.row_of, s.snapshot.table.label_values["disk"])
    s.__dict__ = {"_probe": s.__dict__.pop("_probe"), **s.__dict__}  # (walked first)
    fork = s.fork()
    ft = fork.snapshot.table
    assert fork._probe[0] is ft.row_of and type(ft.row_of) is _Index and ROW_OF not in ft.shared_containers()
    assert fork._probe[1] is ft.label_values["disk"] and type(ft.label_values["disk"]) is _Values
    # (its value -> code dict is still shared: the pair is owned together, the list copied again)
    assert VALUES_PREFIX + "disk" in ft.shared_containers()
    assert ft._label_value_code["disk"] is s.snapshot.table._label_value_code["disk"]
    assert ROW_OF in s.snapshot.table.shared_containers()
    update_node(fork)  # a new value of "disk"
    add_nodes_new_label_values_and_key(fork)
    assert VALUES_PREFIX + "disk" not in ft.shared_containers()
    reference = build()
    update_node(reference)
    add_nodes_new_label_values_and_key(reference)
    assert diff(containers(fork), containers(reference)) == []


def test_no_fork_no_sharing():
    s = build()
    table = s.snapshot.table
    assert table.shared_columns() == frozenset() and table.shared_containers() == frozenset()
    assert all(table.__dict__[name].flags.writeable for name in SHARED_COLUMNS)
    assert table._acc.writable
    assert type(table.row_of) is _Index
    assert all(type(d) is _Index for d in table._label_value_code.values())
    assert all(type(v) is _Values for v in table.label_values.values())
    assert s.snapshot._row_zone.flags.writeable and not s.snapshot._tree_shared
