#!/usr/bin/env bash
# Sets up (see setup.sh --test) and runs every test: lint, type checks (mypy; tsc over the front
# end's JSDoc types, no emit), the core's layers (import-linter's contracts in pyproject.toml),
# front-end unit tests, pytest (formats, API under uvicorn, kernels, browser tests in headless
# chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh --test
.venv/bin/ruff check .
./scripts/typecheck.sh
node_modules/.bin/tsc --noEmit -p tsconfig.json
.venv/bin/lint-imports
if compgen -G "frontend/tests/*.test.js" >/dev/null; then
  node --test --test-reporter=dot frontend/tests/
fi
# The speed gate (bench/speed_gate.py): a few minutes of benches, each figure a ratio to a
# reference measured beside it, failing at 2x its committed baseline. On a full run only (no
# pytest arguments), before the tests, on a machine not yet busy with them.
if [ $# -eq 0 ]; then
  .venv/bin/python bench/speed_gate.py
fi
# -rfEs lists failures, errors and every skip with its reason; with CI=true a skip fails (tests/ci_skips.py).
.venv/bin/python -m pytest -q -rfEs -p no:cacheprovider "$@"
