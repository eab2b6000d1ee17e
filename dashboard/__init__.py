"""`palladium serve DB`: a read-only web dashboard over a Palladium run database.

The binary execs `.venv/bin/python -m dashboard` (cli/serve_command.cpp). The server is the
standard library's ThreadingHTTPServer: the pages are a handful of JSON endpoints and one
static HTML page with our own small script, so no framework earns its dependency here.
"""
