"""A shared ResourceClaim past ResourceClaimReservedForMaxSize (256 reservations), through the
Scheduler: upstream v1.37.2 lets the pod through PreFilter (``CanBeReserved`` is always true) and
``bindClaim`` adds it to ``reservedFor`` without checking; the API server refuses the 257th entry
(``ValidateResourceClaimStatusUpdate``), so PreBind fails with that error, wrapped as upstream
wraps it. v1.34 refused the pod at PreFilter ("resourceclaim in use")."""
from __future__ import annotations

from collections import Counter

import pytest

from fastsched import Scheduler
from fastsched.api.resource import claim_with_status
from fastsched.api.validation import ValidationError
from fastsched.sim.gpu import GPUNodePool, gpu_claim, gpu_cluster, gpu_pods

REFUSED = ('running PreBind plugin "DynamicResources": add reservation to claim default/shared: '
           'ResourceClaim.resource.k8s.io "shared" is invalid: status.reservedFor: Too many: 257: '
           'must have at most 256 items')


def _scheduler() -> Scheduler:
    s = Scheduler(seed=0)
    s.add(gpu_cluster([GPUNodePool(1, model="a100", gpus=1, cpu="1000", pods=1000)]))
    s.add(gpu_claim("shared"))
    return s


def test_the_257th_reservation_fails_at_pre_bind():
    s = _scheduler()
    s.add(gpu_pods("p", 258, claim="shared", cpu="100m", memory="1Mi"))
    results = {r.pod.name: r for r in s.run()}
    assert Counter(r.status for r in results.values()) == {"Scheduled": 256, "Error": 2}
    for name in ("p-256", "p-257"):  # PreFilter and Filter passed: the binding cycle failed
        assert results[name].message == REFUSED
    (claim,) = s.objects("ResourceClaim")
    assert len(claim["status"]["reservedFor"]) == 256


def test_a_claim_status_write_is_validated():
    """The API server's status-update rules on reservedFor: too many (the only error then), an
    entry without its fields, a uid twice."""
    s = _scheduler()
    s.add(gpu_pods("p", 1, claim="shared", cpu="100m", memory="1Mi"))
    list(s.run())
    claim = s.get_object("ResourceClaim", "shared")
    entry = dict(claim.reserved_for[0])
    with pytest.raises(ValidationError) as caught:
        s.update_object(claim_with_status(claim, reserved_for=[entry] * 257))
    assert str(caught.value) == ('ResourceClaim.resource.k8s.io "shared" is invalid: status.reservedFor: '
                                 'Too many: 257: must have at most 256 items')
    with pytest.raises(ValidationError) as caught:
        s.update_object(claim_with_status(claim, reserved_for=[entry, {"resource": "pods"}, entry]))
    assert str(caught.value) == (
        'ResourceClaim.resource.k8s.io "shared" is invalid: [status.reservedFor[1].name: Required value, '
        'status.reservedFor[1].uid: Required value, status.reservedFor[2]: Duplicate value: '
        f'"{entry["uid"]}"]')
    assert s.get_object("ResourceClaim", "shared").reserved_for == claim.reserved_for  # unchanged
