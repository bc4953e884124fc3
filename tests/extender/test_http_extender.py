"""HTTPExtender against a real extender server on 127.0.0.1."""
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from fastsched.config.types import Extender as ExtenderConfig, ExtenderManagedResource
from fastsched.extender import ExtenderError, HTTPExtender, Victims, pod_manifest
from fastsched.extender.testing import ReferenceExtender
from fastsched.framework import NodeInfo
from fastsched.snapshot import build_snapshot
from fastsched.testing import make_node, make_pod


@pytest.fixture
def nodes():
    return build_snapshot([make_node(f"node-{i}") for i in range(4)]).batch()


def ext_for(server, **kw):
    kw.setdefault("filter_verb", "filter")
    kw.setdefault("prioritize_verb", "prioritize")
    kw.setdefault("weight", 1)
    return HTTPExtender(ExtenderConfig(url_prefix=server.url + "/", **kw))


def test_filter_sends_full_nodes_and_narrows(nodes):
    with ReferenceExtender(filter_reject={"node-1": "no gpu"}, filter_unresolvable={"node-2": "wrong zone"}) as srv:
        kept, failed, unresolvable = ext_for(srv).filter(make_pod("p"), nodes)
        assert kept.names == ["node-0", "node-3"]
        assert failed == {"node-1": "no gpu"} and unresolvable == {"node-2": "wrong zone"}
        verb, body = srv.requests[0]
        assert verb == "filter" and body["NodeNames"] is None
        assert [i["metadata"]["name"] for i in body["Nodes"]["items"]] == nodes.names
        assert body["Pod"]["metadata"]["name"] == "p"


def test_node_cache_capable_sends_names_only(nodes):
    with ReferenceExtender(filter_reject={"node-0": "x"}) as srv:
        kept, _, _ = ext_for(srv, node_cache_capable=True).filter(make_pod("p"), nodes)
        _, body = srv.requests[0]
        assert body["Nodes"] is None and body["NodeNames"] == nodes.names
        assert kept.names == ["node-1", "node-2", "node-3"]


def test_filter_works_on_plain_node_info_lists():
    infos = [NodeInfo(make_node("a")), NodeInfo(make_node("b"))]
    with ReferenceExtender(filter_reject={"a": "no"}) as srv:
        kept, _, _ = ext_for(srv).filter(make_pod("p"), infos)
        assert [k.name for k in kept] == ["b"]


def test_prioritize_returns_scores_and_weight(nodes):
    with ReferenceExtender(prioritize_scores={"node-2": 7}) as srv:
        scores, weight = ext_for(srv, weight=3).prioritize(make_pod("p"), nodes)
        assert scores == {"node-0": 0, "node-1": 0, "node-2": 7, "node-3": 0} and weight == 3


def test_no_prioritize_verb_means_zero_scores_and_weight(nodes):
    with ReferenceExtender() as srv:
        scores, weight = ext_for(srv, prioritize_verb="").prioritize(make_pod("p"), nodes)
        assert set(scores.values()) == {0} and weight == 0 and srv.requests == []


def test_bind_sends_binding_args():
    with ReferenceExtender() as srv:
        ext = ext_for(srv, bind_verb="bind")
        assert ext.is_binder()
        pod = make_pod("p", uid="u-1")
        ext.bind(pod, "node-9")
        assert srv.bound == [("default/p", "u-1", "node-9")]
        assert srv.requests[0][1] == {"PodName": "p", "PodNamespace": "default", "PodUID": "u-1", "Node": "node-9"}
    with ReferenceExtender(bind_error="no way") as srv:
        with pytest.raises(ExtenderError, match="no way"):
            ext_for(srv, bind_verb="bind").bind(make_pod("p"), "n")


def test_managed_resources_interest():
    with ReferenceExtender() as srv:
        ext = ext_for(srv, managed_resources=[ExtenderManagedResource("example.com/fpga")])
        assert not ext.is_interested(make_pod("plain", cpu="1"))
        assert ext.is_interested(make_pod("fpga", requests={"example.com/fpga": "1"}))
        assert ext_for(srv).is_interested(make_pod("any"))


@pytest.mark.parametrize("mode,match", [
    ("http500", r"failed filter with extender at URL http://127\.0\.0\.1:\d+/filter, code 500"),
    ("garbage", "malformed JSON"),
    ("error", "filter failed on purpose"),
    ("unknown-node", 'claims a filtered node "no-such-node" which is not found in the input node list'),
])
def test_filter_failures(nodes, mode, match):
    with ReferenceExtender(mode=mode) as srv:
        with pytest.raises(ExtenderError, match=match):
            ext_for(srv, node_cache_capable=True).filter(make_pod("p"), nodes)


def test_timeout(nodes):
    with ReferenceExtender(mode="slow", delay=1.0) as srv:
        with pytest.raises(ExtenderError, match="timeout after 0.2s"):
            ext_for(srv, http_timeout=0.2).filter(make_pod("p"), nodes)


def test_refused_connection(nodes):
    srv = ReferenceExtender()
    url = srv.url
    srv._server.server_close()  # never started: the port refuses connections
    ext = HTTPExtender(ExtenderConfig(url_prefix=url, filter_verb="filter"))
    with pytest.raises(ExtenderError, match="failed filter with extender at URL"):
        ext.filter(make_pod("p"), nodes)


def test_connections_are_reused(nodes):
    with ReferenceExtender() as srv:
        ext = ext_for(srv)
        for _ in range(5):
            ext.filter(make_pod("p"), nodes)
            ext.prioritize(make_pod("p"), nodes)
        assert len(srv.requests) == 10 and srv.connections == 1


class _CaseServer(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    answer = b""

    def do_POST(self):  # noqa: N802
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.answer)))
        self.end_headers()
        self.wfile.write(self.answer)

    def log_message(self, *a):
        pass


def test_answers_are_decoded_case_insensitively(nodes):
    _CaseServer.answer = json.dumps({"nodenames": ["node-1", "node-3"], "failednodes": {"node-0": "lower"},
                                     "FAILEDANDUNRESOLVABLENODES": {"node-2": "upper"}}).encode()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _CaseServer)
    t = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    t.start()
    try:
        ext = HTTPExtender(ExtenderConfig(url_prefix=f"http://127.0.0.1:{server.server_address[1]}",
                                          filter_verb="filter", node_cache_capable=True))
        kept, failed, unresolvable = ext.filter(make_pod("p"), nodes)
        assert kept.names == ["node-1", "node-3"] and failed == {"node-0": "lower"}
        assert unresolvable == {"node-2": "upper"}
    finally:
        server.shutdown()
        server.server_close()


def test_preemption_round_trip(make_pod_on=None):
    victim = make_pod("victim", uid="v-1", node_name="node-0", priority=1)
    snap = build_snapshot([make_node("node-0"), make_node("node-1")], [victim])
    with ReferenceExtender(preempt_drop_nodes={"node-1"}) as srv:
        ext = ext_for(srv, preempt_verb="preempt", node_cache_capable=True)
        assert ext.supports_preemption()
        out = ext.process_preemption(make_pod("p", priority=10), {
            "node-0": Victims([victim], 1), "node-1": Victims([], 0)}, snap)
        assert list(out) == ["node-0"]
        assert [p.uid for p in out["node-0"].pods] == ["v-1"] and out["node-0"].num_pdb_violations == 1
        assert srv.requests[0][1]["NodeNameToMetaVictims"]["node-0"]["Pods"] == [{"UID": "v-1"}]
    with ReferenceExtender() as srv:
        ext = ext_for(srv, preempt_verb="preempt")
        ext.process_preemption(make_pod("p", priority=10), {"node-0": Victims([victim], 0)}, snap)
        full = srv.requests[0][1]["NodeNameToVictims"]["node-0"]["Pods"][0]
        assert full["metadata"]["uid"] == "v-1" and full["spec"]["nodeName"] == "node-0"


def test_pod_manifest_keeps_the_original_and_sets_node_name():
    pod = make_pod("p", labels={"a": "b"}).with_node_name("n1")
    m = pod_manifest(pod)
    assert m["metadata"]["labels"] == {"a": "b"} and m["spec"]["nodeName"] == "n1" and m["kind"] == "Pod"


def test_invalid_url_prefix():
    with pytest.raises(ValueError, match="is not an http"):
        HTTPExtender(ExtenderConfig(url_prefix="ftp://x"))


class _RawServer:
    """A TCP server answering each request with the next of ``answers`` (raw bytes, then the
    connection closes); the last answer repeats."""

    def __init__(self, answers: list[bytes]):
        import socket

        self.answers = answers
        self.served = 0
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            with conn:
                request = b""
                while b"\r\n\r\n" not in request:  # the whole request, or closing could reset it
                    request += conn.recv(1 << 16)
                head, _, body = request.partition(b"\r\n\r\n")
                length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                                  if line.lower().startswith(b"content-length:")))
                while len(body) < length:
                    body += conn.recv(1 << 16)
                self.served += 1  # before answering: the client may read `served` once answered
                conn.sendall(self.answers[min(self.served - 1, len(self.answers) - 1)])

    def close(self):
        self._sock.close()


_GOOD = b'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}'


@pytest.mark.parametrize("bad", [
    b"HELLO THERE\r\n\r\n",                                            # not HTTP: BadStatusLine
    b"HTTP/1.1 200 OK\r\nX: " + b"a" * 70000 + b"\r\n\r\n",             # a header line too long
    b"HTTP/1.1 200 OK\r\n" + b"X: y\r\n" * 200 + b"\r\n",               # too many headers
    b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{}",               # a body cut short
], ids=["not-http", "long-header", "many-headers", "short-body"])
def test_a_protocol_error_is_an_extender_error_and_the_next_call_gets_through(nodes, bad):
    """An answer that is no HTTP response (http.client's HTTPException family, not OSError) was
    let through as the bare exception and left the pooled connection mid-request, so every later
    call of that thread failed with ``Request-sent`` (CannotSendRequest) though the extender had
    recovered. Upstream's http.Client fails that call (``Post "...": net/http: ...``) and dials
    again for the next."""
    srv = _RawServer([bad, _GOOD])
    try:
        ext = HTTPExtender(ExtenderConfig(url_prefix=srv.url, filter_verb="filter", node_cache_capable=True))
        with pytest.raises(ExtenderError, match=r"^failed filter with extender at URL http://127\.0\.0\.1:\d+/filter: "):
            ext.filter(make_pod("p"), nodes)
        kept, failed, unresolvable = ext.filter(make_pod("p"), nodes)  # the extender answers well now
        assert failed == {} and srv.served == 2
    finally:
        srv.close()


def test_a_negative_http_timeout_means_no_timeout(nodes):
    """Upstream hands ``httpTimeout`` to http.Client, whose Timeout <= 0 means none (only 0 is
    defaulted to 5s); a negative one made every call fail (Python's sockets refuse it)."""
    with ReferenceExtender() as srv:
        ext = ext_for(srv, http_timeout=-5.0)
        kept, _, _ = ext.filter(make_pod("p"), nodes)
        assert kept.names == nodes.names


def test_run_schedules_every_pod_once_the_extender_answers_http_again():
    """With many pods: a few answers that are no HTTP response fail those attempts (Error, retried
    after backoff), and once the extender answers well every pod binds; the broken connection made
    every later attempt fail with ``Request-sent``, so none bound."""
    from fastsched import Scheduler, load_config
    from fastsched.scheduler.result import SCHEDULED

    body = json.dumps({"NodeNames": ["n0", "n1"]}).encode()
    good = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body)
    srv = _RawServer([b"HELLO THERE\r\n\r\n"] * 3 + [good])
    try:
        s = Scheduler(load_config(f"""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
extenders:
- urlPrefix: {srv.url}
  filterVerb: filter
  nodeCacheCapable: true
"""))
        s.add_nodes([make_node(f"n{i}", cpu="64") for i in range(2)])
        s.add_pods([make_pod(f"p{i}", cpu="100m") for i in range(40)])
        results = s.run()
        assert len(results) == 40 and {r.status for r in results} == {SCHEDULED}, \
            {r.message for r in results if r.status != SCHEDULED}
    finally:
        srv.close()


@pytest.mark.parametrize("tls, message", [
    ({"ca_file": "/nonexistent/ca.pem"}, "open /nonexistent/ca.pem: no such file or directory"),
    ({"cert_file": "/nonexistent/c.pem", "key_file": "/nonexistent/k.pem"},
     "open /nonexistent/c.pem: no such file or directory"),
    ({"insecure": True, "ca_file": "/nonexistent/ca.pem"},
     "specifying a root certificates file with the insecure flag is not allowed"),
    ({"ca_data": b"not a certificate"}, "unable to load root certificates: unable to parse bytes as PEM block"),
])
def test_unusable_tls_files_are_reported_at_tls_config_in_client_gos_words(tls, message):
    """client-go's TLSConfigFor (the extender's transport): the insecure flag with a CA first,
    then each file read (os.ReadFile's error names the file; Python's did not: '[Errno 2] No such
    file or directory')."""
    from fastsched.config import ConfigError, load_config
    from fastsched.config.types import ExtenderTLSConfig
    from fastsched import Scheduler

    cfg = load_config("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                      "extenders:\n- urlPrefix: https://127.0.0.1:1\n  filterVerb: filter\n")
    cfg.extenders[0].tls_config = ExtenderTLSConfig(**tls)
    with pytest.raises(ConfigError) as err:
        Scheduler(cfg)
    assert str(err.value) == f"extenders[0].tlsConfig: {message}"


def _http_extender_scheduler(srv, **kw):
    from fastsched import Scheduler, load_config

    cfg = load_config(f"""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
extenders:
- urlPrefix: {srv.url}
  filterVerb: filter
  prioritizeVerb: prioritize
  weight: 2
""")
    s = Scheduler(cfg, seed=1, **kw)
    s.add_nodes([make_node(f"node-{i}", cpu="4") for i in range(3)])
    return s


def test_a_scheduler_with_an_http_extender_forks():
    """A fork shares the HTTP client (its keep-alive connection and TLS context cannot be copied):
    Scheduler.fork(), a transaction, capacity and explain's preemption dry run (a pod no node
    fits) all worked only without an HTTP extender ("cannot fork a Scheduler holding a
    _thread._local"), and ``fastsched explain`` of such a pod with such a configuration ended in an
    internal error."""
    from fastsched.scheduler.result import SCHEDULED
    from fastsched.sim import max_replicas

    with ReferenceExtender(filter_reject={"node-0": "no gpu"}, prioritize_scores={"node-2": 10}) as srv:
        s = _http_extender_scheduler(srv)
        s.add_pods([make_pod(f"p{i}", cpu="1") for i in range(3)])
        fork = s.fork()
        assert fork.extenders == s.extenders
        assert {r.node_name for r in fork.run()} <= {"node-1", "node-2"}
        assert all(r.status == SCHEDULED for r in fork.results.values())
        with s.transaction():
            s.run()
        assert {r.status for r in s.results.values()} == {"Pending"}  # reverted
        ex = s.explain(make_pod("big", cpu="64"))
        assert not ex.best_nodes and ex.preemption is not None
        fits = max_replicas(s, make_pod("c", cpu="1"))
        assert fits.placed > 0 and "node-0" not in fits.per_node  # the extender rejects node-0
    assert any(verb == "filter" for verb, _ in srv.requests)
