"""Nothing a fork can reach refers to an object of the original Scheduler that the fork copied.

The fork copier shares functions (they are immutable) and copies a bound method with a copy of its
``__self__``; a closure over ``self`` stored in plugin or controller state is therefore shared
as it is, and keeps reading the original Scheduler (VolumeBinding's binder did: a fork read the
original's claims). This test records every object the copier replaced, then walks everything
reachable from the fork -- attributes, slots, containers, closure cells, default arguments,
bound methods' ``__self__``, partials, weak references -- and fails on any of them, with the path.
"""
from __future__ import annotations

import functools
import types
import weakref
from collections import deque

import numpy as np

from fastsched import Scheduler
from fastsched.scheduler import fork as fork_module
from fastsched.sim.gpu import GPUNodePool, gpu_claim_template, gpu_cluster, gpu_pods
from fastsched.sim.storage import pod_with_claims, storage_class_manifest
from fastsched.testing import make_node, make_pod

# (classes, modules and the like are shared by every Scheduler: their attributes are not state)
_SKIP = (type, types.ModuleType, types.BuiltinFunctionType, types.MethodDescriptorType,
         types.WrapperDescriptorType, types.MethodWrapperType, types.GetSetDescriptorType,
         types.MemberDescriptorType, types.CodeType, str, bytes, int, float, complex, bool, type(None))


def _children(x):
    """(label, child) for what ``x`` refers to, as the walk sees it."""
    if isinstance(x, dict):
        for k, v in list(x.items()):
            yield f"[{k!r}]", v
            yield f"<key {k!r}>", k
        return
    if isinstance(x, (list, tuple, set, frozenset, deque)):
        for i, v in enumerate(list(x)):
            yield f"[{i}]", v
        return
    if isinstance(x, types.MethodType):
        yield "<self>", x.__self__
        yield "<func>", x.__func__
        return
    if isinstance(x, types.FunctionType):
        for name, cell in zip(x.__code__.co_freevars, x.__closure__ or ()):
            try:
                yield f"<closure {name}>", cell.cell_contents
            except ValueError:  # an empty cell
                pass
        yield "<defaults>", x.__defaults__
        yield "<kwdefaults>", x.__kwdefaults__
        return
    if isinstance(x, functools.partial):
        yield "<partial func>", x.func
        yield "<partial args>", x.args
        yield "<partial keywords>", x.keywords
        return
    if isinstance(x, weakref.ref):
        yield "()", x()
        return
    if isinstance(x, np.ndarray):
        if x.dtype == object:
            for i, v in enumerate(x.ravel().tolist()):
                yield f"[{i}]", v
        return
    if isinstance(x, (types.MappingProxyType, type({}.keys()), type({}.values()), type({}.items()))):
        yield "<mapping>", getattr(x, "mapping", None)
        return
    d = getattr(x, "__dict__", None)
    if isinstance(d, dict):
        for k, v in d.items():
            yield f".{k}", v
    for cls in type(x).__mro__:
        for name in cls.__dict__.get("__slots__", ()) if not isinstance(cls.__dict__.get("__slots__"), str) \
                else (cls.__dict__["__slots__"],):
            if name in ("__dict__", "__weakref__"):
                continue
            try:
                yield f".{name}", object.__getattribute__(x, name)
            except AttributeError:
                pass


_CONTAINERS = (dict, list, tuple, set, frozenset, deque)
_THROUGH_FUNCTIONS = ("<closure", "<self>", "<defaults>", "<kwdefaults>", "<partial")


def _references_to(root, forbidden: dict[int, object]) -> list[str]:
    """The paths from ``root`` to objects in ``forbidden`` (id -> the original object). A plain
    container the copier copied may still be reached through a shared API object (a manifest's
    nested dict: API objects are shared and never changed in place): that counts only when a
    function holds it directly (a closure cell, a bound method's ``__self__``, a partial's
    arguments, a default)."""
    seen: set[tuple[int, bool]] = set()
    found: list[str] = []
    stack = [(root, "fork", False)]
    while stack:
        x, path, via_function = stack.pop()
        if isinstance(x, _SKIP) or (id(x), via_function) in seen:
            continue
        seen.add((id(x), via_function))
        if forbidden.get(id(x)) is x and (via_function or not isinstance(x, _CONTAINERS)):
            found.append(f"{path}: {type(x).__qualname__}")
            continue
        for label, child in _children(x):
            stack.append((child, path + label, label.startswith(_THROUGH_FUNCTIONS)))
    return found


def _ephemeral_pod(name: str) -> dict:
    m = pod_with_claims(name)
    m["spec"]["volumes"] = [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteOnce"], "storageClassName": "standard",
        "resources": {"requests": {"storage": "1Gi"}}}}}}]
    return m


def _busy_scheduler() -> Scheduler:
    """The default profile with state in every plugin that keeps some: DRA claims from
    templates, ephemeral volumes, spread and affinity pods, a ReplicaSet's controller, a pod left
    pending."""
    s = Scheduler(seed=1)
    s.add(gpu_cluster([GPUNodePool(2, model="a100", gpus=1, cpu="100", pods=100)]))
    s.add([make_node("disk-node"), gpu_claim_template("one-gpu"),
           storage_class_manifest("standard", binding_mode="WaitForFirstConsumer", provisioner="csi.example.com")])
    s.add(gpu_pods("gpu", 3, template="one-gpu", cpu="100m", memory="1Mi"))
    s.add([_ephemeral_pod("job-0"), make_pod("big", cpu="1000")])
    s.add({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web", "namespace": "default"},
           "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
                        "containers": [{"name": "c", "image": "web", "resources": {"requests": {"cpu": "100m"}}}],
                        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                                                       "whenUnsatisfiable": "ScheduleAnyway",
                                                       "labelSelector": {"matchLabels": {"app": "web"}}}],
                        "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                            {"weight": 1, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                                              "labelSelector": {"matchLabels": {"app": "web"}}}}]}}}}}})
    s.run()
    return s


def _fork_recording_copies(s: Scheduler) -> tuple[Scheduler, dict[int, object]]:
    """``s.fork()`` and the original objects the copier replaced by copies (its memo)."""
    memos: list[dict] = []
    init = fork_module._StateCopier.__init__

    def recording_init(self, memo, **kwargs):
        memos.append(memo)
        init(self, memo, **kwargs)

    fork_module._StateCopier.__init__ = recording_init
    try:
        fork = s.fork()
    finally:
        fork_module._StateCopier.__init__ = init
    assert len(memos) == 1
    originals = _originals(s)
    copied = {key: originals[key] for key, copy in memos[0].items() if key in originals and copy is not originals[key]}
    copied[id(s)] = s
    return fork, copied


def _originals(s: Scheduler) -> dict[int, object]:
    """Every object reachable from ``s`` (id -> object)."""
    out: dict[int, object] = {}
    stack: list = [s]
    while stack:
        x = stack.pop()
        if isinstance(x, _SKIP) or id(x) in out:
            continue
        out[id(x)] = x
        stack.extend(child for _, child in _children(x))
    return out


def test_a_fork_reaches_no_object_it_copied_from_the_original():
    s = _busy_scheduler()
    fork, copied = _fork_recording_copies(s)
    # (the check can see: the plugins, the cluster and its controllers are among what was copied)
    kinds = {type(o).__name__ for o in copied.values()}
    assert {"Scheduler", "VolumeBinding", "DynamicResources", "Cluster"} <= kinds, kinds
    assert _references_to(fork, copied) == []
    # the fork still works on its own (and the original is untouched by it)
    fork.add([_ephemeral_pod("job-1"), make_pod("late", cpu="100m")])
    fork.run()
    assert fork.results[fork.get_pod("default", "job-1").uid].status == "Scheduled"
    assert s.get_pod("default", "job-1") is None
