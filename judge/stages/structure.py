"""The structure stage: no custom calls but Pallas kernels, a Pallas kernel on the TPU path,
and the work outside kernels within structure.py's bound, on both artifacts -> no_pallas (or
runtime_error for a CPU branch that is not its kernel). The measurements go into
result["structure"] and result["outside_pallas_fraction"]; whether the rule held into
result["structure_ok"]. It runs before the compile tier, being far cheaper.

A program the judge must not run (a custom call other than a Pallas kernel, a platform branch,
a CPU branch that is not its kernel) stops the pipeline. A no_pallas objection (no kernel, work
outside the kernels, a kernel doing too little of the work) is deferred (context.py): the
program is safe to run, and the study's definition of correct (numerics alone) needs its
numerics."""
import time

import numpy as np

from judge import structure
from judge.audit import static_argnums
from judge.stages.context import Failure
from judge.tpu_model import mosaic_interpreter, tpu_program
from workloads import input_variants


class StructureStage:
    def run(self, ctx):
        ctx.enter("structure")
        judge, module, result = ctx.judge, ctx.module, ctx.result
        measured = structure.measure(ctx.full_exp.mlir_module())
        result["structure"] = {"kernels": measured.kernels,
                               "inside": measured.inside.as_dict(),
                               "dead_mxu_flops": measured.dead_mxu_flops,
                               "outside": measured.outside.as_dict(),
                               "unbounded_loops": measured.unbounded_loops}
        # The rule counts what the judge's own interpretation of the TPU program executes, on
        # the last numerics seed's inputs; the numerics stage reuses its outputs.
        reduced_exp = ctx.reduced_exp
        executed = ctx.interpreted = None
        if reduced_exp is not None and ctx.interpret_the_kernels and judge.backend != "tpu":
            last = len(ctx.numerics_seeds) - 1
            executed, ctx.interpreted = execute(
                module, reduced_exp, ctx.numerics_seeds[-1],
                input_variants.variant_for(ctx.numerics_seeds[-1], last))
        counted = executed if executed is not None else measured
        fraction = structure.outside_fraction(counted.outside, counted.inside)
        result["outside_pallas_fraction"] = None if fraction is None else round(fraction, 6)
        result["structure"]["counted"] = "executed" if executed is not None else "static"
        if executed is not None:
            result["structure"]["executed"] = executed.as_dict()
        # The artifact the CPU runs is held to the same rules (a platform branch around a
        # kernel, a heavy CPU-only branch beside a cheap TPU one fail there), and each of its
        # kernels' CPU branches must do its Mosaic body's work.
        measured_reduced = None if reduced_exp is None else \
            structure.measure(reduced_exp.mlir_module())
        if measured_reduced is not None:
            result["structure"]["dispatches"] = [
                {"kernel": d.kernel.as_dict(), "cpu": d.cpu.as_dict()}
                for d in measured_reduced.dispatches]
        found = structure.check(measured, ctx.require_pallas, measured_reduced, executed)
        result["structure_ok"] = not found
        if not found:
            return None
        failure = Failure(*found)
        if failure.verdict != "no_pallas":
            return failure
        ctx.defer(failure)
        return None


def execute(module, exp, seed, variant):
    """(structure.Executed or None, (outputs, error, seconds)): the judge's interpretation of
    the artifact's TPU program on `seed`'s inputs at the reduced shapes, counting what it
    executes. None when the interpreter cannot run it (the error is kept for the numerics
    stage, which refuses or screens it; structure.check then counts statically)."""
    static = static_argnums(module)
    inputs = input_variants.create_inputs(module, module.CPU_CONFIG, seed, variant)
    arrays = [np.asarray(x) for i, x in enumerate(inputs) if i not in static]
    executed = structure.Executed()
    start = time.perf_counter()
    try:
        outputs = tpu_program.run(exp.mlir_module(), exp.platforms, arrays,
                                  mosaic_interpreter.Budget(), executed,
                                  kept=exp.module_kept_var_idx)
        return executed, (outputs, None, time.perf_counter() - start)
    except Exception as exc:  # Unsupported, OverBudget, or the interpreter's own gap
        return None, (None, exc, time.perf_counter() - start)
