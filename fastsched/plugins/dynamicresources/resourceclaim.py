"""``k8s.io/dynamic-resource-allocation/resourceclaim`` (v0.37.2): which claim a pod's (or a
PodGroup's) claim entry names, whether a claim was made for the pod (or its PodGroup), whether it is
reserved for it, and which object a claim gets reserved for (``BindTo``).

The PodGroup alternatives (``accept_pod_group_owner``, ``accept_pod_group_reservation``, a
PodGroup given to :func:`bind_to`) are DRAWorkloadResourceClaims': DynamicResources passes the
gate, which fastsched keeps off, so they are not taken yet. Errors carry upstream's texts (the
callers turn them into statuses as upstream's do).
"""
from __future__ import annotations

from typing import Any, Mapping

#: ``schedulingapi.GroupName``
SCHEDULING_GROUP = "scheduling.k8s.io"
#: ``ErrAPIUnsupported``
ERR_API_UNSUPPORTED = "none of the supported fields are set"
#: ``ErrClaimNotFound``
ERR_CLAIM_NOT_FOUND = "ResourceClaim not created yet"


class ClaimLookupError(Exception):
    """``foreachPodResourceClaim``'s "not schedulable yet" errors (text as upstream)."""


def _entry_field(entry: Any, camel: str, snake: str) -> Any:
    # (a plain dict first: isinstance against typing's Mapping alias goes through its
    # __subclasscheck__, ~0.4 of DynamicResources' PreEnqueue and PreFilter claim lookups)
    if type(entry) is not dict and not isinstance(entry, Mapping):
        return getattr(entry, snake, None)
    value = entry.get(camel)
    return entry.get(snake) if value is None else value


def _entry_name(entry: Any) -> str:
    if type(entry) is dict or isinstance(entry, Mapping):
        return entry.get("name") or ""
    return getattr(entry, "name", "") or ""


def claim_name(pod: Any, entry: Any) -> tuple[str | None, bool]:
    """``Name``: (the claim name, or None when deliberately not created; whether :func:`is_for_pod`
    must be checked); ClaimLookupError when the claim is not created yet or the entry names no
    source."""
    name = _entry_field(entry, "resourceClaimName", "resource_claim_name")
    if name is not None:
        return name, False
    if _entry_field(entry, "resourceClaimTemplateName", "resource_claim_template_name") is not None:
        for status in pod.resource_claim_statuses:
            if status.get("name") == _entry_name(entry):
                return _entry_field(status, "resourceClaimName", "resource_claim_name"), True
        raise ClaimLookupError(f'pod "{pod.namespace}/{pod.name}": {ERR_CLAIM_NOT_FOUND}')
    raise ClaimLookupError(f'pod "{pod.namespace}/{pod.name}", spec.resourceClaim "{_entry_name(entry)}": '
                           f"{ERR_API_UNSUPPORTED}")


def claim_name_from_pod_group(pod_group: Any, entry: Any) -> tuple[str | None, bool]:
    """``NameFromPodGroup``: as :func:`claim_name`, for an entry of ``spec.resourceClaims`` of a
    PodGroup (its ``status.resourceClaimStatuses`` name the claims made from templates)."""
    name = _entry_field(entry, "resourceClaimName", "resource_claim_name")
    if name is not None:
        return name, False
    if _entry_field(entry, "resourceClaimTemplateName", "resource_claim_template_name") is not None:
        for status in pod_group.resource_claim_statuses:
            if status.get("name") == _entry_name(entry):
                return _entry_field(status, "resourceClaimName", "resource_claim_name"), True
        raise ClaimLookupError(f"PodGroup {pod_group.namespace}/{pod_group.name}: {ERR_CLAIM_NOT_FOUND}")
    raise ClaimLookupError(f"PodGroup {pod_group.namespace}/{pod_group.name}, spec.resourceClaim "
                           f"{_entry_name(entry)}: {ERR_API_UNSUPPORTED}")


def _controller(obj: Any) -> Any:
    """``metav1.GetControllerOf``: the first owner reference with ``controller: true``."""
    return next((ref for ref in obj.owner_references if ref.controller), None)


def _pod_group_name(pod: Any) -> str | None:
    group = getattr(pod, "scheduling_group", None)
    return group.pod_group_name if group is not None else None


def is_for_pod(pod: Any, claim: Any, accept_pod_group_owner: bool) -> str | None:
    """``IsForPod``: None when the claim's controller is the pod (by uid) -- or, with
    ``accept_pod_group_owner``, the pod's PodGroup (by kind, name and API group: the pod does not
    know the group's uid) --, else upstream's error text."""
    if claim.namespace != pod.namespace:
        return (f"ResourceClaim {claim.namespace}/{claim.name} is not in the same namespace as Pod "
                f"{pod.namespace}/{pod.name}")
    controller = _controller(claim)
    if controller is not None and controller.uid == pod.uid:
        return None
    group = _pod_group_name(pod)
    if accept_pod_group_owner and group is not None:
        if not (controller is not None and controller.name == group and controller.kind == "PodGroup"
                and controller.api_version.startswith(SCHEDULING_GROUP + "/")):
            return (f"ResourceClaim {claim.namespace}/{claim.name} was not created for Pod {pod.namespace}/{pod.name} "
                    f"(neither Pod nor PodGroup {group} is the owner)")
        return None
    return f"ResourceClaim {claim.namespace}/{claim.name} was not created for Pod {pod.namespace}/{pod.name} (Pod is not owner)"


def is_for_pod_group(pod_group: Any, claim: Any) -> str | None:
    """``IsForPodGroup``: None when the claim's controller is the PodGroup (by uid), else
    upstream's error text."""
    if claim.namespace != pod_group.namespace:
        return (f"ResourceClaim {claim.namespace}/{claim.name} is not in the same namespace as PodGroup "
                f"{pod_group.namespace}/{pod_group.name}")
    controller = _controller(claim)
    if controller is None or controller.uid != pod_group.uid:
        return (f"ResourceClaim {claim.namespace}/{claim.name} was not created for PodGroup "
                f"{pod_group.namespace}/{pod_group.name} (PodGroup is not owner)")
    return None


def is_reserved_for_pod(pod: Any, claim: Any, accept_pod_group_reservation: bool = False) -> bool:
    """``IsReservedForPod``: the pod's uid is among ``status.reservedFor``, or, with
    ``accept_pod_group_reservation``, an entry names its PodGroup (``scheduling.k8s.io``
    ``podgroups`` of that name)."""
    group = _pod_group_name(pod) if accept_pod_group_reservation else None
    for reserved in claim.reserved_for:
        if reserved.get("uid") == pod.uid:
            return True
        if (group is not None and reserved.get("apiGroup") == SCHEDULING_GROUP
                and reserved.get("resource") == "podgroups" and reserved.get("name") == group):
            return True
    return False


def _pod_matches_pod_group(pod: Any, pod_group: Any) -> str | None:
    group = _pod_group_name(pod)
    if group is None:
        return f"Pod {pod.namespace}/{pod.name} does not belong to a PodGroup"
    if pod.namespace != pod_group.namespace or group != pod_group.name:
        return (f"Pod {pod.namespace}/{pod.name} belongs to PodGroup {pod.namespace}/{group}, not PodGroup "
                f"{pod_group.namespace}/{pod_group.name}")
    return None


def bind_to(pod: Any, pod_group: Any, entry: Any) -> dict[str, str]:
    """``BindTo``: the ``status.reservedFor`` entry the claim of the pod's ``entry`` gets -- the
    PodGroup's when one of its ``spec.resourceClaims`` has the entry's name, claim name and template
    name, else the pod's (``pod_group`` None: the pod's). ValueError with upstream's text for an
    entry naming no source, a pod not in ``pod_group`` or a group claim naming no source."""
    claim = _entry_field(entry, "resourceClaimName", "resource_claim_name")
    template = _entry_field(entry, "resourceClaimTemplateName", "resource_claim_template_name")
    if claim is None and template is None:
        raise ValueError(f"Pod {pod.namespace}/{pod.name} claim {_entry_name(entry)}: {ERR_API_UNSUPPORTED}")
    if pod_group is not None:
        err = _pod_matches_pod_group(pod, pod_group)
        if err is not None:
            raise ValueError(err)
        for group_claim in pod_group.resource_claims:
            if group_claim.resource_claim_name is None and group_claim.resource_claim_template_name is None:
                raise ValueError(f"PodGroup {pod_group.namespace}/{pod_group.name} claim {group_claim.name}: "
                                 f"{ERR_API_UNSUPPORTED}")
            if (group_claim.name == _entry_name(entry) and group_claim.resource_claim_name == claim
                    and group_claim.resource_claim_template_name == template):
                return {"apiGroup": SCHEDULING_GROUP, "resource": "podgroups", "name": pod_group.name,
                        "uid": pod_group.uid}
    # (apiGroup "" -- v1.GroupName, the core group -- is omitted, as the API serializes it)
    return {"resource": "pods", "name": pod.name, "uid": pod.uid}


__all__ = ["ClaimLookupError", "ERR_API_UNSUPPORTED", "ERR_CLAIM_NOT_FOUND", "SCHEDULING_GROUP", "bind_to",
           "claim_name", "claim_name_from_pod_group", "is_for_pod", "is_for_pod_group", "is_reserved_for_pod"]
