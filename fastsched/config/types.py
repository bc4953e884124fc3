"""KubeSchedulerConfiguration types (upstream ``pkg/scheduler/apis/config/types.go``, v1.37).

These are the *internal* (defaulted) types: the YAML/JSON v1 form is decoded into them by
:func:`fastsched.config.load_config`. Field names are the snake_case of upstream's; durations are
float seconds.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME = "default-scheduler"

#: The extension points of :class:`Plugins`, in upstream's field order (``k8s.io/kube-scheduler@v0.37.2/
#: config/v1/types.go``: ``Plugins``). The last three came with workload-aware scheduling (v1.36/1.37):
#: they are accepted, merged, validated and printed like the others, and only run PodGroup cycles,
#: which need the GenericWorkload gate (off by default; fastsched implements it off).
EXTENSION_POINTS = (
    "pre_enqueue",
    "queue_sort",
    "pre_filter",
    "filter",
    "post_filter",
    "pre_score",
    "score",
    "reserve",
    "permit",
    "pre_bind",
    "bind",
    "post_bind",
    "multi_point",
    "placement_generate",
    "placement_score",
    "pod_group_post_filter",
)

#: The workload-aware points: a PodGroup's cycle runs them (GenericWorkload, TopologyAwareWorkloadScheduling).
WORKLOAD_EXTENSION_POINTS = ("placement_generate", "placement_score", "pod_group_post_filter")


@dataclass
class Plugin:
    """One plugin in a PluginSet. ``weight`` 0 means unset (only meaningful for Score and PlacementScore)."""

    name: str
    weight: int = 0


@dataclass
class PluginSet:
    enabled: list[Plugin] = field(default_factory=list)
    disabled: list[Plugin] = field(default_factory=list)


@dataclass
class Plugins:
    """Per-extension-point plugin sets; ``multi_point`` carries the defaults after defaulting."""

    pre_enqueue: PluginSet = field(default_factory=PluginSet)
    queue_sort: PluginSet = field(default_factory=PluginSet)
    pre_filter: PluginSet = field(default_factory=PluginSet)
    filter: PluginSet = field(default_factory=PluginSet)
    post_filter: PluginSet = field(default_factory=PluginSet)
    pre_score: PluginSet = field(default_factory=PluginSet)
    score: PluginSet = field(default_factory=PluginSet)
    reserve: PluginSet = field(default_factory=PluginSet)
    permit: PluginSet = field(default_factory=PluginSet)
    pre_bind: PluginSet = field(default_factory=PluginSet)
    bind: PluginSet = field(default_factory=PluginSet)
    post_bind: PluginSet = field(default_factory=PluginSet)
    multi_point: PluginSet = field(default_factory=PluginSet)
    #: plugins that generate a PodGroup's candidate placements (at most one)
    placement_generate: PluginSet = field(default_factory=PluginSet)
    #: plugins that rank a PodGroup's placements (weighted as Score plugins)
    placement_score: PluginSet = field(default_factory=PluginSet)
    #: plugins run when a PodGroup cannot be scheduled (PostFilter for a group)
    pod_group_post_filter: PluginSet = field(default_factory=PluginSet)


@dataclass
class PluginConfig:
    """Args for one plugin: a typed args object for in-tree plugins, a plain dict otherwise."""

    name: str
    args: Any = None


@dataclass
class KubeSchedulerProfile:
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    #: None means "use the global percentageOfNodesToScore".
    percentage_of_nodes_to_score: int | None = None
    plugins: Plugins | None = None
    plugin_config: list[PluginConfig] = field(default_factory=list)

    def plugin_args(self, name: str) -> Any:
        """The args configured for plugin ``name`` (None when there are none)."""
        for pc in self.plugin_config:
            if pc.name == name:
                return pc.args
        return None


@dataclass
class ExtenderManagedResource:
    name: str
    ignored_by_scheduler: bool = False


@dataclass
class ExtenderTLSConfig:
    insecure: bool = False
    server_name: str = ""
    cert_file: str = ""
    key_file: str = ""
    ca_file: str = ""
    cert_data: bytes = b""
    key_data: bytes = b""
    ca_data: bytes = b""


@dataclass
class Extender:
    url_prefix: str = ""
    filter_verb: str = ""
    preempt_verb: str = ""
    prioritize_verb: str = ""
    weight: int = 0
    bind_verb: str = ""
    enable_https: bool = False
    tls_config: ExtenderTLSConfig | None = None
    #: seconds; upstream's DefaultExtenderTimeout is 5 s
    http_timeout: float = 5.0
    node_cache_capable: bool = False
    managed_resources: list[ExtenderManagedResource] = field(default_factory=list)
    ignorable: bool = False


@dataclass
class LeaderElectionConfiguration:
    leader_elect: bool = True
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    resource_lock: str = "leases"
    resource_name: str = "kube-scheduler"
    resource_namespace: str = "kube-system"


@dataclass
class ClientConnectionConfiguration:
    kubeconfig: str = ""
    accept_content_types: str = ""
    content_type: str = "application/vnd.kubernetes.protobuf"
    qps: float = 50.0
    burst: int = 100


@dataclass
class KubeSchedulerConfiguration:
    api_version: str = API_VERSION
    kind: str = KIND
    parallelism: int = 16
    #: 0 means adaptive (upstream's default); None only before defaulting.
    percentage_of_nodes_to_score: int | None = 0
    pod_initial_backoff_seconds: int = 1
    pod_max_backoff_seconds: int = 10
    profiles: list[KubeSchedulerProfile] = field(default_factory=list)
    extenders: list[Extender] = field(default_factory=list)
    leader_election: LeaderElectionConfiguration = field(default_factory=LeaderElectionConfiguration)
    client_connection: ClientConnectionConfiguration = field(default_factory=ClientConnectionConfiguration)
    enable_profiling: bool = True
    enable_contention_profiling: bool = True
    delay_cache_until_active: bool = False

    def profile(self, scheduler_name: str) -> KubeSchedulerProfile:
        """The profile named ``scheduler_name``; KeyError when there is none."""
        for p in self.profiles:
            if p.scheduler_name == scheduler_name:
                return p
        raise KeyError(f"no profile with scheduler name {scheduler_name!r}")
