"""The dashboard's HTTP front (issue 46 item 5): only loopback names (or configured ones)
may ask, by Host and by Origin; a stalled client is dropped after the request timeout
while others are served; bad parameters are 400s naming the parameter, never 500s."""

from __future__ import annotations

import http.client
import json
import socket
import time
import urllib.parse

import pytest

from experiments.dashboard import Dashboard, allowed_host_names, host_name, trial_number
from experiments.storage import Storage
from tests.experiments.test_report import make_study


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    path = tmp_path_factory.mktemp("dash") / "s.db"
    make_study(path, n=4)
    st = Storage(path)
    with Dashboard(st, None, port=0, allowed_hosts=["coexplore.lab"], request_timeout_s=0.5).start() as b:
        yield b
    st.close()


def _get(board, path, headers=None):
    host, port = board.httpd.server_address[:2]
    conn = http.client.HTTPConnection(host, port, timeout=30)
    try:
        conn.putrequest("GET", path, skip_host=True)
        for k, v in {"Host": f"127.0.0.1:{port}", **(headers or {})}.items():
            if v is not None:
                conn.putheader(k, v)
        conn.endheaders()
        r = conn.getresponse()
        return r.status, r.read().decode()
    finally:
        conn.close()


def test_only_this_machines_names_may_ask(board):
    port = board.httpd.server_address[1]
    assert _get(board, "/api/studies")[0] == 200
    assert _get(board, "/api/studies", {"Host": f"localhost:{port}"})[0] == 200
    assert _get(board, "/api/studies", {"Host": f"[::1]:{port}"})[0] == 200
    assert _get(board, "/api/studies", {"Host": "coexplore.lab"})[0] == 200  # --allow-host
    # a DNS-rebinding page: its own name as Host
    status, body = _get(board, "/api/view?study=bd", {"Host": f"evil.example:{port}"})
    assert status == 403 and "evil.example" in body and "--allow-host" in body
    assert _get(board, "/", {"Host": "127.0.0.1.evil.example"})[0] == 403
    assert _get(board, "/api/studies", {"Host": None})[0] == 403  # no Host at all
    # another site's script, even when the Host is right
    status, body = _get(board, "/api/studies", {"Origin": "http://evil.example"})
    assert status == 403 and "evil.example" in body
    assert _get(board, "/api/studies", {"Origin": f"http://127.0.0.1:{port}"})[0] == 200
    assert _get(board, "/api/studies", {"Origin": "null"})[0] == 403


def test_bad_parameters_are_400s(board):
    ok, body = _get(board, "/api/trial?study=bd&number=1")
    assert ok == 200 and json.loads(body)["number"] == 1
    for number in ("2**70", str(2**70), str(2**63), "-1", "1.5", "", "\u0661", " 1", "1e3"):
        status, body = _get(board, "/api/trial?study=bd&number=" + urllib.parse.quote(number))
        assert status == 400 and "number must be a trial number" in body, (number, status, body)
    status, body = _get(board, "/api/trial?study=bd")
    assert status == 400 and "number" in body
    status, body = _get(board, "/api/trial?number=1")
    assert status == 400 and "study" in body
    status, body = _get(board, "/api/view?study=bd&sinse=x")
    assert status == 400 and "'sinse'" in body
    assert _get(board, "/api/trial?study=bd&number=99")[0] == 400  # no such trial
    assert _get(board, "/api/trial?study=nope&number=1")[0] == 404
    assert _get(board, "/?x=1")[0] == 400


def test_a_stalled_client_is_dropped_and_others_are_served(board):
    host, port = board.httpd.server_address[:2]
    stalled = socket.create_connection((host, port), timeout=20)
    try:
        stalled.sendall(b"GET /api/studies HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never finishes the headers
        t0 = time.monotonic()
        assert _get(board, "/api/studies")[0] == 200  # served meanwhile
        assert stalled.recv(1024) == b""  # closed by the server after its 0.5 s timeout
        assert time.monotonic() - t0 < 15
    finally:
        stalled.close()


def test_host_helpers():
    assert host_name("LocalHost:8050") == "localhost" and host_name("[::1]:80") == "::1"
    assert host_name("http://127.0.0.1:8050") == "127.0.0.1" and host_name(None) is None
    assert allowed_host_names("127.0.0.1") == {"localhost", "127.0.0.1", "::1"}
    assert "0.0.0.0" not in allowed_host_names("0.0.0.0")
    assert "10.1.2.3" in allowed_host_names("10.1.2.3", ())
    assert trial_number("0") == 0 and trial_number(str(2**63 - 1)) == 2**63 - 1
    with pytest.raises(ValueError, match="trial number"):
        trial_number("x" * 100)
    with pytest.raises(ValueError, match="must be > 0"):
        Dashboard(Storage("sqlite://"), None, port=0, request_timeout_s=0)
