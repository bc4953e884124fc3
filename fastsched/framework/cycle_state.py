"""CycleState: per-scheduling-cycle storage shared by plugins (upstream ``cycle_state.go``)."""
from __future__ import annotations

from typing import Any, Protocol


class StateData(Protocol):
    """A value stored in CycleState. ``clone()`` is called by :meth:`CycleState.clone`."""

    def clone(self) -> "StateData": ...


class NotFoundError(KeyError):
    """Raised by :meth:`CycleState.read` for a missing key (upstream ``ErrNotFound``)."""

    def __str__(self) -> str:
        return "not found"


class CycleState:
    """Key/value storage for one scheduling cycle, plus the skip sets the runtime maintains.

    Reads and writes are thread-safe; values are owned by the plugins that write them.
    """

    # No lock: every operation below is one dict operation, atomic under the GIL (and guarded by
    # the dict's own lock on free-threaded builds), which is all the Parallelizer's workers need
    # (upstream uses a sync.Map). A lock here cost two acquire/release pairs per read or write on
    # the single-threaded path, several times per pod.
    __slots__ = ("storage", "record_plugin_metrics", "skip_filter_plugins",
                 "skip_score_plugins", "skip_pre_bind_plugins")

    def __init__(self) -> None:
        #: the key/value storage itself (upstream's ``sync.Map``). Plugins go through the
        #: upstream accessors below (``read``/``write``/``delete``, ``get`` and ``in`` beside
        #: them); the scheduler's own per-pod reads and writes (schedule_one's PodsToActivate,
        #: the compiled cycle's pod-group key) use it directly: one dict operation each, where a
        #: method's frame measured ~450 instructions a call, several times per pod.
        self.storage: dict[str, Any] = {}
        #: whether this cycle's plugin durations are recorded (upstream samples 10% of cycles);
        #: a plain field like the skip sets below, so the runtime, the binding kernel and the
        #: scheduler read it in one attribute load per plugin call, not through a private name
        #: from outside the class; ``should_record_plugin_metrics``/``set_record_plugin_metrics``
        #: are upstream's accessors of it
        self.record_plugin_metrics = False
        #: plugins whose PreFilter returned Skip: their Filter and AddPod/RemovePod do not run
        self.skip_filter_plugins: frozenset[str] = _EMPTY
        #: plugins whose PreScore returned Skip: their Score does not run
        self.skip_score_plugins: frozenset[str] = _EMPTY
        #: plugins whose PreBindPreFlight returned Skip: their PreBind does not run
        self.skip_pre_bind_plugins: frozenset[str] = _EMPTY

    # -- storage -------------------------------------------------------------------------------
    def read(self, key: str) -> Any:
        """The value stored under ``key``; raises :class:`NotFoundError` when absent."""
        try:
            return self.storage[key]
        except KeyError:
            raise NotFoundError(key) from None

    def get(self, key: str, default: Any = None) -> Any:
        """The value under ``key`` or ``default`` (a Python convenience beside ``read``)."""
        return self.storage.get(key, default)

    def write(self, key: str, value: Any) -> None:
        """Store ``value`` under ``key``."""
        self.storage[key] = value

    def delete(self, key: str) -> None:
        """Remove ``key`` if present."""
        self.storage.pop(key, None)

    def clone(self) -> "CycleState":
        """A copy whose values are each value's ``clone()`` (values without one are shared)."""
        c = CycleState()
        storage = c.storage
        for k, v in list(self.storage.items()):  # one atomic copy: a concurrent write cannot break the loop
            cl = getattr(v, "clone", None)
            storage[k] = cl() if callable(cl) else v
        c.record_plugin_metrics = self.record_plugin_metrics
        c.skip_filter_plugins = self.skip_filter_plugins
        c.skip_score_plugins = self.skip_score_plugins
        c.skip_pre_bind_plugins = self.skip_pre_bind_plugins
        return c

    # -- upstream accessor names -------------------------------------------------------------------
    def should_record_plugin_metrics(self) -> bool:
        return self.record_plugin_metrics

    def set_record_plugin_metrics(self, flag: bool) -> None:
        self.record_plugin_metrics = bool(flag)

    def get_skip_filter_plugins(self) -> frozenset[str]:
        return self.skip_filter_plugins

    def set_skip_filter_plugins(self, plugins) -> None:
        self.skip_filter_plugins = frozenset(plugins)

    def get_skip_score_plugins(self) -> frozenset[str]:
        return self.skip_score_plugins

    def set_skip_score_plugins(self, plugins) -> None:
        self.skip_score_plugins = frozenset(plugins)

    def get_skip_pre_bind_plugins(self) -> frozenset[str]:
        return self.skip_pre_bind_plugins

    def set_skip_pre_bind_plugins(self, plugins) -> None:
        self.skip_pre_bind_plugins = frozenset(plugins)

    def __contains__(self, key: str) -> bool:
        return key in self.storage


_EMPTY: frozenset[str] = frozenset()
