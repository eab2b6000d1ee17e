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
from judge import structure
from judge.stages.context import Failure


class StructureStage:
    def run(self, ctx):
        ctx.enter("structure")
        judge, module, result = ctx.judge, ctx.module, ctx.result
        measured = structure.measure(ctx.full_exp.mlir_module())
        baseline = judge.baseline_structure(module)
        fraction = structure.outside_fraction(measured, baseline)
        result["outside_pallas_fraction"] = None if fraction is None else round(fraction, 6)
        result["structure"] = {"kernels": measured.kernels,
                               "inside": measured.inside.as_dict(),
                               "dead_mxu_flops": measured.dead_mxu_flops,
                               "outside": measured.outside.as_dict(),
                               "baseline": baseline.outside.as_dict(),
                               "unbounded_loops": measured.unbounded_loops}
        # The artifact the CPU runs is held to the same rules (a platform branch around a
        # kernel, a heavy CPU-only branch beside a cheap TPU one fail there), and each of its
        # kernels' CPU branches must do its Mosaic body's work.
        reduced_exp = ctx.reduced_exp
        measured_reduced = None if reduced_exp is None else \
            structure.measure(reduced_exp.mlir_module())
        if measured_reduced is not None:
            result["structure"]["dispatches"] = [
                {"kernel": d.kernel.as_dict(), "cpu": d.cpu.as_dict()}
                for d in measured_reduced.dispatches]
        found = structure.check(
            measured, baseline, ctx.require_pallas, measured_reduced,
            None if reduced_exp is None else judge.baseline_structure(module, module.CPU_CONFIG))
        result["structure_ok"] = not found
        if not found:
            return None
        failure = Failure(*found)
        if failure.verdict != "no_pallas":
            return failure
        ctx.defer(failure)
        return None
