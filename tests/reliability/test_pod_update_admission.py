"""A pod update goes through the API server's admission as a create does (found by the
differential class ``preenqueue`` with ``--batching``: a gated pod's update removing its gates lost
DefaultTolerationSeconds' two tolerations, so it signed unlike the same pod created ungated, and
upstream batched it with its twin where fastsched did not).

plugin/pkg/admission/defaulttolerationseconds handles Create and Update; the Priority plugin's
admitPod, on Update, keeps the priority (and preemption policy) it set at creation when the new
version leaves them out.
"""
from __future__ import annotations

from fastsched import Scheduler, load_config

#: a profile that signs pods (OpportunisticBatching): PodTopologySpread without default constraints
SIGNING = load_config("""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    pluginConfig:
      - name: PodTopologySpread
        args: {defaultingType: List, defaultConstraints: []}
""")

NOT_READY = ("node.kubernetes.io/not-ready", "Exists", "NoExecute", 300)
UNREACHABLE = ("node.kubernetes.io/unreachable", "Exists", "NoExecute", 300)


def _pod(gated: bool, **spec) -> dict:
    s = {"containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "100m"}}}], **spec}
    if gated:
        s["schedulingGates"] = [{"name": "example.com/g"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": s}


def _tolerations(pod) -> list:
    return [(t.key, t.operator, t.effect, t.toleration_seconds) for t in pod.tolerations]


def _cluster() -> Scheduler:
    s = Scheduler(SIGNING)
    s.add({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
           "value": 1000, "preemptionPolicy": "Never"})
    return s


def test_an_update_gets_the_default_tolerations_again():
    s = _cluster()
    s.add(_pod(True))
    assert _tolerations(s.get_pod("default", "p")) == [NOT_READY, UNREACHABLE]
    s.update_pod(_pod(False))
    assert _tolerations(s.get_pod("default", "p")) == [NOT_READY, UNREACHABLE]
    # one of its own counts as tolerating that taint: only the other is added
    s.update_pod(_pod(False, tolerations=[{"key": "node.kubernetes.io/not-ready", "operator": "Exists"}]))
    assert _tolerations(s.get_pod("default", "p")) == [("node.kubernetes.io/not-ready", "Exists", "", None),
                                                       UNREACHABLE]


def test_an_update_signs_as_the_pod_created_ungated():
    s = _cluster()
    s.add(_pod(True))
    s.update_pod(_pod(False))
    fw = next(iter(s.profiles.values()))
    updated = s.get_pod("default", "p")
    t = Scheduler(SIGNING)
    t.add(_pod(False))
    twin = t.get_pod("default", "p")
    assert fw.sign_pod(twin) is not None
    assert fw.sign_pod(updated) == fw.sign_pod(twin)


def test_an_update_keeps_the_priority_admission_set():
    s = _cluster()
    s.add(_pod(True, priorityClassName="high"))
    created = s.get_pod("default", "p")
    assert (created.priority, created.preemption_policy) == (1000, "Never")
    s.update_pod(_pod(False, priorityClassName="high"))
    updated = s.get_pod("default", "p")
    assert (updated.priority, updated.preemption_policy) == (1000, "Never")
