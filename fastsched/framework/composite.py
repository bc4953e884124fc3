"""Composite pod groups (CompositePodGroup, alpha): the entity key of a CompositePodGroup and the
tree of groups one queue entity covers.

Upstream: ``k8s.io/kube-scheduler@v0.37.2/framework/types.go`` (``CompositePodGroupKeyType``,
``CompositePodGroupKey``) and ``pkg/scheduler/framework/types.go`` (``PodGroupInfo``: namespace,
name, type, the PodGroup or the CompositePodGroup object, children). With CompositePodGroup off
every entity is one PodGroup, its own root and only leaf (:mod:`.podgroups`); with it, a root
CompositePodGroup's entity holds the whole tree below it, PodGroups as the leaves.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterator

from .podgroups import POD_GROUP_KEY_TYPE, EntityKey, pod_group_key

if TYPE_CHECKING:  # pragma: no cover
    from ..api.compositepodgroup import CompositePodGroup
    from ..api.scheduling import PodGroup

__all__ = ["COMPOSITE_POD_GROUP_KEY_TYPE", "composite_pod_group_key", "PodGroupInfo"]

COMPOSITE_POD_GROUP_KEY_TYPE = "compositepodgroup"


def composite_pod_group_key(namespace: str, name: str) -> EntityKey:
    """``fwk.CompositePodGroupKey``."""
    return EntityKey(COMPOSITE_POD_GROUP_KEY_TYPE, namespace, name)


@dataclass(eq=False)
class PodGroupInfo:
    """``framework.PodGroupInfo``: one node of a queue entity's group tree — a PodGroup (a leaf,
    ``pod_group`` set) or a CompositePodGroup (``composite_pod_group`` set, ``children`` below it).
    Children are in the order the forest learnt of them (upstream iterates a set: any order)."""

    namespace: str
    name: str
    type: str
    pod_group: "PodGroup | None" = None
    composite_pod_group: "CompositePodGroup | None" = None
    children: list[PodGroupInfo] = field(default_factory=list)

    @property
    def key(self) -> EntityKey:
        if self.type == POD_GROUP_KEY_TYPE:
            return pod_group_key(self.namespace, self.name)
        return composite_pod_group_key(self.namespace, self.name)

    def leaves(self) -> Iterator[PodGroupInfo]:
        """The PodGroup nodes of the tree, depth first."""
        if self.type == POD_GROUP_KEY_TYPE:
            yield self
            return
        for child in self.children:
            yield from child.leaves()

    def __eq__(self, other: object) -> bool:
        # the objects compared by identity (cmp.Diff of the same pointers in upstream's tables)
        if not isinstance(other, PodGroupInfo):
            return NotImplemented
        return (self.namespace, self.name, self.type) == (other.namespace, other.name, other.type) \
            and self.pod_group is other.pod_group and self.composite_pod_group is other.composite_pod_group \
            and self.children == other.children
