#!/usr/bin/env bash
# `npm test`: every tier. System packages first (installed when missing), then types, then
# unit, GPU-in-Node (Dawn on lavapipe) and browser e2e (Debian Chromium), in one Vitest run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/system-deps.sh
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
npx tsc --noEmit -p .
npx vitest run "$@"
