"""TaintToleration (upstream ``plugins/tainttoleration/taint_toleration.go``, v1.34).

Filter rejects a node whose first NoSchedule/NoExecute taint (in node order) the pod does not
tolerate; Score counts the PreferNoSchedule taints the pod does not tolerate, normalized reversed.
"""
from .taint_toleration import (NAME, PRE_SCORE_STATE_KEY, TaintToleration, count_intolerable_prefer_no_schedule,
                               new, prefer_no_schedule_tolerations, untolerated_taint_reason)

__all__ = ["NAME", "TaintToleration", "new", "PRE_SCORE_STATE_KEY", "untolerated_taint_reason",
           "prefer_no_schedule_tolerations", "count_intolerable_prefer_no_schedule"]
