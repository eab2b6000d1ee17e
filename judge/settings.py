"""The judge's settings (issue 20): how a candidate is checked, decided per evaluation.

Each eval request carries its run's settings (protocol/judge_pipe.json's `eval`): the run
config's evaluation.compile_tier ("on" or "off") and evaluation.full_shapes (a bool), so that a
run's stored config says how it was judged. An environment variable on the judge's host,
PALLADIUM_COMPILE_TIER or PALLADIUM_FULL_SHAPES ("on" or "off"), overrides the request's value
for every evaluation of that judge. An override is never silent: the ready frame lists the
host's overrides, and every evaluation records the settings it was judged under
(`judge_settings`, the evaluations column judge_settings_json).

What a setting asks for, the judge's backend may not allow: the compile tier never runs on the
TPU backend (the chip's native compile covers it) nor without libtpu, and the full-shape
interpretation never runs on the TPU backend (its numerics are at the full shapes). The
recorded setting then says "off: <why>".
"""
import json
import os

COMPILE_TIER_ENV = "PALLADIUM_COMPILE_TIER"
FULL_SHAPES_ENV = "PALLADIUM_FULL_SHAPES"
VARIABLES = {"compile_tier": COMPILE_TIER_ENV, "full_shapes": FULL_SHAPES_ENV}
# The run config's defaults (config/evaluation_config.hpp), for a request without them.
DEFAULT_COMPILE_TIER = "on"
DEFAULT_FULL_SHAPES = False


def on_off(name, value):
    """True for "on", False for "off" (any case, spaces trimmed); a ValueError naming `name`
    and the value otherwise."""
    text = value.strip().lower() if isinstance(value, str) else None
    if text not in ("on", "off"):
        raise ValueError(f"{name}={value!r}: expected 'on' or 'off'")
    return text == "on"


def host_overrides(environ=None):
    """{"compile_tier": bool, "full_shapes": bool} for each override set on this host; a
    ValueError names a bad value."""
    environ = os.environ if environ is None else environ
    return {setting: on_off(variable, environ[variable])
            for setting, variable in VARIABLES.items() if variable in environ}


def spelled(overrides):
    """The overrides as the ready frame and the records list them: ["PALLADIUM_FULL_SHAPES=on"]."""
    return [f"{VARIABLES[setting]}={'on' if overrides[setting] else 'off'}"
            for setting in VARIABLES if setting in overrides]


def requested(message):
    """(compile tier, full shapes) an eval message asks for; a missing key reads as the run
    config's default, a bad value is a ValueError naming the key."""
    tier = message.get("compile_tier", DEFAULT_COMPILE_TIER)
    full = message.get("full_shapes", DEFAULT_FULL_SHAPES)
    if tier is None:
        tier = DEFAULT_COMPILE_TIER
    if full is None:
        full = DEFAULT_FULL_SHAPES
    if not isinstance(full, bool):
        raise ValueError(f"eval field full_shapes={full!r}: expected a bool")
    return on_off("eval field compile_tier", tier), full


class InForce:
    """The settings one evaluation runs under: `compile_tier` and `full_shapes` (bools) and
    `record()`, what the evaluation stores."""

    def __init__(self, compile_tier, compile_why, full_shapes, full_why, overrides):
        self.compile_tier, self.full_shapes = compile_tier, full_shapes
        self._compile_why, self._full_why = compile_why, full_why
        self.overrides = list(overrides)

    def record(self):
        """The evaluation's judge_settings: JSON, keys sorted, so that equal settings are
        equal text."""
        return json.dumps({
            "compile_tier": "on" if self.compile_tier else f"off: {self._compile_why}",
            "full_shapes": "on" if self.full_shapes else f"off: {self._full_why}",
            "overrides": self.overrides}, sort_keys=True)


def resolve(backend, has_libtpu, compile_tier, full_shapes, overrides=None):
    """The settings in force for a request asking for `compile_tier` and `full_shapes` (bools)
    on a judge of `backend`, with or without libtpu, under the host's `overrides`
    (host_overrides())."""
    overrides = overrides or {}
    if "compile_tier" in overrides:
        tier, tier_why = overrides["compile_tier"], f"{COMPILE_TIER_ENV}=off"
    else:
        tier, tier_why = compile_tier, "the request asked for no compile tier"
    if tier and backend == "tpu":
        tier, tier_why = False, "the TPU backend compiles the artifact natively"
    elif tier and not has_libtpu:
        tier, tier_why = False, "libtpu is not installed"
    if "full_shapes" in overrides:
        full, full_why = overrides["full_shapes"], f"{FULL_SHAPES_ENV}=off"
    else:
        full, full_why = full_shapes, "the request asked for the reduced shapes only"
    if full and backend == "tpu":
        full, full_why = False, "the TPU backend's numerics run at the full shapes"
    return InForce(tier, tier_why, full, full_why, spelled(overrides))
