"""Pods stamped from a template seen before (fastsched.api.templates) are the pods the full decoding
and validation would build, field for field, and get the same errors."""
from __future__ import annotations

import copy
import dataclasses
import random
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.api import Pod, load_objects
from fastsched.api import load as load_module
from fastsched.api.errors import ManifestError
from fastsched.api.templates import PodTemplates
from fastsched.api.validation import ValidationError
from fastsched.testing import SERVICE_ACCOUNT_MOUNT_PATH, SERVICE_ACCOUNT_TOKEN_SOURCE

TEMPLATE = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "web-0", "namespace": "team-a", "labels": {"app": "web"},
                 "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d9",
                                      "uid": "8b6c1f1e-0000-4000-8000-000000000001", "controller": True}]},
    "spec": {"containers": [{"name": "c", "image": "nginx",
                             "resources": {"requests": {"cpu": "250m", "memory": "64Mi"},
                                           "limits": {"cpu": "1", "memory": "128Mi"}}}],
             "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                 {"weight": 10, "podAffinityTerm": {"topologyKey": "zone",
                                                    "labelSelector": {"matchLabels": {"app": "web"}}}}]}},
             "tolerations": [{"key": "gpu", "operator": "Exists"}]},
}


class _NoTemplates(PodTemplates):
    """The full path for every pod."""

    def key(self, document):
        return None


def _pod(manifest, monkeypatch, *, full: bool) -> Pod:
    monkeypatch.setattr(load_module, "_POD_TEMPLATES", _NoTemplates() if full else PodTemplates())
    return load_objects([copy.deepcopy(TEMPLATE), manifest])[1]


def _fields(pod: Pod) -> dict:
    """Every field a pod is compared by, and its request totals (whose caches may or may not be
    filled: they are not compared as such)."""
    out = {f.name: getattr(pod, f.name) for f in dataclasses.fields(pod) if f.compare}
    out.update(uid=pod.uid, manifest=pod.manifest, requests=dict(pod.requests), non_zero_requests=dict(pod.non_zero_requests),
               scoring_requests=dict(pod.scoring_requests))
    return out


def _variant(name="web-1", uid=None, node=None, created=None) -> dict:
    m = copy.deepcopy(TEMPLATE)
    m["metadata"]["name"] = name
    if uid is not None:
        m["metadata"]["uid"] = uid
    if created is not None:
        m["metadata"]["creationTimestamp"] = created
    if node is not None:
        m["spec"]["nodeName"] = node
    return m


@pytest.mark.parametrize("variant", [
    _variant(), _variant(uid="0f0e0d0c-0000-4000-8000-00000000abcd"), _variant(node="node-3"),
    _variant(created="2026-01-02T03:04:05Z", node="n.example.com"),
], ids=["name", "uid", "bound", "created"])
def test_a_stamped_pod_is_the_pod_the_full_path_builds(variant, monkeypatch):
    stamped = _pod(variant, monkeypatch, full=False)
    full = _pod(variant, monkeypatch, full=True)
    assert _fields(stamped) == _fields(full)
    assert stamped.admitted and stamped.manifest is not TEMPLATE


def test_a_stamped_pod_shares_its_templates_spec_objects(monkeypatch):
    monkeypatch.setattr(load_module, "_POD_TEMPLATES", PodTemplates())
    first, second = load_objects([copy.deepcopy(TEMPLATE), _variant()])
    assert second.containers is first.containers and second.affinity is first.affinity
    assert (second.name, second.uid) != (first.name, first.uid)


@pytest.mark.parametrize("variant", [
    _variant(name="Web_1"), _variant(name="x" * 254), _variant(node="Node_3"),
    _variant(created="yesterday"), _variant(uid=7),
], ids=["bad-name", "long-name", "bad-node-name", "bad-timestamp", "uid-type"])
def test_a_per_pod_field_in_error_gets_the_full_paths_error(variant, monkeypatch):
    errors = []
    for full in (False, True):
        with pytest.raises((ValidationError, ManifestError)) as info:
            _pod(variant, monkeypatch, full=full)
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_node_name_with_scheduling_gates_is_not_taken_from_an_ungated_template(monkeypatch):
    monkeypatch.setattr(load_module, "_POD_TEMPLATES", PodTemplates())
    gated = copy.deepcopy(TEMPLATE)
    gated["spec"]["schedulingGates"] = [{"name": "wait"}]
    bound = copy.deepcopy(gated)
    bound["metadata"]["name"] = "web-1"
    bound["spec"]["nodeName"] = "n1"
    with pytest.raises(ValidationError, match="spec.nodeName"):
        load_objects([gated, bound])


def test_unknown_fields_are_reported_for_every_pod(monkeypatch):
    monkeypatch.setattr(load_module, "_POD_TEMPLATES", PodTemplates())
    docs = []
    for i in range(3):
        m = _variant(name=f"web-{i}")
        m["spec"]["containers"][0]["imagePullPolice"] = "Always"
        docs.append(m)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_objects(docs)
    text = " ".join(str(w.message) for w in caught)
    assert "team-a/web-0" in text and "team-a/web-1" in text and "team-a/web-2" in text


def test_resource_claims_take_the_full_path():
    m = copy.deepcopy(TEMPLATE)
    m["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "gpu"}]
    assert PodTemplates().key(m) is None


_NAMES = st.from_regex(r"[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?", fullmatch=True) | st.text(min_size=1, max_size=30)


@settings(max_examples=150, deadline=None)
@given(name=_NAMES, node=st.none() | _NAMES, uid=st.none() | st.text(max_size=40),
       labels=st.dictionaries(st.sampled_from(["app", "tier", "x/y"]), st.sampled_from(["web", "db", ""]),
                              max_size=2),
       cpu=st.sampled_from(["100m", "0.5", "1", "250m"]))
def test_stamped_and_full_path_agree_on_any_variant(name, node, uid, labels, cpu):
    """Whatever the per-pod fields and the template's values, a stamped pod equals the full path's
    pod, or both paths fail with the same error."""
    m = _variant(name=name, uid=uid, node=node)
    m["metadata"]["labels"] = labels
    m["spec"]["containers"][0]["resources"]["requests"]["cpu"] = cpu
    template = copy.deepcopy(m)
    template["metadata"]["name"] = "template-0"
    template["metadata"].pop("uid", None)
    outcomes = []
    saved = load_module._POD_TEMPLATES
    try:
        for cache in (PodTemplates(), _NoTemplates()):
            load_module._POD_TEMPLATES = cache
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    outcomes.append(_fields(load_objects([copy.deepcopy(template), copy.deepcopy(m)])[1]))
            except (ValidationError, ManifestError) as e:
                outcomes.append(str(e))
    finally:
        load_module._POD_TEMPLATES = saved
    assert outcomes[0] == outcomes[1]


def test_template_keys_tell_types_apart_and_refuse_what_marshal_cannot_write():
    templates = PodTemplates()

    def key(value):
        m = copy.deepcopy(TEMPLATE)
        m["spec"]["priority"] = value
        return templates.key(m)

    keys = [key(1), key(1.0), key(True), key("1"), key(None), key([1])]
    assert None not in keys and len(set(keys)) == len(keys)
    assert key(1) == key(1)  # equal manifests, separately built: one template

    class Ordered(dict):  # a dict subclass (e.g. a YAML library's mapping type): the full path
        pass

    m = copy.deepcopy(TEMPLATE)
    m["spec"]["nodeSelector"] = Ordered(zone="a")
    assert templates.key(m) is None
    m = copy.deepcopy(TEMPLATE)
    m["spec"]["nodeSelector"] = {"at": object()}
    assert templates.key(m) is None


def test_equal_manifests_with_shared_parts_get_one_key():
    """marshal's format 2 writes no back-references: a manifest whose parts are shared objects has
    the key of one built afresh."""
    labels = {"app": "web"}
    shared = copy.deepcopy(TEMPLATE)
    shared["metadata"]["labels"] = labels
    shared["spec"]["nodeSelector"] = labels
    fresh = copy.deepcopy(TEMPLATE)
    fresh["spec"]["nodeSelector"] = {"app": "web"}
    assert PodTemplates().key(shared) == PodTemplates().key(fresh)


def _with(path_value: dict) -> dict:
    m = copy.deepcopy(TEMPLATE)
    m["spec"].update(path_value)
    return m


@pytest.mark.parametrize("values", [
    [1, 1, True, True, 1.0, 1.0, 0.0, -0.0, float("nan"), float("nan"), "1", "1", None, None, [1], [1], (1,), [True]],
    [{"a": 1, "b": 2}, {"a": 1, "b": 2}, {"b": 2, "a": 1}, {"a": 1, "b": 2, "c": 3}, {"a": 1}, {"a": True, "b": 2}],
    [["x", "y"], ["x", "y"], ["y", "x"], ["x"], ["x", "y", "z"], ("x", "y"), b"x", b"x", 10**30, 10**30, 10**30 + 1],
])
def test_a_key_reused_from_the_last_manifest_is_the_key_serialization_gives(values):
    """The fast path (a manifest the same as the last one serialized gets its bytes) gives every
    manifest the key a cache that never saw another gives it: exact types, dict order, floats
    (``-0.0 == 0.0``, NaN) and containers of other lengths included."""
    templates = PodTemplates()
    for value in values:
        m = _with({"priority": value})
        assert templates.key(m) == PodTemplates().key(copy.deepcopy(m)), value


def test_a_manifest_changed_in_place_and_passed_again_gets_its_new_key():
    """The fast path compares with a copy of its own: a caller's manifest changed in place (a
    builder that reuses one dict) is not mistaken for the one serialized before."""
    templates = PodTemplates()
    m = copy.deepcopy(TEMPLATE)
    first = templates.key(m)
    m["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "500m"
    m["metadata"]["labels"]["app"] = "db"  # (per pod: the affinity has no label keys)
    second = templates.key(m)
    assert second != first and second == PodTemplates().key(copy.deepcopy(m))


def test_same_values_is_exact():
    from fastsched._kernels._manifest import same_values

    class Sub(dict):
        pass

    assert same_values({"a": [1, "x", None, True, {"b": (2,)}]}, {"a": [1, "x", None, True, {"b": (2,)}]})
    for a, b in [(1, True), (1, 1.0), (0, False), (1.0, 1.0), ("1", 1), ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
                 ([1], (1,)), ({"a": 1}, Sub(a=1)), ([1, 2], [1]), ({"a": 1}, {"a": 1, "b": 1}), (None, False),
                 ({"a": [1]}, {"a": [2]}), (b"x", b"x")]:
        assert not same_values(a, b) and not same_values(b, a), (a, b)


def _meta_spec(meta: dict | None = None, spec: dict | None = None, *, affinity: bool = True) -> dict:
    """TEMPLATE with ``meta`` and ``spec`` fields; its affinity (whose ``matchLabelKeys`` make the
    labels the template's) dropped unless ``affinity``."""
    m = copy.deepcopy(TEMPLATE)
    if not affinity:
        del m["spec"]["affinity"]
    else:
        m["spec"]["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0][
            "podAffinityTerm"]["matchLabelKeys"] = ["app"]
    m["metadata"].update(meta or {})
    m["spec"].update(spec or {})
    return m


def test_the_shared_part_is_compared_without_the_per_pod_fields_wherever_they_are():
    """``same_shared`` skips the per-pod metadata (and labels when per pod) and a bound pod's
    ``spec.nodeName`` as the serialized key leaves them out: per-pod fields anywhere in the
    metadata keep the key; a ``nodeName: null`` kept, a metadata field more or fewer, labels that
    are the template's, a key that is not a string: each gets the key a fresh cache gives it."""
    templates = PodTemplates()
    ordered = {"uid": "u", "name": "web-1", "namespace": "team-a"}
    manifests = [
        _meta_spec(),
        _meta_spec({"name": "web-2", "uid": "u2", "resourceVersion": "7", "creationTimestamp": "2026-01-01T00:00:00Z"}),
        _meta_spec(spec={"nodeName": "n1"}),
        _meta_spec(spec={"nodeName": "n2"}),
        _meta_spec(spec={"nodeName": None}),
        _meta_spec({"annotations": {"a": "b"}}),
        _meta_spec(),
        _meta_spec({"labels": {"app": "db"}}),   # (the affinity has label keys: the template's labels)
        _meta_spec({"labels": {"app": "db"}}, affinity=False),
        _meta_spec({"labels": {"app": "web"}}, affinity=False),  # (per pod now: the same key)
        _meta_spec({1: "x"}),
        _meta_spec({1: "x"}),
    ]
    reordered = copy.deepcopy(TEMPLATE)
    reordered["metadata"] = {**ordered, **{k: v for k, v in reordered["metadata"].items() if k not in ordered}}
    manifests += [reordered, _meta_spec({"generation": 3, "managedFields": []})]
    keys = []
    for m in manifests:
        keys.append(templates.key(m))
        assert keys[-1] == PodTemplates().key(copy.deepcopy(m)), m
    # pods differing only in per-pod fields: the same bytes object, not serialized again
    assert keys[1][-1] is keys[0][-1] and keys[3][-1] is keys[2][-1] and keys[9][-1] is keys[8][-1]
    assert keys[4] != keys[3] and keys[7] != keys[6]


# -- the ServiceAccount token volume: a per-pod name --------------------------------------------------


def _token_pod(name: str, token: str, *, init: bool = False, ephemeral: bool = False, bind_options: bool = False,
               extra_volume: str | None = None) -> dict:
    """A pod as the ServiceAccount admission leaves it: a token volume ``token`` appended to its
    volumes and a read-only mount of it in every (init) container, as ``kubectl get -o yaml``
    prints them."""
    m = copy.deepcopy(TEMPLATE)
    m["metadata"]["name"] = name
    spec = m["spec"]
    spec["volumes"] = [{"name": "data", "emptyDir": {}}]
    if extra_volume is not None:
        spec["volumes"].append({"name": extra_volume, "emptyDir": {}})
    spec["volumes"].append({"name": token, "projected": copy.deepcopy(SERVICE_ACCOUNT_TOKEN_SOURCE)})
    spec["containers"][0]["volumeMounts"] = [{"mountPath": "/data", "name": "data"}]
    spec["containers"].append({"name": "sidecar", "image": "envoy"})
    if init:
        spec["initContainers"] = [{"name": "init", "image": "busybox", "restartPolicy": "Always"}]
    if ephemeral:
        spec["ephemeralContainers"] = [{"name": "debug", "image": "busybox",
                                        "volumeMounts": [{"mountPath": "/d", "name": token}]}]
    for container in (*spec.get("initContainers", ()), *spec["containers"]):
        mount = {"mountPath": SERVICE_ACCOUNT_MOUNT_PATH, "name": token, "readOnly": True}
        if bind_options:
            mount["bindMountOptions"] = ["rbind"]
        container.setdefault("volumeMounts", []).append(mount)
    return m


def _load_both(docs: list[dict]) -> list[tuple]:
    """``docs`` loaded with a template cache and on the full path: the outcome of each (its fields, or
    the error), in pairs."""
    outcomes: list[list] = []
    saved = load_module._POD_TEMPLATES
    try:
        for cache in (PodTemplates(), _NoTemplates()):
            load_module._POD_TEMPLATES = cache
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    outcomes.append([_fields(p) for p in load_objects(copy.deepcopy(docs))])
                except (ValidationError, ManifestError) as e:
                    outcomes.append([str(e)])
    finally:
        load_module._POD_TEMPLATES = saved
    return list(zip(*outcomes))


@pytest.mark.parametrize("options", [{}, {"init": True}, {"ephemeral": True}, {"bind_options": True},
                                     {"init": True, "ephemeral": True, "bind_options": True}],
                         ids=["containers", "init", "ephemeral", "bind-mount-options", "all"])
def test_a_stamped_pod_has_its_own_token_volume_and_mounts(options, monkeypatch):
    """Pods differing only in the token volume's name are stamped from one template, and each has
    the volumes and mounts the full path decodes from its own manifest, field by field."""
    stamped = _stamps(monkeypatch)
    docs = [_token_pod(f"web-{i}", f"kube-api-access-{c * 5}", **options) for i, c in enumerate("bcdfg")]
    pods = load_objects(copy.deepcopy(docs))
    assert stamped == [False, True, True, True, True] and len({PodTemplates().key(d) for d in docs}) == 1
    for pod, doc in zip(pods, docs):
        volumes = doc["spec"]["volumes"]
        assert pod.volumes == tuple(volumes) and pod.volumes[-1]["name"] == volumes[-1]["name"]
        for attr, field_name in (("containers", "containers"), ("init_containers", "initContainers"),
                                 ("ephemeral_containers", "ephemeralContainers")):
            for container, raw in zip(getattr(pod, attr), doc["spec"].get(field_name, ())):
                names = [m["name"] for m in container.volume_mounts]
                assert names == [m["name"] for m in raw.get("volumeMounts", ())]
                assert not any("bindMountOptions" in m for m in container.volume_mounts)
    for stamped_fields, full_fields in _load_both(docs):
        assert stamped_fields == full_fields
    # (stamped: the fields without the token are the template's objects)
    assert pods[3].tolerations is pods[0].tolerations and pods[3].affinity is pods[0].affinity


def test_the_token_name_is_per_pod_only_where_it_names_the_token_volume():
    """Only the first ``kube-api-access-`` volume's name, where it is a volume's or a mount's name, is
    per pod: a mount of another such volume, the name elsewhere (a container's env), or a mount of
    the token in one more container give another key."""
    key = PodTemplates().key
    base = key(_token_pod("web-0", "kube-api-access-bbbbb"))
    assert key(_token_pod("web-1", "kube-api-access-ccccc")) == base
    assert key(_token_pod("web-0", "kube-api-access-bbbbb", extra_volume="kube-api-access-zzzzz")) != \
        key(_token_pod("web-0", "kube-api-access-ccccc", extra_volume="kube-api-access-zzzzz")), \
        "the first such volume is the token: the second one's name is the template's"
    other = _token_pod("web-1", "kube-api-access-ccccc")
    other["spec"]["containers"][1]["volumeMounts"][0]["name"] = "kube-api-access-bbbbb"  # not its token
    assert key(other) != base
    annotated = _token_pod("web-1", "kube-api-access-ccccc")
    annotated["spec"]["containers"][0]["env"] = [{"name": "TOKEN", "value": "kube-api-access-ccccc"}]
    first = _token_pod("web-0", "kube-api-access-bbbbb")
    first["spec"]["containers"][0]["env"] = [{"name": "TOKEN", "value": "kube-api-access-bbbbb"}]
    assert key(annotated) != key(first)
    # the places are part of the key: a manifest holding the placeholder where another has the token
    # does not get that one's key
    placeholder = _token_pod("web-1", "kube-api-access-ccccc")
    placeholder["spec"]["containers"][1]["volumeMounts"][0]["name"] = ""
    assert key(placeholder) != base


_TOKEN_NAMES = st.builds(lambda s: "kube-api-access-" + s, st.text(max_size=8)) | _NAMES


@settings(max_examples=120, deadline=None)
@given(tokens=st.lists(_TOKEN_NAMES, min_size=2, max_size=4), init=st.booleans(), ephemeral=st.booleans(),
       bind_options=st.booleans(), swap=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2)), max_size=2))
def test_stamped_and_full_path_agree_on_token_variants(tokens, init, ephemeral, bind_options, swap):
    """Pods with token names of any kind (with or without the prefix, any characters), some mounts
    naming another pod's token, loaded in one cache: each stamped pod is the full path's pod."""
    docs = [_token_pod(f"web-{i}", token, init=init, ephemeral=ephemeral, bind_options=bind_options)
            for i, token in enumerate(tokens)]
    for pod_index, container_index in swap:
        doc = docs[pod_index % len(docs)]
        containers = doc["spec"]["containers"]
        mounts = containers[container_index % len(containers)]["volumeMounts"]
        mounts[-1]["name"] = tokens[(pod_index + 1) % len(tokens)]
    for stamped_fields, full_fields in _load_both(docs):
        assert stamped_fields == full_fields


# -- StatefulSet and Indexed Job pods: hostname, claims' names, annotations, generateName per pod -----
_INDEX = "batch.kubernetes.io/job-completion-index"


def sts_pod(ordinal: int, *, claims=("data", "logs"), affinity: bool = False, subdomain: str = "db",
            token: str | None = None, label_keys: str | None = None, spread: bool = False) -> dict:
    """A StatefulSet's pod as ``newStatefulSetPod`` (``updateIdentity``, ``updateStorage``) makes it
    and a dump prints it: name ``db-<ordinal>``, its own labels, hostname and claims."""
    name = f"db-{ordinal}"
    spec = {"containers": [{"name": "db", "image": "postgres:16",
                            "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}},
                            "volumeMounts": [{"name": c, "mountPath": f"/{c}"} for c in claims]}],
            "hostname": name, "subdomain": subdomain,
            "volumes": [*({"name": c, "persistentVolumeClaim": {"claimName": f"{c}-{name}"}} for c in claims),
                        {"name": "config", "configMap": {"name": "db-config"}}]}
    if affinity:
        spec["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                              "labelSelector": {"matchLabels": {"app": "db"}}}}]}}
        if label_keys is not None:  # (any spelling: the decoder's field name, or one it folds)
            term = spec["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]
            term["podAffinityTerm"][label_keys] = ["statefulset.kubernetes.io/pod-name"]
    if spread:
        spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway",
                                              "labelSelector": {"matchLabels": {"app": "db"}}}]
        if label_keys is not None and not affinity:
            spec["topologySpreadConstraints"][0][label_keys] = ["controller-revision-hash"]
    if token is not None:
        spec["volumes"].append({"name": token, "projected": {"sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}]}})
        spec["containers"][0]["volumeMounts"].append(
            {"name": token, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": True})
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "generateName": "db-", "namespace": "team-a",
                         "labels": {"app": "db", "controller-revision-hash": "db-5f8d6c",
                                    "statefulset.kubernetes.io/pod-name": name,
                                    "apps.kubernetes.io/pod-index": str(ordinal)},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db",
                                              "uid": "8b6c1f1e-0000-4000-8000-000000000002",
                                              "controller": True, "blockOwnerDeletion": True}]},
            "spec": spec}


def job_pod(index: int, suffix: str = "abcde", *, subdomain: bool = True, extra_annotations=None) -> dict:
    """An Indexed Job's pod as ``manageJob`` makes it (``addCompletionIndexAnnotation``, the label,
    ``podGenerateNameWithIndex``, the hostname with a subdomain, ``addCompletionIndexEnvVariables``)
    and the API server names it."""
    spec = {"containers": [{"name": "worker", "image": "trainer:3",
                            "resources": {"requests": {"cpu": "1", "memory": "2Gi"}},
                            "env": [{"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
                                "fieldPath": f"metadata.labels['{_INDEX}']"}}}]}],
            "restartPolicy": "Never"}
    if subdomain:
        spec["subdomain"] = "train"
        spec["hostname"] = f"train-{index}"
    annotations = {_INDEX: str(index), **(extra_annotations or {})}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"train-{index}-{suffix}", "generateName": f"train-{index}-", "namespace": "ml",
                         "labels": {"job-name": "train", "batch.kubernetes.io/job-name": "train", _INDEX: str(index)},
                         "annotations": annotations, "finalizers": ["batch.kubernetes.io/job-tracking"],
                         "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "train",
                                              "uid": "8b6c1f1e-0000-4000-8000-000000000003",
                                              "controller": True, "blockOwnerDeletion": True}]},
            "spec": spec}


def _stamps(monkeypatch) -> list[bool]:
    """Whether each pod (of a later load) was stamped."""
    stamped: list[bool] = []

    class Counting(PodTemplates):
        def stamp(self, key, document):
            pod = super().stamp(key, document)
            stamped.append(pod is not None)
            return pod

    monkeypatch.setattr(load_module, "_POD_TEMPLATES", Counting())
    return stamped


@pytest.mark.parametrize("build", [
    lambda i: sts_pod(i), lambda i: sts_pod(i, claims=()), lambda i: sts_pod(i, token=f"kube-api-access-{'bcdfg'[i]}z"),
    lambda i: sts_pod(i, affinity=True, spread=True), lambda i: job_pod(i), lambda i: job_pod(i, subdomain=False),
], ids=["statefulset", "statefulset-no-claims", "statefulset-token", "statefulset-affinity", "indexed-job",
        "indexed-job-no-subdomain"])
def test_controller_pods_are_stamped_from_one_template_as_the_full_path_builds_them(build, monkeypatch):
    docs = [build(i) for i in range(5)]
    stamped = _stamps(monkeypatch)
    pods = load_objects(copy.deepcopy(docs))
    assert stamped == [False, True, True, True, True]
    for pod, doc in zip(pods, docs):
        assert pod.volumes == tuple(doc["spec"].get("volumes", ()))
        assert dict(pod.annotations) == doc["metadata"].get("annotations", {})
        assert pod.generate_name == doc["metadata"]["generateName"] and pod.manifest["spec"] == doc["spec"]
    assert pods[3].requests is pods[0].requests  # (the template's cached totals: stamped)
    for stamped_fields, full_fields in _load_both(docs):
        assert stamped_fields == full_fields


@pytest.mark.parametrize("label_keys", ["matchLabelKeys", "mismatchLabelKeys", "MatchLabelKeys", "match_label_keys"])
@pytest.mark.parametrize("where", ["affinity", "spread"])
def test_labels_are_the_templates_only_where_label_keys_read_them(label_keys, where):
    """Without ``matchLabelKeys``/``mismatchLabelKeys`` neither the decoder nor validation reads a
    pod's labels: a StatefulSet with anti-affinity or spread constraints has one template; with them
    (any spelling) each label set is a template of its own."""
    key = PodTemplates().key
    options = {"affinity": where == "affinity", "spread": where == "spread"}
    assert key(sts_pod(1, **options)) == key(sts_pod(2, **options)) != key(sts_pod(2))
    assert key(sts_pod(1, label_keys=label_keys, **options)) != key(sts_pod(2, label_keys=label_keys, **options))


def test_per_pod_places_are_part_of_the_key():
    """A claim's name is per pod only where it is a string claimName; a hostname's presence,
    a claim name of another type, or one more claim give another key."""
    key = PodTemplates().key
    base = key(sts_pod(0))
    no_hostname = sts_pod(1)
    del no_hostname["spec"]["hostname"]
    number = sts_pod(1)
    number["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] = 7
    assert key(no_hostname) != base and key(number) not in (None, base)
    assert key(sts_pod(1, claims=("data", "logs", "wal"))) != base
    bad_type = sts_pod(1)
    bad_type["spec"]["hostname"] = 3
    assert key(bad_type) is None


def _outcomes(docs):
    pairs = _load_both(docs)
    return [a for a, _ in pairs], [b for _, b in pairs]


_HOSTNAMES = st.sampled_from(["db-1", "Db_1", "x" * 64, "", "a.b", "-x"]) | st.text(max_size=12)
_KEYS = st.sampled_from([_INDEX, "example.com/note", "bad key", "UPPER/x", "a/b/c", "x" * 64]) | st.text(max_size=8)


@settings(max_examples=120, deadline=None)
@given(ordinals=st.lists(st.integers(0, 20), min_size=2, max_size=4), hostname=st.none() | _HOSTNAMES,
       claim=st.none() | st.text(max_size=10) | st.integers(), generate_name=st.none() | _HOSTNAMES | st.integers(),
       at=st.integers(0, 3), token=st.booleans(), affinity=st.booleans(), spread=st.booleans(),
       label_keys=st.none() | st.sampled_from(["matchLabelKeys", "mismatchLabelKeys"]),
       label=st.none() | st.sampled_from(["db-9", "Bad Value", "", "x" * 64]))
def test_stamped_and_full_path_agree_on_statefulset_variants(ordinals, hostname, claim, generate_name, at, token,
                                                             affinity, spread, label_keys, label):
    """StatefulSet pods (with anti-affinity, spread constraints, label keys or not), one of them
    with a hostname, a claim name, a generateName or a pod-name label of any kind (refused, another
    type, empty): each pod the full path's, or the same error."""
    docs = [sts_pod(o, token=f"kube-api-access-{o:05d}" if token else None, affinity=affinity, spread=spread,
                    label_keys=label_keys) for o in ordinals]
    doc = docs[at % len(docs)]
    if hostname is not None:
        doc["spec"]["hostname"] = hostname
    if claim is not None:
        doc["spec"]["volumes"][1]["persistentVolumeClaim"]["claimName"] = claim
    if generate_name is not None:
        doc["metadata"]["generateName"] = generate_name
    if label is not None:
        doc["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] = label
    stamped, full = _outcomes(docs)
    assert stamped == full


@settings(max_examples=120, deadline=None)
@given(indexes=st.lists(st.integers(0, 99), min_size=2, max_size=4), key=_KEYS,
       value=st.text(max_size=5) | st.integers() | st.just("v" * (256 * 1024)), at=st.integers(0, 3),
       hostname=st.none() | _HOSTNAMES, unnamed=st.booleans())
def test_stamped_and_full_path_agree_on_indexed_job_variants(indexes, key, value, at, hostname, unnamed):
    """Indexed Job pods, one of them with another annotation of any kind (a key ValidateAnnotations
    refuses, a value of another type, over the 256 KiB total), a hostname of any kind, or no name
    (generateName alone): each pod the full path's, or the same error."""
    docs = [job_pod(ix, suffix="".join(random.Random(ix).choice("bcdfg") for _ in range(5))) for ix in indexes]
    doc = docs[at % len(docs)]
    doc["metadata"]["annotations"][key] = value
    if hostname is not None:
        doc["spec"]["hostname"] = hostname
    if unnamed:
        del doc["metadata"]["name"]
    stamped, full = _outcomes(docs)
    assert stamped == full


@pytest.mark.parametrize("change", [
    lambda d: d["metadata"]["annotations"].update({"bad key": "x"}),
    lambda d: d["metadata"]["annotations"].update({"big": "v" * (256 * 1024)}),
    lambda d: d["metadata"].update(generateName="Train_1-"),
    lambda d: d["spec"].update(hostname="Train_1"),
    lambda d: (d["metadata"].pop("name"), d["metadata"].pop("generateName")),
], ids=["annotation-key", "annotation-size", "generate-name", "hostname", "no-name"])
def test_a_refused_per_pod_value_takes_the_full_path(change, monkeypatch):
    docs = [job_pod(0), job_pod(1)]
    change(docs[1])
    stamped = _stamps(monkeypatch)
    try:
        load_objects(copy.deepcopy(docs))
    except Exception:  # noqa: BLE001 - whether the full path refuses it is the full path's business
        pass
    assert stamped == [False, False]
    stamped_outcome, full_outcome = _outcomes(docs)
    assert stamped_outcome == full_outcome


def test_fields_of_a_stamped_pod_are_not_the_templates():
    """The per-pod values are each pod's: nothing of one pod's is left on another."""
    a, b = load_objects([job_pod(3), job_pod(4, "zzzzz")])
    assert (a.annotations[_INDEX], b.annotations[_INDEX]) == ("3", "4")
    assert (a.generate_name, b.generate_name) == ("train-3-", "train-4-")
    c, d = load_objects([sts_pod(0), sts_pod(1)])
    assert c.volumes[0]["persistentVolumeClaim"]["claimName"] == "data-db-0"
    assert d.volumes[0]["persistentVolumeClaim"]["claimName"] == "data-db-1"
    assert _fields(d)["manifest"]["spec"]["hostname"] == "db-1"


def _eph_pod(name: str) -> dict:
    """A pod with a generic ephemeral volume (its claim ``<pod>-scratch``) and the token volume."""
    doc = sts_pod(0, claims=(), token=f"kube-api-access-{name[-5:]}")
    doc["metadata"]["name"] = name
    doc["spec"]["volumes"].append({"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}})
    return doc


@pytest.mark.parametrize("change, message, ephemeral", [
    (lambda d: d["spec"]["volumes"][1]["persistentVolumeClaim"].update(claimName=""),
     "spec.volumes[1].persistentVolumeClaim.claimName: Required value", False),
    (lambda d: d["spec"]["volumes"][1]["persistentVolumeClaim"].update(claimName=""),
     "spec.volumes[1].persistentVolumeClaim.claimName: Required value", True),
    (lambda d: d["spec"].update(hostname="Db_1"), 'spec.hostname: Invalid value: "Db_1": a lowercase RFC 1123 label',
     False),
    (lambda d: d["spec"]["volumes"][1]["persistentVolumeClaim"].update(claimName="db-1-scratch"),
     'spec.volumes[1].persistentVolumeClaim.claimName: Invalid value: "db-1-scratch": must not reference a PVC '
     "that gets created for an ephemeral volume", True),
], ids=["claim-name-empty", "claim-name-empty-with-ephemeral", "hostname", "claim-of-an-ephemeral-volume"])
def test_a_refused_volume_or_hostname_of_a_stamped_pod_gets_the_full_paths_message(change, message, ephemeral,
                                                                                   monkeypatch):
    """The per-pod fields validation reads (a claim's name, the hostname) refused in the second pod
    of a template (with an ephemeral volume or not: then all its volumes are validated per pod):
    that pod takes the full path, whose error names the field."""
    docs = [sts_pod(0), sts_pod(1)]
    for d in docs if ephemeral else ():
        d["spec"]["volumes"].append({"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}})
    change(docs[1])
    stamped = _stamps(monkeypatch)
    with pytest.raises(ValidationError) as info:
        load_objects(copy.deepcopy(docs))
    assert stamped == [False, False] and message in str(info.value) and 'Pod "db-1" is invalid' in str(info.value)
    stamped_outcome, full_outcome = _outcomes(docs)
    assert stamped_outcome == full_outcome


def test_a_refused_token_volume_name_takes_the_full_path(monkeypatch):
    docs = [sts_pod(0, token="kube-api-access-bcdfg"), sts_pod(1, token="kube-api-access-")]
    stamped = _stamps(monkeypatch)
    with pytest.raises(ValidationError, match=r'spec\.volumes\[3\]\.name: Invalid value: "kube-api-access-": '
                                              "a lowercase RFC 1123 label"):
        load_objects(copy.deepcopy(docs))
    assert stamped == [False, False]


def test_an_ephemeral_claim_name_too_long_for_one_pod_of_a_template(monkeypatch):
    """The claim ``<pod>-<volume>`` of an ephemeral volume is validated with each pod's own name:
    a name 249 characters long (claim name 257) is refused for that pod though stamped from a
    template whose first pod passed."""
    long_name = "d" * 244 + "-bcdf"
    docs = [_eph_pod("db-0-bcdf"), _eph_pod(long_name)]
    stamped = _stamps(monkeypatch)
    with pytest.raises(ValidationError) as info:
        load_objects(copy.deepcopy(docs))
    assert stamped == [False, False]
    assert f'spec.volumes[2].name: Invalid value: "scratch": PVC name "{long_name}-scratch": must be no more than ' \
           "253 characters" in str(info.value)
    ok = [_eph_pod("db-0-bcdf"), _eph_pod("db-1-bcdg")]
    stamped = _stamps(monkeypatch)  # (a new cache)
    load_objects(copy.deepcopy(ok))
    assert stamped == [False, True]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(names=st.lists(st.sampled_from(["db-0-bcdfg", "d" * 240 + "-bcdfg", "db-1-bcdfh", "x" * 253]),
                      min_size=2, max_size=3),
       claim=st.none() | st.sampled_from(["", "db-1-bcdfh-scratch", "data"]), token=st.sampled_from(
           ["kube-api-access-zzzzz", "kube-api-access-", "kube-api-access-Z"]), at=st.integers(0, 2))
def test_stamped_and_full_path_agree_on_volume_variants(names, claim, token, at):
    """Pods of one template with an ephemeral volume, claims and the token volume, their names,
    one pod's claim name and token name varied: each pod the full path's, or the same error."""
    docs = [_eph_pod(n) for n in names]
    doc = docs[at % len(docs)]
    for d in docs:
        d["spec"]["volumes"].insert(0, {"name": "data", "persistentVolumeClaim": {"claimName": "data-" + d["metadata"]["name"][:40]}})
    if claim is not None:
        doc["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] = claim
    for v in doc["spec"]["volumes"]:
        if v["name"].startswith("kube-api-access-"):
            v["name"] = token
    for c in doc["spec"]["containers"]:
        for m in c["volumeMounts"]:
            if m["name"].startswith("kube-api-access-"):
                m["name"] = token
    stamped, full = _outcomes(docs)
    assert stamped == full
