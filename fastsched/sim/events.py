"""The scenario's timeline events and the node events of its ``events:`` list.

:class:`PodArrival`, :class:`NodeAdd`, :class:`NodeDrain` and :class:`NodeRemove` are what a
:class:`~fastsched.sim.scenario.Timeline` yields and the simulation loop consumes;
:class:`NodeEvent` is one parsed entry of a scenario's ``events:``. They sit apart from
:mod:`fastsched.sim.scenario` because both the scenario and its arrival streams
(:mod:`fastsched.sim.streams`) make them, and the streams must not import the scenario that
parses them. ``fastsched.sim.scenario`` re-exports the public names.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Sequence

from ..api import Node, Pod
from .generators import NodeShape
from .spec import Fields, SpecError, child

__all__ = ["PodArrival", "NodeAdd", "NodeDrain", "NodeRemove", "NodeEvent", "requeued", "parse_event"]


# --------------------------------------------------------------------------------------------
# timeline events
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PodArrival:
    """A pod is created at ``time``; once bound it runs ``duration`` seconds (None: forever)."""

    time: float
    pod: Pod
    duration: float | None
    stream: str = ""
    #: PersistentVolumeClaim manifests the pod mounts (the stream's ``claims``, not ephemeral),
    #: created with the pod when they do not exist yet
    claims: tuple[dict, ...] = ()
    #: names of those claims deleted once the pod ends for good (``when_deleted: Delete``)
    delete_claims: tuple[str, ...] = ()
    #: a gang stream's member (:mod:`fastsched.sim.gangs`): its PodGroup manifest, created with
    #: the gang's first member (None for the others)
    group: dict | None = None
    #: a gang stream's member: its PodGroup's name ("" for other pods)
    gang: str = ""
    ORDER: ClassVar[int] = 3


@dataclass(frozen=True)
class NodeAdd:
    time: float
    nodes: tuple[Node, ...]
    ORDER: ClassVar[int] = 0


@dataclass(frozen=True)
class NodeDrain:
    """Cordon the nodes and evict their pods (which re-arrive when ``reschedule``)."""

    time: float
    node_names: tuple[str, ...]
    reschedule: bool = True
    ORDER: ClassVar[int] = 1


@dataclass(frozen=True)
class NodeRemove:
    """Delete the nodes; their pods go too (and re-arrive when ``reschedule``)."""

    time: float
    node_names: tuple[str, ...]
    reschedule: bool = True
    ORDER: ClassVar[int] = 2


def requeued(pod: Pod) -> Pod:
    """The unbound copy of an evicted pod that arrives again (same name and uid)."""
    return pod.replace(node_name="", nominated_node_name="", phase="", start_time=None, deletion_timestamp=None)



# --------------------------------------------------------------------------------------------
# node events
# --------------------------------------------------------------------------------------------
@dataclass
class NodeEvent:
    time: float
    action: str  # add | drain | remove
    path: str
    index: int
    count: int | None = None
    nodes: tuple[str, ...] = ()
    selector: dict[str, str] = field(default_factory=dict)
    shape: NodeShape | None = None
    reschedule: bool = True


def parse_event(raw: Any, path: str, index: int, shapes: Sequence[NodeShape], generated: bool) -> NodeEvent:
    f = Fields(raw, path, ("at", "time", "add", "drain", "remove"))
    if "at" in f and "time" in f:
        raise SpecError(f.at("time"), "give at or time, not both")
    if "at" not in f and "time" not in f:
        raise SpecError(f.at("at"), "required (seconds from the start)")
    time = f.number("at" if "at" in f else "time", minimum=0)
    actions = [a for a in ("add", "drain", "remove") if a in f]
    if len(actions) != 1:
        raise SpecError(path, "needs exactly one of add, drain, remove")
    action = actions[0]
    apath = f.at(action)
    if action == "add":
        g = Fields(f.get("add"), apath, ("count", "shape"))
        count = g.number("count", 1, minimum=1, integer=True)
        shape = None
        if "shape" in g:
            value = g.get("shape")
            if isinstance(value, str):
                named = [s for s in shapes if s.name == value]
                if not named:
                    raise SpecError(g.at("shape"), f"no cluster shape named {value!r} "
                                                   f"(known: {', '.join(s.name for s in shapes if s.name) or 'none'})")
                shape = named[0]
            else:
                shape = NodeShape.from_dict(value, g.at("shape"))
        elif not generated:
            raise SpecError(g.at("shape"), "required when the cluster comes from manifests")
        return NodeEvent(time, action, path, index, count=count, shape=shape)
    g = Fields(f.get(action), apath, ("count", "nodes", "selector", "reschedule"))
    if ("count" in g) == ("nodes" in g):
        raise SpecError(apath, "needs exactly one of count, nodes")
    nodes = ()
    if "nodes" in g:
        names = g.list("nodes")
        if not names:
            raise SpecError(g.at("nodes"), "must not be empty")
        for i, n in enumerate(names):
            if not isinstance(n, str) or not n:
                raise SpecError(child(g.at("nodes"), i), "must be a node name")
        nodes = tuple(names)
        if "selector" in g:
            raise SpecError(g.at("selector"), "only applies with count")
    return NodeEvent(time, action, path, index, count=g.number("count", None, minimum=1, integer=True),
                     nodes=nodes, selector=g.label_map("selector"), reschedule=g.boolean("reschedule", True))
