"""judge/doctor.py against stand-ins: there is no TPU here.

What is real: the versions check, the deviceless compile tier (libtpu 0.0.42.1) and, as the
"chip" of the compile check, the compile-only v6e device; the probe kernel, the 8p baseline and
the hand-tuned 8p kernel really run (on the CPU, the kernels in Pallas TPU interpret mode), and
the profiler really starts and stops. What stands in: the device list (SimpleNamespaces with a
TPU's platform and device_kind), the trace the profiler wrote (built in the profiler's own
formats with test_tpu_timing.py's helpers, read back by jaxlib's ProfileData), and the clock.
"""
import contextlib
import datetime
import io
import json
import pathlib
import subprocess
import sys
import types

import jax.numpy as jnp
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from test_tpu_timing import (HOST, MEASURED_US, FakeClock, calls, chrome_trace,  # noqa: E402
                             from_bytes, several_modules)

from judge import doctor  # noqa: E402
from sandbox.candidate import interpret  # noqa: E402
from judge.compile import compile_tier  # noqa: E402
from workloads import hand_tuned, registry  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
V6E = types.SimpleNamespace(id=0, platform="tpu", device_kind="TPU v6 lite")
V5E = types.SimpleNamespace(id=0, platform="tpu", device_kind="TPU v5 lite")
CPU = types.SimpleNamespace(id=0, platform="cpu", device_kind="cpu")
NOW = datetime.datetime(2026, 12, 1, 17, 0, tzinfo=datetime.timezone.utc)
ITERATIONS = 5
PROBE_MODULE = "jit_doctor_probe"


@contextlib.contextmanager
def cpu_interpret():
    """Where the 'chip' runs kernels in these tests: Pallas TPU interpret mode on the CPU."""
    with interpret.tpu_abstract_mesh(), interpret.tpu_interpret():
        yield


def fake_host(devices=(V6E,), profile=None, **overrides):
    fields = dict(devices=lambda: list(devices), load_profile=lambda _dir: profile,
                  clock=FakeClock(), now=lambda: NOW, on_chip=cpu_interpret, full_shapes=False,
                  warmup=1, iterations=ITERATIONS)
    fields.update(overrides)
    return doctor.Host(**fields)


def probe_trace(module=PROBE_MODULE, plane="/device:TPU:0", line="XLA Modules", n=ITERATIONS):
    return [HOST, (plane, {line: calls(f"{module}(4)", [50.0] * n),
                           "XLA Ops": calls(doctor.PROBE_KERNEL_NAME, [40.0] * n, start_us=5)})]


# -- versions and devices ------------------------------------------------------------------------

def test_versions_match_the_pins_here():
    status, summary, details = doctor.check_versions(fake_host())
    assert status == "PASS", summary
    pins = doctor.read_pins()
    assert pins["jax"] == "0.10.2" and pins["libtpu"] == "0.0.42.1"   # jax[tpu]==0.10.2 parsed
    assert details["libtpu"] == {"installed": pins["libtpu"], "pinned": pins["libtpu"]}


def test_a_wrong_jax_and_a_missing_libtpu_are_named():
    versions = {"jax": "0.10.1", "jaxlib": "0.10.2", "libtpu": ""}
    status, summary, details = doctor.check_versions(fake_host(installed=versions.get))
    assert status == "FAIL"
    assert "jax 0.10.1 installed, scripts/requirements.txt pins 0.10.2" in summary
    assert "libtpu not installed installed" not in summary
    assert "libtpu not installed, scripts/requirements.txt pins 0.0.42.1" in summary
    assert "jaxlib" not in summary
    assert details["jax"] == {"installed": "0.10.1", "pinned": "0.10.2"}


def test_versions_name_the_libtpu_build_of_the_chip():
    chip = compile_tier.v6e_device()   # compile-only, but its client is libtpu's
    _, _, details = doctor.check_versions(fake_host(devices=(chip,)))
    assert "TPU v6 lite" in details["libtpu_build"] and "cl/" in details["libtpu_build"]


def test_devices():
    assert doctor.check_devices(fake_host((V6E, V6E)))[:2] == (
        "PASS", "2 TPU device(s), kind 'TPU v6 lite' (TPU v6e)")
    status, summary, _ = doctor.check_devices(fake_host((V5E,)))
    assert status == "FAIL" and "'TPU v5 lite'" in summary and "expected TPU v6e" in summary
    status, summary, details = doctor.check_devices(fake_host((CPU,)))
    assert status == "SKIP" and summary.startswith("no TPU present: JAX sees")
    assert details["devices"][0]["platform"] == "cpu"


# -- the profiler trace --------------------------------------------------------------------------

@pytest.mark.parametrize("read", [from_bytes, chrome_trace])
def test_profiler_finds_the_names_tpu_timing_expects(read):
    status, summary, details = doctor.check_profiler(fake_host(profile=read(probe_trace())))
    assert status == "PASS", summary
    assert f"5 '{PROBE_MODULE}' events for 5 calls" in summary
    assert details["device_ms"] == pytest.approx(0.05)
    assert details["output_ok"] is True and details["kernel_events"] == ITERATIONS
    assert "found" not in details


def test_profiler_names_what_the_trace_holds_when_the_module_name_differs():
    # test_tpu_timing's trace: jit_workload and two other programs, no jit_doctor_probe.
    status, summary, details = doctor.check_profiler(fake_host(profile=from_bytes(
        several_modules())))
    assert status == "FAIL"
    assert f"0 '{PROBE_MODULE}' events on 'XLA Modules' for 5 traced calls" in summary
    assert "jit_workload(7)" in summary
    modules = [line for plane in details["found"] if plane["name"] == "/device:TPU:0"
               for line in plane["lines"] if line["name"] == "XLA Modules"][0]
    assert modules["names"][0] == {"name": "jit_workload(7)", "count": 8}
    assert {n["name"] for n in modules["names"]} >= {"jit_convert_element_type(3)", "jit_sum(9)"}


@pytest.mark.parametrize("plane,line,problem,shown", [
    ("/device:XLA_TPU:0", "XLA Modules", "no plane '/device:TPU:0'", "'/device:XLA_TPU:0'"),
    ("/device:TPU:0", "XLA Modules (TensorCore)", "plane '/device:TPU:0' has no line "
     "'XLA Modules'", "'XLA Modules (TensorCore)'"),
])
def test_profiler_names_the_planes_and_lines_present(plane, line, problem, shown):
    host = fake_host(profile=from_bytes(probe_trace(plane=plane, line=line)))
    status, summary, details = doctor.check_profiler(host)
    assert status == "FAIL" and problem in summary and shown in summary
    assert "/host:CPU" in [p["name"] for p in details["found"]]
    text = doctor.render_text({"version": 1, "hostname": "h", "generated_at": "t",
                               "tpu_present": True, "exit_status": 1, "checks": [
                                   doctor.run_check(host, "profiler", doctor.check_profiler)]})
    assert f"plane {plane!r}" in text and f"line {line!r}" in text
    assert f"{PROBE_MODULE}(4) x5" in text


def test_profiler_without_a_trace_file():
    status, summary, _ = doctor.check_profiler(fake_host(profile=None))
    assert status == "FAIL" and "no trace to inspect: no *.xplane.pb written" in summary


def test_profiler_with_fewer_events_than_calls():
    status, summary, _ = doctor.check_profiler(fake_host(profile=from_bytes(probe_trace(n=3))))
    assert status == "FAIL" and f"3 '{PROBE_MODULE}' events" in summary


# -- the baseline against its published time ----------------------------------------------------

def baseline_trace(duration_us):
    return from_bytes([HOST, ("/device:TPU:0", {"XLA Modules": calls(
        "jit_workload(2)", [duration_us] * ITERATIONS, gap_us=10 * duration_us)})])


def test_baseline_within_3x_of_the_published_time():
    host = fake_host(profile=baseline_trace(1.5 * 5321.8), clock=FakeClock())
    status, summary, details = doctor.check_baseline(host)
    assert doctor.published_ms("8p") == 5.3218
    # The fake clock makes every wall sample 1 ms, below the fake device time; the baseline
    # check decides on the device time against the published one only.
    assert status == "PASS", summary
    assert details["ratio"] == pytest.approx(1.5) and "ratio 1.5" in summary


def test_baseline_off_by_more_than_3x_fails():
    host = fake_host(profile=baseline_trace(MEASURED_US[0]))
    status, summary, details = doctor.check_baseline(host)
    assert status == "FAIL" and "off by more than 3x" in summary
    assert details["ratio"] == pytest.approx(0.51 / 5.3218, rel=1e-3)


def test_baseline_without_device_time_fails():
    status, summary, details = doctor.check_baseline(fake_host(profile=from_bytes([HOST])))
    assert status == "FAIL" and summary.startswith("no device time (trace has no '/device:TPU:0'")
    assert details["timing_kind"] == "tpu-wall-fallback"


# -- numerics with compare.py's rules ------------------------------------------------------------

def test_hand_tuned_numerics_pass():
    status, summary, details = doctor.check_numerics(fake_host(), "8p")
    assert status == "PASS", summary
    assert details["precision"] == "float64" and details["worst_ratio"] < 1.0


def test_wrong_numerics_say_how_far_off_the_worst_element_is():
    reference = hand_tuned.get("8p").workload

    def scaled(A, B):
        return (reference(A, B).astype(jnp.float32) * 1.25).astype(A.dtype)

    status, summary, details = doctor.check_numerics(fake_host(), "8p", kernel=scaled)
    assert status == "FAIL" and "fails compare.py's 'tolerance' rule" in summary
    assert "The worst error is between" in summary
    assert details["kind"] == "tolerance"


def test_the_default_is_the_7p_hand_tuned_kernel():
    assert doctor.NUMERICS_WORKLOAD == "7p" and "7p" in hand_tuned.ids()
    assert doctor.check_numerics(fake_host((CPU,)))[0] == "SKIP"


# -- the compile tier against the chip -----------------------------------------------------------

@pytest.fixture(scope="module")
def tier_outcome():
    """The deviceless tier's real verdict on the kernel, compiled once for the tests below
    (test_without_a_tpu_... runs it inside check_compile end to end)."""
    workload_id, fn = doctor._load_compile_kernel()
    return compile_tier.compile_for_workload(fn, registry.get(workload_id))


@pytest.fixture
def cached_tier(monkeypatch, tier_outcome):
    monkeypatch.setattr(compile_tier, "compile_for_workload", lambda fn, module: tier_outcome)
    return tier_outcome


def test_compile_tier_and_the_chip_both_reject_the_vmem_overflow(cached_tier):
    # The "chip" is libtpu's compile-only v6e device: the real compiler, not a real TPU.
    host = fake_host(devices=(compile_tier.v6e_device(),))
    check = doctor.run_check(host, "compile", doctor.check_compile)
    assert check["status"] == "PASS", check["summary"]
    for half in ("tier", "chip"):
        assert check["details"][half]["kind"] == "resource_exhausted:vmem"
        assert "E1001: CompileTimeScopedVmemOom" in check["details"][half]["message"]
    text = doctor.render_text({"version": 1, "hostname": "h", "generated_at": "t",
                               "tpu_present": True, "exit_status": 0, "checks": [check]})
    assert "tier: resource_exhausted resource_exhausted:vmem" in text
    assert "chip: resource_exhausted resource_exhausted:vmem" in text
    assert text.count("Scoped allocation with size 68.00M and limit 32.00M") == 2


def _accepts(fn, specs, device):
    return None


def _mosaic(fn, specs, device):
    raise RuntimeError("INTERNAL: Mosaic failed to compile TPU kernel: something else")


@pytest.mark.parametrize("chip_compile,says", [
    (_accepts, "but the chip compiled it"),
    (_mosaic, "the chip rejects it for another reason (compile_error, mosaic)"),
])
def test_compile_disagreement_fails(chip_compile, says, cached_tier):
    host = fake_host(devices=(compile_tier.v6e_device(),), compile=chip_compile)
    status, summary, details = doctor.check_compile(host)
    assert status == "FAIL" and says in summary
    assert "the deviceless tier rejects it (resource_exhausted" in summary


# -- the whole report ----------------------------------------------------------------------------

def test_one_failing_check_never_stops_the_others(monkeypatch):
    def boom(host):
        raise RuntimeError("the profiler exploded")

    monkeypatch.setitem(doctor.CHECKS, "boom", boom)
    report = doctor.run(fake_host(), ["boom", "versions", "devices"])
    assert [c["status"] for c in report["checks"]] == ["FAIL", "PASS", "PASS"]
    assert "the check raised RuntimeError: the profiler exploded" in report["checks"][0]["summary"]
    assert "the profiler exploded" in report["checks"][0]["details"]["error"]
    assert report["exit_status"] == doctor.EXIT_FAIL
    assert doctor.run(fake_host(), ["versions", "devices"])["exit_status"] == doctor.EXIT_OK


def test_devices_that_cannot_be_listed_are_a_fail_not_a_crash():
    def broken():
        raise RuntimeError("TPU initialization failed: open(/dev/vfio/0): Device busy")

    host = fake_host()
    host.devices = broken
    report = doctor.run(host, ["devices", "versions"])
    assert [c["status"] for c in report["checks"]] == ["FAIL", "PASS"]
    assert "Device busy" in report["checks"][0]["summary"]
    assert report["tpu_present"] is False and report["exit_status"] == doctor.EXIT_FAIL


def test_without_a_tpu_every_chip_check_skips_and_the_exit_status_says_so():
    """The real host: JAX sees only the CPU here. The compile tier half still runs."""
    out = io.StringIO()
    assert doctor.main(["--backend", "tpu"], stdout=out) == doctor.EXIT_NO_TPU
    text = out.getvalue()
    assert "NO TPU PRESENT" in text and "exit status 3: no TPU present" in text
    assert "[PASS] versions" in text
    for name in ("devices", "profiler", "baseline", "numerics", "compile"):
        assert f"[SKIP] {name:<9} no TPU present: JAX sees [CpuDevice(id=0)]" in text
    assert "the deviceless tier rejects it (resource_exhausted, resource_exhausted:vmem)" in text
    assert "E1001: CompileTimeScopedVmemOom" in text


def test_the_wrapper_script_prints_json():
    proc = subprocess.run([str(REPO / "scripts" / "tpu_doctor.sh"), "--check", "devices",
                           "--check", "versions", "--json"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == doctor.EXIT_NO_TPU, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert report["backend"] == "tpu" and report["tpu_present"] is False
    assert {c["name"]: c["status"] for c in report["checks"]} == {"devices": "SKIP",
                                                                  "versions": "PASS"}
