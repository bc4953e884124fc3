"""PodTopologySpread (upstream ``plugins/podtopologyspread``, v1.34), per node and batched.

What is modelled, and how:

* Hard constraints (``DoNotSchedule``) filter at PreFilter/Filter, with minDomains, the node
  inclusion policies (nodeAffinityPolicy default Honor, nodeTaintsPolicy default Ignore) and the
  "missing required label" rejection; soft constraints (``ScheduleAnyway``) score at
  PreScore/Score/NormalizeScore. AddPod/RemovePod update the PreFilter state (critical paths).
* matchLabelKeys: v1.34's scheduler still merges the pod's values for these keys into the selector
  itself (gate MatchLabelKeysInPodTopologySpread, on). Since v1.34 the API server also merges them
  into ``labelSelector`` at pod creation (gate MatchLabelKeysInPodTopologySpreadSelectorMerge, beta,
  on); fastsched does not emulate the API server, and merging twice only repeats the same
  requirement, so pods read from either kind of manifest behave as in a v1.34 cluster.
* Default constraints (pods without constraints): ``defaultingType: System`` (hostname maxSkew 3 and
  zone maxSkew 5, ScheduleAnyway, and nodes without a zone are not ignored) or the args' ``List``.
  They need upstream's DefaultSelector, built from the Services selecting the pod and the
  ReplicationController / ReplicaSet / StatefulSet named by its controller owner reference.
  fastsched stores none of those objects, so by default the selector is empty and the defaults do
  not apply (PreScore returns Skip) — upstream's behaviour in a cluster without such objects.
  ``PodTopologySpread.workload_objects`` (:class:`WorkloadObjects`) lets a caller supply the
  objects' selectors; owner references are read from the pod.
* Counts skip terminating pods (deletionTimestamp set) and, as in v1.34, a selector without
  requirements (``labelSelector: {}``) counts no pods.
* Scores use Go's amd64 ``math.Log`` (:func:`go_log`) and ``math.Round``.

The batch path counts matching pods once per distinct pod label signature of the node table and
aggregates per domain with ``np.bincount`` over label codes; node inclusion uses the node-selector
helpers and one toleration check per distinct taint set.
"""
from .common import SpreadConstraint, WorkloadObjects, default_selector, go_log
from .filtering import CriticalPaths, PreFilterState
from .plugin import (ERR_REASON_CONSTRAINTS_NOT_MATCH, ERR_REASON_NODE_LABEL_NOT_MATCH, NAME, PRE_FILTER_STATE_KEY,
                     PRE_SCORE_STATE_KEY, SYSTEM_DEFAULT_CONSTRAINTS, PodTopologySpread, new)
from .scoring import PreScoreState

__all__ = ["NAME", "PodTopologySpread", "new", "PRE_FILTER_STATE_KEY", "PRE_SCORE_STATE_KEY",
           "ERR_REASON_CONSTRAINTS_NOT_MATCH", "ERR_REASON_NODE_LABEL_NOT_MATCH", "SYSTEM_DEFAULT_CONSTRAINTS",
           "SpreadConstraint", "WorkloadObjects", "default_selector", "go_log", "CriticalPaths",
           "PreFilterState", "PreScoreState"]
