"""A real HTTP extender that misbehaves on the wire, with many pods: each answer drawn from a 500,
a body that is not JSON, JSON of the wrong shape, an empty body, a dropped connection, an answer
after the timeout, half the nodes or scores left out, a node it was not sent, a score out of range,
or a proper answer. ``test_loop_properties_extenders`` draws in-process extenders; this one goes
through the HTTP client (``HTTPExtender``), on a local server, with 80 pods on 8 nodes.

Whatever it answers, ``run()`` returns; every pod ends with one result; an Error names the extender
and says what it answered; an ignorable extender's failures never fail an attempt (upstream skips
an ignorable extender that errs); a bound pod is on a node of the cluster, and no node holds more
than it can.
"""
from __future__ import annotations

import json
import random
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from fastsched import Scheduler, load_config
from fastsched.scheduler.result import ERROR, SCHEDULED, UNSCHEDULABLE
from fastsched.testing import make_node, make_pod

MODES = ("ok", "500", "garbage", "wrong-shape", "empty", "close", "slow", "partial", "unknown-node", "bad-score")
WEIGHTS = (8, 2, 2, 2, 2, 1, 1, 2, 2, 2)
NODE_MILLIS = 4000


class _Server:
    def __init__(self, seed: int):
        rng = random.Random(seed)
        lock = threading.Lock()
        self.modes: list[str] = []
        modes = self.modes

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with lock:
                    mode = rng.choices(MODES, WEIGHTS)[0]
                    modes.append(mode)
                verb = self.path.rsplit("/", 1)[-1]
                names = body.get("NodeNames") or [n["metadata"]["name"] for n in (body.get("Nodes") or {}).get("items") or ()]
                if mode == "close":
                    self.close_connection = True
                    return
                if mode == "slow":
                    time.sleep(0.15)
                if mode == "500":
                    self.send_response(500)
                    self.end_headers()
                    self.wfile.write(b"boom")
                    return
                if mode == "garbage":
                    out = b"{not json"
                elif mode == "wrong-shape":
                    out = json.dumps([1, 2] if verb == "filter" else {"a": 1}).encode()
                elif mode == "empty":
                    out = b""
                elif verb == "filter":
                    keep = names[: len(names) // 2] if mode == "partial" else list(names)
                    if mode == "unknown-node":
                        keep.append("ghost")
                    out = json.dumps({"NodeNames": keep, "FailedNodes": {n: "nope" for n in names if n not in keep}}).encode()
                else:
                    scores = [{"Host": n, "Score": 1000 if mode == "bad-score" else i % 10} for i, n in enumerate(names)]
                    if mode == "partial":
                        scores = scores[: len(scores) // 2]
                    if mode == "unknown-node":
                        scores.append({"Host": "ghost", "Score": 5})
                    out = json.dumps(scores).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(out)))
                    self.end_headers()
                    self.wfile.write(out)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.mark.parametrize("ignorable,cache_capable", [(False, False), (True, True)])
def test_a_misbehaving_http_extender_loses_no_pod(ignorable, cache_capable):
    server = _Server(seed=11)
    try:
        cfg = load_config(f"""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
extenders:
  - urlPrefix: {server.url}
    filterVerb: filter
    prioritizeVerb: prioritize
    weight: 2
    httpTimeout: 0.1s
    nodeCacheCapable: {str(cache_capable).lower()}
    ignorable: {str(ignorable).lower()}
""")
        rng = random.Random(5)
        millis = [rng.choice((100, 250, 500, 1000, 3000, 5000)) for _ in range(80)]
        s = Scheduler(cfg, seed=3)
        s.add_nodes([make_node(f"n{i}", cpu=f"{NODE_MILLIS}m") for i in range(8)])
        s.add_pods([make_pod(f"p{i}", cpu=f"{m}m") for i, m in enumerate(millis)])
        results = s.run(max_attempts=20_000)
    finally:
        server.close()
    assert set(server.modes) - {"ok"}, "the server never misbehaved"
    assert len(results) == 80 and len({r.pod.uid for r in results}) == 80
    used: dict[str, int] = {}
    for r in results:
        assert r.status in (SCHEDULED, UNSCHEDULABLE, ERROR), (r.pod.name, r.status)
        assert r.message, r.pod.name
        if r.status == SCHEDULED:
            assert r.node_name in {f"n{i}" for i in range(8)}
            used[r.node_name] = used.get(r.node_name, 0) + millis[int(r.pod.name[1:])]
        elif r.status == ERROR:
            assert not ignorable, r.message
            assert server.url in r.message, r.message
    assert all(m <= NODE_MILLIS for m in used.values()), used
    assert s.cache.pod_count() == len([r for r in results if r.status == SCHEDULED])
    errors = s.metrics.as_dict()["attempts"]["error"]
    if ignorable:  # not even an attempt (a failed one is retried, so final results alone say less)
        assert errors == 0
    else:
        assert errors > 0 and any(r.status == ERROR for r in results)
