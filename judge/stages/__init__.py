"""The judge's stages, in pipeline order (judge/evaluate.py's Pipeline runs them):

  lint       extract the code, static checks                    (taxonomy: extract, lint)
  artifact   the candidate process imports, traces and lowers;  (import, trace, lower,
             the artifacts' avals against the workload's         compile)
  structure  the work runs inside Pallas kernels                 (structure)
  compile    the deviceless v6e compile, after the cheaper       (compile)
             structure check
  numerics   outputs against the reference on fresh seeds        (numerics)
  timing     kernel and baseline times                           (timing)

Each is a class with `run(ctx)` (context.py) that returns None to go on or a `Failure`; a helper
deep inside a stage may raise the Failure instead, which the pipeline treats the same. A dtype or
no_pallas objection is deferred instead (Context.defer), so that the facts beside the verdict
are still established.
"""
