"""Forks share the node table's columns copy-on-write (fastsched/snapshot/table.py, "Forks").

A fork and its original hold the same read-only arrays until one side writes a column: that side
then copies it (its own, writable). Checked here: what is shared right after a fork and after each
kind of write; that no write on either side (binds, deletions, node adds / updates / removals, new
label keys and resources, growth) ever shows on the other; that each side ends exactly where a
scheduler never forked ends; and that a write path which forgot to take ownership fails loudly.
"""
from __future__ import annotations

import numpy as np
import pytest

from fastsched import Scheduler
from fastsched.sim.generators import upstream_nodes
from fastsched.snapshot.table import ACCOUNTS_COLUMNS, LABEL_PREFIX, SHARED_COLUMNS, SHAPE_COLUMNS
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


def grow(s):  # past the row capacity: every row column reallocated
    s.add_nodes(upstream_nodes(200, prefix="more-"))
    s.run()


def read_only(s):  # reads that build lazy objects (Nodes, PodInfo lists) write some columns
    s.nodes()
    table = s.snapshot.table
    for row in range(len(table.pods)):
        table.pods[row]


OPERATIONS = [bind_pods, bulk_pods, delete_pod, add_node, add_node_new_label_key_and_resource, update_node,
              update_templated_node, remove_node, remove_templated_node, grow, read_only]


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
    before = columns(s)

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
    # the original did not change (and still shares what it shared)
    assert same_columns(columns(s), before) == []
    assert table.shared_columns() == expected

    # the original's own writes copy its columns too, and leave the fork's alone
    fork_before = columns(fork)
    bind_pods(s)
    assert same_columns(columns(fork), fork_before) == []
    assert not np.shares_memory(table.requested, ft.requested)
    assert table.alloc is ft.alloc


@pytest.mark.parametrize("op", OPERATIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("writer", ["fork", "original"])
def test_writes_on_either_side_never_show_on_the_other(op, writer):
    s = build()
    fork = s.fork()
    reference = build()  # never forked
    target, other = (fork, s) if writer == "fork" else (s, fork)
    other_before, other_placements = columns(other), placements(other)
    op(target)
    op(reference)
    assert same_columns(columns(other), other_before) == []
    assert placements(other) == other_placements
    assert same_columns(columns(target), columns(reference)) == []
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
        assert same_columns(columns(sched), columns(twin)) == []
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
        assert placements(sched) == placements(twins[id(sched)])


def test_transactions_share_columns_and_revert_exactly():
    s = build()
    before = columns(s)
    with s.transaction():
        bind_pods(s)
        remove_node(s)
        add_node_new_label_key_and_resource(s)
        assert same_columns(columns(s), before) != []
    assert same_columns(columns(s), before) == []
    reference = build()
    bind_pods(s)
    bind_pods(reference)
    assert same_columns(columns(s), columns(reference)) == []


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


def test_no_fork_no_sharing():
    s = build()
    table = s.snapshot.table
    assert table.shared_columns() == frozenset()
    assert all(table.__dict__[name].flags.writeable for name in SHARED_COLUMNS)
    assert table._acc.writable
