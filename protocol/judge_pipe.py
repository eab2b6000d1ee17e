"""The judge pipe's messages and the evaluation record, read from protocol/judge_pipe.json.

That JSON file is the one definition: C++ gets structs and a codec generated from it at
configure time (cmake/generate_judge_pipe.cmake), the judge (judge/server.py), the fake judge
(tests/agent/fake_judge.py), the pipe client and the bench build and check their maps here.

    message(kind, **fields)  a complete map of `kind`: type, version, every field (defaults
                             filled in, an evaluation record flattened into it)
    check(message)           raises ProtocolError naming the first key that breaks the schema
"""
import json
import pathlib

from protocol import taxonomy

_DATA = json.loads((pathlib.Path(__file__).with_name("judge_pipe.json")).read_text())

VERSION = _DATA["version"]
RECORDS = _DATA["records"]
MESSAGES = _DATA["messages"]


class ProtocolError(ValueError):
    """A map that protocol/judge_pipe.json does not allow; the text names the key and why."""


def fields(kind):
    """The fields of message `kind` (or of a record), records flattened, in the file's order."""
    spec = MESSAGES[kind]["fields"] if kind in MESSAGES else RECORDS[kind]
    out = []
    for field in spec:
        if "record" in field:
            out.extend(fields(field["record"]))
        else:
            out.append(field)
    return out


EVALUATION_KEYS = tuple(field["key"] for field in fields("evaluation"))

_ENUMS = {"verdict": taxonomy.VERDICTS, "stage?": taxonomy.STAGES,
          "timing_kind?": taxonomy.TIMING_KINDS, "numerics_path?": taxonomy.NUMERICS_PATHS}


def _default(field):
    if "default" in field:
        return field["default"]
    kind = field["type"]
    if kind.endswith("?") or kind == "any":
        return None
    return {"int": 0, "int32": 0, "float": 0.0, "bool": False, "str": "", "int_list": [],
            "float_list": [], "str_list": [], "float_map": {}}[kind]


def message(kind, **values):
    """The map of message `kind` with `values`; a field not given gets its default. A key the
    schema does not know is an error (a typo must not vanish on the pipe)."""
    spec = fields(kind)
    known = {field["key"] for field in spec}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ProtocolError(f"message {kind!r} has no field {unknown[0]!r}")
    out = {"type": kind, "version": VERSION}
    for field in spec:
        value = values.get(field["key"], _default(field))
        out[field["key"]] = list(value) if isinstance(value, tuple) else value
    return out


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_value(kind, key, value, where):
    def fail(want):
        raise ProtocolError(f"field {key!r} in {where!r} is {value!r}, want {want}")
    if kind == "any":
        return
    if kind.endswith("?") and value is None:
        return
    base = kind.rstrip("?")
    if kind in _ENUMS:
        if kind.endswith("?") and value == "":
            return
        if value not in _ENUMS[kind]:
            fail(f"one of protocol/taxonomy.json's {base}s")
    elif base in ("int", "int32"):
        if not _is_int(value):
            fail("an int")
    elif base == "float":
        if not _is_number(value):
            fail("a number")
    elif base == "bool":
        if not isinstance(value, bool):
            fail("a bool")
    elif base == "str":
        if not isinstance(value, str):
            fail("a str")
    elif base == "int_list":
        if not isinstance(value, (list, tuple)) or not all(_is_int(v) for v in value):
            fail("a list of ints")
    elif base == "float_list":
        if not isinstance(value, (list, tuple)) or not all(_is_number(v) for v in value):
            fail("a list of numbers")
    elif base == "str_list":
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            fail("a list of strs")
    elif base == "float_map":
        if not isinstance(value, dict) or not all(
                isinstance(k, str) and _is_number(v) for k, v in value.items()):
            fail("a map of str to number")
    else:
        raise ProtocolError(f"protocol/judge_pipe.json: field {key!r} has unknown type {kind!r}")


def check(msg):
    """Raises ProtocolError unless `msg` is a map the schema allows (the C++ decoder's rules: a
    required key must be there, nil is allowed for the ?-types and for any key that is not
    required (it reads as the field's default), unknown keys are ignored)."""
    if not isinstance(msg, dict):
        raise ProtocolError(f"not a map: {type(msg).__name__}")
    kind = msg.get("type")
    if kind not in MESSAGES:
        raise ProtocolError(f"unknown message type {kind!r}")
    if msg.get("version") != VERSION:
        raise ProtocolError(f"version {msg.get('version')!r} != {VERSION} in {kind!r}")
    for field in fields(kind):
        key = field["key"]
        if key not in msg:
            if field.get("required"):
                raise ProtocolError(f"missing field {key!r} in {kind!r}")
            continue
        if msg[key] is None and not field.get("required"):
            continue
        _check_value(field["type"], key, msg[key], kind)
    return msg
