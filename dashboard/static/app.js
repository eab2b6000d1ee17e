// The dashboard page: polls the JSON endpoints and draws the current view.
//
// Every value from the server is data, never markup: it enters the document only through
// text nodes (el() below and textContent). Candidate code, error text and prompts are written
// by a model and by programs it wrote; a kernel's string literal must stay a string.
"use strict";

const POLL_MS = 2000;
let lastBody = null;      // the JSON text the current view was drawn from
let pollTimer = null;
let routeSerial = 0;      // a reply to an older route is dropped

// el("td", {class: "num"}, "text", child, ...): strings become text nodes.
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "href") e.setAttribute("href", safeHref(v));
    else e.setAttribute(k, String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    e.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// Links are built by this script from ids; anything else is refused.
function safeHref(v) {
  const s = String(v);
  return /^(#\/|\/api\/report\/file\?name=)[\w\-./?=&%]*$/.test(s) ? s : "#/";
}

function svgEl(tag, attrs, ...children) {
  const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  for (const c of children) e.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

function fmtNum(v, digits) {
  if (v === null || v === undefined) return "–";
  return typeof v === "number" ? v.toFixed(digits) : String(v);
}
function fmtSpeedup(v, timing) {
  if (v === null || v === undefined) return "–";
  return v.toFixed(3) + "x" + (timing ? " (" + timing + ")" : "");
}
function fmtInt(v) { return v === null || v === undefined ? "–" : Number(v).toLocaleString("en-US"); }
function verdictClass(v) {
  return "verdict " + (v === "correct" ? "v-correct" : !v || v === "pending" ? "v-pending" : "v-other");
}
function verdictSpan(v, stage) {
  return el("span", {class: verdictClass(v)}, v || "pending", stage ? " (stage: " + stage + ")" : "");
}
function pre(text, attrs) { return el("pre", attrs || {}, text === null || text === undefined ? "" : text); }
function card(key, value, id) {
  return el("div", {class: "card"}, el("div", {class: "v", id: id}, value), el("div", {class: "k"}, key));
}
function table(headers, rows, attrs) {
  return el("table", attrs || {}, el("thead", {}, el("tr", {}, headers.map(h => el("th", {}, h)))),
            el("tbody", {}, rows));
}
function bar(fraction) {
  const inner = el("span", {});
  inner.style.width = Math.max(0, Math.min(1, fraction || 0)) * 100 + "%";  // CSSOM: allowed by the CSP
  return el("span", {class: "bar"}, inner);
}
function candLink(id, text) { return el("a", {href: "#/candidate/" + encodeURIComponent(id)}, text || "#" + id); }

async function getJSON(url) {
  const r = await fetch(url, {cache: "no-store"});
  const text = await r.text();
  if (!r.ok) {
    let msg = text;
    try { msg = JSON.parse(text).error; } catch (e) { /* not JSON */ }
    throw new Error(r.status + ": " + msg);
  }
  return text;
}

// The labels a reader must not miss: which model wrote the kernels, what the timings are.
function drawLabels(models, timingKinds) {
  const box = document.getElementById("labels");
  box.replaceChildren();
  const names = models.map(m => m.provider === "synthetic" || m.provider === "replay"
                                ? m.provider : m.provider + "/" + m.model);
  box.appendChild(el("span", {id: "label-model"}, "model: " + (names.length ? [...new Set(names)].join(", ") : "none yet")));
  for (const t of timingKinds) {
    box.appendChild(el("span", {class: t === "cpu-wall" ? "warn" : "", id: "label-timing-" + t},
                       "timing: " + t + (t === "cpu-wall" ? ", NOT TPU speedups" : "")));
  }
}

function openDetails() {
  return new Set([...document.querySelectorAll("details[open][data-key]")].map(d => d.dataset.key));
}
function restoreDetails(keys) {
  for (const d of document.querySelectorAll("details[data-key]")) if (keys.has(d.dataset.key)) d.open = true;
}

// ---- overview ----
function drawOverview(d) {
  drawLabels(d.models, d.timing_kinds);
  document.getElementById("db-path").textContent = d.database;
  const s = d.status;
  const usage = d.usage.reduce((a, u) => {
    a.calls += u.calls; a.tokens += (u.prompt_tokens || 0) + (u.completion_tokens || 0) + (u.thinking_tokens || 0);
    a.cost += u.cost_usd || 0; a.unpriced += u.unpriced_calls || 0; return a;
  }, {calls: 0, tokens: 0, cost: 0, unpriced: 0});
  // A workload counts once however many runs (sweep cells) searched it: solved by any of them.
  const totals = d.workloads.reduce((a, w) => {
    a.candidates += w.candidates; a.evaluated += w.evaluated; a.correct += w.correct;
    a.workloads.add(w.workload); if (w.correct > 0) a.solved.add(w.workload); return a;
  }, {candidates: 0, evaluated: 0, correct: 0, solved: new Set(), workloads: new Set()});
  const view = [];
  view.push(el("h2", {}, s ? s.title : "Run database"));
  view.push(el("div", {class: "cards", id: "counts"},
    card("candidates generated" + (s ? " of " + fmtInt(s.samples.cap) + " budgeted" : ""),
         fmtInt(totals.candidates), "count-generated"),
    card("evaluated", fmtInt(totals.evaluated), "count-evaluated"),
    card("correct", fmtInt(totals.correct), "count-correct"),
    card("workloads solved (by any run)", fmtInt(totals.solved.size) + " / " + fmtInt(totals.workloads.size), "count-solved"),
    card("LLM calls paid", fmtInt(usage.calls), "count-calls"),
    card("tokens", fmtInt(usage.tokens), "count-tokens"),
    card("dollars" + (usage.unpriced ? " (" + usage.unpriced + " calls unpriced)" : ""),
         "$" + usage.cost.toFixed(4), "count-dollars")));

  view.push(el("h2", {}, "Coordinator"));
  if (d.status_error) view.push(el("p", {class: "error"}, "palladium status failed: " + d.status_error));
  const c = s && s.coordinator;
  if (!c) {
    view.push(el("p", {id: "coordinator"}, "not running: the database is all there is."));
  } else {
    view.push(el("p", {id: "coordinator"},
      "live: pid " + c.pid + " (" + c.command + "), " + c.agents + " agent(s)" +
      (c.slots !== null ? ", " + c.slots + " slots" : "") +
      (c.in_flight !== null ? ", " + c.in_flight + " evaluating" : "") +
      (c.utilisation !== null ? " (utilisation " + Math.round(100 * c.utilisation) + "%)" : "") +
      (c.queued !== null ? ", queue " + c.queued : ""),
      c.utilisation !== null ? bar(c.utilisation) : null));
    if (c.llm_in_flight !== null && c.llm_in_flight !== undefined) {
      view.push(el("p", {id: "llm-live"}, "LLM: " + c.llm_in_flight + " samples being answered, " +
        c.llm_queued + " waiting for a call" + (c.llm_stopped ? "; no more calls: " + c.llm_stopped : "")));
    }
    const eta = estimateEta(s.cells, d.runs);
    view.push(el("p", {id: "eta"}, eta === null ? "ETA: not known until a candidate of a running cell is judged"
                                               : "ETA of the running cells: " + eta + " (from their observed rates)"));
  }
  if (s && s.dollars && s.dollars.cap !== null) view.push(el("p", {}, "dollar cap: $" + fmtNum(s.dollars.cap, 2)));

  view.push(el("h2", {}, s && s.cells.length > 1 ? "Cells" : "Runs"));
  if (s) {
    view.push(table(["cell / run", "status", "generated / budget", "evaluated", "correct", "LLM calls", "tokens", "cost"],
      s.cells.map(cell => el("tr", {"data-cell": cell.key},
        el("td", {}, cell.key), el("td", {}, cell.status, cell.status_reason ? el("div", {class: "muted"}, cell.status_reason) : null),
        el("td", {class: "num"}, cell.generated + " / " + cell.planned, bar(cell.planned ? cell.generated / cell.planned : 0)),
        el("td", {class: "num"}, cell.evaluated), el("td", {class: "num"}, cell.correct),
        el("td", {class: "num"}, fmtInt(cell.llm_calls)), el("td", {class: "num"}, fmtInt(cell.tokens)),
        el("td", {class: "num"}, "$" + fmtNum(cell.cost_usd, 4)))), {id: "cells"}));
  }

  view.push(el("h2", {}, "Verdicts"));
  const mixTotal = Object.values(d.verdicts).reduce((a, b) => a + b, 0);
  view.push(el("div", {id: "verdicts"}, Object.entries(d.verdicts).map(([v, n]) =>
    el("div", {class: "mix-row"}, el("span", {class: "name " + verdictClass(v)}, v),
       bar(mixTotal ? n / mixTotal : 0), el("span", {}, n + " (" + (100 * n / mixTotal).toFixed(0) + "%)")))));

  view.push(el("h2", {}, "Workloads"));
  const runName = Object.fromEntries(d.runs.map(r => [r.id, r.cell_key || r.name]));
  view.push(table(["run", "workload", "candidates", "evaluated", "correct", "best speedup", "best candidate"],
    d.workloads.map(w => el("tr", {},
      el("td", {}, "#" + w.run_id + " " + (runName[w.run_id] || "")),
      el("td", {}, el("a", {href: "#/workload/" + w.run_id + "/" + encodeURIComponent(w.workload)}, w.workload)),
      el("td", {class: "num"}, w.candidates), el("td", {class: "num"}, w.evaluated),
      el("td", {class: "num"}, w.correct),
      el("td", {class: "num"}, w.best ? fmtSpeedup(w.best.speedup, w.best.timing_kind) : "–"),
      el("td", {}, w.best ? candLink(w.best.id) : "–"))), {id: "workloads"}));

  view.push(el("h2", {}, "LLM usage"));
  view.push(table(["provider", "model", "calls", "failed", "prompt tokens", "completion tokens", "thinking tokens", "dollars"],
    d.usage.map(u => el("tr", {}, el("td", {}, u.provider), el("td", {}, u.model),
      el("td", {class: "num"}, u.calls), el("td", {class: "num"}, u.failed),
      el("td", {class: "num"}, fmtInt(u.prompt_tokens)), el("td", {class: "num"}, fmtInt(u.completion_tokens)),
      el("td", {class: "num"}, fmtInt(u.thinking_tokens)),
      el("td", {class: "num"}, "$" + fmtNum(u.cost_usd, 4) + (u.unpriced_calls ? " (" + u.unpriced_calls + " unpriced)" : ""))))));
  return view;
}

// Time left for the running cells: each cell's candidates still to judge at the rate it has
// judged them since it started; the cells run side by side, so the slowest decides.
function estimateEta(cells, runs) {
  const started = Object.fromEntries(runs.map(r => [r.id, Date.parse(r.started_at)]));
  let worst = null;
  for (const c of cells) {
    if (!String(c.status).startsWith("running") || c.run_id === null || !c.evaluated) continue;
    const elapsed = (Date.now() - started[c.run_id]) / 1000;
    if (!(elapsed > 0)) continue;
    const left = Math.max(0, c.planned - c.evaluated) * elapsed / c.evaluated;
    worst = worst === null ? left : Math.max(worst, left);
  }
  if (worst === null) return null;
  const m = Math.floor(worst / 60), sec = Math.round(worst % 60);
  return (m ? m + " min " : "") + sec + " s";
}

// ---- per workload ----
function curveSvg(curves) {
  const W = 520, H = 220, L = 48, B = 28, T = 12, R = 12;
  const pts = curves.flatMap(c => c.points).filter(p => p[1] !== null);
  const xmax = Math.max(1, ...curves.map(c => c.points.length));
  // The range holds 1.0x (the baseline) and every point, with a margin.
  const ylo = Math.min(1.0, ...pts.map(p => p[1])) * 0.9, yhi = Math.max(1.0, ...pts.map(p => p[1])) * 1.1;
  const x = v => L + (W - L - R) * (v / xmax), y = v => H - B - (H - B - T) * ((v - ylo) / (yhi - ylo));
  const svg = svgEl("svg", {width: W, height: H, viewBox: "0 0 " + W + " " + H, id: "curve"});
  svg.appendChild(svgEl("line", {x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#333"}));
  svg.appendChild(svgEl("line", {x1: L, y1: T, x2: L, y2: H - B, stroke: "#333"}));
  svg.appendChild(svgEl("line", {x1: L, y1: y(1), x2: W - R, y2: y(1), stroke: "#bbb", "stroke-dasharray": "4 3"}));
  svg.appendChild(svgEl("text", {x: L - 4, y: y(1) + 4, "text-anchor": "end"}, "1.0x"));
  for (const v of [ylo, yhi]) {
    if (Math.abs(y(v) - y(1)) > 14) svg.appendChild(svgEl("text", {x: L - 4, y: y(v) + 4, "text-anchor": "end"}, v.toFixed(2) + "x"));
  }
  for (let i = 1; i <= xmax; i += Math.max(1, Math.ceil(xmax / 10))) {
    svg.appendChild(svgEl("text", {x: x(i), y: H - B + 12, "text-anchor": "middle"}, i));
  }
  svg.appendChild(svgEl("text", {x: (L + W) / 2, y: H - 3, "text-anchor": "middle"}, "candidates spent (of " + xmax + ")"));
  const colours = ["#3b7dd8", "#d8703b", "#2f9e5a", "#9b3bd8", "#c9a227"];
  curves.forEach((c, i) => {
    const p = c.points.filter(q => q[1] !== null).map(q => x(q[0]) + "," + y(q[1])).join(" ");
    if (p) svg.appendChild(svgEl("polyline", {points: p, fill: "none", stroke: colours[i % colours.length], "stroke-width": 2}));
    for (const q of c.points) {
      if (q[1] !== null) svg.appendChild(svgEl("circle", {cx: x(q[0]), cy: y(q[1]), r: 2.5, fill: colours[i % colours.length]}));
    }
    svg.appendChild(svgEl("text", {x: W - R - 60, y: T + 12 + 13 * i, fill: colours[i % colours.length]}, "seed " + c.seed));
  });
  return svg;
}

function diffPre(lines, id) {
  return el("pre", {class: "diff", id: id}, lines.map(l => el("span", {
    class: l.startsWith("+") ? "add" : l.startsWith("-") ? "del" : l.startsWith("@@") ? "hunk" : ""}, l + "\n")));
}

function drawWorkload(d) {
  const v = [];
  v.push(el("h2", {}, "Workload " + d.workload + " (run #" + d.run_id + ")"));
  if (d.best) {
    v.push(el("p", {id: "best"}, "Best kernel so far: ", candLink(d.best.id, "candidate #" + d.best.id),
      " (seed " + d.best.seed + ", sample " + d.best.sample_index + "), speedup ",
      el("b", {}, fmtSpeedup(d.best.speedup, d.best.timing_kind)),
      d.best.timing_kind === "cpu-wall" ? el("span", {class: "error"}, " CPU wall clock, NOT a TPU speedup") : null,
      d.best.kernel_ms !== null ? " — kernel " + fmtNum(d.best.kernel_ms, 3) + " ms vs baseline " + fmtNum(d.best.baseline_ms, 3) + " ms" : ""));
  } else {
    v.push(el("p", {id: "best"}, "No correct kernel yet."));
  }
  v.push(el("h3", {}, "Budget curve: best correct speedup after each candidate"));
  v.push(curveSvg(d.curves));
  if (d.lineage.length) {
    v.push(el("h3", {}, "Lineage of the best kernel (child first)"));
    v.push(el("ol", {id: "lineage"}, d.lineage.map(n => el("li", {}, candLink(n.id, "#" + n.id),
      " " + n.role + ", sample " + n.sample_index + ": ", verdictSpan(n.verdict),
      n.speedup !== null ? " " + fmtSpeedup(n.speedup, n.timing_kind) : ""))));
    if (d.diff.length) {
      v.push(el("details", {"data-key": "wl-diff", open: true}, el("summary", {}, "Diff from its parent"), diffPre(d.diff, "best-diff")));
    }
    v.push(el("details", {"data-key": "wl-code"}, el("summary", {}, "Best kernel's code"), pre(d.best_code, {id: "best-code"})));
  }
  v.push(el("h3", {}, "Candidates"));
  v.push(table(["candidate", "seed", "sample", "role", "phase", "gen", "parent", "verdict", "speedup"],
    d.candidates.map(c => el("tr", {}, el("td", {}, candLink(c.id)), el("td", {class: "num"}, c.seed),
      el("td", {class: "num"}, c.sample_index), el("td", {}, c.role), el("td", {}, c.phase),
      el("td", {class: "num"}, c.generation), el("td", {}, c.parent_id ? candLink(c.parent_id) : "–"),
      el("td", {}, verdictSpan(c.verdict, c.stage)), el("td", {class: "num"}, fmtSpeedup(c.speedup, c.timing_kind)))),
    {id: "candidates"}));
  return v;
}

// ---- per candidate ----
function drawCandidate(t) {
  const v = [];
  v.push(el("h2", {}, "Candidate #" + t.id + ": workload " + t.workload + ", run #" + t.run_id));
  v.push(el("p", {class: "muted"}, t.method + ", seed " + t.seed + ", sample " + t.sample_index + ", role " + t.role +
    ", phase " + t.phase + ", generation " + t.generation, t.parent_id ? [", parent ", candLink(t.parent_id)] : null,
    t.superseded ? " (superseded: its prompt changed on resume)" : ""));
  const e = t.evaluation;
  v.push(el("h3", {}, "Verdict"));
  if (!e) {
    v.push(el("p", {id: "verdict"}, verdictSpan(null), " — not judged yet"));
  } else {
    v.push(el("p", {id: "verdict"}, verdictSpan(e.verdict, e.stage),
      e.speedup !== null ? [" speedup ", el("b", {}, fmtSpeedup(e.speedup, e.timing_kind))] : "",
      e.timing_kind === "cpu-wall" ? " (CPU wall clock, NOT a TPU speedup)" : "",
      e.kernel_ms !== null ? " — kernel " + fmtNum(e.kernel_ms, 3) + " ms, baseline " + fmtNum(e.baseline_ms, 3) + " ms" : ""));
    v.push(el("p", {class: "muted"}, "agent " + e.agent_id + ", backend " + e.backend +
      (e.device_kind ? ", device " + e.device_kind : "") + ", attempts " + e.attempts +
      (e.numerics_path ? ", numerics " + e.numerics_path : "") +
      (e.max_abs_err !== null ? ", max abs err " + e.max_abs_err.toExponential(2) : "")));
    const stages = Object.entries(e.stage_ms || {});
    if (stages.length) v.push(table(["stage", "ms"], stages.map(([k, ms]) => el("tr", {}, el("td", {}, k), el("td", {class: "num"}, fmtNum(ms, 1)))), {id: "stage-ms"}));
    if (e.error_text) { v.push(el("h3", {}, "Error")); v.push(pre(e.error_text, {id: "error-text"})); }
    if (e.stdout) v.push(el("details", {"data-key": "stdout"}, el("summary", {}, "stdout"), pre(e.stdout)));
    if (e.stderr) v.push(el("details", {"data-key": "stderr"}, el("summary", {}, "stderr"), pre(e.stderr)));
  }
  v.push(el("h3", {}, "Extracted code"));
  v.push(t.code ? pre(t.code, {id: "code"}) : el("p", {id: "code"}, "(the answer held no code)"));
  if (t.parent_diff.length) v.push(el("details", {"data-key": "pdiff"}, el("summary", {}, "Diff from parent #" + t.parent_id), diffPre(t.parent_diff, "parent-diff")));
  v.push(el("h3", {}, "Prompt as sent"));
  if (t.llm) v.push(el("p", {class: "muted", id: "llm"}, "model " + t.llm.provider + "/" + t.llm.model +
    (t.llm.model_reported && t.llm.model_reported !== t.llm.model ? " (reported " + t.llm.model_reported + ")" : "") +
    ", " + fmtInt(t.llm.prompt_tokens) + " prompt + " + fmtInt(t.llm.completion_tokens) + " completion + " +
    fmtInt(t.llm.thinking_tokens) + " thinking tokens" + (t.llm.tokens_estimated ? " (estimated)" : "") +
    ", " + fmtNum(t.llm.latency_ms, 0) + " ms" + (t.llm.cost_usd !== null ? ", $" + fmtNum(t.llm.cost_usd, 5) : "") +
    (t.llm.call_id === null ? ", served from the cache" : "")));
  v.push(el("details", {"data-key": "system"}, el("summary", {}, "System prompt"), pre(t.system_task, {id: "system-prompt"})));
  for (const b of t.context_blocks) {
    v.push(el("details", {"data-key": "ctx-" + b.block, class: "context"},
      el("summary", {}, "Context block " + b.block + ": " + b.title), pre(b.text)));
  }
  v.push(el("details", {"data-key": "user", open: true}, el("summary", {}, "User prompt"), pre(t.user_prompt, {id: "user-prompt"})));
  if (t.plan) v.push(el("details", {"data-key": "plan"}, el("summary", {}, "Plan implemented"), pre(t.plan)));
  v.push(el("h3", {}, "Model's answer"));
  v.push(el("details", {"data-key": "answer"}, el("summary", {}, "Answer (" + t.response.length + " characters)"), pre(t.response, {id: "response"})));
  v.push(el("h3", {}, "Feedback that went into the next prompt"));
  if (t.feedback) {
    v.push(el("p", {}, "In ", candLink(t.feedback.sample_id, "sample " + t.feedback.sample_index), " (" + t.feedback.role + "):"));
    v.push(pre(t.feedback.text, {id: "feedback"}));
  } else {
    v.push(el("p", {id: "feedback"}, "No later prompt of this search carries it (yet)."));
  }
  return v;
}

// ---- report ----
function drawReport(r) {
  const v = [el("h2", {}, "Report (what `palladium report --out` writes)")];
  for (const f of r.figures) {
    v.push(el("h3", {}, f));
    const src = "/api/report/file?name=" + encodeURIComponent(f);
    v.push(el("a", {href: src, title: "full size"}, el("img", {class: "figure", src: src, alt: f})));
  }
  if (r.tables.length) v.push(el("p", {}, "Tables as CSV: ", r.tables.map(t => [el("a", {href: "/api/report/file?name=" + encodeURIComponent(t)}, t), " "])));
  v.push(el("h3", {}, "report.md"));
  v.push(pre(r.markdown, {id: "report-md"}));
  return v;
}

// ---- routing and polling ----
function route() {
  const h = location.hash.replace(/^#\/?/, "");
  const parts = h.split("/").map(decodeURIComponent);
  if (parts[0] === "workload" && parts.length >= 3)
    return {url: "/api/workload?run=" + encodeURIComponent(parts[1]) + "&w=" + encodeURIComponent(parts[2]), draw: drawWorkload, poll: true};
  if (parts[0] === "candidate" && parts[1])
    return {url: "/api/candidate?id=" + encodeURIComponent(parts[1]), draw: drawCandidate, poll: true};
  if (parts[0] === "report") return {url: "/api/report", draw: drawReport, poll: false};
  return {url: "/api/overview", draw: drawOverview, poll: true};
}

async function refresh(serial) {
  const r = route();
  const live = document.getElementById("live");
  try {
    const body = await getJSON(r.url);
    if (serial !== routeSerial) return;
    live.textContent = "updated " + new Date().toLocaleTimeString();
    live.className = "live";
    if (body !== lastBody) {
      lastBody = body;
      const open = openDetails();
      const view = document.getElementById("view");
      view.replaceChildren(...r.draw(JSON.parse(body)));
      restoreDetails(open);
      view.dataset.version = String((Number(view.dataset.version) || 0) + 1);
    }
    if (r.url !== "/api/overview" && document.getElementById("labels").childElementCount === 0) {
      const o = JSON.parse(await getJSON("/api/overview"));
      drawLabels(o.models, o.timing_kinds);
      document.getElementById("db-path").textContent = o.database;
    }
  } catch (e) {
    if (serial !== routeSerial) return;
    live.textContent = "not updated: " + e.message;
    live.className = "live stale";
  }
  if (serial === routeSerial && r.poll) pollTimer = setTimeout(() => refresh(serial), POLL_MS);
}

function start() {
  clearTimeout(pollTimer);
  routeSerial += 1;
  lastBody = null;
  window.scrollTo(0, 0);
  refresh(routeSerial);
}

window.addEventListener("hashchange", start);
document.addEventListener("DOMContentLoaded", start);
