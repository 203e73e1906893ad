"""`seedance cost-gate` against a local server answering as OpenCost's allocation API and Prometheus's
query API do (their documented shapes): pass, fail, empty window, missing namespace or series,
unreachable API, bad arguments."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest

from seedance.cli import main

NAMESPACE = "triton-video"


def allocation(total_cost, namespace=NAMESPACE, minutes=10080):
    """GET /allocation?window=168h&aggregate=namespace&accumulate=true (opencost.io API docs)."""
    entry = {
        "name": namespace,
        "properties": {"cluster": "default-cluster", "namespace": namespace},
        "window": {"start": "2026-11-28T00:00:00Z", "end": "2026-12-05T00:00:00Z"},
        "start": "2026-11-28T00:00:00Z",
        "end": "2026-12-05T00:00:00Z",
        "minutes": minutes,
        "cpuCost": total_cost * 0.1,
        "gpuCost": total_cost * 0.8,
        "ramCost": total_cost * 0.1,
        "pvCost": 0,
        "networkCost": 0,
        "loadBalancerCost": 0,
        "sharedCost": 0,
        "externalCost": 0,
        "totalCost": total_cost,
    }
    other = {**entry, "name": "kube-system", "properties": {"namespace": "kube-system"}, "totalCost": 99.0}
    return {"code": 200, "status": "success", "data": [{namespace: entry, "kube-system": other}]}


def vector(*values):
    """GET /api/v1/query (Prometheus HTTP API): an instant vector."""
    return {
        "status": "success",
        "data": {"resultType": "vector", "result": [{"metric": {}, "value": [1733360400.0, str(v)]} for v in values]},
    }


@pytest.fixture
def apis():
    answers, seen = {}, []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            url = urlparse(self.path)
            seen.append((url.path, parse_qs(url.query)))
            body = json.dumps(answers[url.path]).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    yield answers, seen, ["--opencost-url", url, "--prometheus-url", url]
    server.shutdown()


def gate(urls, *extra, stack="prod", service="video"):
    return main(["cost-gate", "--stack", stack, "--service", service, *urls, *extra])


def test_a_release_within_its_threshold_passes_and_one_above_fails(apis, capsys):
    answers, seen, urls = apis
    # prod's threshold is $0.01 per 1,000 requests: $500 for 100 M requests is $0.005.
    answers["/allocation"], answers["/api/v1/query"] = allocation(500.0), vector(100_000_000)
    assert gate(urls) == 0
    assert (
        "$0.0050 per 1,000 requests (200,000 requests per dollar); threshold $0.0100: passes" in capsys.readouterr().out
    )
    assert seen[0] == ("/allocation", {"window": ["168h"], "aggregate": ["namespace"], "accumulate": ["true"]})
    assert seen[1][1]["query"] == ['sum(increase(nv_inference_request_success{namespace="triton-video"}[168h]))']
    answers["/allocation"] = allocation(1500.0, minutes=36 * 60)
    assert gate(urls, "--window", "36h") == 1
    assert "$0.0150 per 1,000 requests" in capsys.readouterr().out and seen[-1][1]["query"][0].endswith("[36h]))")


@pytest.mark.parametrize(
    "cost, requests, words",
    [
        (allocation(500.0), vector(0), "no successful requests in the window"),
        (allocation(500.0), vector(), "no series for sum(increase(nv_inference_request_success"),
        (allocation(500.0, namespace="triton-other"), vector(10), "no cost for namespace triton-video"),
        ({"code": 500, "message": "boom"}, vector(10), "not an allocation result"),
        (allocation(float("nan")), vector(10), "not a cost"),
        # Two days of data for a week's window: Prometheus restarted (or keeps less), the week is not known.
        (allocation(500.0, minutes=2880), vector(10), "OpenCost holds 48 h of the 168 h window"),
    ],
)
def test_what_cannot_be_judged_is_exit_2_with_the_reason(apis, capsys, cost, requests, words):
    answers, _seen, urls = apis
    answers["/allocation"], answers["/api/v1/query"] = cost, requests
    assert gate(urls) == 2
    assert words in capsys.readouterr().err


def test_an_unreachable_api_and_bad_arguments_are_exit_2(capsys):
    assert gate(["--opencost-url", "http://127.0.0.1:9", "--prometheus-url", "http://127.0.0.1:9"]) == 2
    assert "cannot read http://127.0.0.1:9/allocation" in capsys.readouterr().err
    assert gate([], "--window", "90d") == 2 and "allowed: 1h to 30d" in capsys.readouterr().err
    assert gate([], service="nope") == 2 and "allowed: video" in capsys.readouterr().err


def test_a_server_that_drips_bytes_is_cut_off_at_the_overall_deadline(capsys):
    """Issue 37, item 5: each read waits at most its own timeout, so a byte at a time never ends; the
    command's one deadline does."""
    import time

    class Dripping(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.end_headers()
            for _ in range(60):
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.5)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Dripping)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    started = time.monotonic()
    assert gate(["--opencost-url", url, "--prometheus-url", url], "--timeout", "1") == 2
    assert time.monotonic() - started < 10
    err = capsys.readouterr().err
    assert "no answer within 1 s (--timeout)" in err and len(err.strip().splitlines()) == 1
    server.shutdown()


@pytest.mark.parametrize("url", ["opencost", "localhost:9003", "ftp://opencost:21"])
def test_an_api_url_without_a_web_scheme_is_exit_2_naming_the_flag(capsys, url):
    assert gate(["--opencost-url", url]) == 2
    assert "--opencost-url = " in capsys.readouterr().err


def test_an_answer_nested_too_deeply_is_exit_2_not_a_recursion_error(capsys):
    class Nested(BaseHTTPRequestHandler):
        def do_GET(self):
            body = b"[" * 200_000 + b"]" * 200_000
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Nested)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    assert gate(["--opencost-url", url, "--prometheus-url", url]) == 2
    err = capsys.readouterr().err
    assert "nested too deeply" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    server.shutdown()
