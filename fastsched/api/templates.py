"""Pods stamped from one template: decoded and validated once per distinct template.

Users' pods come one manifest each: a cluster dump, a workload file, upstream's scheduler_perf
templates rendered per pod. Most of them are the same manifest but for their per-pod fields: the
name, the uid, the creation time, the resourceVersion, managedFields and generation the API server
writes, the status (a dump's pod IP, start time, conditions), the labels (see below) and, for a
bound pod, ``spec.nodeName``. Decoding, building and validating such a pod costs about 40 µs; this module makes
it the cost of one serialization of the manifest's shared part and one copy.

:class:`PodTemplates` maps the *template key* of a manifest (everything but the per-pod fields, as
``marshal`` bytes: they tell ``1`` from ``"1"``, ``1.0`` and ``True``, and two manifests have the
same key only when they hold equal values of the same exact types in the same order; marshal writes
them in 2 µs where ``repr`` took 5; plus whether the pod is bound and whether it is named) to the
first Pod decoded and validated from it. A manifest whose shared part is the same as the last one
serialized (pods of one template come one after another) is not serialized again: the compiled
``same_shared`` compares it with a private copy of that one (read back from its bytes: the caller
may change its manifest in place and pass it again), exactly as marshal's bytes would (same exact
types, same dict order; floats and other types always serialized), and it takes those bytes. Pods
of several templates in turn (a watch or a listing by creation time of Deployments scaled up
together, a listing node by node) are found the same way among the last :data:`RECENT_SHARED`
shared parts serialized: the compiled ``fingerprint`` (a hash of the shared part) says which one to
compare with, and ``same_shared`` decides, as for the last one (a fingerprint is never taken for
proof: two manifests with different shared parts never share bytes). A later manifest with the same key is that Pod with its
own per-pod fields: the decoder would build the same shared fields from the same values, and
validation depends on the per-pod fields only through the name and node name (the API server does
not validate a pod's status on create, and fastsched keeps none of resourceVersion, managedFields
and generation), which are checked here by the validation's own check (``dns1123_subdomain_errors``),
and through the per-pod spec fields below (the hostname, the volumes).
The per-pod fields are checked per pod as the full path checks them: the schema decoder on those
fields alone (a field the schema does not know there, a case-folded name or a value of another
type sends the pod to the full path, for its warning or its error), and the status read by the
decoder's own :func:`~fastsched.api.decode.pod_status_fields`.

A manifest without a name (``generateName``: the Scheduler names it when it is added) is stamped
from a template that had none either (validation skips the name then, and checks the shared
``generateName``). Whatever falls outside that argument takes the full path: a template whose
manifest the decoder had to rewrite (unknown or client-style field names: their warnings are given
per pod), fields at the top level besides apiVersion, kind, metadata, spec and status, a pod with
``spec.resourceClaims`` (their generated claims' names are checked with the pod's name) or
``spec.schedulingGroup`` (kept or dropped by the load's feature gates), a per-pod field of another
type or a malformed timestamp (so the full path reports it with its usual error).

The ServiceAccount admission plugin's token volume is per pod too: every pod that does not opt
out gets a projected volume ``kube-api-access-<5 random characters>`` and a mount of it in every
container (``plugin/pkg/admission/serviceaccount``, ``mountServiceAccountToken``), so in a dump no
two pods' manifests are the same. The name of the first volume named with that prefix (the one
admission finds or adds) is a per-pod field wherever it is a volume's or a mount's ``name`` (in
``containers``, ``initContainers``, ``ephemeralContainers``): the shared part has a placeholder
there, and the key lists those places, so that two manifests of one key differ only in that name
(a name equal to it anywhere else is compared as it is). The decoder keeps volumes and mounts as
the manifest's own entries and validation reads no mount, so a stamped pod takes its own
``spec.volumes`` entries and, in the containers with such a mount, its own mounts (with
``bindMountOptions`` dropped as the decoder drops them), each such container a copy of its
template's with those mounts. Validation does read the volumes (``ValidateVolumes``: a volume's
name, a claim's name, and the pod's name in the claims of its ephemeral volumes), so a pod with a
per-pod volume field or an ephemeral volume has its ``spec.volumes`` validated per pod, with the
validation's own :func:`~fastsched.api.validation.validate_volumes`; refused, the full path gives
the message.

Labels are per pod too (a StatefulSet's pods each have their own ``statefulset.kubernetes.io/pod-name``),
type-checked by the schema decoder and validated (``validate_labels``, the full path for the
message when refused), except for a pod whose ``affinity`` or ``topologySpreadConstraints`` have
``matchLabelKeys`` or ``mismatchLabelKeys``: the decoder merges the pod's labels for those keys into
its affinity terms' selectors and validation reads them for both, so there they are part of what
the template decides (its key). Without label keys neither reads the labels.

So are the fields the StatefulSet and Job controllers write per pod (``newStatefulSetPod``'s
``updateIdentity`` and ``updateStorage``; an Indexed Job's ``addCompletionIndexAnnotation``,
``podGenerateNameWithIndex`` and hostname). ``annotations`` (the completion index): decoded as a
string map (the schema decoder type-checks them with the other per-pod metadata) and validated
(``ValidateAnnotations``: qualified-name keys, the total size) per pod, the full path when refused;
no plugin reads a pod's annotations (an extender gets them per pod, and the compiled cycle is not
used with extenders). ``generateName`` (``<job>-<index>-``): a string, validated per pod as
validation checks it (a pod with neither a name nor a generateName takes the full path).
``spec.hostname`` (the pod's name; ``<job>-<index>``): a string, kept by fastsched only in the
manifest (no plugin reads it), validated per pod as validation checks it (``ValidateDNS1123Label``),
the full path when refused. The ``persistentVolumeClaim.claimName``
of every volume where it is a string (``<claim template>-<pod name>``): a placeholder in the shared
part and its volumes' indexes in the key, as the token's name; the stamped pod takes its own
``spec.volumes`` entries (the decoder keeps them as they are), validated per pod as above. The
volume plugins read the claims, each cycle (CYCLE forms: a plan shared by pods differing in their
claims serves each with its own, see ``compiled_cycle._shared_key``).

The cache is bounded (:data:`MAX_TEMPLATES` keys, cleared when full) and holds Pods only (immutable
values: a hit shares every spec field object with the template's first pod, which is also what
makes the scheduler's per-spec caches and the compiled cycle's plan lookup hit at once: by the
identity of those objects).
"""
from __future__ import annotations

import marshal
from collections import abc
from typing import Any, Mapping

from .._kernels._manifest import fingerprint, same_shared
from ..util.field import FieldPath
from ._manifest import as_map, as_string_map, as_timestamp
from .decode import _without_bind_mount_options, pod_status_fields
from .errors import ManifestError
from .objects import Container, Pod, _field_copier, _read_only
from .schema import decode as schema_decode
from .util_validation import dns1123_label_errors, dns1123_subdomain_errors
from .validation import name_is_dns_subdomain, validate_annotations, validate_labels, validate_volumes

__all__ = ["MAX_TEMPLATES", "PodTemplates", "RECENT_SHARED"]

#: distinct templates kept (a dump of many Deployments has a few hundred)
MAX_TEMPLATES = 1024
#: shared parts kept, by fingerprint, to find the bytes of a manifest whose template differs from
#: the previous one's (the oldest dropped when full: the templates that come interleaved are those
#: of one namespace's workloads, a few dozen at most; each a copy of a manifest's shared part)
RECENT_SHARED = 64
#: the metadata fields that differ between pods stamped from one template. Those of
#: ``_SCHEMA_CHECKED_METADATA`` are type-checked per pod by the schema decoder (the Pod keeps none of
#: them but the creation time, which ``as_timestamp`` would also take as a number: the decoder
#: refuses a number there, and the annotations); the name, uid and generateName are checked as
#: strings here.
#: ``annotations`` is one of them (an Indexed Job's pods each have their own
#: ``batch.kubernetes.io/job-completion-index``): decoded as a string map and validated
#: (``ValidateAnnotations``) per pod; ``generateName`` (``<job>-<index>-``) is checked as a string and
#: validated per pod.
_SCHEMA_CHECKED_METADATA = ("creationTimestamp", "resourceVersion", "managedFields", "generation", "annotations")
_SCHEMA_CHECKED_METADATA_AND_LABELS = (*_SCHEMA_CHECKED_METADATA, "labels")
_PER_POD_METADATA = frozenset({"name", "uid", "generateName", *_SCHEMA_CHECKED_METADATA})
#: ... and ``labels`` too, for a pod whose ``affinity`` and ``topologySpreadConstraints`` (the only
#: parts of the spec whose decoding, the merge of ``matchLabelKeys``, and validation read the
#: pod's labels) name no ``matchLabelKeys`` or ``mismatchLabelKeys`` (:func:`_reads_labels`)
_PER_POD_METADATA_AND_LABELS = _PER_POD_METADATA | {"labels"}
#: the spec fields whose decoding or validation reads the pod's labels (through the label keys of
#: their terms)
_READ_LABELS = ("affinity", "topologySpreadConstraints")
#: the fields of those through which they read the labels, in any spelling the decoder takes
#: (lower case, without underscores)
_LABEL_KEY_FIELDS = frozenset({"matchlabelkeys", "mismatchlabelkeys"})
#: the scalar types of a manifest (the rest hold more values)
_SCALARS = (str, int, float, bool, type(None))
_METADATA_PATH = FieldPath("metadata")
_VOLUMES_PATH = "spec.volumes"
_LABELS_PATH = _METADATA_PATH.child("labels")
#: the status fields of a pod that has none (``status`` absent): what the decoder reads from ``{}``
_NO_STATUS = pod_status_fields({})
#: a field the manifest does not have
_ABSENT: Any = object()
_TOP_LEVEL = frozenset({"apiVersion", "kind", "metadata", "spec", "status"})
#: the prefix of the ServiceAccount admission plugin's token volume's name (``ServiceAccountVolumeName``
#: and a dash: ``generateName`` adds 5 random characters)
_TOKEN_VOLUME_PREFIX = "kube-api-access-"
#: the container lists whose mounts may name the token volume, and the Pod field of each
_CONTAINER_LISTS = (("containers", "containers"), ("initContainers", "init_containers"),
                    ("ephemeralContainers", "ephemeral_containers"))
#: what the shared part holds where the manifest had the token volume's name (any constant: the key
#: lists those places, so a manifest holding this value there is told apart)
_TOKEN_PLACEHOLDER = ""
#: what the shared part holds where a volume's ``persistentVolumeClaim.claimName`` was (the key
#: lists those places too)
_CLAIM_PLACEHOLDER = ""
#: marshal's format 2: no back-references (version 3 writes a second occurrence of the same object
#: as a reference, so equal manifests with different sharing would get different keys)
_MARSHAL_VERSION = 2


class PodTemplates:
    """The template cache of the loader (see the module docstring)."""

    __slots__ = ("_templates", "_last", "_recent")

    def __init__(self) -> None:
        self._templates: dict[tuple, Pod] = {}
        #: (a private copy of the shared part of the last manifest whose key was found, its marshal
        #: bytes): the next manifest equal to it (``same_values``: exact types, same order) has its bytes
        self._last: tuple[tuple, bytes] | None = None
        #: such pairs of the last ``RECENT_SHARED`` shared parts serialized, by their ``fingerprint``
        self._recent: dict[int, tuple[tuple, bytes]] = {}

    def key(self, document: Mapping[str, Any]) -> tuple | None:
        """The template key of a Pod manifest, or None when it must take the full path."""
        if type(document) is not dict or not _TOP_LEVEL.issuperset(document):
            return None
        meta, spec = document.get("metadata"), document.get("spec")
        if type(meta) is not dict or type(spec) is not dict:
            return None
        name = meta.get("name")
        if (type(name) is not str and name is not None) or "resourceClaims" in spec or "resource_claims" in spec \
                or "schedulingGroup" in spec or "scheduling_group" in spec:
            return None
        node_name = spec.get("nodeName")
        if node_name is not None and type(node_name) is not str:
            return None
        # labels are per pod unless the spec reads them (then they are the template's)
        labels_per_pod = not _reads_labels(spec.get(_READ_LABELS[0])) and not _reads_labels(spec.get(_READ_LABELS[1]))
        per_pod = _PER_POD_METADATA_AND_LABELS if labels_per_pod else _PER_POD_METADATA
        api_version, kind = document.get("apiVersion"), document.get("kind")
        bound = node_name is not None
        # a StatefulSet's (an Indexed Job's) pods each have their own spec.hostname: a per-pod
        # field when it is a string (another type: the full path, for the decoder's message)
        hostname = spec.get("hostname", _ABSENT)
        if hostname is not _ABSENT:
            if type(hostname) is not str:
                return None
            spec = {k: v for k, v in spec.items() if k != "hostname"}
        token = _token_volume_name(spec)
        token_at = None
        if token is not None:
            spec, token_at = _without_token_name(spec, token)
        claims_at = None
        if type(volumes := spec.get("volumes")) is list:
            spec, claims_at = _without_claim_names(spec, volumes)
        last = self._last
        if last is not None and same_shared(api_version, kind, meta, per_pod, spec, bound, last[0]):
            # the same as the last manifest's (pods of one template come one after another): its
            # bytes, without writing them again (and their hash, cached on them, for the lookup)
            text = last[1]
        else:
            # another template's: one of the recent ones (pods of several templates in turn)?
            fp = fingerprint(api_version, kind, meta, per_pod, spec, bound)
            recent = self._recent.get(fp) if fp is not None else None
            if recent is not None and same_shared(api_version, kind, meta, per_pod, spec, bound, recent[0]):
                text = recent[1]
                self._last = recent
            else:
                rest = {k: v for k, v in meta.items() if k not in per_pod}
                if bound:
                    spec = {k: v for k, v in spec.items() if k != "nodeName"}
                shared = (api_version, kind, rest, spec)
                try:
                    text = marshal.dumps(shared, _MARSHAL_VERSION)
                except ValueError:  # a value marshal cannot write (a dict subclass, a datetime): full path
                    return None
                # compared with a copy of its own, read back from the bytes: the caller's manifest may
                # be changed in place and passed again
                self._last = (marshal.loads(text), text)
                if fp is not None:
                    self._remember_shared(fp, self._last)
        # named or not: validation checks a name, or (without one) skips it
        # (where the token volume's name was: a per-pod field, see the module docstring)
        return (bool(node_name), bool(name), labels_per_pod, token_at, claims_at, hostname is not _ABSENT, text)

    def _remember_shared(self, fp: int, shared: tuple[tuple, bytes]) -> None:
        """``shared`` (a private copy of a shared part and its bytes) as the recent one of
        fingerprint ``fp`` (replacing another of the same fingerprint: a fingerprint is no proof)."""
        recent = self._recent
        if fp not in recent and len(recent) >= RECENT_SHARED:
            recent.pop(next(iter(recent)), None)  # the oldest
        recent[fp] = shared

    def stamp(self, key: tuple, document: Mapping[str, Any]) -> Pod | None:
        """The Pod of ``document`` from its template, if one was seen and the per-pod fields need
        no message; else None (the caller takes the full path)."""
        template = self._templates.get(key)
        if template is None:
            return None
        meta, spec = document["metadata"], document["spec"]
        name = meta.get("name") or ""
        uid = meta.get("uid")
        node_name = spec.get("nodeName") or ""
        if uid is not None and type(uid) is not str:
            return None
        # a name the validation would refuse takes the full path, for the API server's message
        if (name and dns1123_subdomain_errors(name)) or (node_name and dns1123_subdomain_errors(node_name)):
            return None
        generate_name = meta.get("generateName")
        if generate_name is not None:
            if type(generate_name) is not str or (generate_name and name_is_dns_subdomain(generate_name, True)):
                return None
        if not name and not generate_name:
            return None  # "name or generateName is required": the full path's message
        # a hostname the validation refuses (ValidateDNS1123Label) takes the full path, for its message
        if key[5] and (hostname := spec["hostname"]) and dns1123_label_errors(hostname):
            return None
        # the volumes, whose validation reads per-pod fields: refused, the full path gives the message
        if (key[3] is not None or key[4] is not None) and not _per_pod_volume_fields_valid(spec["volumes"], key):
            return None
        if name and _has_ephemeral(template.volumes) and validate_volumes(spec["volumes"], name, _VOLUMES_PATH):
            return None  # (the claims it creates are named after the pod: all validated, per pod)
        status = document.get("status")
        labels_per_pod = key[2]
        if not _per_pod_fields_clean(meta, status, labels_per_pod):
            return None
        # (``status is not None`` first: most manifests have none; and the isinstance is against
        # collections.abc's Mapping, whose check is C code with a cache: typing's alias of it runs
        # two Python-level calls, ~1 µs a pod of a dump, whose pods all have a status)
        if status is not None and isinstance(status, abc.Mapping) and status.get("nodeAllocatableResourceClaimStatuses"):
            # counted in the pod's requests, which a stamped pod shares with its template: full path
            return None
        try:
            created = meta.get("creationTimestamp")
            if created is not None:
                created = as_timestamp(created, "metadata.creationTimestamp")
            status_fields = _NO_STATUS if status is None else pod_status_fields(as_map(status, "status"))
            labels = _read_only(as_string_map(meta.get("labels"), "metadata.labels")) if labels_per_pod else None
            raw_annotations = meta.get("annotations")
            annotations = None if raw_annotations is None and not template.annotations else \
                _read_only(as_string_map(raw_annotations, "metadata.annotations"))
        except ManifestError:
            return None  # the full path raises it, with its source
        if labels and validate_labels(labels, _LABELS_PATH):
            return None  # refused labels: the full path's message
        if annotations and validate_annotations(annotations, _METADATA_PATH):
            return None  # refused annotations (a key, the total size): the full path's message
        # the request totals depend on the spec alone: those the template computed already are the
        # pod's (stamped shares them)
        pod = template.stamped(name=name, uid=uid or "", node_name=node_name, creation_timestamp=created,
                               manifest=document)
        if status_fields is not template_status(template):
            for field_name, value in status_fields.items():
                setattr(pod, field_name, value)
        if labels is not None:
            pod.labels = labels
        if annotations is not None:
            pod.annotations = annotations
        if generate_name != template.generate_name:
            pod.generate_name = generate_name or ""
        token_at = key[3]
        if token_at is not None:
            _restore_token_name(pod, spec, token_at)
        elif key[4]:
            pod.volumes = tuple(spec["volumes"])  # (its own claims' names: the manifest's entries)
        pod.admitted = True
        return pod

    def remember(self, key: tuple, pod: Pod) -> None:
        """``pod`` (decoded from a clean manifest of ``key``, written with the API's own field
        names, and validated) as its template's first pod."""
        templates = self._templates
        if len(templates) >= MAX_TEMPLATES:
            templates.clear()
        # its request totals computed once, here, for every pod stamped from it (the queue and the
        # cycle read them for each pod)
        pod.requests, pod.non_zero_requests, pod.scoring_requests  # noqa: B018 - computed and cached
        templates[key] = pod


def _reads_labels(value: Any) -> bool:
    """Whether a raw ``affinity`` or ``topologySpreadConstraints`` (or a part of one) may make the
    decoder or validation read the pod's labels: a field named ``matchLabelKeys`` or
    ``mismatchLabelKeys`` in any spelling (case, ``snake_case``) anywhere in it, a key that is not a
    string, or a container other than a dict or a list (not looked into: the conservative answer).
    A StatefulSet's pods mostly have a (preferred) anti-affinity to their own set, without label
    keys: their ``statefulset.kubernetes.io/pod-name`` label need not make each its own template."""
    if value is None:
        return False
    if type(value) is dict:
        for k, v in value.items():
            if type(k) is not str or k.replace("_", "").lower() in _LABEL_KEY_FIELDS:
                return True
            if not isinstance(v, _SCALARS) and _reads_labels(v):
                return True
        return False
    if type(value) is list:
        for v in value:
            if not isinstance(v, _SCALARS) and _reads_labels(v):
                return True
        return False
    return not isinstance(value, _SCALARS)


def _per_pod_volume_fields_valid(volumes: list, key: tuple) -> bool:
    """Whether ``validate_volumes`` takes the per-pod fields of a stamped pod's volumes (``key``'s
    places: the token volume's name, the claims' names) as the template's pod had them accepted:
    what it checks of them, by its own checks (the rest of a volume is the template's). A token
    volume's name is not empty (it has the prefix) and no other volume of the key has it (the key
    lists every volume so named), so only its DNS-label check reads it, unless the volume's source
    reads the name (iscsi's length rule, an ephemeral volume's claim): then all the volumes are
    validated. A claim's name (a string) is checked only for being set (and against the claims of
    ephemeral volumes, validated whole by the caller)."""
    token_at, claims_at = key[3], key[4]
    if token_at is not None:
        for i in token_at[0]:
            volume = volumes[i]
            if dns1123_label_errors(volume["name"]):
                return False
            if "iscsi" in volume or "ephemeral" in volume:
                return not validate_volumes(volumes, "", _VOLUMES_PATH)
    if claims_at is not None:
        for i in claims_at:
            if not volumes[i]["persistentVolumeClaim"]["claimName"]:
                return False
    return True


def _has_ephemeral(volumes: tuple[Mapping[str, Any], ...]) -> bool:
    """Whether a template's volumes (a Pod's ``volumes``, the manifest's entries) have a generic
    ephemeral volume, whose claim's name (and so its validation) depends on the pod's name."""
    return any(v.get("ephemeral") is not None for v in volumes)


def _token_volume_name(spec: Mapping[str, Any]) -> str | None:
    """The name of the ServiceAccount token volume of a manifest's ``spec``: the first volume whose
    name has the admission plugin's prefix, as ``mountServiceAccountToken`` finds it; None without."""
    volumes = spec.get("volumes")
    if type(volumes) is not list:
        return None
    for volume in volumes:
        if type(volume) is dict:
            name = volume.get("name")
            if type(name) is str and name.startswith(_TOKEN_VOLUME_PREFIX):
                return name
    return None


def _without_claim_names(spec: dict, volumes: list) -> tuple[dict, tuple[int, ...] | None]:
    """``spec`` with ``_CLAIM_PLACEHOLDER`` for the ``persistentVolumeClaim.claimName`` of each
    volume where it is a string (copies along those paths), and those volumes' indexes (None
    without). A StatefulSet's pods each mount the claims ``<template>-<pod name>``; the decoder
    keeps volumes as the manifest's entries, so a claim's name is a per-pod field like the token's
    (validated per pod: ``stamp``)."""
    at = None
    for i, volume in enumerate(volumes):
        if type(volume) is dict and type(claim := volume.get("persistentVolumeClaim")) is dict \
                and type(claim.get("claimName")) is str:
            if at is None:
                at = []
                volumes = list(volumes)
            # (same key order: "claimName" and "persistentVolumeClaim" kept in place)
            volumes[i] = {**volume, "persistentVolumeClaim": {**claim, "claimName": _CLAIM_PLACEHOLDER}}
            at.append(i)
    if at is None:
        return spec, None
    spec = dict(spec)
    spec["volumes"] = volumes
    return spec, tuple(at)


def _without_token_name(spec: dict, token: str) -> tuple[dict, tuple]:
    """``spec`` with ``_TOKEN_PLACEHOLDER`` for ``token`` wherever it is the ``name`` of a volume or
    of a container's mount (copies along those paths: the caller's manifest is not changed), and
    those places: ``(volume indexes, ((container list, container index, mount index), ...))``."""
    spec = dict(spec)
    volumes = list(spec["volumes"])
    volumes_at = []
    for i, volume in enumerate(volumes):
        if type(volume) is dict and type(name := volume.get("name")) is str and name == token:
            volumes[i] = {**volume, "name": _TOKEN_PLACEHOLDER}  # (same key order: "name" kept in place)
            volumes_at.append(i)
    spec["volumes"] = volumes
    mounts_at = []
    for field_name, _ in _CONTAINER_LISTS:
        containers = spec.get(field_name)
        if type(containers) is not list:
            continue
        copied = None
        for ci, container in enumerate(containers):
            mounts = container.get("volumeMounts") if type(container) is dict else None
            if type(mounts) is not list:
                continue
            new_mounts = None
            for mi, mount in enumerate(mounts):
                if type(mount) is dict and type(name := mount.get("name")) is str and name == token:
                    if new_mounts is None:
                        new_mounts = list(mounts)
                    new_mounts[mi] = {**mount, "name": _TOKEN_PLACEHOLDER}
                    mounts_at.append((field_name, ci, mi))
            if new_mounts is not None:
                if copied is None:
                    copied = list(containers)
                copied[ci] = {**container, "volumeMounts": new_mounts}
        if copied is not None:
            spec[field_name] = copied
    return spec, (tuple(volumes_at), tuple(mounts_at))


def _restore_token_name(pod: Pod, spec: Mapping[str, Any], token_at: tuple) -> None:
    """The fields of ``pod`` (stamped: its template's) that hold the token volume's name, as the
    decoder builds them from ``spec`` (the pod's own; ``token_at`` from :func:`_without_token_name`):
    its volumes (the manifest's entries, as ``list_of`` keeps them), and each container with a mount
    of the token a copy of its template's with the manifest's mounts (``bindMountOptions`` dropped,
    as the decoder drops them)."""
    pod.volumes = tuple(spec["volumes"])
    copy = _field_copier(Container)
    done: set[tuple[str, int]] = set()
    for field_name, ci, _ in token_at[1]:
        if (field_name, ci) in done:
            continue
        done.add((field_name, ci))
        attr = _POD_FIELD_OF[field_name]
        containers = list(getattr(pod, attr))
        container = copy(containers[ci])
        container.volume_mounts = _without_bind_mount_options(tuple(spec[field_name][ci]["volumeMounts"]))
        containers[ci] = container
        setattr(pod, attr, tuple(containers))


_POD_FIELD_OF = dict(_CONTAINER_LISTS)


def template_status(pod: Pod) -> dict[str, Any] | None:
    """``_NO_STATUS`` when ``pod`` has the status fields of a pod without ``status``, else None
    (its fields are then overwritten by a stamped pod's own)."""
    if (pod.phase == "" and pod.nominated_node_name == "" and pod.start_time is None and not pod.conditions
            and not pod.resource_claim_statuses):
        return _NO_STATUS
    return None


def _per_pod_fields_clean(meta: Mapping[str, Any], status: Any, labels: bool) -> bool:
    """Whether the decoder takes the per-pod fields not checked elsewhere here (``creationTimestamp``,
    ``resourceVersion``, ``managedFields``, ``generation``, ``status``) as they are: no unknown or
    case-folded field, no value of another type. The schema matches field by field, so a document
    of these fields alone is checked as they are in the whole manifest."""
    unkept = None
    for field_name in _SCHEMA_CHECKED_METADATA_AND_LABELS if labels else _SCHEMA_CHECKED_METADATA:
        if field_name in meta:
            if unkept is None:
                unkept = {}
            unkept[field_name] = meta[field_name]
    if unkept is None and status is None:
        return True
    part: dict[str, Any] = {}
    if unkept is not None:
        part["metadata"] = unkept
    if status is not None:
        part["status"] = status
    try:
        decoded = schema_decode(part, "Pod")
    except ManifestError:
        return False
    return decoded.document is part and not decoded.unknown and not decoded.case_folded
