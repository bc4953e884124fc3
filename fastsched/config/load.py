"""Loading a ``kubescheduler.config.k8s.io/v1`` KubeSchedulerConfiguration, and dumping one back.

Decoding is strict like upstream's: ``apiVersion`` and ``kind`` are required, unknown fields and
type errors are reported with their field paths, duplicate YAML keys are rejected. Args of in-tree
plugins are decoded into their typed class (:mod:`fastsched.config.args`); args of other plugins
stay plain data.
"""

from __future__ import annotations

import base64
import copy
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from ..errors import NOT_UTF8_TEXT
from ._decode import (
    BOOL,
    BYTES,
    DURATION_VALUE,
    ERROR,
    INT32,
    INT64,
    NUMBER,
    STR,
    Converter,
    Decoder,
    format_duration,
    list_of,
    struct_of,
    type_meta_error,
)
from .args import ARGS_TYPES, PluginArgs
from .defaults import set_defaults
from .errors import ConfigError
from ..util.field import FieldError, FieldPath, go_quote
from ..util.goyaml import GoYAMLStrictLoader
from ..util.yamlsafe import checked
from .types import (
    API_VERSION,
    EXTENSION_POINTS,
    KIND,
    ClientConnectionConfiguration,
    Extender,
    ExtenderManagedResource,
    ExtenderTLSConfig,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    LeaderElectionConfiguration,
    Plugin,
    PluginConfig,
    Plugins,
    PluginSet,
)
from .validation import EXTENSION_POINT_JSON, validate_config


def load_config(
    source: str | os.PathLike[str] | bytes | dict[str, Any] | None = None,
    *,
    validate: bool = True,
    registry_names: Iterable[str] = (),
    feature_gates: Any = None,
) -> KubeSchedulerConfiguration:
    """Load, default and (unless ``validate=False``) validate a configuration.

    ``source`` is None (pure defaults), a file path (``str`` or path-like), YAML/JSON text (``str``
    or ``bytes``), or an already-parsed dict. ``registry_names`` are extra (out-of-tree) plugin
    names that may be configured through ``pluginConfig``; ``feature_gates`` (default: v1.37.2's)
    decide the gate-dependent defaults (plugin list, args) and what plugin args may hold. Every problem found is raised as one :class:`ConfigError`.
    """
    cfg = KubeSchedulerConfiguration() if source is None else decode_config(_read(source))
    set_defaults(cfg, feature_gates)
    if validate:
        validate_config(cfg, registry_names=registry_names, feature_gates=feature_gates)
    return cfg


def decode_config(data: Any) -> KubeSchedulerConfiguration:
    """Strictly decode a parsed v1 document (no defaulting); raise :class:`ConfigError` on problems."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(message=f"a KubeSchedulerConfiguration must be a mapping, got {_kind_of(data)}")
    errs = []
    api_version, kind = data.get("apiVersion"), data.get("kind")
    meta_error = type_meta_error(data)
    if meta_error is not None:
        raise ConfigError([meta_error])
    if api_version is None:
        errs.append(FieldError.required("apiVersion", f'must be "{API_VERSION}"'))
    elif api_version != API_VERSION:
        errs.append(FieldError.not_supported("apiVersion", api_version, [API_VERSION]))
    if kind is None:
        errs.append(FieldError.required("kind", f'must be "{KIND}"'))
    elif kind != KIND:
        errs.append(FieldError.not_supported("kind", kind, [KIND]))
    if errs:
        raise ConfigError(errs)

    dec = Decoder()
    # None: unset pointers of the v1 type, told apart from explicit values until set_defaults fills them
    cfg = KubeSchedulerConfiguration(percentage_of_nodes_to_score=None,
                                     enable_contention_profiling=None)  # type: ignore[arg-type]
    body = {k: v for k, v in data.items() if k not in ("apiVersion", "kind")}
    dec.fill(cfg, body, FieldPath(), _CONFIG_FIELDS, "v1.KubeSchedulerConfiguration")
    if dec.errors:
        raise ConfigError(dec.errors)
    return cfg


# --------------------------------------------------------------------------------------------
# Reading


def parse_yaml(text: str) -> Any:
    """Parse one YAML (or JSON) document; YAML problems become a :class:`ConfigError` with the line."""
    try:
        docs = checked(lambda: [d for d in yaml.load_all(text, Loader=GoYAMLStrictLoader) if d is not None])
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        problem = exc.problem or "invalid YAML"
        context = f" ({exc.context})" if exc.context else ""
        raise ConfigError(message=f"invalid YAML: {where}{problem}{context}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(message=f"invalid YAML: {exc}") from None
    if len(docs) > 1:
        raise ConfigError(message=f"expected a single YAML document, found {len(docs)}")
    return docs[0] if docs else None


def _read(source: Any) -> Any:
    if isinstance(source, dict):
        return copy.deepcopy(source)
    if isinstance(source, bytes):
        try:
            text = source.decode("utf-8")
        except UnicodeDecodeError:
            raise ConfigError(message=f"cannot read the configuration: {NOT_UTF8_TEXT}") from None
        return parse_yaml(text)
    if isinstance(source, os.PathLike) or (isinstance(source, str) and _looks_like_path(source)):
        path = Path(source)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(message=f"reading {path}: {exc.strerror or exc}") from exc
        except UnicodeDecodeError:
            raise ConfigError(message=f"cannot read {str(path)!r}: {NOT_UTF8_TEXT}") from None
        return parse_yaml(text)
    if isinstance(source, str):
        return parse_yaml(source)
    raise TypeError(f"unsupported config source of type {type(source).__name__}")


def _looks_like_path(text: str) -> bool:
    if "\n" in text or text.lstrip().startswith(("{", "[")):
        return False
    return text.endswith((".yaml", ".yml", ".json")) or os.path.isfile(text)


def _kind_of(value: Any) -> str:
    names: dict[type, str] = {list: "a list", str: "a string"}
    return names.get(type(value), type(value).__name__)


# --------------------------------------------------------------------------------------------
# Decoding tables (v1 JSON names → internal attributes)


# Each struct's converter fills its class from a (JSON name, attribute, converter) table; the Go
# types (k8s.io/kube-scheduler/config/v1's types.go, component-base's config/v1alpha1) name the
# struct and the field's type in the strict decoder's type errors.

@struct_of("v1.Plugin")
def _plugin(dec: Decoder, value: Any, path: FieldPath) -> Any:
    return dec.fill(Plugin(""), value, path, (("name", "name", STR), ("weight", "weight", INT32)), "v1.Plugin")


@struct_of("v1.PluginSet")
def _plugin_set(dec: Decoder, value: Any, path: FieldPath) -> Any:
    fields = (("enabled", "enabled", list_of(_plugin)), ("disabled", "disabled", list_of(_plugin)))
    return dec.fill(PluginSet(), value, path, fields, "v1.PluginSet")


@struct_of("v1.Plugins")
def _plugins(dec: Decoder, value: Any, path: FieldPath) -> Any:
    return dec.fill(Plugins(), value, path, [(EXTENSION_POINT_JSON[ep], ep, _plugin_set) for ep in EXTENSION_POINTS],
                    "v1.Plugins")


@struct_of("v1.PluginConfig")
def _plugin_config(dec: Decoder, value: Any, path: FieldPath) -> Any:
    present = dec.fields(value, path, (("name", STR), ("args", _raw_extension)), "v1.PluginConfig")
    if present is ERROR or "name" not in present and value.get("name") is not None:
        return ERROR  # (not an object, or a name of the wrong type: reported)
    name = present.get("name", "")
    args = present.get("args")
    args_type = ARGS_TYPES.get(name)
    if args_type is not None:
        # upstream decodes a known plugin's args as a document of their own, after the
        # configuration (KubeSchedulerConfiguration.DecodeNestedObjects): their errors are that
        # decoder's, prefixed with where they are
        outer = dec.root, dec.prefix
        dec.root, dec.prefix = str(path.child("args")), f"decoding .{path}: decoding args for plugin {name}: "
        try:
            args = args_type.decode(dec, {} if args is None else args, path.child("args"))
        finally:
            dec.root, dec.prefix = outer
    return PluginConfig(name=name, args=args)


def _raw_extension(dec: Decoder, value: Any, path: FieldPath) -> Any:
    return value  # runtime.RawExtension takes any JSON value


@struct_of("v1.KubeSchedulerProfile")
def _profile(dec: Decoder, value: Any, path: FieldPath) -> Any:
    fields = (
        ("schedulerName", "scheduler_name", STR),
        ("percentageOfNodesToScore", "percentage_of_nodes_to_score", INT32),
        ("plugins", "plugins", _plugins),
        ("pluginConfig", "plugin_config", list_of(_plugin_config)),
    )
    # None: schedulerName unset (*string in v1); set_defaults names a lone profile default-scheduler
    return dec.fill(KubeSchedulerProfile(scheduler_name=None), value, path, fields,  # type: ignore[arg-type]
                    "v1.KubeSchedulerProfile")


@struct_of("v1.ExtenderManagedResource")
def _managed_resource(dec: Decoder, value: Any, path: FieldPath) -> Any:
    fields = (("name", "name", STR), ("ignoredByScheduler", "ignored_by_scheduler", BOOL))
    return dec.fill(ExtenderManagedResource(""), value, path, fields, "v1.ExtenderManagedResource")


_TLS_FIELDS: tuple[tuple[str, str, Converter], ...] = (
    ("insecure", "insecure", BOOL),
    ("serverName", "server_name", STR),
    ("certFile", "cert_file", STR),
    ("keyFile", "key_file", STR),
    ("caFile", "ca_file", STR),
    ("certData", "cert_data", BYTES),
    ("keyData", "key_data", BYTES),
    ("caData", "ca_data", BYTES),
)


@struct_of("v1.ExtenderTLSConfig")
def _tls_config(dec: Decoder, value: Any, path: FieldPath) -> Any:
    return dec.fill(ExtenderTLSConfig(), value, path, _TLS_FIELDS, "v1.ExtenderTLSConfig")


_EXTENDER_FIELDS: tuple[tuple[str, str, Converter], ...] = (
    ("urlPrefix", "url_prefix", STR),
    ("filterVerb", "filter_verb", STR),
    ("preemptVerb", "preempt_verb", STR),
    ("prioritizeVerb", "prioritize_verb", STR),
    ("weight", "weight", INT64),
    ("bindVerb", "bind_verb", STR),
    ("enableHTTPS", "enable_https", BOOL),
    ("tlsConfig", "tls_config", _tls_config),
    ("httpTimeout", "http_timeout", DURATION_VALUE),
    ("nodeCacheCapable", "node_cache_capable", BOOL),
    ("managedResources", "managed_resources", list_of(_managed_resource)),
    ("ignorable", "ignorable", BOOL),
)


@struct_of("v1.Extender")
def _extender(dec: Decoder, value: Any, path: FieldPath) -> Any:
    return dec.fill(Extender(http_timeout=0.0), value, path, _EXTENDER_FIELDS, "v1.Extender")


_LEADER_ELECTION_FIELDS: tuple[tuple[str, str, Converter], ...] = (
    ("leaderElect", "leader_elect", BOOL),
    ("leaseDuration", "lease_duration", DURATION_VALUE),
    ("renewDeadline", "renew_deadline", DURATION_VALUE),
    ("retryPeriod", "retry_period", DURATION_VALUE),
    ("resourceLock", "resource_lock", STR),
    ("resourceName", "resource_name", STR),
    ("resourceNamespace", "resource_namespace", STR),
)


@struct_of("v1alpha1.LeaderElectionConfiguration")
def _leader_election(dec: Decoder, value: Any, path: FieldPath) -> Any:
    return dec.fill(LeaderElectionConfiguration(), value, path, _LEADER_ELECTION_FIELDS,
                    "v1alpha1.LeaderElectionConfiguration")


_CLIENT_CONNECTION_FIELDS: tuple[tuple[str, str, Converter], ...] = (
    ("kubeconfig", "kubeconfig", STR),
    ("acceptContentTypes", "accept_content_types", STR),
    ("contentType", "content_type", STR),
    ("qps", "qps", NUMBER),
    ("burst", "burst", INT32),
)


@struct_of("v1alpha1.ClientConnectionConfiguration")
def _client_connection(dec: Decoder, value: Any, path: FieldPath) -> Any:
    return dec.fill(ClientConnectionConfiguration(), value, path, _CLIENT_CONNECTION_FIELDS,
                    "v1alpha1.ClientConnectionConfiguration")


_CONFIG_FIELDS: tuple[tuple[str, str, Converter], ...] = (
    ("parallelism", "parallelism", INT32),
    ("leaderElection", "leader_election", _leader_election),
    ("clientConnection", "client_connection", _client_connection),
    ("enableProfiling", "enable_profiling", BOOL),
    ("enableContentionProfiling", "enable_contention_profiling", BOOL),
    ("percentageOfNodesToScore", "percentage_of_nodes_to_score", INT32),
    ("podInitialBackoffSeconds", "pod_initial_backoff_seconds", INT64),
    ("podMaxBackoffSeconds", "pod_max_backoff_seconds", INT64),
    ("profiles", "profiles", list_of(_profile)),
    ("extenders", "extenders", list_of(_extender)),
    ("delayCacheUntilActive", "delay_cache_until_active", BOOL),
)


# --------------------------------------------------------------------------------------------
# Dumping


def config_to_dict(cfg: KubeSchedulerConfiguration) -> dict[str, Any]:
    """``cfg`` in its v1 (camelCase) form, as plain data."""
    d: dict[str, Any] = {
        "apiVersion": cfg.api_version,
        "kind": cfg.kind,
        "parallelism": cfg.parallelism,
    }
    if cfg.percentage_of_nodes_to_score is not None:
        d["percentageOfNodesToScore"] = cfg.percentage_of_nodes_to_score
    d["podInitialBackoffSeconds"] = cfg.pod_initial_backoff_seconds
    d["podMaxBackoffSeconds"] = cfg.pod_max_backoff_seconds
    d["enableProfiling"] = cfg.enable_profiling
    d["enableContentionProfiling"] = cfg.enable_contention_profiling
    d["delayCacheUntilActive"] = cfg.delay_cache_until_active
    le = cfg.leader_election
    d["leaderElection"] = {
        "leaderElect": le.leader_elect,
        "leaseDuration": format_duration(le.lease_duration),
        "renewDeadline": format_duration(le.renew_deadline),
        "retryPeriod": format_duration(le.retry_period),
        "resourceLock": le.resource_lock,
        "resourceName": le.resource_name,
        "resourceNamespace": le.resource_namespace,
    }
    cc = cfg.client_connection
    d["clientConnection"] = {
        "kubeconfig": cc.kubeconfig,
        "acceptContentTypes": cc.accept_content_types,
        "contentType": cc.content_type,
        "qps": cc.qps,
        "burst": cc.burst,
    }
    d["profiles"] = [_profile_to_dict(p) for p in cfg.profiles]
    if cfg.extenders:
        d["extenders"] = [_extender_to_dict(e) for e in cfg.extenders]
    return d


def dump_config(cfg: KubeSchedulerConfiguration) -> str:
    """``cfg`` as v1 YAML; :func:`load_config` reads it back to an equal configuration."""
    return yaml.safe_dump(config_to_dict(cfg), sort_keys=False, default_flow_style=False, allow_unicode=True)


def _plugin_to_dict(p: Plugin) -> dict[str, Any]:
    return {"name": p.name, "weight": p.weight} if p.weight else {"name": p.name}


def _profile_to_dict(profile: KubeSchedulerProfile) -> dict[str, Any]:
    d: dict[str, Any] = {"schedulerName": profile.scheduler_name}
    if profile.percentage_of_nodes_to_score is not None:
        d["percentageOfNodesToScore"] = profile.percentage_of_nodes_to_score
    if profile.plugins is not None:
        plugins: dict[str, Any] = {}
        for ep in EXTENSION_POINTS:
            ps: PluginSet = getattr(profile.plugins, ep)
            entry = {}
            if ps.enabled:
                entry["enabled"] = [_plugin_to_dict(p) for p in ps.enabled]
            if ps.disabled:
                entry["disabled"] = [{"name": p.name} for p in ps.disabled]
            if entry:
                plugins[EXTENSION_POINT_JSON[ep]] = entry
        d["plugins"] = plugins
    if profile.plugin_config:
        d["pluginConfig"] = [_plugin_config_to_dict(pc) for pc in profile.plugin_config]
    return d


def _plugin_config_to_dict(pc: PluginConfig) -> dict[str, Any]:
    d: dict[str, Any] = {"name": pc.name}
    if isinstance(pc.args, PluginArgs):
        d["args"] = pc.args.to_dict()
    elif pc.args is not None:
        d["args"] = copy.deepcopy(pc.args)
    return d


def _extender_to_dict(ext: Extender) -> dict[str, Any]:
    d: dict[str, Any] = {"urlPrefix": ext.url_prefix}
    for key, value in (
        ("filterVerb", ext.filter_verb),
        ("preemptVerb", ext.preempt_verb),
        ("prioritizeVerb", ext.prioritize_verb),
        ("weight", ext.weight),
        ("bindVerb", ext.bind_verb),
        ("enableHTTPS", ext.enable_https),
    ):
        if value:
            d[key] = value
    if ext.tls_config is not None:
        tls = {}
        for key, attr, _ in _TLS_FIELDS:
            value = getattr(ext.tls_config, attr)
            if value:
                tls[key] = base64.b64encode(value).decode("ascii") if isinstance(value, bytes) else value
        d["tlsConfig"] = tls
    d["httpTimeout"] = format_duration(ext.http_timeout)
    if ext.node_cache_capable:
        d["nodeCacheCapable"] = True
    if ext.managed_resources:
        d["managedResources"] = [
            {"name": r.name, "ignoredByScheduler": r.ignored_by_scheduler} for r in ext.managed_resources
        ]
    if ext.ignorable:
        d["ignorable"] = True
    return d
