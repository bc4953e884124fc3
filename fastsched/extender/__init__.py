"""HTTP scheduler extenders (upstream ``pkg/scheduler/extender.go``), wire-compatible with extender/v1."""
from .extender import (EXTENDER_SCORE_SCALE, MAX_EXTENDER_PRIORITY, MIN_EXTENDER_PRIORITY, Extender,
                       ExtenderError, HTTPExtender, Victims, new_http_extenders, node_manifest, pod_manifest,
                       weighted_extender_score)

__all__ = ["EXTENDER_SCORE_SCALE", "MAX_EXTENDER_PRIORITY", "MIN_EXTENDER_PRIORITY", "Extender", "ExtenderError",
           "HTTPExtender", "Victims", "new_http_extenders", "node_manifest", "pod_manifest",
           "weighted_extender_score"]
