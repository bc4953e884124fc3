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


def test_concurrent_writes_reads_and_clones_without_a_lock():
    """CycleState has no lock: each operation is one dict operation (atomic under the GIL), and
    clone() copies the items in one step, so workers writing while another thread clones are safe."""
    import threading

    s = CycleState()
    assert not hasattr(s, "_lock")
    errors = []

    def writer(k):
        try:
            for i in range(1500):
                s.write(f"{k}-{i}", Counter(i))
                s.get(f"{k}-{i // 2}")
                if i % 3 == 0:
                    s.delete(f"{k}-{i}")
        except Exception as e:  # pragma: no cover - the failure the test looks for
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    clones = [s.clone() for _ in range(50)]
    for t in threads:
        t.join()
    assert not errors
    assert len(s.storage) == 4 * 1000 and all(len(c.storage) <= 4 * 1500 for c in clones)


def test_storage_is_what_the_accessors_read_and_write():
    """schedule_one and the compiled cycle use ``storage`` directly: it is the accessors' store,
    and clone() copies it."""
    s = CycleState()
    s.storage["a"] = 1
    assert s.read("a") == 1 and s.get("a") == 1 and "a" in s
    s.write("b", 2)
    assert s.storage.get("b") == 2
    s.delete("a")
    assert "a" not in s.storage and s.clone().storage == {"b": 2}


def test_record_plugin_metrics_field_is_what_the_upstream_accessors_read_and_write():
    """``record_plugin_metrics`` is the public field the runtime, the binding kernel and the
    scheduler read; upstream's accessors are views of it, and a clone carries it."""
    s = CycleState()
    assert s.record_plugin_metrics is False and not s.should_record_plugin_metrics()
    s.record_plugin_metrics = True
    assert s.should_record_plugin_metrics() is True
    s.set_record_plugin_metrics(0)
    assert s.record_plugin_metrics is False  # the setter stores a bool, as upstream's field is one
    s.set_record_plugin_metrics("yes")
    assert s.record_plugin_metrics is True and s.clone().record_plugin_metrics is True
    assert not hasattr(s, "_record_plugin_metrics")
