"""Palladium's Python evaluation judge: checks one LLM-written Pallas candidate at a time.

`python -m judge --backend interpret` speaks the judge pipe protocol of
docs/architecture.md on fds 3/4. `judge.evaluate.evaluate(workload_id, code, seeds)`
is the same pipeline in-process.
"""
PROTOCOL_VERSION = 1
