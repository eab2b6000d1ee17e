"""python -m dashboard DB --palladium BIN [--host H] [--port P]: what `palladium serve` execs."""
import argparse
import ipaddress
import sys
from pathlib import Path

from dashboard import store
from dashboard.palladium_cli import Palladium
from dashboard.server import Dashboard, make_server

LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}


def allowed_hosts(host):
    """The Host header names the page may be reached by; None for any (all interfaces)."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return {host.lower()} | LOOPBACK_NAMES
    if ip.is_unspecified:
        return None
    return {str(ip)} | LOOPBACK_NAMES


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="palladium serve",
        description="A read-only web dashboard over a run database: the overview of runs and "
                    "sweep cells, per-workload best kernels and curves, per-candidate "
                    "transcripts and the report's tables and figures. It follows a run or "
                    "sweep that is still writing to DB.")
    ap.add_argument("db", metavar="DB", help="run database (opened read-only)")
    ap.add_argument("--host", default="127.0.0.1",
                    help="address to bind (default 127.0.0.1: this machine only; 0.0.0.0 "
                         "exposes the transcripts to the network)")
    ap.add_argument("--port", type=int, default=8765, help="port (default 8765; 0: any free)")
    ap.add_argument("--palladium", default=None,
                    help="the palladium binary for status and report (set by palladium serve)")
    ap.add_argument("--verbose", action="store_true", help="log every request to stderr")
    args = ap.parse_args(argv)
    if not 0 <= args.port <= 65535:
        ap.error(f"--port must be between 0 and 65535, not {args.port}")
    binary = args.palladium or str(Path(__file__).resolve().parents[1] / "build" / "palladium")
    try:
        store.connect(args.db).close()
    except store.StoreError as e:
        print(f"palladium serve: {e}", file=sys.stderr)
        return 2
    palladium = Palladium(binary, args.db)
    dashboard = Dashboard(args.db, palladium, allowed_hosts(args.host))
    try:
        server = make_server(dashboard, args.host, args.port, verbose=args.verbose)
    except OSError as e:
        print(f"palladium serve: cannot listen on {args.host}:{args.port}: {e}", file=sys.stderr)
        return 2
    host, port = server.server_address[:2]
    shown = f"[{host}]" if ":" in host else host
    # The test and users read this line for the address (port 0 picks a free port).
    print(f"[palladium] dashboard of {args.db} at http://{shown}:{port}/ (Ctrl-C to stop)",
          file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        palladium.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
