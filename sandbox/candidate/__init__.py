"""The candidate runner: the only Palladium code inside a candidate sandbox.

Mounted read-only in the sandbox as the package `palladium_candidate` (nothing else of the
repository is visible there but the candidate pipe's schema, protocol/candidate_pipe.json, and
its reader protocol/pipe_schema.py, mounted as `palladium_pipe_schema`), so it imports nothing
else of the project and uses relative imports otherwise. The judge imports it as
`sandbox.candidate` for the protocol.

| file | concept |
|---|---|
| `__main__.py` | `python -m palladium_candidate`: the warm-spare parent |
| `zygote.py` | the warm-spare parent: imports JAX once, forks one spare per candidate |
| `spare.py` | one spare: the candidate seccomp stage, backend warm-up, one job, exit |
| `stages.py` | import, trace, lower (jax.export at full and reduced shapes), interpret check |
| `protocol.py` | the candidate pipe's transport (control socket, job pipes, arrays) |
| `seccomp.py` | loading the later seccomp stages |
| `interpret.py` | the pallas_call patch, its CPU lowering, TPU interpret mode, the v6e mesh |
| `guard.py` | the audit hook: clear messages for refused fork/socket/write |
| `capture.py` | fd-level capture of the candidate's stdout/stderr |
| `errors.py` | error text and the candidate's own source line |
"""
