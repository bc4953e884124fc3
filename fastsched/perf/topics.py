"""What a topic's own test file adds to its performance-config.yaml (upstream's ``SchedulerPerfOption``s).

Each scheduler_perf topic is a Go test package whose ``*_test.go`` calls
``RunBenchmarkPerfScheduling`` with options; most pass none. The options that change what a
workload does are ported here, keyed by the topic's folder name, so the topic's config runs as it
does upstream:

- ``nodedeclaredfeatures`` (``node_declared_features_test.go``): ``WithPreRunFn`` reads the
  workload's ``numNodeDeclaredFeatures`` parameter (when the workload's own ``featureGates`` turn
  NodeDeclaredFeatures on) and swaps ``ndffeatures.AllFeatures`` for that many mock features
  ``Feature1..N``; ``WithNodeUpdateFn`` then sets every node's ``status.declaredFeatures`` to their
  names, sorted, after each ``createNodes``. Upstream's scheduler does not see the mock features:
  its plugin uses ``nodedeclaredfeatures.DefaultFramework``, built from ``AllFeatures`` when the
  package is initialised, before the swap. So the scheduler runs with v1.37's registered features
  (none of which a pod-level-resources pod needs), and the nodes declare names it does not know
  (``TryMap`` drops them). fastsched does the same: the nodes are updated, the registry is not.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # pragma: no cover
    from .config import Workload

__all__ = ["TopicOptions", "TOPIC_OPTIONS", "topic_options"]


@dataclass(frozen=True)
class TopicOptions:
    """The options of one topic's test file."""

    #: ``PreRunFn``'s parameter reads: the workload parameters it uses (they count as used)
    params_read: Callable[["Workload"], list[str]] | None = None
    #: ``NodeUpdateFn``: called with the executor after every createNodes op
    node_update: Callable[[Any], None] | None = None


def _ndf_enabled(w: "Workload") -> bool:
    # upstream reads w.FeatureGates: the workload's own gates, not the test case's
    return bool(w.feature_gates.get("NodeDeclaredFeatures"))


def _ndf_count(w: "Workload") -> int:
    value = w.params.get("numNodeDeclaredFeatures")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0  # GetParam's error: upstream logs it and uses 0
    return int(value)


def _ndf_params(w: "Workload") -> list[str]:
    return ["numNodeDeclaredFeatures"] if _ndf_enabled(w) else []


def _ndf_update_nodes(ex: Any) -> None:
    """``updateNodesWithDeclaredFeatures``: every node's status.declaredFeatures = Feature1..N, sorted."""
    if not _ndf_enabled(ex.w):
        return
    names = tuple(sorted(f"Feature{i}" for i in range(1, _ndf_count(ex.w) + 1)))
    for node in list(ex.sched.nodes()):
        if tuple(node.declared_features) != names:
            ex.sched.update_node(node.replace(declared_features=names))


TOPIC_OPTIONS: dict[str, TopicOptions] = {
    "nodedeclaredfeatures": TopicOptions(params_read=_ndf_params, node_update=_ndf_update_nodes),
}

_NONE = TopicOptions()


def topic_options(folder: str) -> TopicOptions:
    """The options of the topic whose config lives in ``folder`` (none for other folders)."""
    return TOPIC_OPTIONS.get(folder, _NONE)
