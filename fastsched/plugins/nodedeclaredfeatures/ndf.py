"""Node declared features (upstream ``k8s.io/component-helpers@v0.37.2/nodedeclaredfeatures``).

A node's kubelet declares the features it supports (``Node.status.declaredFeatures``); the
scheduler infers from a pod's spec the features the pod needs and sends it only to nodes that
declare all of them. What is ported here is what the scheduler uses: the feature registry
(``features/registry.go``: ``AllFeatures``), the inference for scheduling
(``Framework.InferForPodScheduling``, with each feature's ``InferForScheduling`` and
``MaxVersion``), and the mapping of a node's declared features onto the registry
(``FeatureMapper.TryMap``). Discovery (what a kubelet declares) and ``InferForPodUpdate`` (the
kubelet's and the API server's business) are not.

A feature set is an ``int`` bit mask over the registry sorted by name (upstream's ``bitmap``
indexed the same way), so "the node has every required feature" is ``req & node == req``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from ...api import Container, Pod

#: The component version the scheduler passes as the inference's target version
#: (``version.Get()`` of the kube-scheduler binary, which is the release fastsched ports).
COMPONENT_VERSION: tuple[int, int, int] = (1, 37, 2)


@dataclass(frozen=True)
class Feature:
    """One declared feature (upstream ``types.Feature``, the parts the scheduler calls)."""

    name: str
    #: ``InferForScheduling``: whether a pod with this spec needs the feature on its node
    infer_for_scheduling: Callable[["Pod"], bool]
    #: ``MaxVersion``: past it the feature is assumed everywhere and no longer inferred (None: never)
    max_version: tuple[int, int, int] | None = None


# -- the registered features (features/*/...go), their InferForScheduling --------------------------

def _restart_all_containers(pod: "Pod") -> bool:
    # restartallcontainers/restart_all_containers.go: a container or init container with a
    # restartPolicyRules entry whose action is RestartAllContainers
    for c in (*pod.containers, *pod.init_containers):
        for rule in c.restart_policy_rules:
            if rule.get("action") == "RestartAllContainers":
                return True
    return False


def _user_namespaces_host_network(pod: "Pod") -> bool:
    # usernamespaceshostnetwork/user_namespaces_host_network.go: hostNetwork with hostUsers: false
    return pod.host_network and pod.host_users is not None and not pod.host_users


def _has_bind_mount_options(containers: Iterable["Container"]) -> bool:
    return any(m.get("bindMountOptions") for c in containers for m in c.volume_mounts)


def _volume_bind_mount_options(pod: "Pod") -> bool:
    # volumebindmountoptions/feature.go: a volume mount of a container, init container or
    # ephemeral container with bindMountOptions
    return (_has_bind_mount_options(pod.containers) or _has_bind_mount_options(pod.init_containers)
            or _has_bind_mount_options(pod.ephemeral_containers))


def _never(pod: "Pod") -> bool:
    return False


#: ``features.AllFeatures`` at v0.37.2 (registration order; the Framework sorts them by name).
#: The in-place resize features and the DRA / kubelet-API ones infer nothing for scheduling (they
#: matter to updates or to the kubelet only).
ALL_FEATURES: tuple[Feature, ...] = (
    Feature("RestartAllContainersOnContainerExits", _restart_all_containers),
    Feature("InPlacePodLevelResourcesVerticalScaling", _never),
    Feature("ExtendWebSocketsToKubelet", _never),
    Feature("InPlacePodVerticalScalingInitContainers", _never),
    Feature("InPlacePodVerticalScalingMemoryBackedVolumes", _never),
    Feature("UserNamespacesHostNetworkSupport", _user_namespaces_host_network),
    Feature("DRANodeAllocatableResources", _never),
    Feature("VolumeBindMountOptions", _volume_bind_mount_options),
    Feature("DRAOptionalNodeOperations", _never),
)


class InferenceError(ValueError):
    """``InferForPodScheduling`` without a target version (upstream's only inference error)."""


class Framework:
    """Upstream ``nodedeclaredfeatures.Framework``: the registry sorted by name, its
    ``FeatureMapper``, and the inference."""

    __slots__ = ("registry", "names", "_index", "_node_sets")

    def __init__(self, registry: Sequence[Feature]):
        self.registry: tuple[Feature, ...] = tuple(sorted(registry, key=lambda f: f.name))
        #: ``FeatureMapper.registeredFeatures``: the names, sorted
        self.names: tuple[str, ...] = tuple(sorted(f.name for f in self.registry))
        self._index = {name: i for i, name in enumerate(self.names)}
        # declared-features tuple -> its set (nodes share few distinct lists)
        self._node_sets: dict[tuple[str, ...], int] = {}

    def infer_for_pod_scheduling(self, pod: "Pod",
                                 target_version: tuple[int, int, int] | None = COMPONENT_VERSION) -> int:
        """The features ``pod`` needs (``InferForPodScheduling``): a feature whose ``max_version``
        the target version is past is skipped."""
        if target_version is None:
            raise InferenceError("target version cannot be nil")
        reqs = 0
        for i, f in enumerate(self.registry):
            if f.max_version is not None and target_version > f.max_version:
                continue
            if f.infer_for_scheduling(pod):
                reqs |= 1 << i
        return reqs

    def try_map(self, sorted_features: Sequence[str]) -> int:
        """``FeatureMapper.TryMap``: the registered features among ``sorted_features``, unknown ones
        dropped. Like upstream it walks both lists in step, so it expects them sorted (the kubelet
        writes them sorted); an out-of-order name may be missed, as upstream misses it."""
        key = tuple(sorted_features)
        found = self._node_sets.get(key)
        if found is not None:
            return found
        s = 0
        names = self.names
        i = j = 0
        while i < len(key) and j < len(names):
            if key[i] == names[j]:
                s |= 1 << j
                i += 1
                j += 1
            elif key[i] < names[j]:
                i += 1
            else:
                j += 1
        if len(self._node_sets) < 4096:
            self._node_sets[key] = s
        return s

    def map_sorted(self, sorted_features: Sequence[str]) -> int:
        """``FeatureMapper.MapSorted`` (tests): like :meth:`try_map`, an unknown name is an error."""
        s = 0
        for name in sorted_features:
            if name not in self._index:
                raise ValueError(f"unknown feature {name}")
            s |= 1 << self._index[name]
        return s

    def unmap(self, s: int) -> list[str]:
        """``FeatureMapper.Unmap``: the names of the features in ``s``, in registry order."""
        return [name for i, name in enumerate(self.names) if s >> i & 1]


#: ``nodedeclaredfeatures.DefaultFramework``.
DEFAULT_FRAMEWORK = Framework(ALL_FEATURES)


def is_subset(reqs: int, node_features: int) -> bool:
    """``FeatureSet.IsSubset``: every required feature is declared."""
    return reqs & node_features == reqs


__all__ = ["ALL_FEATURES", "COMPONENT_VERSION", "DEFAULT_FRAMEWORK", "Feature", "Framework", "InferenceError",
           "is_subset"]
