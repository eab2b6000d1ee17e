"""KernelBench level-2 workloads 18k-34k: each baseline agrees with an independent NumPy
re-derivation of the PyTorch module it ports, and the shortcuts the study found in some of them
(21k, 23k, 25k, 26k) hold.

The NumPy references follow the PyTorch definitions (NCHW/NCDHW layouts, OIHW weights,
ConvTranspose3d as a scatter of weighted inputs, training-mode BatchNorm, LayerNorm over the last
axis), not the JAX code, so a wrong transpose or axis in a module shows up here. Inputs are made
in float32 at CPU_CONFIG and compared in float64.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from workloads import registry

EPS = 1e-5


def inputs64(module, seed=1):
    made = module.create_inputs(module.CPU_CONFIG, seed=seed, dtype=jnp.float32)
    return made, [np.asarray(a, np.float64) for a in made]


def run32(module, made):
    return np.asarray(jax.jit(module.workload)(*made), np.float64)


# --- NumPy building blocks (PyTorch semantics) ---------------------------------------------

def matmul_channels(x, w):
    """[N,C_in,*S] x [C_in,C_out] -> [N,C_out,*S], through BLAS."""
    return np.moveaxis(np.tensordot(x, w, axes=([1], [0])), -1, 1)


def conv_valid(x, w):
    """PyTorch Conv2d/Conv3d, stride 1, no padding: x [N,C_in,*S], w [C_out,C_in,*K]."""
    spatial_k = w.shape[2:]
    out_shape = [s - k + 1 for s, k in zip(x.shape[2:], spatial_k)]
    out = np.zeros((x.shape[0], w.shape[0], *out_shape))
    for tap in np.ndindex(*spatial_k):
        window = x[(slice(None), slice(None)) + tuple(
            slice(t, t + o) for t, o in zip(tap, out_shape))]
        out += matmul_channels(window, w[(slice(None), slice(None)) + tap].T)
    return out


def conv_transpose3d(x, w, stride, padding):
    """PyTorch ConvTranspose3d: every input voxel adds w[c_in] * x at stride*i + tap - padding."""
    n, _, *spatial = x.shape
    k = w.shape[2]
    full = np.zeros((n, w.shape[1], *[(s - 1) * stride + k for s in spatial]))
    for tap in np.ndindex(k, k, k):
        contrib = matmul_channels(x, w[:, :, tap[0], tap[1], tap[2]])
        full[(slice(None), slice(None)) + tuple(
            slice(t, t + (s - 1) * stride + 1, stride) for t, s in zip(tap, spatial))] += contrib
    crop = tuple(slice(padding, size - padding) for size in full.shape[2:])
    return full[(slice(None), slice(None)) + crop]


def normalize(v, axes):
    mean = v.mean(axis=axes, keepdims=True)
    var = ((v - mean) ** 2).mean(axis=axes, keepdims=True)
    return (v - mean) / np.sqrt(var + EPS)


def gelu_tanh(v):
    return 0.5 * v * (1 + np.tanh(np.sqrt(2 / np.pi) * (v + 0.044715 * v ** 3)))


def softplus(v):
    return np.logaddexp(v, 0.0)


def mish(v):
    return v * np.tanh(softplus(v))


def logsumexp(v, axis):
    m = v.max(axis=axis, keepdims=True)
    return m + np.log(np.exp(v - m).sum(axis=axis, keepdims=True))


def channel(v, ndim):
    """A per-channel vector shaped to broadcast over [N,C,*spatial]."""
    return v.reshape((1, -1) + (1,) * (ndim - 2))


# --- References, one per workload, named by id ----------------------------------------------

def ref_18k(cfg, x, w, cb, b):
    return np.maximum(conv_valid(x, w) + channel(cb, 4), 0) + b


def ref_19k(cfg, x, w, b):
    return np.maximum((x @ w + b - cfg["subtract_value"]) * cfg["multiply_value"], 0)


def ref_20k(cfg, x, w, b):
    y = (x @ w + b) * cfg["multiplier"]
    return np.where(y >= 0, y, cfg["negative_slope"] * y)


def ref_21k(cfg, x, w):
    return (x @ w.T / 2).sum(axis=1, keepdims=True) * cfg["scaling_factor"]


def ref_22k(cfg, x, w, cb, g, b):
    y = normalize(conv_valid(x, w) + channel(cb, 4), (2, 3))
    return (y * channel(g, 4) + channel(b, 4)) / cfg["divide_by"]


def ref_23k(cfg, x, w, b):
    return (x @ w.T + b).sum(axis=1, keepdims=True)  # max/mean/logsumexp of one value


def ref_24k(cfg, x, w, b):
    y = (x @ w.T + b) * cfg["scale_factor"] * 2
    l = logsumexp(np.clip(y, cfg["clamp_min"], cfg["clamp_max"]), axis=1)
    return l * mish(l)


def ref_25k(cfg, x, w, cb, g, b):
    y = conv_valid(x, w) + channel(cb, 5)
    n, c = y.shape[:2]
    groups = cfg["num_groups"]
    y = normalize(y.reshape(n, groups, -1), (2,)).reshape(y.shape)
    return (y * channel(g, 5) + channel(b, 5)).mean(axis=(1, 2, 3, 4))


def ref_26k(cfg, x, y, w, b, g, ib):
    h = x @ w.T + b
    h = (h - h) / np.sqrt(0 + EPS) * g + ib  # InstanceNorm over a 1x1 map: mean = h, var = 0
    return (h + y) * y


def ref_27k(cfg, x, w, b):
    return mish(mish(x @ w + b))


def ref_28k(cfg, x, w, cb, g, b):
    y = conv_transpose3d(x, w, cfg["stride"], cfg["padding"]) + channel(cb, 5)
    y = normalize(y, (-1,)) * g + b  # nn.LayerNorm(out_channels) on NCDHW: over W
    return gelu_tanh(y) * cfg["scaling_factor"]


def ref_29k(cfg, x, w, b, g, gb):
    h = x @ w
    h = h / (1 + np.exp(-h)) + b
    m = h.shape[0]
    h = normalize(h.reshape(m, cfg["num_groups"], -1), (2,)).reshape(h.shape)
    return h * g + gb


def ref_30k(cfg, x, w, b):
    h = x @ w + b
    return h * cfg["scaling_factor"] + h


def ref_31k(cfg, x, w, b, g, bb):
    h = normalize(x @ w.T + b, (0,)) * g + bb
    return np.maximum(gelu_tanh(h), 0)


def ref_32k(cfg, x, w1, b1, w2, b2):
    h = 1 / (1 + np.exp(-(x @ w1.T + b1)))
    return logsumexp(h @ w2.T + b2, axis=1)[:, 0]


def ref_33k(cfg, x, w, b):
    return np.tanh(mish(conv_valid(x, w) + channel(b, 5)))


def ref_34k(cfg, x, w, cb, g, b):
    y = mish(conv_valid(x, w) + channel(cb, 4))
    return normalize(y, (0, 2, 3)) * channel(g, 4) + channel(b, 4)


REFERENCES = {name[len("ref_"):]: fn for name, fn in globals().items() if name.startswith("ref_")}
IDS = sorted(REFERENCES, key=lambda i: int(i[:-1]))


def test_every_module_18k_to_34k_exists():
    assert set(IDS) == {f"{n}k" for n in range(18, 35)}
    assert set(IDS) <= set(registry.ids())


@pytest.mark.parametrize("workload_id", IDS)
def test_baseline_matches_numpy_port_of_pytorch(workload_id):
    module = registry.get(workload_id)
    made, arrays = inputs64(module)
    got = run32(module, made)
    want = REFERENCES[workload_id](module.CPU_CONFIG, *arrays)
    assert got.shape == want.shape
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3 * scale)


def test_21k_is_a_scaled_matvec():
    module = registry.get("21k")
    made, (x, w) = inputs64(module)
    want = 0.75 * x @ w.sum(axis=0)
    np.testing.assert_allclose(run32(module, made)[:, 0], want, rtol=1e-3, atol=1e-2)


def test_25k_output_is_mean_of_beta_whatever_x():
    module = registry.get("25k")
    made, arrays = inputs64(module)
    beta = arrays[4]
    np.testing.assert_allclose(run32(module, made), beta.mean(), atol=1e-4)


def test_26k_output_ignores_x_and_the_matmul():
    module = registry.get("26k")
    made, (_, y, _, _, _, in_bias) = inputs64(module)
    np.testing.assert_allclose(run32(module, made), (in_bias + y) * y, rtol=1e-5, atol=1e-6)


def test_19k_cpu_config_keeps_some_outputs_above_the_relu():
    """At CPU_CONFIG (full in_features) a few outputs clear the subtract; most are zero."""
    module = registry.get("19k")
    out = np.asarray(jax.jit(module.workload)(*module.create_inputs(module.CPU_CONFIG)))
    positive = float((out > 0).mean())
    assert 0 < positive < 0.1


def test_28k_layer_norm_axis_is_the_output_width():
    """nn.LayerNorm(out_channels) on NCDHW normalises W, which only fits when W_out = C_out."""
    module = registry.get("28k")
    cfg = module.CPU_CONFIG
    w_out = (module.WIDTH - 1) * cfg["stride"] - 2 * cfg["padding"] + cfg["kernel_size"]
    assert w_out == cfg["out_channels"] == module.CONFIG["out_channels"]
