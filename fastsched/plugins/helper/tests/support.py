"""Test support shared by the plugin test suites: a one-plugin framework and random generators
aimed at NodeAffinity, TaintToleration and NodePorts (richer than ``fastsched.testing.random_pod``).

The profile needs a QueueSort and a Bind plugin; while PrioritySort / DefaultBinder are not in the
in-tree registry yet, minimal stand-ins take their place (they never affect Filter or Score).
"""
from __future__ import annotations

import importlib
import random
from typing import Any, Callable

from fastsched.api import (Affinity, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Pod,
                           PreferredSchedulingTerm, Toleration)
from fastsched.framework.interface import BindPlugin, QueueSortPlugin
from fastsched.plugins import IN_TREE_PLUGINS, in_tree_registry
from fastsched.runtime import Registry, new_framework
from fastsched.testing import TAINT_POOL, single_plugin_profile


class _QueueSortAndBindStandIn(QueueSortPlugin, BindPlugin):
    def __init__(self, plugin_name: str):
        self._name = plugin_name

    def name(self) -> str:
        return self._name

    def less(self, a: Any, b: Any) -> bool:
        return False

    def bind(self, state: Any, pod: Any, node_name: str) -> None:
        return None


def _registry_with(plugin: str) -> Registry:
    """The in-tree registry; while a sibling plugin package is half-written (it cannot be
    registered yet), a registry holding just ``plugin``, found the way the in-tree registry finds it."""
    try:
        return in_tree_registry()
    except (AttributeError, ImportError):
        module = importlib.import_module(f"fastsched.plugins.{dict(IN_TREE_PLUGINS)[plugin]}")
        factories = getattr(module, "FACTORIES", None)
        return Registry({plugin: factories[plugin] if factories is not None else module.new})


def _stand_in_factory(name: str) -> Callable[[Any, Any], _QueueSortAndBindStandIn]:
    return lambda _args, _handle: _QueueSortAndBindStandIn(name)


def single_plugin_framework(plugin: str, args: Any = None, **profile_options: Any) -> Any:
    """``new_framework(in_tree_registry(), single_plugin_profile(plugin, args=args, ...))``."""
    registry = _registry_with(plugin)
    for stand_in in ("PrioritySort", "DefaultBinder"):
        if stand_in not in registry:
            registry.register(stand_in, _stand_in_factory(stand_in))
    return new_framework(registry, single_plugin_profile(plugin, args=args, **profile_options))


# ------------------------------------------------------------------------------------------------
# targeted random generators (richer than fastsched.testing.random_pod for these plugins)
# ------------------------------------------------------------------------------------------------
LABEL_KEYS = ("disktype", "tier", "gpu", "topology.kubernetes.io/zone", "missing", "Bad Key")
LABEL_VALUES = ("ssd", "hdd", "nvme", "true", "zone-a", "zone-b", "0", "3", "5", "high", "", "bad value!")
OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Bogus")


def random_requirement(rng: random.Random) -> NodeSelectorRequirement:
    """A matchExpressions requirement: every operator, now and then an invalid one."""
    op = rng.choice(OPERATORS)
    key = rng.choice(LABEL_KEYS) if rng.random() < 0.1 else rng.choice(LABEL_KEYS[:5])
    if op in ("Gt", "Lt"):
        values = [str(rng.randint(-1, 6))] if rng.random() < 0.9 else rng.sample(["1", "x", "2"], k=rng.randint(0, 2))
    elif op in ("Exists", "DoesNotExist"):
        values = [] if rng.random() < 0.9 else ["ssd"]
    else:
        values = (rng.sample(LABEL_VALUES[:10], k=rng.randint(1, 3)) if rng.random() < 0.95
                  else [rng.choice(LABEL_VALUES)])
    return NodeSelectorRequirement(key, op, values)


def random_field_requirement(rng: random.Random, n_nodes: int = 40) -> NodeSelectorRequirement:
    """A matchFields requirement, mostly ``metadata.name In [one node]``."""
    key = "metadata.name" if rng.random() < 0.85 else "metadata.namespace"
    op = rng.choice(("In", "In", "NotIn", "Gt"))
    values = ([f"node-{rng.randint(0, n_nodes):05d}"] if rng.random() < 0.9
              else [f"node-{rng.randint(0, n_nodes):05d}", f"node-{rng.randint(0, n_nodes):05d}"])
    return NodeSelectorRequirement(key, op, values)


def random_term(rng: random.Random, fields: bool = True) -> NodeSelectorTerm:
    expressions = [random_requirement(rng) for _ in range(rng.choice((0, 1, 1, 2, 3)))]
    match_fields = [random_field_requirement(rng) for _ in range(rng.choice((0, 0, 0, 1, 2)) if fields else 0)]
    return NodeSelectorTerm(expressions, match_fields)


def random_selector(rng: random.Random) -> NodeSelector:
    return NodeSelector(random_term(rng) for _ in range(rng.randint(0, 3)))


def random_preferred_terms(rng: random.Random) -> tuple[PreferredSchedulingTerm, ...]:
    return tuple(PreferredSchedulingTerm(rng.choice((0, 1, 3, 7, 50, 100)), random_term(rng))
                 for _ in range(rng.randint(1, 4)))


def random_affinity_pod(rng: random.Random, i: int, *, valid_preferred: bool = False) -> Pod:
    """A pod with a random nodeSelector map and random required/preferred node affinity."""
    node_selector = None
    roll = rng.random()
    if roll < 0.3:
        node_selector = {"disktype": rng.choice(("ssd", "hdd", "floppy"))}
    elif roll < 0.4:
        node_selector = {}
    required = random_selector(rng) if rng.random() < 0.6 else None
    preferred: tuple[PreferredSchedulingTerm, ...] = ()
    if rng.random() < 0.7:
        preferred = random_preferred_terms(rng)
        if valid_preferred:
            preferred = tuple(t for t in preferred if not t.preference.parse_errors)
    affinity = None
    if required is not None or preferred:
        affinity = Affinity(node_affinity=NodeAffinity(required=required, preferred=preferred))
    return Pod(name=f"affinity-{i}", node_selector=node_selector, affinity=affinity)


def random_tolerations(rng: random.Random) -> tuple[Toleration, ...]:
    """Tolerations for the testing taint pool: keys, empty keys, Exists/Equal, empty values/effects."""
    tolerations = []
    for taint in rng.sample(TAINT_POOL, k=rng.randint(0, 3)):
        operator = rng.choice(("Equal", "Exists", ""))
        value = taint.get("value", "") if rng.random() < 0.8 else "other"
        effect = rng.choice((taint["effect"], taint["effect"], "", "NoSchedule", "PreferNoSchedule"))
        tolerations.append(Toleration(key=taint["key"], operator=operator,
                                      value="" if operator == "Exists" else value, effect=effect))
    if rng.random() < 0.05:
        tolerations.append(Toleration(operator="Exists"))
    if rng.random() < 0.05:
        tolerations.append(Toleration(operator="Exists", effect=rng.choice(("NoSchedule", "PreferNoSchedule"))))
    return tuple(tolerations)


def random_toleration_pod(rng: random.Random, i: int) -> Pod:
    return Pod(name=f"tolerating-{i}", tolerations=random_tolerations(rng))


HOST_IPS = ("", "0.0.0.0", "127.0.0.1", "10.0.0.1")
HOST_PORT_NUMBERS = (80, 443, 8080)


def random_ports_manifest(rng: random.Random, k: int) -> list[dict]:
    ports = []
    for _ in range(k):
        port: dict[str, Any] = {"containerPort": 1, "hostPort": rng.choice(HOST_PORT_NUMBERS)}
        ip = rng.choice(HOST_IPS)
        if ip:
            port["hostIP"] = ip
        protocol = rng.choice(("", "TCP", "UDP"))
        if protocol:
            port["protocol"] = protocol
        ports.append(port)
    return ports


def random_port_pod(rng: random.Random, i: int, node_name: str | None = None) -> Pod:
    """A pod with host ports on random IPs/protocols, sometimes in (sidecar) init containers."""
    containers = [{"name": "c", "image": "busybox", "ports": random_ports_manifest(rng, rng.randint(0, 2))}]
    init = []
    if rng.random() < 0.3:
        init_container: dict[str, Any] = {"name": "i", "image": "busybox", "ports": random_ports_manifest(rng, 1)}
        if rng.random() < 0.5:
            init_container["restartPolicy"] = "Always"  # a sidecar: its ports count
        init.append(init_container)
    spec: dict[str, Any] = {"containers": containers}
    if init:
        spec["initContainers"] = init
    if node_name is not None:
        spec["nodeName"] = node_name
    return Pod.from_manifest({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"ports-{i}"}, "spec": spec},
                            validate=False)


__all__ = ["single_plugin_framework", "random_requirement", "random_field_requirement", "random_term",
           "random_selector", "random_preferred_terms", "random_affinity_pod", "random_tolerations",
           "random_toleration_pod", "random_port_pod"]
