"""The numerics stage, held to compare.py's rules throughout:

(1) the candidate process's Pallas TPU interpret-mode check on the check seeds: its error, or
    its outputs against the reference;
(2) the judge runs the artifact itself on fresh seeds the candidate never saw: the CPU branch
    on the interpret backend, the TPU program natively on a TPU (outputs NaN-poisoned first);
(3) on the interpret backend, the program a TPU would run, computed by the judge from the
    kernels' Mosaic bodies (tpu_program.py) on the last seed: a CPU branch that passes beside a
    kernel that computes something else is numerics_mismatch, kind mosaic_kernel_differs; a
    program the interpreter cannot run is runtime_error, kind mosaic_interpreter, except in a
    cascade's CPU tier, which leaves it to a TPU ("numerics_path": "cpu_branch_only");
(4) with the evaluation's full_shapes setting (judge/settings.py), the same at the full shapes
    on a secret seed (kind full_shapes_differ; "numerics_path": "full_shapes").
"""
import time

import jax
import numpy as np

from judge import structure
from judge.audit import static_argnums
from judge.stages.artifact import stand_in
from judge.stages.context import Failure
from judge.stages.outputs import check_outputs, differs, rms
from judge.tpu_model import mosaic_interpreter, tpu_program
from judge.verdicts import classify, truncate
from protocol import taxonomy
from sandbox.candidate.protocol import ProtocolError, decode_array
from workloads import input_variants

# The interpreter's bound for the full shapes: the largest workload's program (10p, ~1.2e13
# multiply-adds) fits; its arrays may take several GiB.
FULL_SHAPES_BUDGET = {"ops": 50_000_000, "elements": 3e13, "bytes": 12 << 30}


def poison_outputs(avals):
    """Allocates and frees NaN buffers the size of each output before a native TPU run, so that
    an output block the kernel never writes reads NaN instead of a previous run's values (the
    MaxKernel method; real TPU memory is not NaN-filled). Returns the number of buffers."""
    count = 0
    for aval in avals:
        fill = np.nan if jax.numpy.issubdtype(aval.dtype, jax.numpy.floating) else -1
        buffer = jax.numpy.full(aval.shape, fill, aval.dtype)
        jax.block_until_ready(buffer)
        buffer.delete()
        count += 1
    return count


# The verdicts that say the numbers were wrong (result["numerics_ok"] False); any other failure
# here (the interpreter's gap, a protocol error) leaves the fact undecided.
_WRONG_NUMBERS = ("numerics_mismatch", "shape_mismatch")


class NumericsStage:
    def run(self, ctx):
        ctx.enter("numerics")
        try:
            failure = self._run(ctx)
        except Failure as raised:
            failure = raised
        if failure is None:
            ctx.result["numerics_ok"] = True
        elif failure.verdict in _WRONG_NUMBERS:
            ctx.result["numerics_ok"] = False
        return failure

    def _run(self, ctx):
        judge, result = ctx.judge, ctx.result
        self._check_interpret(ctx)
        cpu_branch_error = ctx.candidate.get("cpu_branch_error")
        if judge.backend != "tpu" and ctx.reduced_exp is None:
            text = str(cpu_branch_error.get("message") or "")[:2000]
            return Failure("runtime_error", "cpu_interpreter",
                           "the kernel lowers for TPU, but the HLO interpreter cannot run it on "
                           f"CPU ({cpu_branch_error.get('exc_type')}: {text}); its numerics can "
                           "only be checked on a TPU", str(cpu_branch_error.get("error") or text))
        result["numerics_path"] = (taxonomy.NUMERICS_TPU if judge.backend == "tpu"
                                   else taxonomy.NUMERICS_CPU_BRANCH_ONLY)
        ctx.runs = self._judge_numerics(
            ctx, ctx.full_exp if judge.backend == "tpu" else ctx.reduced_exp)
        if judge.backend != "tpu" and ctx.interpret_the_kernels:
            self._interpret_the_kernels(ctx)
            if ctx.full_shapes and not ctx.screen:
                self._interpret_at_full_shapes(ctx)
        return None

    @staticmethod
    def _check_interpret(ctx):
        check, module = ctx.candidate.get("check") or {}, ctx.module
        error = check.get("error")
        violations = [str(v) for v in check.get("violations") or []][:5]
        if violations:
            raise Failure("runtime_error", "SandboxViolation", "\n".join(violations))
        if error:
            text = str(error.get("message") or "")
            verdict = classify("numerics", stand_in(error))
            raise Failure(verdict, str(error.get("kind") or error.get("exc_type"))[:80],
                          f"in Pallas TPU interpret mode: {text}",
                          str(error.get("error") or text))
        outputs = check.get("outputs") or []
        if len(outputs) != len(ctx.check_seeds):
            raise Failure("runtime_error", "protocol",
                          f"the candidate process returned {len(outputs)} check outputs for "
                          f"{len(ctx.check_seeds)} check inputs")
        for seed, encoded in zip(ctx.check_seeds, outputs):
            _, reference, _ = ctx.judge.reference(module, module.CPU_CONFIG, seed)
            try:
                got = [decode_array(leaf, "check output") for leaf in encoded]
            except ProtocolError as exc:
                raise Failure("runtime_error", "protocol", str(exc))
            # The seed is fresh per evaluation and recorded in "check_seeds": kept out of the
            # text, which feeds the next prompt, so the same failure asks the same question
            # (and hits the response cache) in another cell or a re-run.
            check_outputs(module, got, reference,
                          "the fresh check seed's inputs (TPU interpret mode)", ctx.result,
                          _exact_dtype(ctx))

    @staticmethod
    def _judge_numerics(ctx, exp):
        judge, module = ctx.judge, ctx.module
        call = jax.jit(exp.call)
        static = static_argnums(module)
        runs = {"kernel_ms": [], "baseline_ms": [], "call": call}
        usual_rms = None
        for position, seed in enumerate(ctx.numerics_seeds):
            # Every seed after the first checks the kernel on inputs of another scale or mean.
            variant = input_variants.variant_for(seed, position)
            inputs, reference, base_ms = judge.reference(module, judge.numerics_config(module),
                                                         seed, variant=variant)
            # The workload's ATOL is calibrated at its usual output magnitude (the first seed's):
            # where a variant's outputs are larger, the absolute tolerance grows with them (in
            # powers of two, so that the message stays the same across seeds).
            size = rms(reference)
            usual_rms = size if position == 0 else usual_rms
            atol_scale = 1.0
            if variant and usual_rms and size > usual_rms:
                atol_scale = float(2.0 ** round(np.log2(size / usual_rms)))
            arrays = [x for i, x in enumerate(inputs) if i not in static]
            if judge.backend == "tpu":
                poison_outputs(exp.out_avals)
            start = time.perf_counter()
            out = jax.block_until_ready(call(*arrays))
            runs["kernel_ms"].append((time.perf_counter() - start) * 1e3)
            runs["baseline_ms"].append(base_ms)
            got = [np.asarray(leaf) for leaf in jax.tree.leaves(out)]
            where = f"seed {seed}" + (f" (inputs {input_variants.describe(variant)})"
                                      if variant else "")
            check_outputs(module, got, reference, where, ctx.result, _exact_dtype(ctx),
                          atol_scale)
            runs["inputs"], runs["arrays"] = inputs, arrays
            runs["seed"], runs["reference"], runs["where"] = seed, reference, where
            runs["atol_scale"] = atol_scale
        return runs

    @staticmethod
    def _interpret_the_kernels(ctx):
        """The program a TPU would run (the kernels' Mosaic bodies and the XLA glue on the TPU
        path), computed by the judge on the last numerics seed's inputs and held to
        compare.py's rules: a CPU branch that passes beside a kernel that computes something
        else is the forgery of row 20 (docs/verification.md 0).

        A program the interpreter cannot run (an op it does not know, its work bound, its own
        error) is not `correct` on this host: the CPU branch beside it is the candidate's own
        build and proves nothing about the kernel, and each such gap is one a forger can aim
        at. Only a TPU can judge it, so the CPU tier of a cascade (`screen`) lets it through to
        one, recorded as `cpu_branch_only`."""
        runs, result = ctx.runs, ctx.result
        info = {"ms": None, "unsupported": ""}
        result["mosaic_interpreter"] = info
        got = tpu_program_outputs(ctx.reduced_exp, runs["arrays"], mosaic_interpreter.Budget(),
                                  info, None if ctx.screen else "the CPU branch passed, but",
                                  done=ctx.interpreted)
        if got is None:
            return
        result["numerics_path"] = taxonomy.NUMERICS_MOSAIC_INTERPRETER
        why = differs(ctx.module, got, runs["reference"], info, _exact_dtype(ctx),
                      runs.get("atol_scale", 1.0))
        if why:
            raise Failure("numerics_mismatch", "mosaic_kernel_differs",
                          f"{runs['where']}: the CPU branch passed, but the Mosaic kernel a "
                          "TPU would run computes something else (the judge interpreted its "
                          f"Mosaic body on the same inputs): {why}")

    @staticmethod
    def _interpret_at_full_shapes(ctx):
        """The full-shape artifact's TPU program, computed by the judge on inputs from a secret
        seed and held to compare.py's rules: a kernel right at the reduced shapes and wrong at
        the workload's own is numerics_mismatch, kind full_shapes_differ; a program the
        interpreter cannot run at these shapes is refused as in _interpret_the_kernels."""
        result = ctx.result
        info = {"ms": None, "unsupported": ""}
        result["mosaic_interpreter"]["full_shapes"] = info
        try:
            seed, arrays, reference = ctx.judge._full_shape_reference(ctx.module)
        except MemoryError as exc:
            # The host's limit, not the candidate's doing: no verdict is charged for it, and
            # numerics_path stays mosaic_interpreter, which says the full shapes were not run.
            info["unsupported"] = truncate(f"the full-shape reference: MemoryError: {exc}", 400)
            return
        executed = structure.Executed()
        got = tpu_program_outputs(ctx.full_exp, arrays,
                                  mosaic_interpreter.Budget(**FULL_SHAPES_BUDGET), info,
                                  "at the workload's full shapes", executed=executed)
        # The secret seed is reused for the workload's later candidates: the message names
        # neither it nor any figure of its inputs (compare.py's bands only).
        why = differs(ctx.module, got, reference, info, _exact_dtype(ctx))
        if why:
            raise Failure("numerics_mismatch", "full_shapes_differ",
                          "the kernel passed at the reduced shapes, but at the workload's full "
                          "shapes (on secret inputs) the program a TPU would run computes "
                          f"something else (the judge interpreted its Mosaic bodies): {why}")
        # Work that only the full shapes run (XLA glue the candidate's Python adds only there)
        # is held to the same rule.
        found = structure.outside_rule(executed.outside, executed.inside,
                                       executed.output_elems, "executed at the full shapes") \
            if ctx.require_pallas else None
        if found:
            raise Failure(*found)
        result["numerics_path"] = taxonomy.NUMERICS_FULL_SHAPES


def _exact_dtype(ctx):
    return ctx.result["dtype_exact"] is not False


def tpu_program_outputs(exp, arrays, budget, info, refusal, executed=None, done=None):
    """The outputs of the program a TPU would run (tpu_program.py), or None when the
    interpreter cannot run it and `refusal` is None (a cascade's screen). Otherwise a gap (an op
    it does not know, its work bound, its own error) is runtime_error, kind mosaic_interpreter:
    on a CPU host nothing else checks the kernel itself, and each such gap is one a forger can
    aim at, so only a TPU agent can judge it. A KernelDefect (out of bounds, a deadlock,
    nondeterminism) is no gap: it is runtime_error, kind mosaic_interpreter, too (the refusal
    the docs promise for what a CPU host cannot settle), but its message blames the kernel and
    info["defect"] names it, so its author's feedback says what to fix rather than "try a
    TPU"."""
    start = time.perf_counter()
    try:
        if done is not None:  # `done`: (outputs, error, seconds) of a run on these arrays
            outputs, error, seconds = done
            start -= seconds
            if error is not None:
                raise error
            return outputs
        return tpu_program.run(exp.mlir_module(), exp.platforms,
                               [np.asarray(a) for a in arrays], budget, executed,
                               kept=exp.module_kept_var_idx)
    except Exception as exc:  # Unsupported, OverBudget, or the interpreter's own gap
        why = str(exc) if isinstance(exc, mosaic_interpreter.Unsupported) else \
            f"interpreter error {type(exc).__name__}: {exc}"
        info["unsupported"] = truncate(why, 400)
        if isinstance(exc, mosaic_interpreter.KernelDefect):
            info["defect"] = type(exc).__name__
        if refusal is None:
            return None
        if isinstance(exc, mosaic_interpreter.KernelDefect):
            raise Failure("runtime_error", "mosaic_interpreter",
                          f"{refusal} the kernel itself is wrong ({truncate(why, 400)}): on a "
                          f"TPU it would {exc.on_a_tpu}") from None
        raise Failure("runtime_error", "mosaic_interpreter",
                      f"{refusal} the judge cannot compute the program a TPU would run "
                      f"({truncate(why, 400)}), so on a CPU host nothing checks the kernel "
                      "itself; only a TPU agent can judge it") from None
    finally:
        info["ms"] = round((time.perf_counter() - start) * 1e3, 3)
