#!/usr/bin/env python3
"""Draws a Palladium report's figures from its report.json (written by `palladium report DB --out DIR`).

    plot_report.py DIR/report.json DIR

writes DIR/table2.png, DIR/table3.png (when the suite has priority workloads), DIR/figure4.png and
DIR/budget_curves.png, and prints each path. It reads only report.json: every number drawn is a
number the Markdown, CSV and JSON files hold too.

Honesty rules (the report's own): a figure never mixes timing kinds (one figure per kind present);
speedups timed as `cpu-wall` are labelled as CPU interpret-mode wall-clock ratios, NOT TPU
speedups, on the axis and in the title; results of the offline models are labelled with their
model (`model: synthetic`, `model: replay`).
"""
import json
import sys
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
    lines = len(rows) + 1
    notes = footnote.count("\n") + 1
    height = 0.3 * lines + 0.22 * notes + 0.9
    width = max(8.0, 1.3 * len(header) + 0.07 * max(len(r[0]) for r in rows))
    fig = plt.figure(figsize=(width, height))
    table_h = 0.3 * lines / height
    ax = fig.add_axes([0.01, 1.0 - 0.55 / height - table_h, 0.98, table_h])
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
    fig.text(0.01, 0.2 / height + 0.22 * (notes - 1) / height, footnote, fontsize=7, va="bottom")
    save(fig, path)


def table2(report, group, out):
    rows = []
    for c in group["conditions"]:
        t = c["table2"]
        rows.append([c["label"], str(len(c["seeds"])), f"{t['candidates']}",
                     fmt_interval(t["per_sample_correctness"], pct=True),
                     f"{fmt_interval(t['solved'])} / {t['workloads']}",
                     fmt_interval(t["geomean_speedup"])])
    header = ["condition", "seeds", "candidates", "per-sample correctness", "solved",
              "geomean speedup"]
    draw_table(out / f"table2{group['suffix']}.png",
               "Table 2: methods compared" + title_suffix(group), header, rows,
               report["definitions"] + "\nMean over seeds [95% bootstrap interval over seeds].")


def table3(report, group, out):
    t3 = group.get("table3")
    if not t3 or not t3["workloads"]:
        return
    header = ["condition"] + t3["workloads"] + ["suite", "% of hand-tuned"]
    rows = [["hand-tuned reference"] + [f"{t3['hand_tuned'].get(w, 1.0):.3g}" for w in t3["workloads"]]
            + [f"{t3['hand_tuned_suite']:.3g}", "100%"]]
    for r in t3["rows"]:
        rows.append([r["label"]] + [f"{r['speedups'][w]:.3g}" for w in t3["workloads"]]
                    + [f"{r['suite']:.3g}", f"{r['percent_of_hand_tuned']:.0f}%"])
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
        budget_curves(group, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
