#!/usr/bin/env python3
"""Draws a Palladium report's figures from its report.json (written by `palladium report DB --out DIR`).

    plot_report.py DIR/report.json DIR

writes DIR/table2.png, DIR/table3.png (when the suite has priority workloads), DIR/figure4.png,
DIR/outcome_heatmap.png (Figure 4's classes per workload), DIR/budget_curves.png,
DIR/budget_methods.png (one curve per method on one axis), DIR/fast_p.png and DIR/cost_solved.png,
and prints each path. It reads only report.json: every number drawn is a
number the Markdown, CSV and JSON files hold too.

Honesty rules (the report's own): a figure never mixes timing kinds (one figure per kind present);
speedups timed as `cpu-wall` are labelled as CPU interpret-mode wall-clock ratios, NOT TPU
speedups, on the axis and in the title; results of the offline models are labelled with their
model (`model: synthetic`, `model: replay`).
"""
import json
import sys
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display on agent hosts or CI
import matplotlib.pyplot as plt  # noqa: E402

# One colour per outcome class, failures warm to cold by pipeline stage, `correct` green.
VERDICT_COLOURS = {
    "no_code": "#7f7f7f", "syntax_error": "#c7c7c7", "lint_rejected": "#bcbd22",
    "import_error": "#dbdb8d", "api_misuse": "#ff7f0e", "lowering_error": "#ffbb78",
    "compile_error": "#d62728", "runtime_error": "#ff9896", "timeout": "#9467bd",
    "crash": "#c5b0d5", "resource_exhausted": "#8c564b", "shape_mismatch": "#c49c94",
    "numerics_mismatch": "#e377c2", "no_pallas": "#17becf", "correct": "#2ca02c",
}


def speedup_label(timing):
    if timing == "cpu-wall":
        return "geomean speedup over XLA\n(CPU interpret-mode wall clock, NOT a TPU speedup)"
    if timing == "tpu-wall-fallback":
        return "geomean speedup over XLA\n(TPU host wall clock: a lower bound)"
    return "geomean speedup over XLA (TPU profiler)"


def title_suffix(group):
    parts = [f"model: {group['model']}", f"timing: {group['timing']}"]
    if group["timing"] == "cpu-wall":
        parts.append("NOT TPU speedups")
    return "\n[" + ", ".join(parts) + "]"


def fmt_interval(m, pct=False):
    if m is None or m.get("mean") is None:
        return "-"
    scale, unit = (100.0, "%") if pct else (1.0, "")
    num = (lambda v: f"{v * scale:.1f}{unit}") if pct else (lambda v: f"{v:.3g}")
    text = num(m["mean"])
    if m.get("n", 1) > 1:
        text += f" [{num(m['low'])}, {num(m['high'])}]"
    return text


def save(fig, path):
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    print(path)


def draw_table(path, title, header, rows, footnote):
    # Column widths first: the footnote wraps to the table's own width, so the figure stays
    # readable at its own size instead of growing one 2,800-pixel line.
    cols = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    width = max(8.0, 0.075 * sum(cols) + 0.25 * len(header))
    chars = max(60, int(width / 0.058))  # 7-point text: about 0.058 in a character
    wrapped = "\n".join(textwrap.fill(p, chars) for p in footnote.split("\n"))
    lines = len(rows) + 1
    notes = wrapped.count("\n") + 1
    title_lines = title.count("\n") + 1
    height = 0.3 * lines + 0.13 * notes + 0.2 * title_lines + 0.6
    fig = plt.figure(figsize=(width, height))
    table_h = 0.3 * lines / height
    top = 1.0 - (0.2 * title_lines + 0.15) / height
    ax = fig.add_axes([0.01, top - table_h, 0.98, table_h])
    ax.axis("off")
    table = ax.table(cellText=rows, colLabels=header, bbox=[0, 0, 1, 1], cellLoc="center")
    table.auto_set_font_size(False)
    table.set_fontsize(9)
    table.auto_set_column_width(list(range(len(header))))
    for (r, _), cell in table.get_celld().items():
        if r == 0:
            cell.set_text_props(weight="bold")
            cell.set_facecolor("#eeeeee")
    fig.text(0.01, 1.0 - 0.08 / height, title, fontsize=10, va="top")
    fig.text(0.01, top - table_h - 0.08 / height, wrapped, fontsize=7, va="top")
    save(fig, path)


def value(e, scale=1.0, form="{:.3g}"):
    return "-" if e is None or e.get("value") is None else form.format(scale * e["value"])


def interval(e, scale=1.0, form="{:.3g}", show=True):
    if not show or e is None or e.get("low") is None:
        return "-"
    return "[" + form.format(scale * e["low"]) + ", " + form.format(scale * e["high"]) + "]"


def as_estimate(m):
    """A mean-interval {"mean", "low", "high", "n"} as an estimate {"value", "low", "high"}."""
    return {"value": m.get("mean"), "low": m.get("low"), "high": m.get("high")}


def seeds_warning(group):
    n = min((len(c["seeds"]) for c in group["conditions"]), default=0)
    if n >= 5:
        return ""
    return (f"\nWarning: intervals rest on {n} seed(s) per workload (fewer than 5); they are "
            "rough, and with one seed there is none.")


def table2(report, group, out):
    rows = []
    for c in group["conditions"]:
        t = c["table2"]
        several = len(c["seeds"]) > 1
        pc, sv, gm = (as_estimate(t[m]) for m in ("per_sample_correctness", "solved",
                                                   "geomean_speedup"))
        iq = t["iqm_speedup"]
        rows.append([c["label"], str(len(c["seeds"])), f"{t['candidates']}",
                     value(pc, 100, "{:.1f}%"), interval(pc, 100, "{:.1f}%", several),
                     f"{value(sv, 1, '{:.2f}')} / {t['workloads']}",
                     interval(sv, 1, "{:.2f}", several),
                     value(gm, 1, "{:.3f}x"), interval(gm, 1, "{:.3f}", several),
                     value(iq, 1, "{:.3f}x"), interval(iq, 1, "{:.3f}", several)])
    header = ["condition", "seeds", "candidates", "per-sample correctness", "95% interval",
              "solved", "95% interval", "geomean speedup", "95% interval", "IQM speedup",
              "95% interval"]
    reading = ""
    for comp in group.get("comparisons", []):
        reading = "Reading: " + comp["reading"] + "\n"
        if comp["axis"] == "method":
            break
    draw_table(out / f"table2{group['suffix']}.png",
               "Table 2: methods compared" + title_suffix(group), header, rows,
               reading + report["definitions"] + "\nMean over seeds [95% bootstrap interval over "
               "seeds]; IQM: stratified bootstrap within workloads." + seeds_warning(group))


def table3(report, group, out):
    t3 = group.get("table3")
    if not t3 or not t3["workloads"]:
        return
    header = ["condition"] + t3["workloads"] + ["suite", "% of hand-tuned"]
    ran = t3.get("hand_tuned_ran", True)
    verdicts = t3.get("hand_tuned_verdicts", {})
    rows = [["hand-tuned reference"]
            + [f"{t3['hand_tuned'].get(w, 1.0):.3g}" if verdicts.get(w) == "correct"
               else "no hand-tuned run" for w in t3["workloads"]]
            + [f"{t3['hand_tuned_suite']:.3g}" if ran else "-",
               "100%" if ran else "no hand-tuned run"]]
    for r in t3["rows"]:
        pct = r.get("percent_of_hand_tuned")
        rows.append([r["label"]] + [f"{r['speedups'][w]:.3g}" for w in t3["workloads"]]
                    + [f"{r['suite']:.3g}", "no hand-tuned run" if pct is None else f"{pct:.0f}%"])
    draw_table(out / f"table3{group['suffix']}.png",
               "Table 3: priority workloads against the hand-tuned references" + title_suffix(group),
               header, rows, t3["note"])


def figure4(group, out):
    conds = group["conditions"]
    verdicts = [v for v in VERDICT_COLOURS if any(c["outcomes"].get(v) for c in conds)]
    fig, ax = plt.subplots(figsize=(max(6.0, 2.2 * len(conds) + 3), 5.2))
    bottoms = [0.0] * len(conds)
    labels = [c["label"].replace(",", "\n") + f"\n(n={sum(c['outcomes'].values())})" for c in conds]
    for v in verdicts:
        fractions = []
        for c in conds:
            total = sum(c["outcomes"].values())
            fractions.append(100.0 * c["outcomes"].get(v, 0) / total if total else 0.0)
        ax.bar(range(len(conds)), fractions, bottom=bottoms, color=VERDICT_COLOURS[v], label=v,
               edgecolor="white", linewidth=0.5, width=0.6)
        bottoms = [b + f for b, f in zip(bottoms, fractions)]
    ax.set_xticks(range(len(conds)))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel("share of generated candidates (%)")
    ax.set_ylim(0, 100)
    ax.set_title("Figure 4: outcome classes per condition" + title_suffix(group), fontsize=10)
    # Pipeline order bottom to top, as stacked; the legend reads top to bottom like the bars.
    handles, names = ax.get_legend_handles_labels()
    ax.legend(handles[::-1], names[::-1], loc="center left", bbox_to_anchor=(1.0, 0.5),
              fontsize=8, title="verdict")
    save(fig, out / f"figure4{group['suffix']}.png")


def budget_curves(group, out):
    fig, (ax_s, ax_g) = plt.subplots(1, 2, figsize=(12, 4.6))
    workloads = max((c["table2"]["workloads"] for c in group["conditions"]), default=0)
    styles = ["-", "--", "-.", ":"]
    markers = ["o", "s", "^", "D", "v", "P"]
    for i, c in enumerate(group["conditions"]):
        curve = c["curve"]
        if not curve:
            continue
        k = [p["samples_per_workload"] for p in curve]
        for ax, metric in ((ax_s, "solved"), (ax_g, "geomean_speedup")):
            mean = [p[metric]["mean"] for p in curve]
            # Conditions that share a prefix overlap exactly; styles keep both visible.
            line, = ax.plot(k, mean, linestyle=styles[i % len(styles)],
                            marker=markers[i % len(markers)], markersize=4, label=c["label"])
            if len(c["seeds"]) > 1:
                ax.fill_between(k, [p[metric]["low"] for p in curve],
                                [p[metric]["high"] for p in curve], color=line.get_color(),
                                alpha=0.18, linewidth=0)
    ax_s.set_xlabel("candidates spent per workload")
    ax_s.set_ylabel(f"workloads solved (of {workloads})")
    # The whole range 0..N, so a flat curve at 0 does not read as one around an axis of negatives.
    ax_s.set_ylim(-0.05 * max(workloads, 1), max(workloads, 1) * 1.05)
    ax_s.yaxis.get_major_locator().set_params(integer=True)
    ax_g.set_xlabel("candidates spent per workload")
    ax_g.set_ylabel(speedup_label(group["timing"]))
    ax_g.axhline(1.0, color="#999999", linewidth=0.8, linestyle="--")
    for ax in (ax_s, ax_g):
        ax.grid(alpha=0.3)
        ax.xaxis.get_major_locator().set_params(integer=True)
    ax_s.legend(fontsize=8)
    fig.suptitle("Budget curves: prefixes of the recorded searches; bands: 95% bootstrap "
                 "interval over seeds" + title_suffix(group), fontsize=10, y=1.02)
    save(fig, out / f"budget_curves{group['suffix']}.png")


def budget_methods(group, out):
    """One budget curve per method on one axis: each method's longest recording (its prefixes
    are the smaller budgets), geomean speedup against candidates per workload."""
    longest = {}
    for c in group["conditions"]:
        if c["curve"] and len(c["curve"]) > len(longest.get(c["method"], {"curve": []})["curve"]):
            longest[c["method"]] = c
    fig, ax = plt.subplots(figsize=(7, 4.6))
    for i, (method, c) in enumerate(longest.items()):
        curve = c["curve"]
        k = [p["samples_per_workload"] for p in curve]
        line, = ax.plot(k, [p["geomean_speedup"]["mean"] for p in curve], marker="os^Dv"[i % 5],
                        markersize=4, label=f"{method} ({len(c['seeds'])} seeds; {c['label']})")
        if len(c["seeds"]) > 1:
            ax.fill_between(k, [p["geomean_speedup"]["low"] for p in curve],
                            [p["geomean_speedup"]["high"] for p in curve],
                            color=line.get_color(), alpha=0.18, linewidth=0)
    ax.axhline(1.0, color="#999999", linewidth=0.8, linestyle="--")
    ax.set_xlabel("candidates spent per workload")
    ax.set_ylabel(speedup_label(group["timing"]))
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("Budget curve per method; bands: 95% bootstrap interval over seeds"
                 + seeds_warning(group).replace("\nWarning: ", "\nwarning: ") + title_suffix(group),
                 fontsize=9)
    save(fig, out / f"budget_methods{group['suffix']}.png")


def fast_p(group, out):
    fig, ax = plt.subplots(figsize=(7, 4.6))
    conds = [c for c in group["conditions"] if c.get("fast_p")]
    width = 0.8 / max(len(conds), 1)
    for i, c in enumerate(conds):
        ps = [f["p"] for f in c["fast_p"]]
        vals = [100 * f["estimate"]["value"] for f in c["fast_p"]]
        lows = [100 * (f["estimate"]["value"] - f["estimate"]["low"]) for f in c["fast_p"]]
        highs = [100 * (f["estimate"]["high"] - f["estimate"]["value"]) for f in c["fast_p"]]
        x = [j + (i - (len(conds) - 1) / 2) * width for j in range(len(ps))]
        ax.bar(x, vals, width=width * 0.95, label=c["label"],
               yerr=[lows, highs] if len(c["seeds"]) > 1 else None, capsize=2)
    if conds:
        ax.set_xticks(range(len(conds[0]["fast_p"])))
        ax.set_xticklabels([f"p = {f['p']:g}" for f in conds[0]["fast_p"]])
    ax.set_ylim(0, 105)
    ax.set_ylabel("workloads whose best correct kernel is\n> p times faster than XLA (%)"
                  + ("\n(CPU interpret-mode wall clock, NOT TPU)" if group["timing"] == "cpu-wall"
                     else ""))
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, axis="y")
    ax.set_title("fast_p (KernelBench); error bars: 95% stratified bootstrap interval"
                 + seeds_warning(group).replace("\nWarning: ", "\nwarning: ") + title_suffix(group),
                 fontsize=9)
    save(fig, out / f"fast_p{group['suffix']}.png")


def outcome_heatmap(report, group, out):
    """Figure 4's classes per workload: each cell is the most advanced verdict of a condition's
    candidates on a workload (pipeline order, correct last), with the count of correct ones."""
    order = list(VERDICT_COLOURS)
    cells = {c["key"]: c for c in report["cells"]}
    conds = group["conditions"]
    workloads = []
    for c in conds:
        for key in c["cells"]:
            for w in cells[key]["per_workload"]:
                if w["id"] not in workloads:
                    workloads.append(w["id"])
    if not workloads or not conds:
        return
    from matplotlib.colors import ListedColormap
    grid, text = [], []
    for w in workloads:
        row, trow = [], []
        for c in conds:
            counts, correct, total = {}, 0, 0
            for key in c["cells"]:
                for pw in cells[key]["per_workload"]:
                    if pw["id"] != w:
                        continue
                    for v, n in pw["verdicts"].items():
                        counts[v] = counts.get(v, 0) + n
                    correct += pw["correct"]
                    total += pw["candidates"]
            seen = [order.index(v) for v in counts if v in order]
            row.append(max(seen) if seen else -1)
            trow.append(f"{order[max(seen)]}\n{correct}/{total}" if seen else "none")
        grid.append(row)
        text.append(trow)
    colours = ["#ffffff"] + [VERDICT_COLOURS[v] for v in order]
    fig, ax = plt.subplots(figsize=(max(6.0, 2.0 * len(conds) + 2), 0.55 * len(workloads) + 2.2))
    ax.imshow([[v + 1 for v in r] for r in grid], cmap=ListedColormap(colours), vmin=0,
              vmax=len(order), aspect="auto")
    for i, trow in enumerate(text):
        for j, t in enumerate(trow):
            ax.text(j, i, t, ha="center", va="center", fontsize=7)
    ax.set_xticks(range(len(conds)))
    ax.set_xticklabels([c["label"].replace(",", "\n") for c in conds], fontsize=8)
    ax.set_yticks(range(len(workloads)))
    ax.set_yticklabels(workloads, fontsize=8)
    ax.set_title("Outcome per workload: most advanced verdict, correct / candidates"
                 + title_suffix(group), fontsize=9)
    save(fig, out / f"outcome_heatmap{group['suffix']}.png")


def cost_solved(report, group, out):
    """Solved against what the condition spent: LLM dollars, or, when every call was free (the
    offline models), the tokens it sent and received, so the points do not all sit at $0."""
    cells = {c["key"]: c for c in report["cells"]}
    spend = {}
    for c in group["conditions"]:
        llm = [cells[k]["llm"] for k in c["cells"]]
        spend[c["key"]] = (sum(u["cost_usd"] for u in llm),
                           sum(u["prompt_tokens"] + u["completion_tokens"] + u["thinking_tokens"]
                               for u in llm),
                           all(u["cost_complete"] for u in llm))
    free = all(cost == 0 for cost, _, _ in spend.values())
    fig, ax = plt.subplots(figsize=(7, 4.6))
    for i, c in enumerate(group["conditions"]):
        cost, tokens, complete = spend[c["key"]]
        sv = c["table2"]["solved"]
        if sv.get("mean") is None:
            continue
        err = ([[sv["mean"] - sv["low"]], [sv["high"] - sv["mean"]]]
               if len(c["seeds"]) > 1 else None)
        ax.errorbar([tokens if free else cost], [sv["mean"]], yerr=err, fmt="os^Dv"[i % 5],
                    capsize=3, label=c["label"] + ("" if complete else " (some calls unpriced: >=)"))
    workloads = max((c["table2"]["workloads"] for c in group["conditions"]), default=1)
    ax.set_ylim(-0.05 * workloads, workloads * 1.05)
    ax.set_xlabel("LLM tokens in + out of the condition's cells (an offline model: $0)" if free
                  else "LLM cost of the condition's cells (USD)")
    ax.set_ylabel(f"workloads solved per seed (of {workloads})")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("Cost against solved; error bars: 95% bootstrap interval over seeds"
                 + title_suffix(group), fontsize=9)
    save(fig, out / f"cost_solved{group['suffix']}.png")

def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    report = json.loads(Path(argv[1]).read_text())
    out = Path(argv[2])
    out.mkdir(parents=True, exist_ok=True)
    for group in report["groups"]:
        table2(report, group, out)
        table3(report, group, out)
        figure4(group, out)
        outcome_heatmap(report, group, out)
        budget_curves(group, out)
        budget_methods(group, out)
        fast_p(group, out)
        cost_solved(report, group, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
