"""kube-scheduler-simulator's annotation keys: every key under kube-scheduler-simulator.sigs.k8s.io/
(KSS v0.4.0 and later, #387), or every key under scheduler-simulator/ for older KSS versions."""
import json

from fastsched.scheduler import Scheduler
from fastsched.scheduler.records import (KSS_KEYS, KSS_LEGACY_KEYS, KSS_LEGACY_RESULT_HISTORY_KEY,
                                         KSS_RESULT_HISTORY_KEY, kss_annotations, kss_attempt_annotations)
from fastsched.testing import make_node, make_pod

# the keys of simulator/scheduler/plugin/annotation, simulator/scheduler/extender/annotation and
# simulator/scheduler/storereflector, as kube-scheduler-simulator's main branch writes them
KSS_SOURCE_KEYS = {
    "prefilter-result-status", "prefilter-result", "filter-result", "postfilter-result", "prescore-result",
    "score-result", "finalscore-result", "reserve-result", "permit-result", "permit-result-timeout",
    "prebind-result", "bind-result", "selected-node", "extender-filter-result", "extender-prioritize-result",
    "extender-preempt-result", "extender-bind-result", "result-history",
}


def _history():
    s = Scheduler(record="all")
    s.add_nodes([make_node("node-0", cpu="4"), make_node("node-1", cpu="4")])
    s.add_pod(make_pod("p", cpu="1"))
    (result,) = s.run()
    return result


def test_every_key_is_under_the_current_prefix_by_default():
    result = _history()
    annotations = kss_annotations(result.history)
    assert set(annotations) == {"kube-scheduler-simulator.sigs.k8s.io/" + key for key in KSS_SOURCE_KEYS}
    assert annotations["kube-scheduler-simulator.sigs.k8s.io/selected-node"] == result.node_name
    assert KSS_RESULT_HISTORY_KEY == "kube-scheduler-simulator.sigs.k8s.io/result-history"
    (attempt,) = json.loads(annotations[KSS_RESULT_HISTORY_KEY])
    assert set(attempt) == set(KSS_KEYS.values())
    assert result.kss_annotations() == annotations  # PodResult's export is the same


def test_legacy_keys_are_every_key_under_the_old_prefix_with_the_same_values():
    result = _history()
    current = kss_annotations(result.history)
    legacy = kss_annotations(result.history, legacy_keys=True)
    assert set(legacy) == {"scheduler-simulator/" + key for key in KSS_SOURCE_KEYS}
    assert set(KSS_LEGACY_KEYS.values()) | {KSS_LEGACY_RESULT_HISTORY_KEY} == set(legacy)
    for name, key in KSS_KEYS.items():
        assert legacy[KSS_LEGACY_KEYS[name]] == current[key]
    (attempt,) = json.loads(legacy[KSS_LEGACY_RESULT_HISTORY_KEY])
    assert attempt == kss_attempt_annotations(result.history[0], legacy_keys=True)
    assert set(attempt) == set(KSS_LEGACY_KEYS.values())
    assert result.kss_annotations(legacy_keys=True) == legacy  # PodResult passes the choice on
