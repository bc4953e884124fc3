"""resource.k8s.io/v1 objects: loading, defaulting, the API server's validation messages."""
from __future__ import annotations

import pytest

from fastsched import Scheduler
from fastsched.api import load_objects
from fastsched.api.resource import DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice
from fastsched.api.validation import ValidationError


def one(text: str):
    (obj,) = load_objects(text)
    return obj


SLICE = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-gpu}
spec:
  driver: gpu.example.com
  nodeName: node-1
  pool: {name: node-1, generation: 3, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes:
      model: {string: a100}
      numa: {int: 1}
      gpu.example.com/ready: {bool: true}
      driverVersion: {version: 1.2.3}
    capacity:
      memory: {value: 40Gi}
"""


def test_slice_is_read():
    s = one(SLICE)
    assert isinstance(s, ResourceSlice)
    assert (s.driver, s.node_name, s.pool_name, s.pool_generation, s.resource_slice_count) == (
        "gpu.example.com", "node-1", "node-1", 3, 1)
    (d,) = s.devices
    assert {k: (a.kind, a.value) for k, a in d.attributes.items()} == {
        "model": ("string", "a100"), "numa": ("int", 1), "gpu.example.com/ready": ("bool", True),
        "driverVersion": ("version", "1.2.3")}
    assert d.capacity["memory"].nano_value() == 40 * 2**30 * 10**9


def test_claim_defaults():
    c = one("""
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c}
spec:
  devices:
    requests:
    - name: a
      exactly: {deviceClassName: gpu}
    - name: b
      firstAvailable:
      - {name: x, deviceClassName: gpu}
      - {name: "y", deviceClassName: gpu, allocationMode: All}
""")
    assert isinstance(c, ResourceClaim) and c.namespace == "default"
    a, b = c.requests
    assert (a.exactly.allocation_mode, a.exactly.count) == ("ExactCount", 1)
    assert [(s.name, s.allocation_mode, s.count) for s in b.first_available] == [("x", "ExactCount", 1),
                                                                                 ("y", "All", 0)]


def test_template_and_class_are_read():
    t = one("""
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t, namespace: ml}
spec:
  metadata: {labels: {team: a}}
  spec:
    devices:
      requests: [{name: g, exactly: {deviceClassName: gpu, count: 2}}]
""")
    assert isinstance(t, ResourceClaimTemplate) and t.namespace == "ml" and t.requests[0].exactly.count == 2
    assert t.claim_metadata == {"labels": {"team": "a"}}
    dc = one("""
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
  config: [{opaque: {driver: gpu.example.com, parameters: {a: b}}}]
""")
    assert isinstance(dc, DeviceClass) and dc.selectors[0].cel == 'device.driver == "gpu.example.com"'


@pytest.mark.parametrize("manifest,message", [
    ("""
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c}
spec:
  devices:
    requests: [{name: a, exactly: {deviceClassName: gpu, count: 0}}]
""", 'ResourceClaim.resource.k8s.io "c" is invalid: spec.devices.requests[0].exactly.count: Invalid value: 0: must be greater '
     'than zero'),
    ("""
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c}
spec:
  devices:
    requests: [{name: a, exactly: {deviceClassName: gpu, allocationMode: Some}}]
""", 'spec.devices.requests[0].exactly.allocationMode: Unsupported value: "Some": supported values: "All", '
     '"ExactCount"'),
    ("""
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c}
spec:
  devices:
    requests: [{name: a}]
""", "spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required"),
    ("""
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c}
spec:
  devices:
    requests: [{name: a, exactly: {deviceClassName: gpu, selectors: [{cel: {expression: 'device.driver =='}}]}}]
""", "spec.devices.requests[0].exactly.selectors[0].cel.expression: Invalid value: \"device.driver ==\": "
     "compilation failed: ERROR: <input>:1:"),
    ("""
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c}
spec:
  devices:
    requests: [{name: a, exactly: {deviceClassName: gpu}}]
    constraints: [{requests: [b], matchAttribute: gpu.example.com/numa}]
""", "spec.devices.constraints[0].requests[0]: Invalid value: \"b\": must be the name of a request in the claim"),
    ("""
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c}
spec:
  devices:
    requests: [{name: a, exactly: {deviceClassName: gpu}}, {name: a, exactly: {deviceClassName: gpu}}]
""", 'spec.devices.requests[1].name: Duplicate value: "a"'),
    ("""
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  pool: {name: p, resourceSliceCount: 1}
  devices: [{name: d}]
""", "spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is "
     "required"),
    ("""
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  nodeName: "n"
  pool: {name: p, resourceSliceCount: 0}
  devices: [{name: d, attributes: {v: {version: "1.02"}}}]
""", "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero"),
    ("""
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors: [{cel: {expression: 'noSuchVar'}}]
""", "spec.selectors[0].cel.expression: Invalid value: \"noSuchVar\": compilation failed: ERROR: <input>:1:1: "
     "undeclared reference to 'noSuchVar'"),
])
def test_validation_messages(manifest, message):
    with pytest.raises(ValidationError) as excinfo:
        load_objects(manifest)
    assert message in str(excinfo.value)


_TEN = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"


@pytest.mark.parametrize("expression, refused", [
    # validation_resourceclaim_test.go "CEL-cost" (85,555,551)
    (f"{_TEN}.all(x, {_TEN}.all(y, {_TEN}.all(z, {_TEN}.all(z2, {_TEN}.all(z3, {_TEN}.all(z4, "
     f"{_TEN}.all(z5, int('1'.find('[0-9]*')) < 100)))))))", True),
    (f"{_TEN}.all(x, {_TEN}.all(y, {_TEN}.all(z, {_TEN}.all(z2, {_TEN}.all(z3, int('1') < 100)))))", False),  # 655,551
    # nested over the device's 32 attribute domains: 12,785,859 and 399,555 (tests/api/data/dra_cel_cost.json)
    ("device.attributes.all(a, device.attributes.all(b, device.attributes.all(c, device.attributes.all(d, a == d))))",
     True),
    ("device.attributes.all(a, device.attributes.all(b, device.attributes.all(c, a == c)))", False),
    # join on a list literal: its elements' size is unknown, the estimate near 2^64/10
    ('["a", "b"].join("-") == "a-b"', True),
])
def test_selector_cost_limit(expression, refused):
    """validateCELExpression: a selector whose static cost estimate exceeds
    CELSelectorExpressionMaxCost (1,000,000) is refused, on claims and on classes alike."""
    claim = f"""
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: c, namespace: default}}
spec:
  devices:
    requests: [{{name: a, exactly: {{deviceClassName: gpu, selectors: [{{cel: {{expression: {expression!r}}}}}]}}}}]
"""
    dc = f"""
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {{name: gpu}}
spec:
  selectors: [{{cel: {{expression: {expression!r}}}}}]
"""
    for manifest, path in ((claim, "spec.devices.requests[0].exactly.selectors[0].cel.expression"),
                           (dc, "spec.selectors[0].cel.expression")):
        if not refused:
            load_objects(manifest)
            continue
        with pytest.raises(ValidationError) as excinfo:
            load_objects(manifest)
        assert str(excinfo.value).endswith(f"{path}: Forbidden: too complex, exceeds cost limit")


@pytest.mark.parametrize("expression, message", [
    ("device.driver", "must evaluate to bool or the unknown type, not string"),
    ('device.capacity["gpu.example.com"].memory', "must evaluate to bool or the unknown type, not kubernetes.Quantity"),
    ("device.attributes", "must evaluate to bool or the unknown type, "
                          "not map(string, map(string, google.protobuf.Any))"),
    # the attribute value type is allowed (it may hold a bool): decided when evaluated
    ('device.attributes["gpu.example.com"].healthy', None),
])
def test_selector_output_type(expression, message):
    """CompileCELExpression's validateOutputType: a selector must yield bool (or an attribute value);
    reported as Invalid with the expression, before any cost check."""
    manifest = f"""
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {{name: gpu}}
spec:
  selectors: [{{cel: {{expression: {expression!r}}}}}]
"""
    if message is None:
        load_objects(manifest)
        return
    with pytest.raises(ValidationError) as excinfo:
        load_objects(manifest)
    assert str(excinfo.value).endswith(f'spec.selectors[0].cel.expression: Invalid value: "{expression}": {message}'
                                       .replace('"gpu.example.com"', '\\"gpu.example.com\\"'))


def test_reserved_for_past_its_limit_is_too_many():
    """ResourceClaimReservedForMaxSize (256): validateSet's field.TooMany, the set's only error."""
    entries = "".join(f"\n  - {{resource: pods, name: p{i}, uid: u{i}}}" for i in range(257))
    manifest = f"""
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: c, namespace: default}}
spec:
  devices:
    requests: [{{name: a, exactly: {{deviceClassName: gpu}}}}]
status:
  allocation: {{devices: {{results: [{{request: a, driver: gpu.example.com, pool: p, device: d}}]}}}}
  reservedFor:{entries}
"""
    with pytest.raises(ValidationError) as excinfo:
        load_objects(manifest)
    assert str(excinfo.value).endswith('ResourceClaim.resource.k8s.io "c" is invalid: status.reservedFor: Too many: 257: '
                                       'must have at most 256 items')
    # each entry as validateResourceClaimUserReference checks it, then validateSet's uniqueness
    entries = "\n  - {resource: pods, name: p0, uid: u0}\n  - {resource: pods, uid: u1}\n  - {name: p2, uid: u0}"
    with pytest.raises(ValidationError) as excinfo:
        load_objects(manifest.split("  reservedFor:")[0] + "  reservedFor:" + entries + "\n")
    assert str(excinfo.value).endswith(
        'ResourceClaim.resource.k8s.io "c" is invalid: [status.reservedFor[1].name: Required value, '
        'status.reservedFor[2].resource: Required value, status.reservedFor[2]: Duplicate value: "u0"]')


def test_invalid_version_attribute():
    with pytest.raises(ValidationError) as excinfo:
        load_objects(SLICE.replace("version: 1.2.3", "version: v1"))
    assert "spec.devices[0].attributes[driverVersion].version: Invalid value: \"v1\": must be a string " \
           "compatible with semver.org spec 2.0.0" in str(excinfo.value)


def test_scheduler_shows_claims_after_a_run_and_refuses_duplicates():
    sched = Scheduler(seed=0)
    sched.add(SLICE)
    with pytest.raises(Exception) as excinfo:
        sched.add(SLICE)
    assert "already exists" in str(excinfo.value)
    (slice_manifest,) = sched.objects("ResourceSlice")
    assert slice_manifest["spec"]["pool"]["generation"] == 3


@pytest.mark.parametrize("claims,container_claims,message", [
    ("[{name: a}]", "[]", "spec.resourceClaims[0]: Invalid value: {\"name\":\"a\"}: must specify one of: "
                          "`resourceClaimName`, `resourceClaimTemplateName`"),
    ("[{name: a, resourceClaimName: x, resourceClaimTemplateName: t}]", "[]",
     "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"),
    ("[{name: a, resourceClaimName: x}, {name: a, resourceClaimName: 'y'}]", "[]",
     'spec.resourceClaims[1].name: Duplicate value: "a"'),
    ("[{name: a, resourceClaimName: x}]", "[{name: b}]",
     'spec.containers[0].resources.claims[0].name: Unsupported value: "b": supported values: "a"'),
    ("[{name: a, resourceClaimName: Bad_Name}]", "[]", "spec.resourceClaims[0].resourceClaimName: Invalid value: "
                                                       "\"Bad_Name\": a lowercase RFC 1123 subdomain"),
])
def test_pod_resource_claims_validation(claims, container_claims, message):
    with pytest.raises(ValidationError) as excinfo:
        load_objects(f"""
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  containers: [{{name: c, image: x, resources: {{claims: {container_claims}}}}}]
  resourceClaims: {claims}
""")
    assert message in str(excinfo.value)
