"""DefaultPreemption (upstream ``plugins/defaultpreemption`` and ``framework/preemption``, v1.34).

PostFilter plugin: when no node fits a pod, evict lower-priority pods from the node where that
costs least and nominate the pod to it. With ``SchedulerAsyncPreemption`` (on by default in v1.34,
read from ``handle.feature_gates``) the victims are evicted after PostFilter, on the framework's
clock (``DefaultPreemption.api_delay``), and the plugin's PreEnqueue holds the preemptor back
meanwhile; with the gate off they are evicted inside PostFilter and PreEnqueue always admits.

It needs ``handle.client`` (the Scheduler, or any object with ``get_pod_by_uid``, ``list_pdbs``,
``preempt_pod`` and ``clear_nominated_node_name``); without one it reports Unschedulable.

The dry run (DryRunPreemption, SelectVictimsOnNode, the PDB split, pickOneNodeForPreemption) runs
over the node table for every walked node at once when the filters that can still reject the
preemptor are node-only or additive (:mod:`.vectorized`), with the per-node path's results; the
per-node path is the reference and the fallback (``DefaultPreemption.vectorized = False`` forces it).
"""
from .default_preemption import (DISRUPTION_TARGET, ERR_NO_VICTIMS, ERR_NOT_ELIGIBLE_NEVER,
                                 ERR_NOT_ELIGIBLE_TERMINATING, NAME, PREEMPTION_MSG_PREFIX,
                                 REASON_PREEMPTION_BY_SCHEDULER, WAITING_FOR_PREEMPTION, DefaultPreemption,
                                 PDBIndex, filter_pods_with_pdb_violation, new, pod_terminating_by_preemption)
from .preemption import (NO_CANDIDATE_MSG, NO_CLIENT_MSG, NOT_HELPFUL_MSG, Candidate, Evaluator, Victims,
                         pick_one_node_for_preemption)
from .util import earliest_pod_start_time, more_important_pod, pod_start_time

__all__ = ["Candidate", "DISRUPTION_TARGET", "DefaultPreemption", "ERR_NOT_ELIGIBLE_NEVER",
           "ERR_NOT_ELIGIBLE_TERMINATING", "ERR_NO_VICTIMS", "Evaluator", "NAME", "NOT_HELPFUL_MSG",
           "NO_CANDIDATE_MSG", "NO_CLIENT_MSG", "PDBIndex", "PREEMPTION_MSG_PREFIX",
           "REASON_PREEMPTION_BY_SCHEDULER", "Victims", "WAITING_FOR_PREEMPTION", "earliest_pod_start_time",
           "filter_pods_with_pdb_violation", "more_important_pod", "new", "pick_one_node_for_preemption", "pod_start_time",
           "pod_terminating_by_preemption"]
