"""Cost of Pallas TPU interpret mode vs interpret=True (HLO interpreter) per candidate evaluation.

Run by hand (not a test): `cd /work/main && .venv/bin/python tests/tpu_agent/sidecar/measure_modes.py`.
Each mode gets a fresh process-level Evaluator; every workload is evaluated twice with seeds (0, 1)
so the second number shows the steady state (reference cached, JAX warmed up).
"""
import time

import sidecar_kernels as k
from tpu_agent.sidecar.evaluate import Evaluator


def main():
    for mode in ("tpu-interpret", "hlo-interpret"):
        evaluator = Evaluator(numerics_mode=mode)
        for workload_id, code in k.WORKLOAD_KERNELS.items():
            for attempt in range(2):
                start = time.perf_counter()
                result = evaluator.evaluate(workload_id, code, (0, 1))
                total = (time.perf_counter() - start) * 1e3
                print(f"{mode:14s} {workload_id:4s} run{attempt} {result['verdict']:8s} "
                      f"total {total:7.0f} ms  numerics {result['stage_ms'].get('numerics', 0):7.0f} ms"
                      f"  kernel {result['kernel_ms']} ms  baseline {result['baseline_ms']} ms",
                      flush=True)


if __name__ == "__main__":
    main()
