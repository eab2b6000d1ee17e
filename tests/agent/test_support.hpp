// Shared helpers for the agent tests: where the fake judge lives and which Python
// runs it.

#ifndef PALLADIUM_TESTS_AGENT_TEST_SUPPORT_HPP_
#define PALLADIUM_TESTS_AGENT_TEST_SUPPORT_HPP_

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace palladium::agent::testing {

// The venv's Python (has msgpack), else Debian's /usr/bin/python3.
inline std::string test_python() {
  std::string venv = std::string(PALLADIUM_SOURCE_DIR) + "/.venv/bin/python";
  if (::access(venv.c_str(), X_OK) == 0) return venv;
  return "/usr/bin/python3";
}

// PYTHONPATH under which `-m fake_judge` resolves.
inline std::string fake_home() { return std::string(PALLADIUM_SOURCE_DIR) + "/tests/agent"; }

inline constexpr const char* kFakeModule = "fake_judge";

// A correct 8p (GEMM) candidate for the tests that run the real judge. Gridded: an ungridded
// one is right on CPU but exhausts the TPU compiler at the full shapes (docs/verification.md 1a).
inline constexpr const char* kGemm =
    "import jax, jax.numpy as jnp\n"
    "from jax.experimental import pallas as pl\n"
    "def _k(a_ref, b_ref, o_ref):\n"
    "    o_ref[...] = jnp.dot(a_ref[...], b_ref[...],\n"
    "                         preferred_element_type=jnp.float32).astype(o_ref.dtype)\n"
    "def workload(a, b):\n"
    "    m, k = a.shape\n"
    "    n = b.shape[1]\n"
    "    return pl.pallas_call(_k, out_shape=jax.ShapeDtypeStruct((m, n), a.dtype),\n"
    "        grid=(m // 256, n // 256),\n"
    "        in_specs=[pl.BlockSpec((256, k), lambda i, j: (i, 0)),\n"
    "                  pl.BlockSpec((k, 256), lambda i, j: (0, j))],\n"
    "        out_specs=pl.BlockSpec((256, 256), lambda i, j: (i, j)))(a, b)\n";

// A fresh directory for one test's logs, removed by the caller (or left for debugging).
inline std::string make_temp_dir(const std::string& tag) {
  std::string templ = (std::filesystem::temp_directory_path() / ("palladium-" + tag + "-XXXXXX")).string();
  if (::mkdtemp(templ.data()) == nullptr) std::abort();
  return templ;
}

}  // namespace palladium::agent::testing

#endif  // PALLADIUM_TESTS_AGENT_TEST_SUPPORT_HPP_
