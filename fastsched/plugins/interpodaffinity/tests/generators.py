"""Seeded pods with pod (anti-)affinity terms for the InterPodAffinity tests and benchmark.

Terms use ``kubernetes.io/hostname``, ``topology.kubernetes.io/zone`` (missing on ~10% of the random
nodes) and a key no node has; selectors mix matchLabels, matchExpressions, ``{}`` (everything) and
unset (nothing); namespaces lists and namespaceSelectors (unset, ``{}``, by labels) vary, and pods
live in namespaces with labels, without labels, or unknown to the framework.
"""
from __future__ import annotations

import random

from typing import Any

from ....api import Namespace, Node, Pod
from ....testing import make_pod, random_node

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
ABSENT_KEY = "example.com/rack"

#: namespaces known to the framework (their labels feed namespaceSelectors)
NAMESPACES = {name: Namespace(name=name, labels=labels) for name, labels in (
    ("default", {"env": "dev"}), ("prod", {"env": "prod", "tier": "1"}), ("dev", {"env": "dev"}))}
EXISTING_POD_NAMESPACES = ("default", "default", "prod", "dev")
INCOMING_POD_NAMESPACES = ("default", "default", "prod", "dev", "unknown")
APPS = ("web", "db", "cache", "batch")


def random_selector(rng: random.Random) -> dict | None:
    r = rng.random()
    if r < 0.4:
        return {"matchLabels": {"app": rng.choice(APPS)}}
    if r < 0.6:
        return {"matchExpressions": [{"key": "app", "operator": rng.choice(("In", "NotIn")),
                                      "values": rng.sample(APPS, 2)}]}
    if r < 0.7:
        return {"matchExpressions": [{"key": "team", "operator": rng.choice(("Exists", "DoesNotExist"))}]}
    if r < 0.85:
        return {}
    return None


def random_term(rng: random.Random) -> dict:
    term: dict = {"topologyKey": rng.choice((HOSTNAME, HOSTNAME, ZONE, ZONE, ZONE, ABSENT_KEY))}
    selector = random_selector(rng)
    if selector is not None:
        term["labelSelector"] = selector
    if rng.random() < 0.2:
        term["namespaces"] = rng.sample(("default", "prod", "dev"), rng.randint(1, 2))
    r = rng.random()
    if r < 0.15:
        term["namespaceSelector"] = {}
    elif r < 0.3:
        term["namespaceSelector"] = {"matchLabels": {"env": rng.choice(("prod", "dev"))}}
    elif r < 0.35:
        term["namespaceSelector"] = {"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}
    return term


def random_pod_affinity(rng: random.Random, p_required: float = 0.5) -> dict:
    """An ``affinity`` manifest with podAffinity and/or podAntiAffinity (possibly empty)."""
    affinity: dict = {}
    for kind in ("podAffinity", "podAntiAffinity"):
        if rng.random() < 0.5:
            continue
        spec: dict = {}
        if rng.random() < p_required:
            spec["requiredDuringSchedulingIgnoredDuringExecution"] = [
                random_term(rng) for _ in range(rng.randint(1, 2))]
        if rng.random() < 0.5:
            spec["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": rng.randint(1, 100), "podAffinityTerm": random_term(rng)}
                for _ in range(rng.randint(1, 2))]
        affinity[kind] = spec
    return affinity


def random_labels(rng: random.Random) -> dict:
    labels = {"app": rng.choice(APPS)}
    if rng.random() < 0.5:
        labels["team"] = rng.choice(("a", "b"))
    return labels


def random_existing_pod(rng: random.Random, i: int, node_name: str) -> Pod:
    spec: dict = {}
    if rng.random() < 0.4:
        affinity = random_pod_affinity(rng)
        if affinity:
            spec["affinity"] = affinity
    if rng.random() < 0.03:
        spec["terminating"] = True
    terminating = spec.pop("terminating", False)
    pod = make_pod(f"existing-{i:05d}", namespace=rng.choice(EXISTING_POD_NAMESPACES),
                   labels=random_labels(rng), node_name=node_name, **spec)
    return pod.replace(deletion_timestamp=1.0e9) if terminating else pod


def random_incoming_pod(rng: random.Random, i: int) -> Pod:
    spec: dict = {}
    affinity = random_pod_affinity(rng, p_required=0.6)
    if affinity:
        spec["affinity"] = affinity
    return make_pod(f"incoming-{i}", namespace=rng.choice(INCOMING_POD_NAMESPACES), labels=random_labels(rng),
                    **spec)


def random_affinity_cluster(seed: int, n_nodes: int = 250, n_pods: int = 500) -> tuple[list[Node], list[Pod]]:
    rng = random.Random(seed)
    nodes = [random_node(rng, i) for i in range(n_nodes)]
    pods = [random_existing_pod(rng, i, rng.choice(nodes).name) for i in range(n_pods)]
    return nodes, pods


def random_change(rng: random.Random, snap: Any, on_table: dict[str, Pod], namespaces: dict[str, Namespace],
                  ids: dict[str, int], step: int) -> None:
    """One seeded change of a snapshot's cluster between cycles: pods come (some with label or
    affinity signatures the table has not seen) or go, a pod's labels change, a node comes, a
    namespace is relabelled or added (namespaceSelectors, existing pods' terms), or the table
    forgets every kept subscription. ``on_table`` (uid -> pod) follows the pods; ``ids`` holds the
    next ``"pod"`` and ``"node"`` numbers."""
    table = snap.table
    op = rng.random()
    names = list(table.row_of)
    if op < 0.35 and names:
        batch_pods = [random_existing_pod(rng, ids["pod"] + j, rng.choice(names)) for j in range(rng.randint(1, 4))]
        ids["pod"] += len(batch_pods)
        for p in batch_pods:
            snap.add_pod(p)
            on_table[p.uid] = p
    elif op < 0.6 and on_table:
        for _ in range(rng.randint(1, 3)):
            if on_table:
                snap.remove_pod(on_table.pop(rng.choice(sorted(on_table))))
    elif op < 0.7 and on_table:
        old = on_table.pop(rng.choice(sorted(on_table)))
        snap.remove_pod(old)
        new = old.replace(labels=random_labels(rng))
        snap.add_pod(new)
        on_table[new.uid] = new
    elif op < 0.78:
        snap.add_node(random_node(rng, ids["node"]))
        ids["node"] += 1
    elif op < 0.88:
        name = rng.choice(("prod", "dev", "default", f"extra{step}"))
        namespaces[name] = Namespace(name=name, labels={"env": rng.choice(("prod", "dev")),
                                                        **({"tier": "1"} if rng.random() < 0.5 else {})})
    elif op < 0.94:
        table.drop_subscriptions()
