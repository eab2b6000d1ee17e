"""The judge's settings (judge/settings.py): a request's, the host's overrides, what is in force."""
import json

import pytest

from judge import settings


def test_on_off_names_the_setting_and_the_value():
    assert settings.on_off("X", " ON ") is True
    assert settings.on_off("X", "off") is False
    for bad in ("yes", "", None, True):
        with pytest.raises(ValueError, match=r"^X=.*expected 'on' or 'off'"):
            settings.on_off("X", bad)


def test_host_overrides_are_the_variables_that_are_set():
    assert settings.host_overrides({}) == {}
    got = settings.host_overrides({"PALLADIUM_FULL_SHAPES": "on", "PALLADIUM_COMPILE_TIER": "Off"})
    assert got == {"full_shapes": True, "compile_tier": False}
    assert settings.spelled(got) == ["PALLADIUM_COMPILE_TIER=off", "PALLADIUM_FULL_SHAPES=on"]
    with pytest.raises(ValueError, match="PALLADIUM_FULL_SHAPES='sometimes'"):
        settings.host_overrides({"PALLADIUM_FULL_SHAPES": "sometimes"})


def test_a_request_without_settings_gets_the_run_configs_defaults():
    assert settings.requested({}) == (True, False)
    assert settings.requested({"compile_tier": None, "full_shapes": None}) == (True, False)
    assert settings.requested({"compile_tier": "off", "full_shapes": True}) == (False, True)
    with pytest.raises(ValueError, match="compile_tier='auto'"):
        settings.requested({"compile_tier": "auto"})
    with pytest.raises(ValueError, match="full_shapes='on'"):
        settings.requested({"full_shapes": "on"})


def record(in_force):
    return json.loads(in_force.record())


def test_the_request_decides_without_an_override():
    on = record(settings.resolve("interpret", True, True, True))
    assert on == {"compile_tier": "on", "full_shapes": "on", "overrides": []}
    off = record(settings.resolve("interpret", True, False, False))
    assert off["compile_tier"] == "off: the request asked for no compile tier"
    assert off["full_shapes"] == "off: the request asked for the reduced shapes only"


def test_a_host_override_wins_and_is_recorded():
    forced = settings.resolve("interpret", True, False, False,
                              {"compile_tier": True, "full_shapes": True})
    assert (forced.compile_tier, forced.full_shapes) == (True, True)
    assert record(forced)["overrides"] == ["PALLADIUM_COMPILE_TIER=on", "PALLADIUM_FULL_SHAPES=on"]
    refused = settings.resolve("interpret", True, True, True,
                               {"compile_tier": False, "full_shapes": False})
    assert record(refused) == {"compile_tier": "off: PALLADIUM_COMPILE_TIER=off",
                               "full_shapes": "off: PALLADIUM_FULL_SHAPES=off",
                               "overrides": ["PALLADIUM_COMPILE_TIER=off",
                                             "PALLADIUM_FULL_SHAPES=off"]}


def test_what_the_backend_cannot_run_says_why():
    tpu = settings.resolve("tpu", True, True, True)
    assert (tpu.compile_tier, tpu.full_shapes) == (False, False)
    assert record(tpu)["compile_tier"] == "off: the TPU backend compiles the artifact natively"
    assert record(tpu)["full_shapes"] == "off: the TPU backend's numerics run at the full shapes"
    bare = settings.resolve("interpret", False, True, False)
    assert record(bare)["compile_tier"] == "off: libtpu is not installed"
