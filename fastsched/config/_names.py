"""Kubernetes name checks used by config validation: apimachinery's ``util/validation`` (shared
with the API objects' validation, :mod:`fastsched.api.util_validation`) and v1 helpers."""

from __future__ import annotations

from ..api.util_validation import is_dns1123_subdomain, is_qualified_name, is_valid_label_value
from ..util.field import FieldError, FieldPath

__all__ = ["is_dns1123_subdomain", "is_qualified_name", "is_valid_label_value", "validate_label_name",
           "is_extended_resource_name"]


def validate_label_name(name: str, path: FieldPath) -> list[FieldError]:
    """``metav1validation.ValidateLabelName``: one Invalid error per problem."""
    return [FieldError.invalid(path, name, msg) for msg in is_qualified_name(name)]


def is_extended_resource_name(name: str) -> bool:
    """``v1helper.IsExtendedResourceName``: a prefixed, non-``kubernetes.io`` resource name."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return not is_qualified_name("requests." + name)
