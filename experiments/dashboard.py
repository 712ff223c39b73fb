"""``coexplore dashboard STORAGE``: the report's views, served live on localhost.

A small HTTP server (the standard library's threading server) serves the explorer page of
:mod:`experiments.report` and a JSON API it polls:

* ``GET /`` -- the page (plotly.js from ``/plotly.min.js``, served from the installed
  plotly package: no network needed);
* ``GET /api/studies`` -- the studies in the storage, with their trial counts;
* ``GET /api/view?study=NAME&since=MARKER`` -- ``{"marker", "view"}``: the study's view
  (:func:`experiments.report.study_view`) when its trials changed since ``MARKER``,
  else ``view: null``. Whether they changed is one cheap query
  (:meth:`experiments.storage.Storage.change_marker`), so polling an idle study costs
  nothing; a view is built once per change and shared by every open page;
* ``GET /api/trial?study=NAME&number=N`` -- one design's parameters, metrics and
  breakdown (:func:`experiments.report.trial_detail`).

The storage is only read: a study running in another process (or on another host, with
PostgreSQL) keeps writing, and every open page shows its new trials within a poll
interval (2 s by default).

**Who may ask.** Every request's ``Host`` header must name the server by a loopback name
(``localhost``, ``127.0.0.1``, ``::1``), by the concrete address it listens on, or by a
name given with ``allowed_hosts`` (``coexplore dashboard --allow-host NAME``); a request
carrying an ``Origin`` must come from such a host too. Anything else is refused with 403
before the storage is touched: a page on another site that rebinds its DNS name to
127.0.0.1 sends its own name as ``Host``, so it cannot read the studies. Each connection
must send its request within ``request_timeout_s`` (30 s by default) and is closed after
it, so a client that stalls holds no thread. A bad parameter -- a missing study, a trial
number that is not a decimal integer below 2**63, an unknown parameter -- is a 400 naming
it.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import re
import threading
from collections.abc import Iterable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

from experiments.report import MAX_LINES, MAX_POINTS, page_html, plotly_js, study_view, trial_detail
from experiments.storage import Storage, StorageError, StudyNotFoundError

logger = logging.getLogger(__name__)


class _Studies:
    """Loaded studies and their latest views, shared by the request threads."""

    def __init__(self, storage: Storage, max_points: int, max_lines: int) -> None:
        self.storage = storage
        self.max_points, self.max_lines = max_points, max_lines
        self._lock = threading.Lock()
        self._study_locks: dict[str, threading.Lock] = {}
        self._studies: dict[str, Any] = {}
        self._views: dict[str, tuple[str, dict[str, Any]]] = {}

    def study(self, name: str) -> Any:
        from experiments.study import Study

        with self._lock:
            if name not in self._studies:
                self._studies[name] = Study.load(name, self.storage)
                self._study_locks[name] = threading.Lock()
            return self._studies[name]

    def marker(self, name: str) -> str:
        study = self.study(name)
        return json.dumps(self.storage.change_marker(study.record.id))

    def view(self, name: str, since: str) -> dict[str, Any]:
        study = self.study(name)
        with self._study_locks[name]:  # one build per change, however many pages poll
            marker = self.marker(name)
            if marker == since:
                return {"marker": marker, "view": None}
            cached = self._views.get(name)
            if cached is None or cached[0] != marker:
                view = study_view(study, max_points=self.max_points, max_lines=self.max_lines)
                self._views[name] = (marker, view)
                cached = self._views[name]
        return {"marker": cached[0], "view": cached[1]}


LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
REQUEST_TIMEOUT_S = 30.0
PARAMS = {"/": set(), "/index.html": set(), "/plotly.min.js": set(), "/api/studies": set(),
          "/api/view": {"study", "since"}, "/api/trial": {"study", "number"}}
_NUMBER = re.compile(r"[0-9]{1,19}")


class BadRequest(ValueError):
    """A request parameter is missing or malformed (answered with 400)."""


def host_name(value: str | None) -> str | None:
    """The host of a ``Host`` header value or of an origin's authority (no port, IPv6
    brackets removed, lower case); None when there is none."""
    if not value:
        return None
    v = value.strip().lower()
    if "://" in v:
        v = urlparse(v).netloc
    v = v.rsplit("@", 1)[-1]
    if v.startswith("["):
        return v[1:v.find("]")] if "]" in v else None
    return v.rsplit(":", 1)[0] if v.count(":") == 1 else v


def allowed_host_names(host: str, extra: Iterable[str] = ()) -> frozenset[str]:
    """The names the server answers to: loopback names, the address it listens on when
    that is one address (not 0.0.0.0 or ::), and ``extra``."""
    names = set(LOOPBACK_NAMES) | {h.strip().lower() for h in extra if h.strip()}
    try:
        if not ipaddress.ip_address(host).is_unspecified:
            names.add(host.lower())
    except ValueError:
        names.add(host.lower())  # a name given to listen on
    return frozenset(names)


def trial_number(value: str | None) -> int:
    """``?number=`` as a trial number: a decimal integer in 0 .. 2**63 - 1."""
    if value is None or not _NUMBER.fullmatch(value) or int(value) >= 2**63:
        shown = value if value is None or len(value) <= 40 else value[:40] + "..."
        raise BadRequest(f"number must be a trial number (a decimal integer 0 .. 2**63-1), got {shown!r}")
    return int(value)


def _make_handler(studies: _Studies, page: bytes, script: bytes, allowed: frozenset[str],
                  timeout_s: float) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "coexplore-dashboard"
        timeout = timeout_s  # StreamRequestHandler: the connection's socket timeout

        def _refusal(self) -> str | None:
            host = host_name(self.headers.get("Host"))
            if host not in allowed:
                return (f"Host {self.headers.get('Host')!r} is not this dashboard's (answers to "
                        f"{sorted(allowed)}; add a name with --allow-host)")
            origin = self.headers.get("Origin")
            if origin is not None and host_name(origin) not in allowed:
                return f"Origin {origin!r} may not read this dashboard"
            return None

        def log_message(self, fmt: str, *args: Any) -> None:  # quiet unless --verbose
            logger.debug("%s %s", self.address_string(), fmt % args)

        def _send(self, status: int, body: bytes, ctype: str, cache: bool = False) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "max-age=3600" if cache else "no-store")
            self.end_headers()
            self.wfile.write(body)

        def _json(self, obj: Any, status: int = HTTPStatus.OK) -> None:
            body = json.dumps(obj, allow_nan=False, separators=(",", ":")).encode()
            self._send(status, body, "application/json")

        def _error(self, status: int, message: str) -> None:
            self._send(status, message.encode(), "text/plain; charset=utf-8")

        def do_GET(self) -> None:
            self.close_connection = True  # one request per connection: nothing idles on a thread
            refused = self._refusal()
            if refused:
                self._error(HTTPStatus.FORBIDDEN, refused)
                return
            url = urlparse(self.path)
            try:
                q = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True,
                                                      strict_parsing=False, max_num_fields=20).items()}
            except ValueError as e:
                self._error(HTTPStatus.BAD_REQUEST, f"bad query string: {e}")
                return
            unknown = sorted(set(q) - PARAMS.get(url.path, set(q)))
            if unknown:
                self._error(HTTPStatus.BAD_REQUEST, f"{url.path} takes no parameter {unknown[0]!r} "
                                                    f"(it takes {sorted(PARAMS[url.path]) or 'none'})")
                return
            try:
                if url.path in ("/", "/index.html"):
                    self._send(HTTPStatus.OK, page, "text/html; charset=utf-8")
                elif url.path == "/plotly.min.js":
                    self._send(HTTPStatus.OK, script, "application/javascript", cache=True)
                elif url.path == "/api/studies":
                    out = []
                    for rec in studies.storage.list_studies():
                        counts = studies.storage.status_counts(rec.id)
                        out.append({"name": rec.name, "n_trials": sum(counts.values())})
                    self._json(out)
                elif url.path == "/api/view":
                    self._json(studies.view(self._study(q), q.get("since", "")))
                elif url.path == "/api/trial":
                    name, number = self._study(q), trial_number(q.get("number"))
                    self._json(trial_detail(studies.study(name).trial(number)))
                else:
                    self._error(HTTPStatus.NOT_FOUND, f"no such page: {url.path}")
            except BadRequest as e:
                self._error(HTTPStatus.BAD_REQUEST, str(e))
            except StudyNotFoundError as e:
                self._error(HTTPStatus.NOT_FOUND, str(e))
            except (StorageError, ValueError) as e:
                self._error(HTTPStatus.BAD_REQUEST, str(e))
            except (BrokenPipeError, ConnectionResetError):
                pass
            except Exception as e:  # keep serving; the page shows the message
                logger.exception("dashboard request %s failed", self.path)
                self._error(HTTPStatus.INTERNAL_SERVER_ERROR, f"{type(e).__name__}: {e}")

        @staticmethod
        def _study(q: dict[str, str]) -> str:
            name = q.get("study", "")
            if not name:
                raise BadRequest("missing ?study=NAME")
            return name

    return Handler


class Dashboard:
    """The dashboard server on ``host:port`` (port 0: any free one); :attr:`url` is where.

    ``serve_forever()`` blocks; ``start()`` serves from a background thread (tests).
    """

    def __init__(self, storage: Storage, study: str | None = None, *, host: str = "127.0.0.1",
                 port: int = 8050, poll_s: float = 2.0, max_points: int = MAX_POINTS,
                 max_lines: int = MAX_LINES, allowed_hosts: Iterable[str] = (),
                 request_timeout_s: float = REQUEST_TIMEOUT_S) -> None:
        if study is not None:
            storage.get_study(study)  # an unknown name fails here, listing the others
        if poll_s <= 0:
            raise ValueError(f"poll interval must be > 0 s, got {poll_s!r}")
        if not request_timeout_s > 0:
            raise ValueError(f"request timeout must be > 0 s, got {request_timeout_s!r}")
        self.allowed_hosts = allowed_host_names(host, allowed_hosts)
        self.storage = storage
        self.studies = _Studies(storage, max_points, max_lines)
        config = {"mode": "live", "study": study, "poll_ms": int(poll_s * 1000)}
        page = page_html(title="coexplore dashboard", config=config, plotly_src="plotly.min.js")
        handler = _make_handler(self.studies, page.encode(), plotly_js().encode(), self.allowed_hosts,
                                float(request_timeout_s))
        try:
            self.httpd = ThreadingHTTPServer((host, port), handler)
        except OSError as e:
            raise ValueError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        try:
            ip = ipaddress.ip_address(host)
        except ValueError:
            return f"http://{host}:{port}/"
        if ip.is_unspecified:  # listening everywhere: this machine's loopback name reaches it
            return f"http://{'[::1]' if ip.version == 6 else '127.0.0.1'}:{port}/"
        return f"http://[{host}]:{port}/" if ip.version == 6 else f"http://{host}:{port}/"

    def serve_forever(self) -> None:
        self.httpd.serve_forever(poll_interval=0.5)

    def start(self) -> Dashboard:
        self._thread = threading.Thread(target=self.serve_forever, name="coexplore-dashboard",
                                        daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        if self._thread is not None:
            self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Dashboard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
