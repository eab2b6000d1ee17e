"""Baseline and hand-tuned reference times, measured on this host and cached on disk.

A speedup is only meaningful when the candidate and the XLA baseline (and the hand-tuned Pallas
reference, workloads/hand_tuned/) were timed on the same host, device kind, JAX version and
inputs. Timing the baseline again for every candidate wastes device time, so the times are
cached in one JSON file under a cache dir, keyed by every part that can change them:

    host, device_kind, jax_version, workload_id, variant ("baseline" | "hand_tuned"),
    shapes (the config's numeric items, seed and dtype: the inputs), source (sha256 of the
    timed module's text), session (optional: set it to force one measurement per run)

A lookup hits only an entry whose key parts are all equal; an entry for the same host, device,
workload, variant and shapes whose other parts differ (JAX upgraded, baseline edited, another
session) is superseded: removed when the new time is stored. Entries older than `max_age_s`
(if set) miss. Several judges on one host share the file: writes re-read and merge under an
flock and replace the file atomically.

    cache = BaselineCache(cache_dir, device_kind=..., jax_version=...)
    entry = cache.get_or_measure("8p", shapes, measure=lambda: time_on_tpu(...))
    reference_times(cache, "8p", timer, config=module.CONFIG)   # baseline + hand-tuned

`measure` / `timer` return a timing dict with at least `kernel_ms` (time_on_tpu's result, or a
wall-clock one on CPU); the entry keeps kernel_ms, min_ms, timing_kind, measured_at, and the
key parts.
"""
import contextlib
import fcntl
import hashlib
import json
import os
import socket
import tempfile
import time

FILE_NAME = "baseline_times.json"
FORMAT_VERSION = 1
VARIANTS = ("baseline", "hand_tuned")
# Parts that identify "the same measurement slot"; the rest decide whether it is still valid.
_SLOT_PARTS = ("host", "device_kind", "workload_id", "variant", "shapes")
_KEPT_TIMING = ("kernel_ms", "min_ms", "wall_ms", "timing_kind", "samples")


def source_hash(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def shapes_key(config, seed=0, dtype="bfloat16"):
    """Canonical text for the inputs: the config's numeric items, the seed and the dtype."""
    items = sorted((str(k), v) for k, v in config.items()
                   if isinstance(v, (int, float, bool)) and not isinstance(v, str))
    return json.dumps({"config": items, "seed": seed, "dtype": str(dtype)}, sort_keys=True,
                      separators=(",", ":"))


class BaselineCache:
    def __init__(self, cache_dir, *, host=None, device_kind=None, jax_version=None, session=None,
                 max_age_s=None, clock=time.time):
        if device_kind is None or jax_version is None:
            import jax
            device_kind = device_kind or jax.devices()[0].device_kind
            jax_version = jax_version or jax.__version__
        self.cache_dir = os.fspath(cache_dir)
        self.path = os.path.join(self.cache_dir, FILE_NAME)
        self.host = host or socket.gethostname()
        self.device_kind = device_kind
        self.jax_version = jax_version
        self.session = session
        self.max_age_s = max_age_s
        self.clock = clock

    # -- keys ----------------------------------------------------------------------------------

    def key_parts(self, workload_id, shapes, variant="baseline", source=None):
        assert variant in VARIANTS, variant
        return {"host": self.host, "device_kind": self.device_kind,
                "jax_version": self.jax_version, "workload_id": str(workload_id),
                "variant": variant, "shapes": shapes, "source": source, "session": self.session}

    @staticmethod
    def _key(parts):
        text = json.dumps(parts, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]

    # -- file ----------------------------------------------------------------------------------

    def _read(self):
        try:
            with open(self.path, encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("version") != FORMAT_VERSION:
            return {}  # another format: start over rather than misread it
        entries = data.get("entries")
        return entries if isinstance(entries, dict) else {}

    @contextlib.contextmanager
    def _locked(self):
        os.makedirs(self.cache_dir, exist_ok=True)
        with open(self.path + ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _write(self, entries):
        fd, tmp = tempfile.mkstemp(prefix=".baseline_times.", dir=self.cache_dir)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"version": FORMAT_VERSION, "entries": entries}, handle, indent=1,
                      sort_keys=True)
        os.replace(tmp, self.path)

    # -- API -----------------------------------------------------------------------------------

    def get(self, workload_id, shapes, variant="baseline", source=None):
        """The cached entry (a dict with kernel_ms, ...) or None."""
        parts = self.key_parts(workload_id, shapes, variant, source)
        entry = self._read().get(self._key(parts))
        if not entry or entry.get("key") != parts:
            return None
        if self.max_age_s is not None and self.clock() - entry.get("measured_at", 0) > self.max_age_s:
            return None
        return entry

    def put(self, workload_id, shapes, timing, variant="baseline", source=None):
        parts = self.key_parts(workload_id, shapes, variant, source)
        entry = {"key": parts, "measured_at": self.clock(),
                 **{k: timing[k] for k in _KEPT_TIMING if k in timing}}
        if entry.get("kernel_ms") is None:
            raise ValueError(f"timing has no kernel_ms: {timing!r}")
        with self._locked():
            entries = self._read()
            for key in [k for k, e in entries.items() if self._supersedes(parts, e)]:
                del entries[key]
            entries[self._key(parts)] = entry
            self._write(entries)
        return entry

    def get_or_measure(self, workload_id, shapes, measure, variant="baseline", source=None):
        """The cached entry, or `measure()` stored and returned. `cached` says which."""
        entry = self.get(workload_id, shapes, variant, source)
        if entry is not None:
            return {**entry, "cached": True}
        return {**self.put(workload_id, shapes, measure(), variant, source), "cached": False}

    def invalidate(self, workload_id=None):
        """Drop this host's entries (for one workload, or all). Returns how many went."""
        with self._locked():
            entries = self._read()
            doomed = [k for k, e in entries.items()
                      if e.get("key", {}).get("host") == self.host
                      and (workload_id is None or e["key"].get("workload_id") == workload_id)]
            for key in doomed:
                del entries[key]
            self._write(entries)
        return len(doomed)

    @staticmethod
    def _supersedes(parts, entry):
        old = entry.get("key") if isinstance(entry, dict) else None
        if not isinstance(old, dict):
            return True  # malformed: drop it
        return all(old.get(p) == parts[p] for p in _SLOT_PARTS) and old != parts


def reference_times(cache, workload_id, timer, *, config=None, seed=0, hand_tuned=True):
    """Baseline (and hand-tuned, when workloads/hand_tuned has one) times for a workload.

    timer(fn, args) -> timing dict with kernel_ms (time_on_tpu on a TPU). Both variants are
    timed on the same inputs (create_inputs(config, seed)), built only if something must be
    measured. Returns {"baseline": entry, "hand_tuned": entry or None}.
    """
    import inspect

    import jax

    from workloads import hand_tuned as hand_tuned_refs
    from workloads import registry

    module = registry.get(workload_id)
    config = module.CONFIG if config is None else config
    shapes = shapes_key(config, seed)
    inputs = []

    def args():
        if not inputs:
            inputs.append(module.create_inputs(config, seed))
        return inputs[0]

    static = registry.static_argnums(module)

    def measure(fn):
        return lambda: timer(jax.jit(fn, static_argnums=static), args())

    out = {"baseline": cache.get_or_measure(
        workload_id, shapes, measure(module.workload), "baseline",
        source_hash(inspect.getsource(module)))}
    out["hand_tuned"] = None
    if hand_tuned and workload_id in hand_tuned_refs.ids():
        ref = hand_tuned_refs.get(workload_id)
        out["hand_tuned"] = cache.get_or_measure(
            workload_id, shapes, measure(ref.workload), "hand_tuned",
            source_hash(hand_tuned_refs.source(workload_id)))
    return out
