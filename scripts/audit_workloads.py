"""Runs the input-sensitivity audit on every workload's reference and writes the result to
workloads/input_sensitivity.json, which `palladium report` reads to flag degenerate workloads.

    .venv/bin/python scripts/audit_workloads.py [--check]

The audit (judge/audit.py, docs/verification.md) is a property of the reference,
not of any run, so it is computed once and kept in the repository; --check recomputes it and
fails if the stored file is out of date (for example after a workload module changed).
"""
import argparse
import json
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import jax  # noqa: E402

from judge.audit import audit_workload  # noqa: E402
from workloads import registry  # noqa: E402

OUT = ROOT / "workloads" / "input_sensitivity.json"


def audit_all():
    table = {}
    for workload_id in registry.ids():
        started = time.monotonic()
        result = audit_workload(workload_id, use_cache=False)
        table[workload_id] = {"degenerate": bool(result["degenerate"]),
                              "insensitive_inputs": list(result["insensitive_inputs"])}
        flag = "DEGENERATE " + ", ".join(result["insensitive_inputs"]) if result["degenerate"] else "ok"
        print(f"{workload_id:>4}  {flag}  ({time.monotonic() - started:.1f} s)", flush=True)
    return {"generated_by": "scripts/audit_workloads.py", "jax_version": jax.__version__,
            "workloads": table}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the stored file differs")
    args = parser.parse_args()
    fresh = audit_all()
    if args.check:
        stored = json.loads(OUT.read_text())
        if stored["workloads"] != fresh["workloads"]:
            print(f"{OUT} is out of date; rerun scripts/audit_workloads.py", file=sys.stderr)
            return 1
        print(f"{OUT} is up to date")
        return 0
    OUT.write_text(json.dumps(fresh, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
