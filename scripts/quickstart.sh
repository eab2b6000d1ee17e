#!/usr/bin/env bash
# The first of the README's two commands: installs what is missing, builds, and
# runs the embedded default search (no TPU, no API key needed).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh"
cd "$root"
exec "$root/build/palladium" run configs/quickstart.yaml "$@"
