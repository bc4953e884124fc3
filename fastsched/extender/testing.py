"""A small reference extender: an HTTP server speaking upstream's extender/v1 wire format.

It serves the four verbs with configurable behaviour, so tests (and users trying an extender setup)
can run a real extender on 127.0.0.1::

    with ReferenceExtender(filter_reject={"node-2": "no GPU"}, prioritize_scores={"node-1": 10}) as ext:
        config = f'''... extenders: [{{urlPrefix: "{ext.url}", filterVerb: filter, ...}}]'''

Behaviours: ``filter_reject`` / ``filter_unresolvable`` ({node: message}) drop nodes; ``prioritize_scores``
({node: score}, others 0); ``bind`` records bindings in ``bound``; ``preempt`` returns the victims it
received (as MetaVictims), or ``preempt_drop_nodes``-filtered; ``mode`` injects failures for every verb:
``"ok"``, ``"http500"``, ``"garbage"`` (malformed JSON), ``"slow"`` (sleeps ``delay`` seconds),
``"unknown-node"`` (claims a node it was not sent), ``"error"`` (answers with an Error field).
``answers`` ({verb: answer}) replaces a verb's answer outright, to test how a client copes with
whatever an extender may send: ``bytes`` go out as the body as they are, ``(status, body)`` sets the
HTTP status too, anything else is sent as JSON (``{"filter": {}}``,
``{"prioritize": [{"Host": "n1", "Score": 2**62}]}``, ``{"filter": (500, b"oops")}``).
"""
from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _QuietServer(ThreadingHTTPServer):
    """A client that gave up (a timeout test) closes its socket mid-answer: not worth a traceback."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class ReferenceExtender:
    """Runs the server on a background thread bound to 127.0.0.1 on a free port."""

    def __init__(self, *, filter_reject: dict[str, str] | None = None,
                 filter_unresolvable: dict[str, str] | None = None,
                 prioritize_scores: dict[str, int] | None = None, mode: str = "ok", delay: float = 0.0,
                 preempt_drop_nodes: set[str] | None = None, bind_error: str = "",
                 answers: dict[str, Any] | None = None):
        self.filter_reject = dict(filter_reject or {})
        self.filter_unresolvable = dict(filter_unresolvable or {})
        self.prioritize_scores = dict(prioritize_scores or {})
        self.preempt_drop_nodes = set(preempt_drop_nodes or ())
        self.mode = mode
        self.delay = delay
        self.bind_error = bind_error
        self.answers = dict(answers or {})
        self.requests: list[tuple[str, Any]] = []  # (verb, decoded body)
        self.bound: list[tuple[str, str, str]] = []  # (namespace/name, uid, node)
        self.connections = 0
        self._lock = threading.Lock()
        self._server = _QuietServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        name="reference-extender", daemon=True)

    @property
    def url(self) -> str:
        # server_port: the port the OS picked for the 0 above (server_address types its host str | bytes)
        return f"http://127.0.0.1:{self._server.server_port}"

    def start(self) -> "ReferenceExtender":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "ReferenceExtender":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def verbs_called(self) -> list[str]:
        with self._lock:
            return [v for v, _ in self.requests]

    # -- request handling --------------------------------------------------------------------------
    def _answer(self, verb: str, body: Any) -> tuple[int, bytes]:
        with self._lock:
            self.requests.append((verb, body))
        if self.mode == "slow":
            time.sleep(self.delay)
        if verb in self.answers:
            answer = self.answers[verb]
            code, answer = answer if isinstance(answer, tuple) else (200, answer)
            return code, answer if isinstance(answer, bytes) else json.dumps(answer).encode()
        if self.mode == "http500":
            return 500, b"internal error"
        if self.mode == "garbage":
            return 200, b"{not json"
        if self.mode == "error":
            return 200, json.dumps({"Error": f"{verb} failed on purpose"}).encode()
        handler = getattr(self, f"_{verb}", None)
        if handler is None:
            return 404, b"unknown verb"
        return 200, json.dumps(handler(body)).encode()

    def _filter(self, body: dict) -> dict:
        if body.get("NodeNames") is not None:
            names = list(body["NodeNames"])
        else:
            names = [item["metadata"]["name"] for item in body["Nodes"]["items"]]
        kept = [n for n in names if n not in self.filter_reject and n not in self.filter_unresolvable]
        if self.mode == "unknown-node":
            kept.append("no-such-node")
        result: dict[str, Any] = {"FailedNodes": {n: m for n, m in self.filter_reject.items() if n in names},
                                  "FailedAndUnresolvableNodes": {n: m for n, m in self.filter_unresolvable.items()
                                                                 if n in names},
                                  "Error": ""}
        if body.get("NodeNames") is not None:
            result["NodeNames"] = kept
            result["Nodes"] = None
        else:
            items = {item["metadata"]["name"]: item for item in body["Nodes"]["items"]}
            result["Nodes"] = {"items": [items.get(n, {"metadata": {"name": n}}) for n in kept]}
            result["NodeNames"] = None
        return result

    def _prioritize(self, body: dict) -> list:
        if body.get("NodeNames") is not None:
            names = list(body["NodeNames"])
        else:
            names = [item["metadata"]["name"] for item in body["Nodes"]["items"]]
        return [{"Host": n, "Score": int(self.prioritize_scores.get(n, 0))} for n in names]

    def _bind(self, body: dict) -> dict:
        if self.bind_error:
            return {"Error": self.bind_error}
        with self._lock:
            self.bound.append((f"{body['PodNamespace']}/{body['PodName']}", body["PodUID"], body["Node"]))
        return {"Error": ""}

    def _preempt(self, body: dict) -> dict:
        out = {}
        if body.get("NodeNameToMetaVictims"):
            for node, v in body["NodeNameToMetaVictims"].items():
                if node not in self.preempt_drop_nodes:
                    out[node] = {"Pods": v["Pods"], "NumPDBViolations": v["NumPDBViolations"]}
        else:
            for node, v in (body.get("NodeNameToVictims") or {}).items():
                if node not in self.preempt_drop_nodes:
                    out[node] = {"Pods": [{"UID": p["metadata"]["uid"]} for p in v["Pods"]],
                                 "NumPDBViolations": v["NumPDBViolations"]}
        return {"NodeNameToMetaVictims": out}

    def _handler_class(self):
        ext = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, so clients can pool connections

            def setup(self) -> None:
                super().setup()
                # headers and body go out as separate writes: without NODELAY each answer waits
                # for the client's delayed ACK
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                with ext._lock:
                    ext.connections += 1

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                verb = self.path.rstrip("/").rsplit("/", 1)[-1]
                code, payload = ext._answer(verb, body)
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence the log
                pass

        return Handler
