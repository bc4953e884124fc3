import copy

import pytest

from fastsched.framework import (Code, Status, StatusError, as_status, code_of, is_rejected,
                                 is_skip, is_success)
from fastsched.framework.status import SKIP, SUCCESS, SharedStatusError


@pytest.mark.parametrize("code,name", [
    (Code.SUCCESS, "Success"), (Code.ERROR, "Error"), (Code.UNSCHEDULABLE, "Unschedulable"),
    (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "UnschedulableAndUnresolvable"), (Code.WAIT, "Wait"),
    (Code.SKIP, "Skip"), (Code.PENDING, "Pending"),
])
def test_code_names_and_order(code, name):
    assert str(code) == name
    assert f"{code}" == name
    assert list(Code).index(code) == int(code)


def test_none_is_success():
    assert is_success(None)
    assert code_of(None) == Code.SUCCESS
    assert not is_rejected(None)
    assert as_status(None) is None


def test_message_joins_reasons_with_error_first():
    s = Status(Code.UNSCHEDULABLE, "a", "b").with_error(ValueError("boom"))
    assert s.reasons() == ["boom", "a", "b"]
    assert s.message() == "boom, a, b"
    s.append_reason("c")
    assert s.message() == "boom, a, b, c"


@pytest.mark.parametrize("code,rejected", [
    (Code.SUCCESS, False), (Code.ERROR, False), (Code.UNSCHEDULABLE, True),
    (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, True), (Code.WAIT, False), (Code.SKIP, False),
    (Code.PENDING, True),
])
def test_is_rejected(code, rejected):
    assert Status(code).is_rejected() is rejected


def test_as_error():
    for c in (Code.SUCCESS, Code.WAIT, Code.SKIP):
        assert Status(c, "x").as_error() is None
    err = Status(Code.UNSCHEDULABLE, "no fit").as_error()
    assert isinstance(err, StatusError) and str(err) == "no fit"
    wrapped = KeyError("k")
    assert Status(Code.ERROR).with_error(wrapped).as_error() is wrapped


def test_as_status_wraps_errors():
    s = as_status(RuntimeError("broken"))
    assert s.code() == Code.ERROR and s.message() == "broken"
    assert as_status("text").message() == "text"


def test_plugin_and_equality():
    a = Status(Code.UNSCHEDULABLE, "r").with_plugin("P")
    b = Status(Code.UNSCHEDULABLE, "r")
    assert a != b
    b.set_plugin("P")
    assert a == b
    assert a.plugin() == "P"
    assert Status() == None  # noqa: E711 - an empty Success equals nil, as upstream's Equal
    assert Status(Code.ERROR).with_error(ValueError("x")) == Status(Code.ERROR).with_error(ValueError("x"))
    assert Status(Code.ERROR).with_error(ValueError("x")) != Status(Code.ERROR).with_error(ValueError("y"))
    assert "Unschedulable" in repr(a)


# -- the shared Success and Skip statuses ---------------------------------------------------------------
def _unchanged(shared, code):
    return (shared.code() == code and shared.reasons() == [] and shared.plugin() == "" and shared.err() is None
            and shared.message() == "")


@pytest.mark.parametrize("shared,code", [(SKIP, Code.SKIP), (SUCCESS, Code.SUCCESS)], ids=["SKIP", "SUCCESS"])
def test_shared_status_is_never_changed_in_place(shared, code):
    with pytest.raises(SharedStatusError):
        shared.set_plugin("P")
    with pytest.raises(SharedStatusError):
        shared.append_reason("r")
    named = shared.with_plugin("P")  # a changed copy, as a caller using the returned value expects
    assert named is not shared and type(named) is Status and named.plugin() == "P" and named.code() == code
    wrapped = shared.with_error(ValueError("x"))
    assert wrapped is not shared and wrapped.err() is not None
    shared.reasons().append("r")  # reasons() hands out a copy
    copied = shared.copy()
    copied.set_plugin("Q")
    copied.append_reason("r")
    assert copy.copy(shared) is not shared and copy.deepcopy(shared) is not shared
    assert _unchanged(shared, code)


def test_shared_statuses_equal_fresh_ones():
    assert SKIP == Status(Code.SKIP) and SKIP.is_skip() and is_skip(SKIP)
    assert SUCCESS == Status() and SUCCESS == None and is_success(SUCCESS)  # noqa: E711
    assert SKIP != Status(Code.SKIP, "why")
    assert isinstance(SKIP, Status) and SKIP.as_error() is None


def test_shared_statuses_survive_scheduling():
    """An audit in practice: runs that pass SKIP through every framework path leave it unchanged."""
    from fastsched import Scheduler
    from fastsched.testing import make_node, make_pod

    s = Scheduler(seed=0)
    s.add_nodes([make_node("n1", cpu="1", memory="1Gi"), make_node("n2", cpu="2", memory="1Gi")])
    s.add_pods([make_pod(f"p{i}", cpu="300m") for i in range(12)])  # some fit, the rest fail (preemption runs)
    results = s.run()
    assert any(r.scheduled for r in results) and not all(r.scheduled for r in results)
    assert _unchanged(SKIP, Code.SKIP) and _unchanged(SUCCESS, Code.SUCCESS)
