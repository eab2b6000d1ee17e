"""The judge's stages, in pipeline order (judge/evaluate.py's Pipeline runs them):

  lint       extract the code, static checks                    (taxonomy: extract, lint)
  artifact   the candidate process imports, traces and lowers    (import, trace, lower)
  compile    the artifacts' avals; the deviceless v6e compile    (compile)
  structure  the work runs inside Pallas kernels                 (structure)
  numerics   outputs against the reference on fresh seeds        (numerics)
  timing     kernel and baseline times                           (timing)

Each is a class with `run(ctx)` (context.py) that returns None to go on or a `Failure`; a helper
deep inside a stage may raise the Failure instead, which the pipeline treats the same.
"""
