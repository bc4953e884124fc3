"""HTTP scheduler extenders, wire-compatible with upstream (``pkg/scheduler/extender.go``).

The wire format is ``k8s.io/kube-scheduler/extender/v1``: its Go types carry no JSON tags, so the
keys are the Go field names (``Pod``, ``Nodes``, ``NodeNames``, ``FailedNodes``, ``Host``, ``Score``...)
and answers are decoded case-insensitively, as Go's encoding/json does. Pods and nodes travel as
Kubernetes JSON manifests.
"""
from __future__ import annotations

import abc
import base64
import http.client
import json
import socket
import ssl
import tempfile
import threading
import urllib.parse
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from ..errors import FastschedError
from ..config.types import Extender as ExtenderConfig
from ..util.forking import ForkCopier

if TYPE_CHECKING:  # pragma: no cover
    from ..api import Node, Pod

MAX_EXTENDER_PRIORITY = 10
MIN_EXTENDER_PRIORITY = 0
#: upstream's MaxNodeScore / MaxExtenderPriority: what an extender's score is multiplied by (with its weight)
EXTENDER_SCORE_SCALE = 100 // MAX_EXTENDER_PRIORITY
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


@dataclass
class Victims:
    """Upstream ``extenderv1.Victims``: the pods to evict on one node, most important first."""

    pods: list["Pod"] = field(default_factory=list)
    num_pdb_violations: int = 0


class ExtenderError(FastschedError):
    """A failed extender call: transport error, timeout, non-200 answer, or an answer we cannot use."""


def weighted_extender_score(extender: str, node: str, score: Any, weight: int) -> int:
    """``score * weight * EXTENDER_SCORE_SCALE`` as upstream's prioritizeNodes computes it, checked.

    The score must be an integer (not bool, float or str) within int64, and the weighted value must
    fit int64 too (upstream's Go arithmetic would silently wrap); otherwise :class:`ExtenderError`
    ``extender "<name>" returned score <score> for node "<node>": out of range`` (or ``: not an
    integer``). Upstream ignores a prioritize error, so the extender then gives no score this cycle.
    """
    if type(score) is not int:
        if isinstance(score, bool) or not isinstance(score, int):
            raise ExtenderError(f"extender {_q(extender)} returned score {_show(score)} for node {_q(node)}: "
                                f"not an integer")
        score = int(score)
    weighted = score * int(weight) * EXTENDER_SCORE_SCALE
    if not (INT64_MIN <= score <= INT64_MAX and INT64_MIN <= weighted <= INT64_MAX):
        raise ExtenderError(f"extender {_q(extender)} returned score {score} for node {_q(node)}: out of range")
    return weighted


def _q(s: Any) -> str:
    """Go's ``%q`` (for names and URLs)."""
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _show(value: Any) -> str:
    """A value from an extender's answer, as JSON where it came from JSON, shortened."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


class Extender(abc.ABC):
    """Upstream's ``Extender`` interface (snake_case), as the scheduler uses it."""

    @abc.abstractmethod
    def name(self) -> str: ...

    @abc.abstractmethod
    def is_interested(self, pod: "Pod") -> bool: ...

    @abc.abstractmethod
    def filter(self, pod: "Pod", nodes: Any) -> tuple[Any, dict[str, str], dict[str, str]]:
        """Returns (nodes kept — same type as ``nodes``, failed {node: msg}, failed-and-unresolvable)."""

    @abc.abstractmethod
    def prioritize(self, pod: "Pod", nodes: Any) -> tuple[dict[str, int], int]:
        """Returns ({node: score in [0, 10]}, weight)."""

    @abc.abstractmethod
    def bind(self, pod: "Pod", node_name: str) -> None: ...

    @abc.abstractmethod
    def is_binder(self) -> bool: ...

    @abc.abstractmethod
    def supports_preemption(self) -> bool: ...

    @abc.abstractmethod
    def process_preemption(self, pod: "Pod", node_name_to_victims: dict[str, Victims], node_infos: Any
                           ) -> dict[str, Victims]:
        """The victims the extender agrees to, per node (``node_infos`` maps UIDs back to pods)."""

    @abc.abstractmethod
    def is_ignorable(self) -> bool: ...

    @property
    def filter_verb(self) -> str:
        return ""

    @property
    def prioritize_verb(self) -> str:
        return ""


# ------------------------------------------------------------------------------------------------
# serialization
# ------------------------------------------------------------------------------------------------
def pod_manifest(pod: "Pod") -> dict:
    """The pod as Kubernetes JSON: its manifest with the scheduler's view of nodeName."""
    m = dict(pod.manifest) if pod.manifest else {}
    if not m:
        m = {"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid,
                          "labels": dict(pod.labels), "annotations": dict(pod.annotations)},
             "spec": {"schedulerName": pod.scheduler_name,
                      "containers": [_container(c) for c in pod.containers],
                      "initContainers": [_container(c) for c in pod.init_containers]}}
        if pod.priority is not None:
            m["spec"]["priority"] = pod.priority
        if pod.node_selector is not None:
            m["spec"]["nodeSelector"] = dict(pod.node_selector)
    m.setdefault("apiVersion", "v1")
    m.setdefault("kind", "Pod")
    meta = dict(m.get("metadata") or {})
    meta.setdefault("uid", pod.uid)
    m["metadata"] = meta
    if pod.node_name:
        spec = dict(m.get("spec") or {})
        spec["nodeName"] = pod.node_name
        m["spec"] = spec
    return m


def _container(c: Any) -> dict:
    out: dict = {"name": c.name, "image": c.image}
    res = {}
    if c.requests:
        res["requests"] = {k: _amount(k, v) for k, v in c.requests.items()}
    if c.limits:
        res["limits"] = {k: _amount(k, v) for k, v in c.limits.items()}
    if res:
        out["resources"] = res
    return out


def _amount(name: str, v: int) -> str:
    return f"{v}m" if name == "cpu" else str(v)


def node_manifest(node: "Node") -> dict:
    m = dict(node.manifest) if node.manifest else {}
    if not m:
        m = {"apiVersion": "v1", "kind": "Node",
             "metadata": {"name": node.name, "uid": node.uid, "labels": dict(node.labels)},
             "status": {"allocatable": {k: _amount(k, v) for k, v in node.allocatable.items()}}}
    m.setdefault("apiVersion", "v1")
    m.setdefault("kind", "Node")
    return m


def _ci_get(obj: Mapping, key: str, default: Any = None) -> Any:
    """Go's case-insensitive field lookup (an exact match wins)."""
    if key in obj:
        return obj[key]
    low = key.lower()
    for k, v in obj.items():
        if isinstance(k, str) and k.lower() == low:
            return v
    return default


def _names_of(nodes: Any) -> list[str]:
    names = getattr(nodes, "names", None)
    if names is not None:
        return list(names)
    return [n.node().name for n in nodes]


def _subset(nodes: Any, names: Sequence[str]) -> Any:
    """The nodes of ``nodes`` named in ``names`` (in that order), same container type."""
    index = {n: i for i, n in enumerate(_names_of(nodes))}
    pos = [index[n] for n in names]
    if hasattr(nodes, "select"):
        import numpy as np

        return nodes.select(np.array(pos, dtype=np.int64))
    return [nodes[i] for i in pos]


def _str_map(value: Any, what: str, extender: str) -> dict[str, str]:
    """A FailedNodesMap (node name -> message); JSON null reads as empty, as Go reads it."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ExtenderError(f"extender {_q(extender)} returned {what} {_show(value)}: not a map of node names "
                            f"to messages")
    out = {}
    for k, v in value.items():
        if v is None:
            v = ""
        elif not isinstance(v, str):
            raise ExtenderError(f"extender {_q(extender)} returned {what} message {_show(v)} for node {_q(k)}: "
                                f"not a string")
        out[str(k)] = v
    return out


#: what :meth:`HTTPExtender._send` returns for a 200 answer with an empty body
_EMPTY = object()


# ------------------------------------------------------------------------------------------------
# the HTTP extender
# ------------------------------------------------------------------------------------------------
class HTTPExtender(Extender):
    """An extender reached over HTTP(S) with upstream's verbs, timeouts and failure handling."""

    def __init__(self, cfg: ExtenderConfig):
        self.cfg = cfg
        self.extender_url = cfg.url_prefix
        parsed = urllib.parse.urlsplit(cfg.url_prefix)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(f"extender urlPrefix {cfg.url_prefix!r} is not an http(s) URL")
        self._https = cfg.enable_https or parsed.scheme == "https"
        self._host = parsed.hostname
        self._port = parsed.port or (443 if self._https else 80)
        self._base_path = parsed.path.rstrip("/")
        # upstream hands httpTimeout to http.Client, where a Timeout <= 0 means none (only 0 was
        # defaulted to 5s); Python's sockets refuse a negative timeout, so it is None here
        self._timeout: float | None = float(cfg.http_timeout or 5.0) if (cfg.http_timeout or 0) >= 0 else None
        self._ssl = self._ssl_context() if self._https else None
        self._local = threading.local()
        self.managed_resources = {r.name for r in cfg.managed_resources}

    def __fork__(self, copier: ForkCopier) -> "HTTPExtender":
        # a fork asks the same service: the client holds no cluster state (its configuration, a
        # TLS context and a per-thread keep-alive connection, which neither side can copy), so
        # the fork (explain's preemption dry run, capacity, transactions) shares it
        return self

    # -- interface ---------------------------------------------------------------------------------
    def name(self) -> str:
        return self.extender_url

    @property
    def filter_verb(self) -> str:
        return self.cfg.filter_verb

    @property
    def prioritize_verb(self) -> str:
        return self.cfg.prioritize_verb

    @property
    def weight(self) -> int:
        return self.cfg.weight

    def is_binder(self) -> bool:
        return bool(self.cfg.bind_verb)

    def supports_preemption(self) -> bool:
        return bool(self.cfg.preempt_verb)

    def is_ignorable(self) -> bool:
        return self.cfg.ignorable

    def is_interested(self, pod: "Pod") -> bool:
        if not self.managed_resources:
            return True
        for c in (*pod.containers, *pod.init_containers):
            if self.managed_resources & (set(c.requests) | set(c.limits)):
                return True
        return False

    def _args(self, pod: "Pod", nodes: Any) -> dict:
        if self.cfg.node_cache_capable:
            return {"Pod": pod_manifest(pod), "Nodes": None, "NodeNames": _names_of(nodes)}
        items = [node_manifest(ni.node()) for ni in nodes]
        return {"Pod": pod_manifest(pod), "Nodes": {"apiVersion": "v1", "kind": "NodeList", "items": items},
                "NodeNames": None}

    def filter(self, pod: "Pod", nodes: Any):
        """Upstream ``HTTPExtender.Filter``, decoding the answer defensively.

        Any answer that is not an ExtenderFilterResult (wrong JSON types, unknown nodes, an empty
        body) raises :class:`ExtenderError` naming the extender. JSON ``null`` reads as ``{}``, as
        Go's decoder reads it. Nodes the extender drops without listing them in ``FailedNodes`` or
        ``FailedAndUnresolvableNodes`` (e.g. an answer ``{}``) are reported in the
        failed-and-unresolvable map with the reason ``node(s) were filtered out by extender "<url>"
        without a reason``. Upstream leaves them out of the NodeToStatus, so they get its absent
        nodes' status (UnschedulableAndUnresolvable with no reason, or PreFilter's reason when
        PreFilter narrowed the nodes) and its FitError says nothing about them (``0/3 nodes are
        available:``); here the verdict is the same (UnschedulableAndUnresolvable) and the message
        names the extender.
        """
        if not self.cfg.filter_verb:
            return nodes, {}, {}
        verb, url = self.cfg.filter_verb, self.extender_url
        result = self._send(verb, self._args(pod, nodes))
        if result is None:
            result = {}
        if result is _EMPTY:
            raise ExtenderError(f"extender {_q(url)} answered {verb} with an empty body, not an "
                                f"ExtenderFilterResult object")
        if not isinstance(result, Mapping):
            raise ExtenderError(f"extender {_q(url)} answered {verb} with {_show(result)}, not an "
                                f"ExtenderFilterResult object")
        err = _ci_get(result, "Error")
        if err is not None and not isinstance(err, str):
            raise ExtenderError(f"extender {_q(url)} returned Error {_show(err)}: not a string")
        if err:
            raise ExtenderError(err)
        given = _names_of(nodes)
        given_set = set(given)
        # Go decodes every field whatever the configuration, so a field of the wrong type is an
        # error even where it would not be read
        node_names = _ci_get(result, "NodeNames")
        if node_names is not None and (not isinstance(node_names, list)
                                       or not all(isinstance(n, str) for n in node_names)):
            raise ExtenderError(f"extender {_q(url)} returned NodeNames {_show(node_names)}: not a list of "
                                f"node names")
        node_list = _ci_get(result, "Nodes")
        listed: list[str] | None = None
        if node_list is not None:
            items = _ci_get(node_list, "items") if isinstance(node_list, Mapping) else ()
            if items is None:
                items = []
            if not isinstance(items, list):
                raise ExtenderError(f"extender {_q(url)} returned Nodes {_show(node_list)}: not a NodeList")
            listed = []
            for item in items:
                meta = _ci_get(item, "metadata") if isinstance(item, Mapping) else None
                name = _ci_get(meta, "name", "") if isinstance(meta, Mapping) else None
                if not isinstance(name, str):
                    raise ExtenderError(f"extender {_q(url)} returned a node {_show(item)} in Nodes: not a Node "
                                        f"with a metadata.name")
                listed.append(name)
        names: list[str] | None = None
        if self.cfg.node_cache_capable and node_names is not None:
            names = node_names
        elif listed is not None:
            names = listed
        if names is None:
            names = []
        for n in names:
            if n not in given_set:
                raise ExtenderError(f'extender "{self.extender_url}" claims a filtered node "{n}" which is not '
                                    f"found in the input node list")
        failed = _str_map(_ci_get(result, "FailedNodes"), "FailedNodes", url)
        unresolvable = _str_map(_ci_get(result, "FailedAndUnresolvableNodes"), "FailedAndUnresolvableNodes", url)
        if len(names) < len(given):
            kept = set(names)
            reason = f"node(s) were filtered out by extender {_q(url)} without a reason"
            for n in given:
                if n not in kept and n not in failed and n not in unresolvable:
                    unresolvable[n] = reason
        return _subset(nodes, names), failed, unresolvable

    def prioritize(self, pod: "Pod", nodes: Any) -> tuple[dict[str, int], int]:
        """Upstream ``HTTPExtender.Prioritize``: ({node: score}, weight), the answer checked.

        Each score must be an integer whose weighted value ``score * weight * 10`` fits int64
        (:func:`weighted_extender_score`); anything else raises :class:`ExtenderError` naming the
        extender, the node and the value, e.g. ``extender "http://..." returned score
        4611686018427387904 for node "n1": out of range``. Upstream's scheduler ignores any
        Prioritize error (ignorable or not): the extender gives no score that cycle.
        """
        if not self.cfg.prioritize_verb:
            return {n: 0 for n in _names_of(nodes)}, 0
        verb, url = self.cfg.prioritize_verb, self.extender_url
        result = self._send(verb, self._args(pod, nodes))
        if result is None:
            result = []  # JSON null: Go decodes it into an empty HostPriorityList
        if result is _EMPTY:
            raise ExtenderError(f"extender {_q(url)} answered {verb} with an empty body, not a HostPriorityList")
        if not isinstance(result, list):
            raise ExtenderError(f"extender {_q(url)} answered {verb} with {_show(result)}, not a HostPriorityList")
        weight = int(self.cfg.weight)
        scores: dict[str, int] = {}
        for hp in result:
            if not isinstance(hp, Mapping):
                raise ExtenderError(f"extender {_q(url)} returned {_show(hp)} in its HostPriorityList: not a "
                                    f"HostPriority object")
            host = _ci_get(hp, "Host")
            if host is None:
                host = ""
            if not isinstance(host, str):
                raise ExtenderError(f"extender {_q(url)} returned Host {_show(host)}: not a node name")
            score = _ci_get(hp, "Score")
            if score is None:
                score = 0  # JSON null leaves Go's int64 at 0
            weighted_extender_score(url, host, score, weight)
            scores[host] = score
        return scores, weight

    def bind(self, pod: "Pod", node_name: str) -> None:
        if not self.cfg.bind_verb:
            raise ExtenderError("unexpected empty bindVerb in extender")
        args = {"PodName": pod.name, "PodNamespace": pod.namespace, "PodUID": pod.uid, "Node": node_name}
        result = self._send(self.cfg.bind_verb, args)
        if isinstance(result, Mapping) and _ci_get(result, "Error"):
            raise ExtenderError(str(_ci_get(result, "Error")))
        if result is not _EMPTY and result is not None and not isinstance(result, Mapping):
            raise ExtenderError(f"extender {_q(self.extender_url)} answered {self.cfg.bind_verb} with "
                                f"{_show(result)}, not an ExtenderBindingResult object")

    def process_preemption(self, pod: "Pod", node_name_to_victims: dict[str, Victims], node_infos: Any
                           ) -> dict[str, Victims]:
        if not self.supports_preemption():
            raise ExtenderError(f"preempt verb is not defined for extender {self.extender_url} but run into "
                                f"ProcessPreemption")
        if self.cfg.node_cache_capable:
            meta = {n: {"Pods": [{"UID": p.uid} for p in v.pods], "NumPDBViolations": v.num_pdb_violations}
                    for n, v in node_name_to_victims.items()}
            args = {"Pod": pod_manifest(pod), "NodeNameToVictims": None, "NodeNameToMetaVictims": meta}
        else:
            full = {n: {"Pods": [pod_manifest(p) for p in v.pods], "NumPDBViolations": v.num_pdb_violations}
                    for n, v in node_name_to_victims.items()}
            args = {"Pod": pod_manifest(pod), "NodeNameToVictims": full, "NodeNameToMetaVictims": None}
        url = self.extender_url
        result = self._send(self.cfg.preempt_verb, args)
        if not isinstance(result, Mapping):
            raise ExtenderError(f"extender {_q(url)} answered {self.cfg.preempt_verb} with "
                                f"{'an empty body' if result is _EMPTY else _show(result)}, not an "
                                f"ExtenderPreemptionResult object")
        meta_victims = _ci_get(result, "NodeNameToMetaVictims") or {}
        if not isinstance(meta_victims, Mapping):
            raise ExtenderError(f"extender {_q(url)} returned NodeNameToMetaVictims {_show(meta_victims)}: "
                                f"not a map")
        out: dict[str, Victims] = {}
        for node_name, mv in meta_victims.items():
            try:
                ni = node_infos.get(node_name)
            except KeyError as e:
                raise ExtenderError(str(e)) from None
            if mv is None:
                mv = {}
            if not isinstance(mv, Mapping):
                raise ExtenderError(f"extender {_q(url)} returned MetaVictims {_show(mv)} for node "
                                    f"{_q(node_name)}: not an object")
            meta_pods = _ci_get(mv, "Pods")
            if meta_pods is None:
                meta_pods = []
            if not isinstance(meta_pods, list):
                raise ExtenderError(f"extender {_q(url)} returned Pods {_show(meta_pods)} for node "
                                    f"{_q(node_name)}: not a list")
            violations = _ci_get(mv, "NumPDBViolations")
            if violations is None:
                violations = 0
            if (isinstance(violations, bool) or not isinstance(violations, int)
                    or not INT64_MIN <= violations <= INT64_MAX):
                raise ExtenderError(f"extender {_q(url)} returned NumPDBViolations {_show(violations)} for node "
                                    f"{_q(node_name)}: not an int64")
            by_uid = {pi.pod.uid: pi.pod for pi in ni.pods}
            pods = []
            for meta_pod in meta_pods:
                uid = _ci_get(meta_pod, "UID", "") if isinstance(meta_pod, Mapping) else None
                if uid is None:
                    uid = ""
                if not isinstance(uid, str):
                    raise ExtenderError(f"extender {_q(url)} returned MetaPod {_show(meta_pod)} for node "
                                        f"{_q(node_name)}: not an object with a UID")
                if uid not in by_uid:
                    raise ExtenderError(f"extender: {self.extender_url} claims to preempt pod (UID: {uid}) on node: "
                                        f"{node_name}, but the pod is not found on that node")
                pods.append(by_uid[uid])
            out[node_name] = Victims(pods, violations)
        return out

    # -- transport ---------------------------------------------------------------------------------
    def _ssl_context(self) -> ssl.SSLContext:
        # The errors are OSErrors (reported at extenders[i].tlsConfig) in client-go's words
        # (transport.TLSConfigFor): Python's named no file ('[Errno 2] No such file or directory').
        tls = self.cfg.tls_config
        ctx = ssl.create_default_context()
        ca_file = tls.ca_file if tls else ""
        ca_data = tls.ca_data if tls else b""
        if tls is not None and tls.insecure and (ca_file or ca_data):
            raise OSError("specifying a root certificates file with the insecure flag is not allowed")
        if tls is None or tls.insecure or not (ca_file or ca_data):
            # upstream: HTTPS without a CA configured means an insecure client
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        try:
            if ca_file:
                _readable(ca_file)
                ctx.load_verify_locations(cafile=ca_file)
            if ca_data:
                ctx.load_verify_locations(cadata=_pem_text(ca_data))
        except ssl.SSLError as e:
            raise OSError("unable to load root certificates: unable to parse bytes as PEM block") from e
        if tls is not None:
            cert: str = tls.cert_file
            key: str | None = tls.key_file
            if tls.cert_data or tls.key_data:
                cert = _temp_pem(tls.cert_data)
                key = _temp_pem(tls.key_data) if tls.key_data else None
            if cert:
                _readable(cert)
                if key:
                    _readable(key)
                try:
                    ctx.load_cert_chain(cert, key or None)
                except ssl.SSLError as e:
                    raise OSError("tls: failed to find any PEM data in certificate input or key input "
                                  f"({e.reason or e.args[-1]})") from e
        return ctx

    def _connection(self) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            if self._ssl is not None:  # set exactly when the URL is https
                server_name = (self.cfg.tls_config.server_name if self.cfg.tls_config else "") or self._host
                conn = _HTTPSConnection(self._host, self._port, timeout=self._timeout, context=self._ssl,
                                        server_name=server_name)
            else:
                conn = http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)
            self._local.conn = conn
        return conn

    def _send(self, verb: str, args: Any) -> Any:
        url = f"{self.extender_url.rstrip('/')}/{verb}"
        path = f"{self._base_path}/{verb}"
        body = json.dumps(args).encode()
        for attempt in (0, 1):  # one retry when a pooled keep-alive connection went stale
            conn = self._connection()
            try:
                conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
                resp = conn.getresponse()
                data = resp.read()
                break
            except (socket.timeout, TimeoutError) as e:
                self._drop()
                after = f"timeout after {self._timeout:g}s" if self._timeout is not None else str(e) or "timeout"
                raise ExtenderError(f"failed {verb} with extender at URL {url}: {after}") from e
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as e:
                self._drop()
                if attempt == 0:
                    continue
                raise ExtenderError(f"failed {verb} with extender at URL {url}: {e}") from e
            except OSError as e:
                self._drop()
                raise ExtenderError(f"failed {verb} with extender at URL {url}: {e}") from e
            except http.client.HTTPException as e:
                # an answer that is no HTTP response (a bad status line, a header line too long, a
                # body cut short): the connection is mid-request and would refuse every later call
                # (CannotSendRequest 'Request-sent'); upstream's client fails this call and dials
                # again for the next
                self._drop()
                detail = " ".join(str(e).split())  # a bad status line ends in CRLF
                kind = type(e).__name__
                detail = detail if detail.startswith(kind) else f"{kind}: {detail}" if detail else kind
                raise ExtenderError(f"failed {verb} with extender at URL {url}: malformed HTTP response "
                                    f"({detail})") from e
        if resp.status != 200:
            raise ExtenderError(f"failed {verb} with extender at URL {url}, code {resp.status}")
        if not data.strip():
            return _EMPTY
        try:
            return json.loads(data)
        except (ValueError, RecursionError) as e:
            raise ExtenderError(f"extender at URL {url} answered {verb} with malformed JSON: {e}") from e

    def _drop(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def close(self) -> None:
        self._drop()


class _HTTPSConnection(http.client.HTTPSConnection):
    """HTTPS with a TLS server name (SNI and verification) that may differ from the host dialled."""

    def __init__(self, *args: Any, server_name: str, context: ssl.SSLContext, **kwargs: Any):
        super().__init__(*args, context=context, **kwargs)
        self._server_name = server_name
        self._ctx = context

    def connect(self) -> None:
        http.client.HTTPConnection.connect(self)
        self.sock = self._ctx.wrap_socket(self.sock, server_hostname=self._server_name)


def _readable(path: str) -> None:
    """Fail as Go's os.ReadFile of ``path`` does (``open /x/ca.pem: no such file or directory``)."""
    try:
        with open(path, "rb"):
            pass
    except OSError as e:
        reason = (e.strerror or str(e))
        raise OSError(f"open {path}: {reason[:1].lower()}{reason[1:]}") from None


def _pem_text(data: bytes | str) -> str:
    if isinstance(data, str):
        return data
    try:
        text = data.decode()
    except UnicodeDecodeError:
        text = base64.b64decode(data).decode()
    return text


def _temp_pem(data: bytes | str) -> str:
    f = tempfile.NamedTemporaryFile("w", suffix=".pem", delete=False)
    f.write(_pem_text(data))
    f.close()
    return f.name


def new_http_extenders(configs: Iterable[ExtenderConfig]) -> list[HTTPExtender]:
    """HTTP extenders for the ``extenders`` of a KubeSchedulerConfiguration, in order."""
    return [HTTPExtender(c) for c in configs]
