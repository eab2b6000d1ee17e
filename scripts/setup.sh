#!/usr/bin/env bash
# Installs what Palladium needs on Debian 12: the C++ toolchain packages and a
# Python venv (.venv) with the pinned JAX. Idempotent: when everything is in
# place it only checks and returns in about a second.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

apt_packages=(
  build-essential cmake ninja-build pkg-config
  libcaf-dev libzmq3-dev cppzmq-dev libmsgpack-cxx-dev libspdlog-dev
  libboost-dev libboost-program-options-dev libgtest-dev
  libsqlite3-dev sqlite3 libyaml-cpp-dev nlohmann-json3-dev
  libcurl4-openssl-dev libssl-dev
  bubblewrap libseccomp-dev iproute2
  chromium chromium-driver    # the dashboard's browser test (tests/dashboard/test_browser.py)
)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "[setup] installing Debian packages: ${missing[*]}"
  sudo_cmd=""; [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Python: JAX 0.10.2 is the newest release that supports Python 3.11 (0.11 needs 3.12).
# jax[tpu] brings libtpu 0.0.42.1 (684 MiB installed) for the deviceless TPU v6e compile.
req="$root/scripts/requirements.txt"
venv="$root/.venv"
stamp="$venv/.palladium-requirements"
python_bin="${PALLADIUM_BOOTSTRAP_PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
  echo "[setup] creating venv $venv with $($python_bin --version)"
  "$python_bin" -m venv "$venv"
fi
if ! cmp -s "$req" "$stamp" 2>/dev/null; then
  echo "[setup] installing Python packages from scripts/requirements.txt"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$req"
  cp "$req" "$stamp"
fi
