"""A map of every message a pipe schema declares, each field given a value of its declared type
(the round-trip tests of tests/protocol/test_candidate_pipe.py and test_compile_pipe.py)."""

SAMPLES = {"int": 7, "float": 1.5, "bool": True, "str": "text \u00e9", "bytes": b"\x00\xff",
           "list": [1, "two"], "map": {"k": [1.0]}, "any": "echoed"}


def every_message(channel):
    """(kind, map) for each message of `channel`, every field it declares filled in."""
    for kind in channel.messages:
        fields = {f["key"]: SAMPLES[f["type"].rstrip("?")] for f in channel.fields(kind)}
        yield kind, channel.message(kind, **fields)
