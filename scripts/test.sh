#!/usr/bin/env bash
# Sets up (see setup.sh --test) and runs every test: lint, type checks (mypy; tsc over the front
# end's JSDoc types, no emit), the core's layers (import-linter's contracts in pyproject.toml),
# the documentation site's strict build, front-end unit tests, pytest (formats, API under
# uvicorn, kernels, browser tests in headless chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh --test
.venv/bin/ruff check .
./scripts/typecheck.sh
node_modules/.bin/tsc --noEmit -p tsconfig.json
.venv/bin/lint-imports
# The documentation site (mkdocs.yml): a broken link or anchor, a page the nav names that is
# missing, or a generated reference that fails to build fails the run. Offline, into a temporary
# folder. (Not --quiet: it hides the warnings that strict mode counts, and passes.)
site=$(mktemp -d)
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict -d "$site"
rm -rf "$site"
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
