"""DefaultBinder (upstream ``pkg/scheduler/framework/plugins/defaultbinder/default_binder.go``, v1.34).

Upstream builds a ``v1.Binding`` for the pod and POSTs it to the pods/binding subresource (or hands
it to the API cacher); an API error becomes an Error status. fastsched has no API server: Bind goes
through ``handle.client.bind(pod, node_name)``, an object the scheduler's cache provides, and an
exception raised by it becomes an Error status carrying the exception's message. When the handle
has no client (``handle.client is None``, e.g. a framework built for tests or a dry run), Bind
succeeds and records nothing: the caller owns the bookkeeping of where the pod went.
"""
from __future__ import annotations

from typing import Any

from ...framework import protocols as fwk
from ...framework.cycle_state import CycleState
from ...framework.interface import BindPlugin
from ...framework.status import Status

NAME = "DefaultBinder"


def binding_for(pod: Any, node_name: str) -> dict:
    """The ``v1.Binding`` upstream sends for ``pod`` and ``node_name``, as a manifest dict."""
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"namespace": pod.namespace, "name": pod.name, "uid": pod.uid},
        "target": {"kind": "Node", "name": node_name},
    }


class DefaultBinder(BindPlugin):
    """Binds the pod to the chosen node through the handle's client."""

    def __init__(self, handle: fwk.Handle | None = None):
        self._handle = handle

    def name(self) -> str:
        return NAME

    def bind(self, state: CycleState, pod: Any, node_name: str) -> Status | None:
        client = getattr(self._handle, "client", None)
        if client is None:
            return None
        # upstream POSTs binding_for(pod, node_name); the client takes its target, the node name,
        # directly (no Binding dict built on every cycle)
        try:
            client.bind(pod, node_name)
        except Exception as e:  # noqa: BLE001 - upstream turns any API error into an Error status
            return Status.from_error(e)
        return None


def new(args: Any, handle: fwk.Handle | None) -> DefaultBinder:
    """Upstream ``New``: the plugin takes no args."""
    return DefaultBinder(handle)


__all__ = ["NAME", "DefaultBinder", "binding_for", "new"]
