#!/usr/bin/env bash
# Type-checks projector_core/ (strictly), server/ and projector/ with mypy (configured in
# pyproject.toml).
# server/ installs as projector.server (setup.py's package_dir), a mapping mypy cannot follow
# through the editable install, so mypy reads a tree of links laid out as the wheel is.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
tree=build/typecheck
rm -rf "$tree"
mkdir -p "$tree/projector"
for entry in projector/*.py projector/py.typed projector/client; do ln -s "$root/$entry" "$tree/projector/"; done
ln -s "$root/server" "$tree/projector/server"
ln -s "$root/projector_core" "$tree/projector_core"
cd "$tree"
exec "$root/.venv/bin/mypy" --config-file "$root/pyproject.toml" --cache-dir "$root/build/mypy_cache" \
  -p projector -p projector_core
