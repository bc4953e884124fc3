"""A ResourceClaim given with a status is validated as its status update would be
(``validateResourceClaimStatusUpdate`` against an old status without one): rows of upstream
v1.37.2's ``TestValidateClaimStatusUpdate`` (``k8s/pkg/apis/resource/validation/
validation_resourceclaim_test.go``) whose old claim is ``validClaim`` (no status), transcribed with
their expected errors, in upstream's order and wording."""
from __future__ import annotations

import copy

import pytest

from fastsched import Scheduler
from fastsched.api.resource import parse_resource_claim, validate_resource_claim
from fastsched.api.validation import ValidationError
from fastsched.util.field import FieldError, FieldPath, GoStruct

GOOD = "foo"
GOOD2 = "bar"
BAD = "!@#$%^"
BAD_SUB = "&^%$"
GOOD_SHARE = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"
GOOD_SHARE2 = "bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb"
BAD_LENGTH_SHARE = "a"
BAD_FORMAT_SHARE = "Aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"
LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
             "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
             "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
REF_MSG = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"
COND_MSG = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
            "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
            "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
OPAQUE = {"driver": "dra.example.com", "parameters": {"kind": "foo", "apiVersion": "dra.example.com/v1"}}

STATUS = FieldPath("status")
RESULTS = STATUS.child("allocation", "devices", "results")
CONFIG = STATUS.child("allocation", "devices", "config")
DEVICES = STATUS.child("devices")


def _claim(status: dict, first_available: bool = False) -> dict:
    """upstream's validClaim (or the claim of validClaimSpecWithFirstAvailable) with ``status``."""
    request = ({"name": GOOD, "firstAvailable": [{"name": GOOD, "deviceClassName": GOOD},
                                                 {"name": GOOD2, "deviceClassName": GOOD}]}
               if first_available else {"name": GOOD, "exactly": {"deviceClassName": GOOD}})
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": GOOD, "namespace": "ns"},
            "spec": {"devices": {"requests": [request]}}, "status": status}


def _result(**extra) -> dict:
    return {"request": GOOD, "driver": GOOD, "pool": GOOD, "device": GOOD, "adminAccess": False, **extra}


def _allocated(**extra) -> dict:
    """validAllocatedClaim's status."""
    return {"allocation": {"devices": {"results": [_result()]}}, **extra}


def _id(driver: str, pool: str, device: str, share: str = "") -> GoStruct:
    """structured.MakeSharedDeviceID as field.Error prints it (JSON of the struct)."""
    return GoStruct(Driver=driver, Pool=pool, Device=device, ShareID=share)


def _errors(manifest: dict) -> list[FieldError]:
    return validate_resource_claim(parse_resource_claim(manifest))


def _config(**entry) -> dict:
    return {"allocation": {"devices": {"results": [_result()], "config": [entry]}}}


def _params(size: int) -> dict:
    # upstream's `{"str": "xx…"}` of a given length (compact JSON here: `{"str":"` is 8 bytes)
    return {"str": "x" * (size - 8 - 2)}


CASES = {
    "valid-add-allocation-empty": (_claim({"allocation": {}}), []),
    "valid-add-allocation-non-empty": (_claim(_allocated()), []),
    "invalid-add-allocation-bad-request": (
        _claim({"allocation": {"devices": {"results": [_result(request=BAD)]}}}),
        [FieldError.invalid(RESULTS.index(0).child("request"), BAD, LABEL_MSG),
         FieldError.invalid(RESULTS.index(0).child("request"), BAD, REF_MSG)]),
    "okay-add-allocation-missing-admin-access": (
        _claim({"allocation": {"devices": {"results": [{"request": GOOD, "driver": GOOD, "pool": GOOD,
                                                         "device": GOOD}]}}}), []),
    "invalid-node-selector": (
        _claim({"allocation": {"nodeSelector": {}}}),
        [FieldError.required(STATUS.child("allocation", "nodeSelector", "nodeSelectorTerms"),
                             "must have at least one node selector term")]),
    "add-reservation-and-allocation": (
        _claim(_allocated(reservedFor=[{"resource": "pods", "name": "foo", "uid": "1"}])), []),
    "invalid-reserved-for-no-allocation": (
        _claim({"reservedFor": [{"resource": "pods", "name": "foo", "uid": "1"}]}),
        [FieldError.forbidden(STATUS.child("reservedFor"), "may not be specified when `allocated` is not set")]),
    "invalid-request-name": (
        _claim(_config(source="FromClaim", requests=[GOOD, BAD], opaque=OPAQUE)),
        [FieldError.invalid(CONFIG.index(0).child("requests").index(1), BAD, LABEL_MSG),
         FieldError.invalid(CONFIG.index(0).child("requests").index(1), BAD, REF_MSG)]),
    "invalid-duplicate-request-name": (
        _claim(_config(source="FromClaim", requests=[GOOD, GOOD], opaque=OPAQUE)),
        [FieldError.duplicate(CONFIG.index(0).child("requests").index(1), GOOD)]),
    "configuration": (
        _claim({"allocation": {"devices": {"results": [_result()], "config": [
            {"source": "FromClaim", "opaque": OPAQUE},
            {"source": "", "opaque": OPAQUE},
            {"source": "no-such-source", "opaque": OPAQUE},
            {"source": "FromClaim"},
            {"source": "FromClaim", "opaque": {}},
            {"source": "FromClaim", "opaque": {"driver": GOOD, "parameters": _params(10 * 1024)}},
            {"source": "FromClaim", "opaque": {"driver": GOOD, "parameters": _params(10 * 1024 + 1)}},
        ]}}}),
        [FieldError.required(CONFIG.index(1).child("source"), ""),
         FieldError.not_supported(CONFIG.index(2).child("source"), "no-such-source", ["FromClaim", "FromClass"]),
         FieldError.required(CONFIG.index(3).child("opaque"), ""),
         FieldError.required(CONFIG.index(4).child("opaque", "driver"), ""),
         FieldError.required(CONFIG.index(4).child("opaque", "parameters"), ""),
         FieldError.too_long(CONFIG.index(6).child("opaque", "parameters"), 10 * 1024)]),
    "valid-network-device-status": (
        _claim(_allocated(devices=[{"driver": GOOD, "pool": GOOD, "device": GOOD, "conditions": [],
                                    "data": {"kind": "foo", "apiVersion": "dra.example.com/v1"},
                                    "networkData": {"interfaceName": "net-1", "ips": ["10.9.8.0/24", "2001:db8::/64"],
                                                    "hardwareAddress": "ea:9f:cb:40:b1:7b"}}])), []),
    "invalid-device-status-duplicate": (
        _claim(_allocated(devices=[
            {"driver": GOOD, "pool": GOOD, "device": GOOD,
             "networkData": {"ips": ["2001:db8::1/64", "2001:db8::1/64"]}},
            {"driver": GOOD, "pool": GOOD, "device": GOOD}])),
        [FieldError.duplicate(DEVICES.index(0).child("networkData", "ips").index(1), "2001:db8::1/64"),
         FieldError.duplicate(DEVICES.index(1), _id(GOOD, GOOD, GOOD))]),
    "invalid-network-device-status": (
        _claim(_allocated(devices=[{"driver": GOOD, "pool": GOOD, "device": GOOD, "networkData": {
            "interfaceName": "x" * 257, "hardwareAddress": "x" * 129,
            "ips": ["300.9.8.0/24", "010.009.008.000/24", "2001:0db8::1/64"]}}])),
        [FieldError.too_long(DEVICES.index(0).child("networkData", "interfaceName"), 256),
         FieldError.too_long(DEVICES.index(0).child("networkData", "hardwareAddress"), 128),
         FieldError.invalid(DEVICES.index(0).child("networkData", "ips").index(0), "300.9.8.0/24",
                            "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)"),
         FieldError.invalid(DEVICES.index(0).child("networkData", "ips").index(1), "010.009.008.000/24",
                            'must be in canonical form ("10.9.8.0/24")'),
         FieldError.invalid(DEVICES.index(0).child("networkData", "ips").index(2), "2001:0db8::1/64",
                            'must be in canonical form ("2001:db8::1/64")')]),
    "invalid-network-device-status-with-multi-byte-interface-name-and-hardware-address": (
        _claim(_allocated(devices=[{"driver": GOOD, "pool": GOOD, "device": GOOD, "networkData": {
            "interfaceName": "\U0001d11e" * 256, "hardwareAddress": "\U0001d11e" * 128}}])),
        [FieldError.too_long(DEVICES.index(0).child("networkData", "interfaceName"), 256),
         FieldError.too_long(DEVICES.index(0).child("networkData", "hardwareAddress"), 128)]),
    "invalid-data-device-status-limits": (
        _claim(_allocated(devices=[{"driver": GOOD, "pool": GOOD, "device": GOOD,
                                    "data": _params(10 * 1024 + 1),
                                    "conditions": [{"type": f"test-{i}", "status": "True", "reason": "test_reason",
                                                    "lastTransitionTime": "2024-01-01T00:00:00Z"}
                                                   for i in range(9)],
                                    "networkData": {"ips": [f"10.9.8.{i}/24" for i in range(17)]}}])),
        [FieldError.too_many(DEVICES.index(0).child("conditions"), 9, 8),
         FieldError.too_long(DEVICES.index(0).child("data"), 10 * 1024),
         FieldError.too_many(DEVICES.index(0).child("networkData", "ips"), 17, 16)]),
    "invalid-device-status-no-device": (
        _claim({"devices": [{"driver": "b", "pool": "a", "device": "r"}]}),
        [FieldError.invalid(DEVICES.index(0), _id("b", "a", "r"), "must be an allocated device in the claim")]),
    "valid-add-allocation-with-sub-requests": (
        _claim({"allocation": {"devices": {"results": [_result(request=f"{GOOD}/{GOOD2}")]}}}, first_available=True),
        []),
    "invalid-add-allocation-with-sub-requests-invalid-format": (
        _claim({"allocation": {"devices": {"results": [_result(request=f"{GOOD}/{GOOD}/{GOOD}")]}}},
               first_available=True),
        [FieldError.invalid(RESULTS.index(0).child("request"), f"{GOOD}/{GOOD}/{GOOD}", REF_MSG)]),
    "invalid-add-allocation-with-sub-requests-no-corresponding-sub-request": (
        _claim({"allocation": {"devices": {"results": [_result(request="foo/baz")]}}}, first_available=True),
        [FieldError.invalid(RESULTS.index(0).child("request"), "foo/baz", REF_MSG)]),
    "invalid-add-allocation-with-sub-requests-invalid-request-names": (
        _claim({"allocation": {"devices": {"results": [_result(request=f"{BAD}/{BAD_SUB}")]}}}, first_available=True),
        [FieldError.invalid(RESULTS.index(0).child("request"), BAD, LABEL_MSG),
         FieldError.invalid(RESULTS.index(0).child("request"), BAD_SUB, LABEL_MSG),
         FieldError.invalid(RESULTS.index(0).child("request"), f"{BAD}/{BAD_SUB}", REF_MSG)]),
    "good-binding-conditions": (
        _claim({"allocation": {"devices": {"results": [_result(bindingConditions=["condition1", "condition2"],
                                                               bindingFailureConditions=["condition3"])]}}}), []),
    "too-many-binding-conditions": (
        _claim({"allocation": {"devices": {"results": [_result(
            bindingConditions=[f"condition{i}" for i in range(1, 6)], bindingFailureConditions=["condition6", "condition7"])]}}}),
        [FieldError.too_many(RESULTS.index(0).child("bindingConditions"), 5, 4)]),
    "too-many-binding-failure-conditions": (
        _claim({"allocation": {"devices": {"results": [_result(
            bindingConditions=["condition1", "condition2"],
            bindingFailureConditions=[f"condition{i}" for i in range(3, 8)])]}}}),
        [FieldError.too_many(RESULTS.index(0).child("bindingFailureConditions"), 5, 4)]),
    "invalid-binding-conditions": (
        _claim({"allocation": {"devices": {"results": [_result(
            bindingConditions=["condition1", "condition2!"], bindingFailureConditions=["condition3", "condition4"])]}}}),
        [FieldError.invalid(RESULTS.index(0).child("bindingConditions").index(1), "condition2!", COND_MSG)]),
    "invalid-binding-failure-conditions": (
        _claim({"allocation": {"devices": {"results": [_result(
            bindingConditions=["condition1", "condition2"], bindingFailureConditions=["condition3", "condition4!"])]}}}),
        [FieldError.invalid(RESULTS.index(0).child("bindingFailureConditions").index(1), "condition4!", COND_MSG)]),
    "lacking-binding-conditions-claim-has-binding-failure-conditions": (
        _claim({"allocation": {"devices": {"results": [_result(bindingFailureConditions=["condition3", "condition4"])]}}}),
        [FieldError.invalid(RESULTS.index(0).child("bindingConditions"), None,
                            "bindingConditions are required to use bindingFailureConditions")]),
    "lacking-binding-failure-conditions-claim-has-binding-conditions": (
        _claim({"allocation": {"devices": {"results": [_result(bindingConditions=["condition1", "condition2"])]}}}),
        [FieldError.invalid(RESULTS.index(0).child("bindingFailureConditions"), None,
                            "bindingFailureConditions are required to use bindingConditions")]),
    "valid-add-multi-alloc-devices-with-device-status": (
        _claim({"allocation": {"devices": {"results": [_result(shareID=GOOD_SHARE), _result(shareID=GOOD_SHARE2)]}},
                "devices": [{"driver": GOOD, "pool": GOOD, "device": GOOD, "shareID": GOOD_SHARE},
                            {"driver": GOOD, "pool": GOOD, "device": GOOD, "shareID": GOOD_SHARE2}]}), []),
    "invalid-add-allocated-status-no-share-id": (
        _claim({"allocation": {"devices": {"results": [_result(shareID=GOOD_SHARE)]}},
                "devices": [{"driver": GOOD, "pool": GOOD, "device": GOOD}]}),
        [FieldError.invalid(DEVICES.index(0), _id(GOOD, GOOD, GOOD), "must be an allocated device in the claim")]),
    "invalid-add-allocated-status-mismatch-share-id": (
        _claim({"allocation": {"devices": {"results": [_result(shareID=GOOD_SHARE)]}},
                "devices": [{"driver": GOOD, "pool": GOOD, "device": GOOD, "shareID": GOOD_SHARE2}]}),
        [FieldError.invalid(DEVICES.index(0), _id(GOOD, GOOD, GOOD, GOOD_SHARE2),
                            "must be an allocated device in the claim")]),
    "invalid-add-allocated-status-invalid-share-id": (
        _claim({"allocation": {"devices": {"results": [_result(shareID=BAD_LENGTH_SHARE),
                                                       _result(shareID=BAD_FORMAT_SHARE)]}},
                "devices": [{"driver": GOOD, "pool": GOOD, "device": GOOD, "shareID": BAD_LENGTH_SHARE},
                            {"driver": GOOD, "pool": GOOD, "device": GOOD, "shareID": BAD_FORMAT_SHARE}]}),
        [FieldError.invalid(DEVICES.index(0).child("shareID"), BAD_LENGTH_SHARE,
                            "error validating uid: invalid UUID length: 1"),
         FieldError.invalid(DEVICES.index(1).child("shareID"), BAD_FORMAT_SHARE,
                            "uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` "
                            "with lowercase hexadecimal characters"),
         FieldError.invalid(RESULTS.index(0).child("shareID"), BAD_LENGTH_SHARE,
                            "error validating uid: invalid UUID length: 1"),
         FieldError.invalid(RESULTS.index(1).child("shareID"), BAD_FORMAT_SHARE,
                            "uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` "
                            "with lowercase hexadecimal characters")]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_validate_claim_status(name):
    manifest, want = CASES[name]
    assert _errors(copy.deepcopy(manifest)) == want


def test_result_fields_driver_pool_device_tolerations():
    """validateDeviceRequestAllocationResult's other rules, in its order (not rows of the table:
    they reuse validateDriverName, validatePoolName, validateDeviceToleration)."""
    result = _result(driver="", pool="a/B", device="x_y",
                     tolerations=[{"operator": "Exists", "value": "v"}, {"key": "k!", "operator": "Equal",
                                                                         "value": "no spaces", "effect": "Later"},
                                  {}, {"operator": "Gt"}])
    p = RESULTS.index(0)
    t = p.child("tolerations")
    errors = _errors(_claim({"allocation": {"devices": {"results": [result]}}}))
    assert [(e.path, e.type.name) for e in errors] == [
        (str(p.child("driver")), "REQUIRED"),
        (str(p.child("pool")), "INVALID"),
        (str(p.child("device")), "INVALID"),
        (str(t.index(0).child("value")), "INVALID"),
        (str(t.index(1).child("key")), "INVALID"),
        (str(t.index(1).child("value")), "INVALID"),
        (str(t.index(1).child("effect")), "NOT_SUPPORTED"),
        (str(t.index(2).child("operator")), "REQUIRED"),
        (str(t.index(3).child("operator")), "NOT_SUPPORTED"),
    ]


def test_too_many_results_is_the_only_error_for_them():
    results = [_result(driver="") for _ in range(33)]
    assert _errors(_claim({"allocation": {"devices": {"results": results}}})) == [
        FieldError.too_many(RESULTS, 33, 32)]


def test_a_malformed_allocation_is_refused_when_added():
    """Through the Scheduler: the error names the field, before any plugin sees the claim."""
    s = Scheduler(seed=0)
    with pytest.raises(ValidationError) as caught:
        s.add([_claim({"allocation": {"devices": {"results": [_result(request="nope")]}}})])
    assert str(caught.value) == ('[0]: ResourceClaim.resource.k8s.io "foo" is invalid: status.allocation.devices.'
                                 'results[0].request: Invalid value: "nope": ' + REF_MSG)


def test_device_status_conditions():
    """metav1 ``ValidateConditions`` on ``status.devices[i].conditions`` (upstream's messages):
    a type twice, then each condition's type, status, observedGeneration, lastTransitionTime,
    reason."""
    good = {"type": "Ready", "status": "True", "reason": "Fine", "lastTransitionTime": "2024-01-01T00:00:00Z"}
    conditions = [good, dict(good), {"type": "a b", "status": "Maybe", "observedGeneration": -1, "reason": "9x"}, {}]
    errors = _errors(_claim(_allocated(devices=[{"driver": GOOD, "pool": GOOD, "device": GOOD,
                                                 "conditions": conditions}])))
    c = DEVICES.index(0).child("conditions")
    assert [str(e) for e in errors] == [
        f'{c.index(1)}: Duplicate value: "Ready"',
        f'{c.index(2).child("type")}: Invalid value: "a b": name part must consist of alphanumeric characters, '
        "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
        "or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        f'{c.index(2).child("status")}: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"',
        f'{c.index(2).child("observedGeneration")}: Invalid value: -1: must be greater than or equal to zero',
        f'{c.index(2).child("lastTransitionTime")}: Required value',
        f'{c.index(2).child("reason")}: Invalid value: "9x": a condition reason must start with alphabetic '
        "character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an "
        "alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or "
        "'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')",
        f'{c.index(3).child("type")}: Required value: is required',
        f'{c.index(3).child("status")}: Required value',
        f'{c.index(3).child("lastTransitionTime")}: Required value',
        f'{c.index(3).child("reason")}: Required value',
    ]


def test_shared_device_id_and_nil_slices_print_as_upstream():
    """field.Error renders a SharedDeviceID as its JSON (fields in struct order) and a nil slice as
    ``null`` (the binding-condition list that is absent)."""
    errors = _errors(_claim({"allocation": {"devices": {"results": [_result(bindingConditions=["c1"])]}},
                             "devices": [{"driver": "b", "pool": "a", "device": "r", "shareID": GOOD_SHARE}]}))
    assert [str(e) for e in errors] == [
        'status.devices[0]: Invalid value: {"Driver":"b","Pool":"a","Device":"r","ShareID":"' + GOOD_SHARE
        + '"}: must be an allocated device in the claim',
        "status.allocation.devices.results[0].bindingFailureConditions: Invalid value: null: "
        "bindingFailureConditions are required to use bindingConditions",
    ]
