#!/usr/bin/env bash
# Sets up a fresh machine: a virtual environment in .venv with the projector installed.
# With --test it also installs the test tools: Debian's chromium for the browser tests,
# PyTorch's CPU wheel (the GPU kernels' torch path is tested on the CPU), the test and docs
# extras (the site's strict build is one of the checks), and TypeScript from package-lock.json
# (npm ci: a check of the front end's JSDoc types only; the page has no build step).
set -euo pipefail
cd "$(dirname "$0")/.."

with_tests=false
[[ "${1:-}" == "--test" ]] && with_tests=true

if [[ ! -x .venv/bin/python ]]; then
  python3 -m venv .venv
fi
pip() { .venv/bin/python -m pip --disable-pip-version-check -q "$@"; }
pip install --upgrade pip

if $with_tests; then
  if ! command -v chromium >/dev/null 2>&1; then
    sudo_cmd=""; [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq chromium fonts-noto-cjk \
      fonts-noto-color-emoji >/dev/null
  fi
  # The pinned CPU wheel first: a bare "torch" requirement would fetch a multi-GB CUDA build.
  pip install torch==2.13.0
  pip install -e ".[test,docs]"
  npm ci --no-audit --no-fund --loglevel=error
else
  pip install -e .
fi
