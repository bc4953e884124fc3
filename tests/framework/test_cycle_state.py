import pytest

from fastsched.framework import CycleState, NotFoundError


class Counter:
    def __init__(self, n):
        self.n = n

    def clone(self):
        return Counter(self.n)


def test_read_write_delete():
    s = CycleState()
    with pytest.raises(NotFoundError):
        s.read("k")
    s.write("k", Counter(1))
    assert s.read("k").n == 1
    assert "k" in s
    s.delete("k")
    assert "k" not in s
    s.delete("k")  # deleting a missing key is fine
    assert s.get("k", 7) == 7


def test_clone_clones_each_value_and_copies_flags():
    s = CycleState()
    c1 = Counter(1)
    shared = object()  # no clone(): shared by reference
    s.write("c", c1)
    s.write("o", shared)
    s.set_skip_filter_plugins({"A"})
    s.set_skip_score_plugins({"B"})
    s.set_skip_pre_bind_plugins({"C"})
    s.set_record_plugin_metrics(True)
    c = s.clone()
    assert c.read("c") is not c1 and c.read("c").n == 1
    c.read("c").n = 5
    assert s.read("c").n == 1
    assert c.read("o") is shared
    assert c.get_skip_filter_plugins() == {"A"}
    assert c.get_skip_score_plugins() == {"B"}
    assert c.get_skip_pre_bind_plugins() == {"C"}
    assert c.should_record_plugin_metrics()
    c.write("new", 1)
    assert "new" not in s
