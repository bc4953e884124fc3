"""What the workload controllers would do: the pods (and child objects) they create or delete.

fastsched runs no controllers; :func:`reconcile` computes one sync of the controller that owns a
workload object, against a read-only :class:`ClusterView`, and returns it as :class:`Changes`.
Pods are named and labelled as upstream's controllers name and label them (``pkg/controller/...``,
v1.34), with generated names drawn from a seeded :class:`~fastsched.api.names.NameGenerator`
(skipping names the view or this pass already uses), so a result is reproducible; nothing reads the
wall clock (``now`` is the controller's ``time.Now()``).

A reconcile covers the whole cascade: a Deployment's result holds its ReplicaSet *and* that
ReplicaSet's pods, a CronJob's its Job and the Job's pods. Apply a result before reconciling again;
once applied, reconciling any object of the cascade again gives nothing new (StatefulSets in
``strict_ordered_ready`` mode and Jobs advance as their pods progress).

Modules: :mod:`.replicaset` (and :mod:`.replication`), :mod:`.deployment`, :mod:`.statefulset`,
:mod:`.daemonset`, :mod:`.job` (with :mod:`.jobscheduling`, its Workload and PodGroup under
WorkloadWithJob), :mod:`.cronjob`; :mod:`.common` for the shared pieces. Each
module's docstring lists what is simplified relative to upstream.
"""
from __future__ import annotations

from typing import Callable, Mapping

from ..api import KubeObject
from ..api.names import NameGenerator
from .common import Changes, ClusterView, Context, ControllerOptions
from .cronjob import reconcile_cron_job
from .daemonset import reconcile_daemon_set
from .deployment import reconcile_deployment
from .job import reconcile_job
from .replicaset import reconcile_replica_set, reconcile_replication_controller
from .statefulset import reconcile_stateful_set

__all__ = [
    "Changes",
    "ClusterView",
    "ControllerOptions",
    "Context",
    "reconcile",
    "RECONCILERS",
    "reconcile_replica_set",
    "reconcile_replication_controller",
    "reconcile_deployment",
    "reconcile_stateful_set",
    "reconcile_daemon_set",
    "reconcile_job",
    "reconcile_cron_job",
]

#: kind -> ``f(obj, ctx) -> Changes``.
RECONCILERS: dict[str, Callable[[KubeObject, Context], Changes]] = {
    "ReplicaSet": reconcile_replica_set,  # type: ignore[dict-item]
    "ReplicationController": reconcile_replication_controller,  # type: ignore[dict-item]
    "Deployment": reconcile_deployment,  # type: ignore[dict-item]
    "StatefulSet": reconcile_stateful_set,  # type: ignore[dict-item]
    "DaemonSet": reconcile_daemon_set,  # type: ignore[dict-item]
    "Job": reconcile_job,  # type: ignore[dict-item]
    "CronJob": reconcile_cron_job,  # type: ignore[dict-item]
}


def reconcile(obj: KubeObject, view: ClusterView, names: NameGenerator, now: float, *,
              options: ControllerOptions | None = None, feature_gates: Mapping[str, bool] | None = None) -> Changes:
    """One sync of ``obj``'s controller (dispatch by kind); kinds without a controller (Service,
    Pod, ...) give empty Changes. ``feature_gates``: kube-controller-manager's (a
    :class:`~fastsched.features.FeatureGates` or a mapping; None: v1.37.2's defaults)."""
    reconciler = RECONCILERS.get(obj.KIND)
    if reconciler is None:
        return Changes()
    return reconciler(obj, Context(view, names, now, options, feature_gates))
