import pytest

from fastsched.framework import (Code, Status, StatusError, as_status, code_of, is_rejected,
                                 is_success)


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
