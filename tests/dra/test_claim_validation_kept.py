"""``validate_resource_claim`` keeps each hashable spec's errors (issues 27, 29: DynamicResources'
PreBind creates one special claim per pod from a few request lists) and skips the status rules
for a claim without a status: the errors are those of the full rules, claim after claim, whatever
came before (a kept result keyed too loosely would hand one claim another's errors)."""
from __future__ import annotations

from fastsched.api import resource
from fastsched.api.resource import parse_resource_claim, validate_resource_claim
from fastsched.util.field import FieldPath


def _claim(count: int = 1, cls: str = "gpu", selector: str = "", constraint: str = "", status=None) -> dict:
    exactly: dict = {"deviceClassName": cls, "allocationMode": "ExactCount", "count": count}
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    devices: dict = {"requests": [{"name": "req-0", "exactly": exactly}]}
    if constraint:
        devices["constraints"] = [{"matchAttribute": constraint, "requests": ["req-0"]}]
    m = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": "c", "namespace": "default"}, "spec": {"devices": devices}}
    if status is not None:
        m["status"] = status
    return m


def _full_rules(rc, list_type_attributes: bool) -> list:
    """The rules without anything kept: what the kept errors must equal."""
    errors = resource.validate_object_meta(rc, namespaced=True)
    errors += resource._claim_spec_errors(rc.requests, rc.constraints, rc.config, FieldPath("spec"),
                                          list_type_attributes)
    status = FieldPath("status")
    errors += resource.validate_resource_claim_status_update(rc)
    raw = (rc.manifest or {}).get("status") or {}
    errors += resource._device_statuses_errors(raw.get("devices") or [], rc.allocation, status.child("devices"))
    if rc.reserved_for and rc.allocation is None:
        errors.append(resource.FieldError.forbidden(status.child("reservedFor"),
                                                    "may not be specified when `allocated` is not set"))
    return errors


def test_kept_spec_errors_are_each_claims_own():
    resource._SPEC_ERRORS_KEPT.clear()
    includes = 'device.attributes["dra.example.com"].models.includes("a100")'
    claims = [
        _claim(), _claim(count=0), _claim(), _claim(count=0),             # the count read
        _claim(cls="Not_A_Class"), _claim(cls="gpu"),                      # the class name read
        _claim(selector=includes), _claim(selector=includes),              # the gate read (below)
        _claim(constraint="bad attribute!"), _claim(constraint="dra.example.com/numa"),  # constraints read
        _claim(constraint="bad attribute!"),
    ]
    seen_errors = 0
    for gate in (False, True, False):
        for m in claims:
            rc = parse_resource_claim(m)
            got = validate_resource_claim(rc, gate)
            assert got == _full_rules(rc, gate), (m, gate)
            seen_errors += bool(got)
            got.append("changed by the caller")  # a caller's list is its own
            assert validate_resource_claim(rc, gate) == _full_rules(rc, gate)
    assert seen_errors >= 10  # the rows above do reach errors (and also none)
    assert resource._SPEC_ERRORS_KEPT  # and they were kept


def test_unhashable_specs_are_validated_each_time():
    resource._SPEC_ERRORS_KEPT.clear()
    m = _claim(count=0)
    m["spec"]["devices"]["requests"][0]["exactly"]["tolerations"] = [{"key": "k", "operator": "Exists"}]
    rc = parse_resource_claim(m)
    assert validate_resource_claim(rc) == _full_rules(rc, False) != []
    assert not resource._SPEC_ERRORS_KEPT


def test_a_claim_without_status_skips_only_what_a_status_would_need():
    for status in (None, {}, {"devices": []},
                   {"devices": [{"driver": "dra.example.com", "pool": "p", "device": "d"}]},
                   {"reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}]}):
        rc = parse_resource_claim(_claim(status=status))
        got = validate_resource_claim(rc)
        assert got == _full_rules(rc, False), status
        assert bool(got) == bool(status and (status.get("devices") or status.get("reservedFor"))), status
