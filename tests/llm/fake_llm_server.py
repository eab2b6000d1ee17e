#!/usr/bin/env python3
"""A local stand-in for the OpenAI and Gemini HTTP APIs, for tests and benchmarks.

It speaks the request and response JSON of both APIs as documented, on one port:

  OpenAI-compatible (base URL http://127.0.0.1:PORT/v1)
    POST /v1/chat/completions                 chat completions, `n` choices, `usage` with
                                              completion_tokens_details.reasoning_tokens
    POST /v1/files                            multipart upload (purpose=batch), JSONL input
    GET  /v1/files/{id}/content               a file's bytes (batch output / error files)
    POST /v1/batches                          create a batch over an uploaded file
    GET  /v1/batches/{id}                     the batch object; completes after --batch-ms
    GET  /v1/batches?limit=&after=            the batches, newest first, with their metadata
  Gemini (base URL http://127.0.0.1:PORT/v1beta)
    POST /v1beta/models/{model}:generateContent       candidates, usageMetadata with
                                                      thoughtsTokenCount
    POST /v1beta/models/{model}:batchGenerateContent  inlined requests -> a batches/ operation
    GET  /v1beta/batches/{id}                         the operation; done after --batch-ms
    GET  /v1beta/batches?pageSize=&pageToken=         the operations, with displayName
    POST /upload/v1beta/files                         File API resumable upload: the start
                                                      (X-Goog-Upload-Command: start) answers an
                                                      x-goog-upload-url; a POST there with
                                                      "upload, finalize" stores the bytes
    GET  /download/v1beta/files/{id}:download         a file's bytes (a file job's answers)
    A batch whose inputConfig names a fileName reads {"key", "request"} lines from it and
    answers in a responsesFile of {"key", "response" | "error"} lines.

Answers are deterministic: the k-th completion ever served for a prompt is corpus file
(h + k) mod N of the workload named in the prompt ("## Workload <id>"), h from the prompt's
SHA-256, when --corpus is given; otherwise a small module defining `workload`. Usage is
ceil(chars / 4) per text plus --reasoning-tokens hidden tokens per completion.

Faults for the next API requests are queued through a control endpoint, one per request,
in order (POST /_fake/faults {"faults": [...]}):
  "429" / "429:S"     429 with Retry-After: S seconds (default 1) and the API's error body
                      (Gemini's carries google.rpc.RetryInfo retryDelay too)
  "429-date:S"        429 with Retry-After as an HTTP-date S seconds ahead
  "400" "401" "403" "404" "500" "503"   that status with the API's error body
  "malformed"         200 with a body that is not JSON
  "truncated"         200 whose body stops halfway through its Content-Length, then the
                      connection closes
  "drop"              the connection closes without any response
  "slow:MS"           answers normally after MS milliseconds (on top of --latency-ms)
  "length"            a normal answer cut off: finish_reason length / MAX_TOKENS, and the
                      code fence never closed
  "fewer"             one completion fewer than asked (at least one)
  "hang" / "hang:S"   accepts the request and answers nothing for S seconds (default 3600),
                      then closes the connection: a hung provider
  "ok"                a normal answer (useful to place a fault later in the sequence)
A batch takes one fault at its creation ("expire": the batch expires, "fail": it fails
validation, "drop-after-create": the batch is created and runs, but the connection closes
before the answer, as when the client dies right after the provider made the job;
anything else: it runs) and then one per request line when it runs ("500": that
request fails in the batch's error file / as an inlined error; anything else: answered).
Every batch created is logged as {"api", "path", "batch_job": id, "requests": n}.

Rate limit: with --rpm R the server itself refuses (429) a request that would make more
than R in the last 60 s, and marks it "over_limit" in the log, so a client that respects
the limit never sees one.

Like real servers:
  --drop-system       the chat template drops the system message (OpenAI) / the system
                      instruction (Gemini): the model never sees it, and the prompt token count
                      leaves it out (llama.cpp's server with some templates does this)
  --cache-min-tokens T  implicit prompt caching: a prompt sharing a prefix of at least T tokens
                      (chars / 4) with an earlier prompt reports that prefix, rounded down to
                      128 tokens, as cached (usage.prompt_tokens_details.cached_tokens,
                      usageMetadata.cachedContentTokenCount); 0 turns caching off

Spend limit: with --usd-per-window X (and --window-s W, default 600; prices --price-in and
--price-out in $ per 1M tokens), a request that would bring the answered requests' cost in the
last W seconds above X is refused with 429 RESOURCE_EXHAUSTED carrying
google.rpc.RetryInfo.retryDelay (Gemini) or Retry-After (OpenAI): the time until enough of the
window has passed; it is logged with "fault": "spend". Every answered request logs its
"cost_usd" at those prices, so a test can check every window from the log.

Request log: every API request appends one JSON object to --log (JSONL) and to the list at
GET /_fake/log: {"t", "api", "path", "model", "n", "prompt_sha256", "workload", "status",
"fault", "auth", "batch", "over_limit"}. API keys are never written anywhere; "auth" says
only whether the expected key (--api-key) was presented.

Start: fake_llm_server.py --port 0 --port-file FILE [...]; the chosen port is written to FILE
once the socket listens. Standard library only (runs on Debian's /usr/bin/python3).
"""

import argparse
import hashlib
import json
import math
import os
import re
import socket
import sys
import threading
import time
import uuid
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse


def tokens(text):
    return int(math.ceil(len(text) / 4.0))


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.faults = []
        self.log = []
        self.served = {}  # prompt sha -> completions served so far
        self.starts = []  # monotonic times of accepted API requests (rate limit)
        self.files = {}  # file id -> bytes
        self.batches = {}  # batch id -> dict
        self.batch_order = []  # batch ids in creation order (the list routes)
        self.uploads = {}  # File API upload id -> {"size", "display_name"}
        self.latency_ms = args.latency_ms
        self.rpm = args.rpm
        self.prompts = []  # earlier prompt texts (implicit caching)
        self.spent = []  # (monotonic time, usd) of answered requests (spend limit)
        self.log_file = open(args.log, "a", buffering=1) if args.log else None
        self.corpus = {}
        if args.corpus:
            for wl in sorted(os.listdir(args.corpus)):
                d = os.path.join(args.corpus, wl)
                if os.path.isdir(d):
                    files = sorted(f for f in os.listdir(d) if f.endswith(".md"))
                    texts = []
                    for f in files:
                        with open(os.path.join(d, f), encoding="utf-8") as fh:
                            texts.append(fh.read())
                    if texts:
                        self.corpus[wl] = texts

    def next_fault(self):
        with self.lock:
            return self.faults.pop(0) if self.faults else "ok"

    def record(self, entry):
        entry["t"] = time.monotonic()
        with self.lock:
            self.log.append(entry)
            if self.log_file:
                self.log_file.write(json.dumps(entry, sort_keys=True) + "\n")

    def over_limit(self):
        """True (and not counted) if one more request would exceed --rpm in 60 s."""
        if not self.rpm:
            return False
        now = time.monotonic()
        with self.lock:
            self.starts = [t for t in self.starts if now - t < 60.0]
            if len(self.starts) >= self.rpm:
                return True
            self.starts.append(now)
            return False

    def cached_tokens(self, prompt):
        """Tokens of `prompt`'s longest prefix shared with an earlier prompt, as the APIs' implicit
        caches report them (whole 128-token blocks, nothing under --cache-min-tokens)."""
        floor = self.args.cache_min_tokens
        with self.lock:
            best = 0
            for old in self.prompts:
                n = os.path.commonprefix([old, prompt]).__len__()
                best = max(best, n)
            self.prompts.append(prompt)
            del self.prompts[:-256]
        cached = (best // 4) // 128 * 128
        return cached if floor and cached >= floor else 0

    def cost(self, prompt_tokens, output_tokens):
        return (prompt_tokens * self.args.price_in + output_tokens * self.args.price_out) / 1e6

    def spend_wait(self, worst_usd, arrived):
        """(seconds until a request costing up to `worst_usd` fits the spend window, the slot
        holding it): (0, slot) when it fits now, and then its worst case is held in the window
        at its arrival time (as a client's governor charges at a call's start: an answer's
        latency must not move its cost into a later window, and requests arriving together
        cannot all slip under the limit); the caller puts the real cost in slot[1]."""
        cap = self.args.usd_per_window
        slot = [arrived, worst_usd]
        if not cap:
            return 0.0, slot
        now = arrived
        window = self.args.window_s
        with self.lock:
            self.spent = [x for x in self.spent if now - x[0] < window]
            total = sum(c for _, c in self.spent)
            if total + worst_usd <= cap:
                self.spent.append(slot)
                return 0.0, slot
            for t, c in self.spent:  # oldest first: when does enough of it leave the window?
                total -= c
                if total + worst_usd <= cap:
                    return max(0.001, t + window - now), slot
            return window, slot

    def answer_texts(self, system, user, n, workload):
        sha = hashlib.sha256((system + "\0" + user).encode()).hexdigest()
        h = int(sha[:12], 16)
        with self.lock:
            k0 = self.served.get(sha, 0)
            self.served[sha] = k0 + n
        texts = []
        for k in range(k0, k0 + n):
            pool = self.corpus.get(workload)
            if pool:
                texts.append(pool[(h + k) % len(pool)])
            else:
                texts.append(
                    "Here is the kernel.\n\n```python\n"
                    f"# answer {k} to prompt {sha[:12]}\n"
                    "def workload(x):\n    return x\n```\n"
                )
        return sha, texts


def workload_of(text):
    m = re.search(r"## Workload ([A-Za-z0-9_]+)", text) or re.search(r'^ID = "([^"]+)"', text, re.M)
    return m.group(1) if m else ""


def cut(text):
    """A response cut off by the token limit: half of it, inside the code fence."""
    return text[: max(1, len(text) // 2)]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-llm/1"

    def log_message(self, fmt, *args):  # quiet: the request log is the record
        pass

    # -- plumbing ---------------------------------------------------------------------------

    @property
    def st(self):
        return self.server.state

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def send_json(self, status, obj, headers=None):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def send_raw(self, status, body, content_type="application/json"):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def drop(self):
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def truncated(self, obj):
        body = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body[: len(body) // 2])
        self.wfile.flush()
        self.drop()

    def error_body(self, api, status, message, retry_s=None):
        if api == "gemini":
            names = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
                     404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL",
                     503: "UNAVAILABLE"}
            err = {"code": status, "message": message, "status": names.get(status, "UNKNOWN")}
            if retry_s is not None:
                err["details"] = [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                                   "retryDelay": f"{retry_s}s"}]
            return {"error": err}
        types = {400: "invalid_request_error", 401: "invalid_request_error",
                 403: "permission_denied", 404: "invalid_request_error",
                 429: "requests", 500: "server_error", 503: "server_error"}
        return {"error": {"message": message, "type": types.get(status, "server_error"),
                          "param": None, "code": None}}

    def auth_ok(self, api):
        want = self.st.args.api_key
        if api == "gemini":
            got = self.headers.get("x-goog-api-key") or \
                parse_qs(urlparse(self.path).query).get("key", [""])[0]
        else:
            got = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
        return not want or got == want

    # -- routing ----------------------------------------------------------------------------

    def do_GET(self):
        path = urlparse(self.path).path
        if path == "/_fake/log":
            with self.st.lock:
                return self.send_json(200, list(self.st.log))
        m = re.fullmatch(r"/v1/batches/([\w-]+)", path)
        if m:
            return self.openai_batch_get(m.group(1))
        m = re.fullmatch(r"/v1/files/([\w-]+)/content", path)
        if m:
            return self.openai_file_content(m.group(1))
        m = re.fullmatch(r"/v1beta/(batches/[\w-]+)", path)
        if m:
            return self.gemini_batch_get(m.group(1))
        query = parse_qs(urlparse(self.path).query)
        if path == "/v1/batches":
            return self.openai_batch_list(query)
        if path == "/v1beta/batches":
            return self.gemini_batch_list(query)
        m = re.fullmatch(r"/download/v1beta/(files/[\w-]+):download", path)
        if m:
            with self.st.lock:
                data = self.st.files.get(m.group(1))
            if data is None:
                return self.send_json(404, self.error_body("gemini", 404, "no such file"))
            return self.send_raw(200, data, "application/octet-stream")
        self.send_json(404, {"error": {"message": f"no route {path}"}})

    def do_POST(self):
        path = urlparse(self.path).path
        raw = self.read_body()
        if path == "/_fake/faults":
            with self.st.lock:
                self.st.faults.extend(json.loads(raw)["faults"])
            return self.send_json(200, {"ok": True})
        if path == "/_fake/reset":
            with self.st.lock:
                self.st.faults.clear()
                self.st.log.clear()
                self.st.served.clear()
                self.st.starts.clear()
                self.st.spent.clear()
                self.st.prompts.clear()
            return self.send_json(200, {"ok": True})
        if path == "/_fake/config":
            cfg = json.loads(raw)
            with self.st.lock:
                self.st.latency_ms = cfg.get("latency_ms", self.st.latency_ms)
                self.st.rpm = cfg.get("rpm", self.st.rpm)
                for key in ("usd_per_window", "window_s", "price_in", "price_out"):
                    if key in cfg:
                        setattr(self.st.args, key, cfg[key])
            return self.send_json(200, {"ok": True})
        if path == "/v1/chat/completions":
            return self.api_call("openai", path, raw)
        m = re.fullmatch(r"/v1beta/models/([^:/]+):generateContent", path)
        if m:
            return self.api_call("gemini", path, raw, model=m.group(1))
        if path == "/v1/files":
            return self.openai_file_upload(raw)
        if path == "/v1/batches":
            return self.openai_batch_create(raw)
        if path == "/upload/v1beta/files":
            return self.gemini_file_upload(raw)
        m = re.fullmatch(r"/v1beta/models/([^:/]+):batchGenerateContent", path)
        if m:
            return self.gemini_batch_create(m.group(1), raw)
        self.send_json(404, {"error": {"message": f"no route {path}"}})

    # -- one synchronous call ----------------------------------------------------------------

    def api_call(self, api, path, raw, model=None):
        entry = {"api": api, "path": path, "batch": False, "auth": self.auth_ok(api),
                 "over_limit": False}
        try:
            req = json.loads(raw)
        except ValueError:
            entry.update(status=400, fault="bad-json")
            self.st.record(entry)
            return self.send_json(400, self.error_body(api, 400, "request body is not JSON"))
        system, user, n, model = self.api_request(api, req, model)
        sha = hashlib.sha256((system + "\0" + user).encode()).hexdigest()
        entry.update(model=model, n=n, prompt_sha256=sha, workload=workload_of(user))
        if not entry["auth"]:
            if api == "gemini":
                status, msg = 400, "API key not valid. Please pass a valid API key."
                body = self.error_body(api, status, msg)
                body["error"]["details"] = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                                             "reason": "API_KEY_INVALID",
                                             "domain": "googleapis.com"}]
            else:
                status = 401
                body = self.error_body(api, status, "Incorrect API key provided: "
                                       "sk-te***ey. You can find your API key at "
                                       "https://platform.openai.com/account/api-keys.")
            entry.update(status=status, fault="auth")
            self.st.record(entry)
            return self.send_json(status, body)
        if self.st.over_limit():
            entry.update(status=429, fault="rpm", over_limit=True)
            self.st.record(entry)
            return self.send_json(429, self.error_body(api, 429, "Rate limit reached", 1),
                                  {"Retry-After": "1"})
        arrived = time.monotonic()
        entry["t_arrival"] = arrived
        seen_system = "" if self.st.args.drop_system else system
        worst = self.st.cost(tokens(seen_system) + tokens(user),
                             n * int(self.max_output(api, req)))
        wait, slot = self.st.spend_wait(worst, arrived)
        if wait:
            entry.update(status=429, fault="spend", over_limit=True)
            self.st.record(entry)
            secs = math.ceil(wait * 1000) / 1000.0
            return self.send_json(429, self.error_body(
                api, 429, "You exceeded your current spend limit per window", f"{secs:g}"),
                {"Retry-After": str(max(1, math.ceil(wait)))})
        try:  # the answer's real cost replaces the worst case held (0 for a failure)
            fault = self.st.next_fault()
            entry["fault"] = fault
            time.sleep(self.st.latency_ms / 1000.0)
            kind, _, arg = fault.partition(":")
            if kind == "hang":
                entry["status"] = 0
                self.st.record(entry)
                time.sleep(float(arg or 3600))
                return self.drop()
            if kind == "slow":
                time.sleep(int(arg) / 1000.0)
            if kind in ("429", "429-date"):
                secs = int(arg or 1)
                value = str(secs) if kind == "429" else formatdate(time.time() + secs, usegmt=True)
                entry["status"] = 429
                self.st.record(entry)
                return self.send_json(429, self.error_body(api, 429, "Resource has been exhausted",
                                                           secs), {"Retry-After": value})
            if kind in ("400", "401", "403", "404", "500", "503"):
                status = int(kind)
                entry["status"] = status
                self.st.record(entry)
                return self.send_json(status, self.error_body(api, status, f"injected {status}"))
            if kind == "drop":
                entry["status"] = 0
                self.st.record(entry)
                return self.drop()
            if kind == "malformed":
                entry["status"] = 200
                self.st.record(entry)
                return self.send_raw(200, b'{"id": "chatcmpl-x", "choices": [ {"message": ')
            count = max(1, n - 1) if kind == "fewer" else n
            sha, texts = self.st.answer_texts(system, user, count, workload_of(user))
            truncate = kind == "length"
            if truncate:
                texts = [cut(t) for t in texts]
            body = self.openai_body(model, system, user, texts, truncate) if api == "openai" \
                else self.gemini_body(model, system, user, texts, truncate)
            usage = self.usage_of(api, body)
            entry["cost_usd"] = self.st.cost(usage[0], usage[1])
            entry["prompt_tokens"], entry["cached_tokens"] = usage[0], usage[2]
            entry["status"] = 200
            self.st.record(entry)
            if kind == "truncated":
                return self.truncated(body)
            self.send_json(200, body)
        finally:
            slot[1] = entry.get("cost_usd", 0.0)

    @staticmethod
    def max_output(api, req):
        if api == "openai":
            return req.get("max_completion_tokens") or req.get("max_tokens") or 0
        return (req.get("generationConfig") or {}).get("maxOutputTokens") or 0

    @staticmethod
    def usage_of(api, body):
        """(prompt tokens, output tokens, cached tokens) of an answer body."""
        if api == "openai":
            u = body["usage"]
            return (u["prompt_tokens"], u["completion_tokens"],
                    u["prompt_tokens_details"]["cached_tokens"])
        u = body["usageMetadata"]
        return (u["promptTokenCount"], u["candidatesTokenCount"] + u["thoughtsTokenCount"],
                u.get("cachedContentTokenCount", 0))

    def api_request(self, api, req, model):
        if api == "openai":
            system = "".join(m.get("content") or "" for m in req.get("messages", [])
                             if m.get("role") == "system")
            user = "".join(m.get("content") or "" for m in req.get("messages", [])
                           if m.get("role") == "user")
            return system, user, int(req.get("n", 1)), req.get("model", "")
        system = "".join(p.get("text", "") for p in
                         (req.get("systemInstruction") or {}).get("parts", []))
        user = "".join(p.get("text", "") for c in req.get("contents", [])
                       for p in c.get("parts", []))
        n = int((req.get("generationConfig") or {}).get("candidateCount", 1))
        return system, user, n, model

    def openai_body(self, model, system, user, texts, truncated):
        r = self.st.args.reasoning_tokens
        visible = sum(tokens(t) for t in texts)
        if self.st.args.drop_system:
            system = ""
        cached = self.st.cached_tokens(system + "\n" + user)
        return {
            "id": "chatcmpl-" + uuid.uuid4().hex[:24],
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model + "-2026-01-01",
            "system_fingerprint": "fp_fake",
            "choices": [{"index": i,
                         "message": {"role": "assistant", "content": t, "refusal": None},
                         "logprobs": None,
                         "finish_reason": "length" if truncated else "stop"}
                        for i, t in enumerate(texts)],
            "usage": {"prompt_tokens": tokens(system) + tokens(user),
                      "completion_tokens": visible + r * len(texts),
                      "total_tokens": tokens(system) + tokens(user) + visible + r * len(texts),
                      "prompt_tokens_details": {"cached_tokens": cached},
                      "completion_tokens_details": {"reasoning_tokens": r * len(texts)}},
        }

    def gemini_body(self, model, system, user, texts, truncated):
        r = self.st.args.reasoning_tokens
        visible = sum(tokens(t) for t in texts)
        if self.st.args.drop_system:
            system = ""
        prompt = tokens(system) + tokens(user)
        cached = self.st.cached_tokens(system + "\n" + user)
        return {
            "candidates": [{"content": {"parts": [{"text": t}], "role": "model"},
                            "finishReason": "MAX_TOKENS" if truncated else "STOP",
                            "index": i}
                           for i, t in enumerate(texts)],
            "usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": visible,
                              "thoughtsTokenCount": r * len(texts),
                              "totalTokenCount": prompt + visible + r * len(texts),
                              **({"cachedContentTokenCount": cached} if cached else {})},
            "modelVersion": model,
            "responseId": uuid.uuid4().hex[:20],
        }

    # -- OpenAI batch -----------------------------------------------------------------------

    def openai_file_upload(self, raw):
        if not self.auth_ok("openai"):
            return self.send_json(401, self.error_body("openai", 401, "Incorrect API key"))
        ctype = self.headers.get("Content-Type", "")
        m = re.search(r"boundary=([^;]+)", ctype)
        if not m:
            return self.send_json(400, self.error_body("openai", 400, "expected multipart"))
        boundary = m.group(1).strip('"').encode()
        fields = {}
        for part in raw.split(b"--" + boundary):
            if b"\r\n\r\n" not in part:
                continue
            head, _, data = part.partition(b"\r\n\r\n")
            name = re.search(rb'name="([^"]+)"', head)
            if name:
                fields[name.group(1).decode()] = data[:-2] if data.endswith(b"\r\n") else data
        if fields.get("purpose") != b"batch" or "file" not in fields:
            return self.send_json(400, self.error_body("openai", 400,
                                                       "purpose must be batch, file required"))
        fid = "file-" + uuid.uuid4().hex[:24]
        with self.st.lock:
            self.st.files[fid] = fields["file"]
        self.send_json(200, {"id": fid, "object": "file", "bytes": len(fields["file"]),
                             "created_at": int(time.time()), "filename": "batch.jsonl",
                             "purpose": "batch"})

    def openai_batch_create(self, raw):
        if not self.auth_ok("openai"):
            return self.send_json(401, self.error_body("openai", 401, "Incorrect API key"))
        req = json.loads(raw)
        with self.st.lock:
            data = self.st.files.get(req.get("input_file_id"))
        if data is None or req.get("endpoint") != "/v1/chat/completions":
            return self.send_json(400, self.error_body("openai", 400, "bad input_file_id"))
        bid = "batch_" + uuid.uuid4().hex[:24]
        lines = [json.loads(l) for l in data.decode().splitlines() if l.strip()]
        fault = self.st.next_fault()
        self.st.record({"api": "openai", "path": "/v1/batches", "batch_job": bid,
                        "requests": len(lines), "status": 200, "fault": fault,
                        "auth": True, "over_limit": False})
        batch = {"id": bid, "object": "batch", "endpoint": "/v1/chat/completions",
                 "errors": None, "input_file_id": req["input_file_id"],
                 "completion_window": req.get("completion_window", "24h"),
                 "status": "validating", "output_file_id": None, "error_file_id": None,
                 "created_at": int(time.time()), "completed_at": None,
                 "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
                 "metadata": req.get("metadata"), "_lines": lines, "_fault": fault,
                 "_ready": time.monotonic() + self.st.args.batch_ms / 1000.0}
        with self.st.lock:
            self.st.batches[bid] = batch
            self.st.batch_order.append(bid)
        if fault == "drop-after-create":
            batch["_fault"] = "ok"
            return self.drop()
        self.send_json(200, self.public(batch))

    def openai_batch_list(self, query):
        """Newest first, `limit` a page, `after` the last id of the previous page."""
        limit = int(query.get("limit", ["20"])[0])
        after = query.get("after", [""])[0]
        with self.st.lock:
            ids = [b for b in reversed(self.st.batch_order) if b.startswith("batch_")]
        if after in ids:
            ids = ids[ids.index(after) + 1:]
        page = ids[:limit]
        with self.st.lock:
            data = [self.public(self.st.batches[b]) for b in page]
        self.send_json(200, {"object": "list", "data": data,
                             "first_id": page[0] if page else None,
                             "last_id": page[-1] if page else None,
                             "has_more": len(ids) > len(page)})

    def gemini_batch_list(self, query):
        size = int(query.get("pageSize", ["50"])[0])
        token = query.get("pageToken", ["0"])[0] or "0"
        start = int(token)
        with self.st.lock:
            names = [b for b in self.st.batch_order if b.startswith("batches/")]
            ops = [self.public(self.st.batches[b]) for b in names[start:start + size]]
        out = {"operations": ops}
        if start + size < len(names):
            out["nextPageToken"] = str(start + size)
        self.send_json(200, out)

    def gemini_file_upload(self, raw):
        """Resumable upload as documented: a start, then one upload-and-finalize."""
        if not self.auth_ok("gemini"):
            return self.send_json(400, self.error_body("gemini", 400, "API key not valid."))
        command = (self.headers.get("X-Goog-Upload-Command") or "").lower()
        upload_id = parse_qs(urlparse(self.path).query).get("upload_id", [""])[0]
        if command == "start":
            if self.headers.get("X-Goog-Upload-Protocol") != "resumable":
                return self.send_json(400, self.error_body("gemini", 400, "resumable only"))
            uid = uuid.uuid4().hex[:16]
            meta = json.loads(raw or b"{}").get("file", {})
            with self.st.lock:
                self.st.uploads[uid] = {
                    "size": int(self.headers.get("X-Goog-Upload-Header-Content-Length", "-1")),
                    "display_name": meta.get("display_name") or meta.get("displayName", "")}
            host, port = self.server.server_address[:2]
            return self.send_json(200, {}, headers={
                "x-goog-upload-url": f"http://{host}:{port}/upload/v1beta/files?upload_id={uid}",
                "x-goog-upload-status": "active"})
        with self.st.lock:
            up = self.st.uploads.pop(upload_id, None)
        if up is None or "finalize" not in command or "upload" not in command:
            return self.send_json(400, self.error_body("gemini", 400, "unknown upload"))
        if up["size"] != len(raw):
            return self.send_json(400, self.error_body("gemini", 400, "size differs from start"))
        name = "files/" + uuid.uuid4().hex[:20]
        with self.st.lock:
            self.st.files[name] = raw
        self.st.record({"api": "gemini", "path": "upload/v1beta/files", "file": name,
                        "bytes": len(raw), "status": 200, "auth": True, "over_limit": False})
        self.send_json(200, {"file": {"name": name, "displayName": up["display_name"],
                                      "mimeType": "application/jsonl",
                                      "sizeBytes": str(len(raw)), "state": "ACTIVE"}})

    @staticmethod
    def public(batch):
        return {k: v for k, v in batch.items() if not k.startswith("_")}

    def openai_batch_get(self, bid):
        with self.st.lock:
            batch = self.st.batches.get(bid)
        if batch is None:
            return self.send_json(404, self.error_body("openai", 404, "no such batch"))
        if batch["status"] not in ("completed", "expired", "failed"):
            if time.monotonic() < batch["_ready"]:
                batch["status"] = "in_progress"
            else:
                self.run_openai_batch(batch)
        self.send_json(200, self.public(batch))

    def run_openai_batch(self, batch):
        out, err = [], []
        if batch["_fault"] in ("expire", "fail"):
            # Expired: every request unanswered lands in the error file as batch_expired.
            # Failed: the input did not validate; the batch's errors say why, no files.
            if batch["_fault"] == "fail":
                batch.update(status="failed", errors={"object": "list", "data": [
                    {"code": "invalid_request", "message": "injected validation failure",
                     "param": None, "line": 1}]})
                return
            for line in batch["_lines"]:
                err.append({"id": "batch_req_" + uuid.uuid4().hex[:16],
                            "custom_id": line["custom_id"], "response": None,
                            "error": {"code": "batch_expired",
                                      "message": "This request could not be executed before "
                                                 "the completion window expired."}})
            fid = "file-" + uuid.uuid4().hex[:24]
            with self.st.lock:
                self.st.files[fid] = "".join(json.dumps(o) + "\n" for o in err).encode()
            batch.update(status="expired", error_file_id=fid, expired_at=int(time.time()),
                         request_counts={"total": len(err), "completed": 0, "failed": len(err)})
            return
        for line in batch["_lines"]:
            if self.st.next_fault() == "500":
                err.append({"id": "batch_req_" + uuid.uuid4().hex[:16],
                            "custom_id": line["custom_id"],
                            "response": {"status_code": 500, "request_id": uuid.uuid4().hex,
                                         "body": self.error_body("openai", 500, "injected 500")},
                            "error": None})
                continue
            body = line["body"]
            system, user, n, model = self.api_request("openai", body, None)
            sha, texts = self.st.answer_texts(system, user, n, workload_of(user))
            self.st.record({"api": "openai", "path": "/v1/batches", "batch": True, "n": n,
                            "model": model, "prompt_sha256": sha, "workload": workload_of(user),
                            "status": 200, "fault": "ok", "auth": True, "over_limit": False,
                            "custom_id": line["custom_id"]})
            out.append({"id": "batch_req_" + uuid.uuid4().hex[:16],
                        "custom_id": line["custom_id"],
                        "response": {"status_code": 200, "request_id": uuid.uuid4().hex,
                                     "body": self.openai_body(model, system, user, texts, False)},
                        "error": None})
        fid = "file-" + uuid.uuid4().hex[:24]
        efid = None
        with self.st.lock:
            self.st.files[fid] = "".join(json.dumps(o) + "\n" for o in out).encode()
            if err:
                efid = "file-" + uuid.uuid4().hex[:24]
                self.st.files[efid] = "".join(json.dumps(o) + "\n" for o in err).encode()
        batch.update(status="completed", output_file_id=fid, error_file_id=efid,
                     completed_at=int(time.time()),
                     request_counts={"total": len(out), "completed": len(out),
                                     "failed": len(err)})

    def openai_file_content(self, fid):
        with self.st.lock:
            data = self.st.files.get(fid)
        if data is None:
            return self.send_json(404, self.error_body("openai", 404, "no such file"))
        self.send_raw(200, data, "application/octet-stream")

    # -- Gemini batch -----------------------------------------------------------------------

    def gemini_batch_create(self, model, raw):
        if not self.auth_ok("gemini"):
            return self.send_json(400, self.error_body("gemini", 400, "API key not valid."))
        req = json.loads(raw)
        try:  # proto JSON: lowerCamelCase as documented, snake_case accepted too
            batch = req["batch"]
            config = batch.get("inputConfig") or batch["input_config"]
            file_name = config.get("fileName") or config.get("file_name")
            if file_name:
                with self.st.lock:
                    data = self.st.files.get(file_name)
                if data is None:
                    return self.send_json(400, self.error_body("gemini", 400,
                                                               "no such input file"))
                items = [{"request": l["request"], "metadata": {"key": l["key"]}}
                         for l in map(json.loads, data.decode().splitlines()) if l]
            else:
                items = config["requests"]["requests"]
        except (KeyError, TypeError, ValueError):
            return self.send_json(400, self.error_body("gemini", 400,
                                                       "batch.inputConfig.requests required"))
        name = "batches/" + uuid.uuid4().hex[:20]
        fault = self.st.next_fault()
        self.st.record({"api": "gemini", "path": "batchGenerateContent", "batch_job": name,
                        "requests": len(items), "status": 200, "fault": fault, "auth": True,
                        "over_limit": False})
        op = {"name": name, "_model": model, "_items": items, "_fault": fault,
              "_file": bool(file_name),
              "_ready": time.monotonic() + self.st.args.batch_ms / 1000.0,
              "metadata": {"@type": "type.googleapis.com/google.ai.generativelanguage.v1main."
                                    "GenerateContentBatch",
                           "model": "models/" + model, "name": name,
                           "displayName": batch.get("displayName") or
                           batch.get("display_name", ""),
                           "state": "BATCH_STATE_PENDING"}}
        with self.st.lock:
            self.st.batches[name] = op
            self.st.batch_order.append(name)
        if fault == "drop-after-create":
            op["_fault"] = "ok"
            return self.drop()
        self.send_json(200, self.public(op))

    def gemini_batch_get(self, name):
        with self.st.lock:
            op = self.st.batches.get(name)
        if op is None:
            return self.send_json(404, self.error_body("gemini", 404, "no such batch"))
        if not op.get("done"):
            if time.monotonic() < op["_ready"]:
                op["metadata"]["state"] = "BATCH_STATE_RUNNING"
            elif op["_fault"] in ("expire", "fail"):
                op["metadata"]["state"] = ("BATCH_STATE_EXPIRED" if op["_fault"] == "expire"
                                           else "BATCH_STATE_FAILED")
                op["done"] = True
                op["error"] = {"code": 4 if op["_fault"] == "expire" else 3,
                               "message": "injected: the batch " +
                                          ("expired" if op["_fault"] == "expire"
                                           else "failed validation")}
            else:
                responses = []
                for item in op["_items"]:
                    if self.st.next_fault() == "500":
                        responses.append({"error": {"code": 13, "message": "injected 500"},
                                          "metadata": item.get("metadata") or {}})
                        continue
                    system, user, n, model = self.api_request("gemini", item["request"],
                                                                op["_model"])
                    sha, texts = self.st.answer_texts(system, user, n, workload_of(user))
                    self.st.record({"api": "gemini", "path": "batchGenerateContent",
                                    "batch": True, "n": n, "model": model,
                                    "prompt_sha256": sha, "workload": workload_of(user),
                                    "status": 200, "fault": "ok", "auth": True,
                                    "over_limit": False,
                                    "custom_id": (item.get("metadata") or {}).get("key")})
                    responses.append({"response": self.gemini_body(model, system, user, texts,
                                                                   False),
                                      "metadata": item.get("metadata") or {}})
                op["metadata"]["state"] = "BATCH_STATE_SUCCEEDED"
                op["done"] = True
                output = {"@type": "type.googleapis.com/google.ai.generativelanguage.v1main."
                                   "GenerateContentBatchOutput"}
                if op["_file"]:
                    out_name = "files/" + uuid.uuid4().hex[:20]
                    lines = []
                    for r in responses:
                        line = {"key": (r.get("metadata") or {}).get("key")}
                        line.update({k: v for k, v in r.items() if k != "metadata"})
                        lines.append(json.dumps(line) + "\n")
                    with self.st.lock:
                        self.st.files[out_name] = "".join(lines).encode()
                    output["responsesFile"] = out_name
                else:
                    output["inlinedResponses"] = {"inlinedResponses": responses}
                op["response"] = output
        self.send_json(200, self.public(op))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file", help="write the listening port here")
    ap.add_argument("--log", help="append the request log here (JSONL)")
    ap.add_argument("--api-key", default="", help="the key clients must present")
    ap.add_argument("--latency-ms", type=float, default=0.0)
    ap.add_argument("--rpm", type=int, default=0, help="refuse requests beyond this per minute")
    ap.add_argument("--corpus", help="answer from <corpus>/<workload>/*.md")
    ap.add_argument("--reasoning-tokens", type=int, default=16)
    ap.add_argument("--batch-ms", type=float, default=200.0,
                    help="how long a batch stays in progress")
    ap.add_argument("--drop-system", action="store_true",
                    help="drop the system message, as some chat templates do")
    ap.add_argument("--cache-min-tokens", type=int, default=1024,
                    help="implicit prompt caching from this many shared prefix tokens; 0 off")
    ap.add_argument("--usd-per-window", type=float, default=0.0,
                    help="refuse (429) requests beyond this spend per --window-s")
    ap.add_argument("--window-s", type=float, default=600.0)
    ap.add_argument("--price-in", type=float, default=0.5, help="$ per 1M prompt tokens")
    ap.add_argument("--price-out", type=float, default=3.0, help="$ per 1M output tokens")
    args = ap.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    server.state = State(args)
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as fh:
            fh.write(str(server.server_address[1]))
        os.replace(tmp, args.port_file)
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
