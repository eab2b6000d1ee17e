"""The HTTP side: one static page, its script and style, and JSON endpoints.

Everything a candidate wrote is hostile input: its code, its error text, even its answer's
prose. The server sends data only as JSON (application/json, nosniff), and the page's script
puts it into the document as text nodes, never as markup. The Content-Security-Policy allows
scripts from this server's own files only, so even markup that slipped through could not run
an inline script. Requests whose Host header names another host are refused, so a web page
elsewhere cannot read the dashboard through DNS rebinding.

Endpoints (GET):
  /                          the page (dashboard/static/index.html)
  /static/<file>             its script and style
  /api/overview              status --json (cells, coordinator) + verdict mix, usage, models
  /api/workload?run=R&w=W    candidates, budget curves, best kernel, lineage, diff to parent
  /api/candidate?id=N        one transcript
  /api/report                report --out's report.md and the names of its figures
  /api/report/file?name=F    one figure (PNG) or CSV of that report
"""
import json
import socket
import sys
import threading
from contextlib import closing
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from dashboard import store
from dashboard.palladium_cli import CliError
from dashboard.secrets import Scrubber

STATIC = Path(__file__).resolve().parent / "static"
STATIC_FILES = {"app.js": "text/javascript; charset=utf-8",
                "app.css": "text/css; charset=utf-8"}
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
REPORT_FILE_TYPES = {".png": "image/png", ".csv": "text/plain; charset=utf-8",
                     ".md": "text/plain; charset=utf-8", ".json": "application/json"}


class BadRequest(Exception):
    pass


def _scrub_tree(value, scrub):
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, list):
        return [_scrub_tree(v, scrub) for v in value]
    if isinstance(value, dict):
        return {k: _scrub_tree(v, scrub) for k, v in value.items()}
    return value


class Dashboard:
    """What the handler needs: the database path, the binary, the scrubber."""

    def __init__(self, db, palladium, allowed_hosts, scrubber=None):
        self.db = str(db)
        self.palladium = palladium
        self.allowed_hosts = allowed_hosts  # None: any (bound to all interfaces on request)
        self.scrub = scrubber or Scrubber()

    def overview(self):
        with closing(store.connect(self.db)) as con:
            data = store.overview(con)
        try:
            data["status"] = self.palladium.status()
            data["status_error"] = None
        except (CliError, ValueError) as e:
            data["status"], data["status_error"] = None, str(e)
        data["database"] = self.db
        return data

    def workload(self, query):
        run_id = _int_arg(query, "run")
        workload = _arg(query, "w")
        with closing(store.connect(self.db)) as con:
            return store.workload_view(con, run_id, workload)

    def candidate(self, query):
        cid = _int_arg(query, "id")
        with closing(store.connect(self.db)) as con:
            t = store.transcript(con, cid)
        if t is None:
            raise LookupError(f"no sample {cid} in {self.db}")
        return t

    def report(self):
        out = self.palladium.report_dir()
        md = (out / "report.md").read_text() if (out / "report.md").exists() else ""
        figures = sorted(p.name for p in out.glob("*.png"))
        tables = sorted(p.name for p in out.glob("*.csv"))
        return {"markdown": md, "figures": figures, "tables": tables}

    def report_file(self, query):
        name = _arg(query, "name")
        # Only a plain file name of the report's top directory: no path, no dot-files.
        if "/" in name or "\\" in name or name.startswith(".") or \
                Path(name).suffix not in REPORT_FILE_TYPES:
            raise BadRequest(f"not a report file name: {name!r}")
        path = self.palladium.report_dir() / name
        if not path.is_file():
            raise LookupError(f"the report has no {name}")
        return path.read_bytes(), REPORT_FILE_TYPES[path.suffix]


def _arg(query, name):
    values = query.get(name)
    if not values or not values[0]:
        raise BadRequest(f"missing query parameter '{name}'")
    return values[0]


def _int_arg(query, name):
    v = _arg(query, name)
    try:
        return int(v)
    except ValueError:
        raise BadRequest(f"query parameter '{name}' must be an integer, not {v!r}") from None


class Handler(BaseHTTPRequestHandler):
    server_version = "palladium-dashboard"
    sys_version = ""
    dashboard: Dashboard = None  # set on the subclass by make_server

    def log_message(self, fmt, *args):  # one line per request, stderr, no client data echoed
        if self.server.verbose:
            sys.stderr.write("[dashboard] %s\n" % (fmt % args))

    def _send(self, code, body, content_type, extra=None):
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-store")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, code, value):
        body = json.dumps(_scrub_tree(value, self.dashboard.scrub)).encode()
        self._send(code, body, "application/json")

    def _host_allowed(self):
        allowed = self.dashboard.allowed_hosts
        if allowed is None:
            return True
        host = self.headers.get("Host", "")
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        return name.strip("[]").lower() in allowed

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        if not self._host_allowed():
            self._json(421, {"error": "this dashboard answers only to its own host name"})
            return
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        d = self.dashboard
        try:
            if url.path in ("/", "/index.html"):
                self._send(200, (STATIC / "index.html").read_bytes(), "text/html; charset=utf-8")
            elif url.path.startswith("/static/") and url.path[8:] in STATIC_FILES:
                name = url.path[8:]
                self._send(200, (STATIC / name).read_bytes(), STATIC_FILES[name])
            elif url.path == "/favicon.ico":
                self._send(204, b"", "image/x-icon")
            elif url.path == "/api/overview":
                self._json(200, d.overview())
            elif url.path == "/api/workload":
                self._json(200, d.workload(query))
            elif url.path == "/api/candidate":
                self._json(200, d.candidate(query))
            elif url.path == "/api/report":
                self._json(200, d.report())
            elif url.path == "/api/report/file":
                body, ctype = d.report_file(query)
                if ctype.startswith("text/") or ctype == "application/json":
                    body = d.scrub(body.decode("utf-8", "replace")).encode()
                self._send(200, body, ctype)
            else:
                self._json(404, {"error": f"no such page: {url.path}"})
        except BadRequest as e:
            self._json(400, {"error": str(e)})
        except LookupError as e:
            self._json(404, {"error": str(e)})
        except (store.StoreError, CliError) as e:
            self._json(503, {"error": str(e)})
        except BrokenPipeError:
            pass

    def do_POST(self):
        self._json(405, {"error": "the dashboard is read-only"})

    do_PUT = do_DELETE = do_PATCH = do_POST


def make_server(dashboard, host, port, verbose=False):
    handler = type("BoundHandler", (Handler,), {"dashboard": dashboard})
    server_class = ThreadingHTTPServer
    if ":" in host:
        server_class = type("ServerV6", (ThreadingHTTPServer,), {"address_family": socket.AF_INET6})
    server = server_class((host, port), handler)
    server.daemon_threads = True
    server.verbose = verbose
    return server


def serve_in_thread(server):
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    return t

