"""The judge's Python-only pipes, each defined once by a JSON file beside this module:
protocol/candidate_pipe.json (judge <-> candidate sandbox) and protocol/compile_pipe.json
(judge <-> compile worker). This module reads them; the ends of each pipe build and check their
maps here, so a message kind or a field name has one spelling.

    pipe = load("candidate_pipe")        # the file's version, limits and channels
    job = pipe.channel("job")
    job.message("stage", stage="trace")  # {"type": "stage", "version": 1, "stage": "trace"}
    job.check(msg, "result")             # msg, or ProtocolError (wrong version, wrong kind)
    job.validate(msg)                    # msg, or ProtocolError naming the field and why

check() is what a receiver applies to every map (version and kind: a peer of another version is
refused with both versions named); each field is then read defensively where it is used, since
a candidate's maps are untrusted. message() refuses a field its kind does not declare, a missing
required one and a value of the wrong type, so a sender's typo fails where it is made.

Standard library only and no project import: the candidate sandbox mounts this file as
`palladium_pipe_schema` beside protocol/candidate_pipe.json (judge/candidate_pool.py), and
nothing else of the repository is visible there.
"""
import json
import os

# Field types: a value of type T, or None too when the type ends in "?".
_TYPES = {
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "bool": lambda v: isinstance(v, bool),
    "str": lambda v: isinstance(v, str),
    "bytes": lambda v: isinstance(v, bytes),
    "list": lambda v: isinstance(v, (list, tuple)),
    "map": lambda v: isinstance(v, dict),
    "any": lambda v: True,
}


class ProtocolError(Exception):
    """A peer sent something that is not a message of this pipe, or a sender built one."""


class Channel:
    """One channel of a pipe: its message kinds and their fields."""

    def __init__(self, pipe, name, spec):
        self.pipe, self.name = pipe, name
        self.doc = spec.get("doc", "")
        self.messages = spec["messages"]
        for kind, message in self.messages.items():
            for field in message["fields"]:
                if field["type"].rstrip("?") not in _TYPES:
                    raise ValueError(f"{pipe.path}: {name}.{kind}.{field['key']} has unknown "
                                     f"type {field['type']!r}")

    def _where(self, kind):
        return f"{self.pipe.name} {self.name} message {kind!r}"

    def fields(self, kind):
        """The fields of `kind` (each a dict: key, type, doc, and optionally required)."""
        if kind not in self.messages:
            raise ProtocolError(f"{self.pipe.name} channel {self.name!r} has no message "
                                f"{kind!r} ({self.pipe.path})")
        return self.messages[kind]["fields"]

    def _check_fields(self, kind, values, strict_keys):
        spec = {field["key"]: field for field in self.fields(kind)}
        if strict_keys:
            unknown = sorted(set(values) - set(spec))
            if unknown:
                raise ProtocolError(f"{self._where(kind)} has no field {unknown[0]!r} "
                                    f"({self.pipe.path})")
        for key, field in spec.items():
            if key not in values:
                if field.get("required"):
                    raise ProtocolError(f"{self._where(kind)} lacks required field {key!r}")
                continue
            kind_of = field["type"]
            value = values[key]
            if value is None and kind_of.endswith("?"):
                continue
            if not _TYPES[kind_of.rstrip("?")](value):
                raise ProtocolError(f"field {key!r} of {self._where(kind)} is "
                                    f"{str(value)[:80]!r}, want {kind_of}")

    def message(self, kind, /, **fields):
        """The map of `kind` with `fields` (only what is given; no defaults are added). `kind`
        is positional only: a result has a field named "kind"."""
        self._check_fields(kind, fields, strict_keys=True)
        return {"type": kind, "version": self.pipe.version, **fields}

    def check(self, msg, *kinds):
        """`msg` if it is a map of this pipe's version whose type is one of `kinds`."""
        if not isinstance(msg, dict):
            raise ProtocolError(f"not a {self.pipe.name} message: {str(msg)[:200]}")
        if msg.get("version") != self.pipe.version:
            raise ProtocolError(
                f"{self.pipe.name} version {str(msg.get('version'))[:20]} from the peer, but "
                f"this side speaks version {self.pipe.version} ({self.pipe.path}): "
                f"{str(msg)[:200]}")
        if msg.get("type") not in kinds:
            raise ProtocolError(f"expected {' or '.join(kinds)} on the {self.pipe.name} "
                                f"{self.name} channel, got {str(msg.get('type'))[:40]!r}")
        return msg

    def validate(self, msg):
        """`msg` if check() passes for its own type and every field is declared, present when
        required and of its type."""
        kind = msg.get("type") if isinstance(msg, dict) else None
        self.check(msg, *([kind] if kind in self.messages else self.messages))
        self._check_fields(kind, {k: v for k, v in msg.items() if k not in ("type", "version")},
                           strict_keys=True)
        return msg


class Pipe:
    def __init__(self, path):
        self.path = path
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        self.name = data["name"]
        self.version = data["version"]
        self.limits = data.get("limits", {})
        self.data = data
        self._channels = {name: Channel(self, name, spec)
                          for name, spec in data["channels"].items()}

    @property
    def channels(self):
        return tuple(self._channels)

    def channel(self, name):
        return self._channels[name]


def load(name):
    """The pipe defined by `<name>.json` beside this file."""
    return Pipe(os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".json"))
