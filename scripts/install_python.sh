#!/usr/bin/env bash
# Installs the Python package (`import convgate`) into the project's venv: `pip install .` with
# scikit-build-core, reusing build/ (pyproject.toml), without build isolation (its build tools are
# the venv's pinned ones) and without dependencies (numpy is the venv's). Run after
# scripts/setup.sh; scripts/quickstart.sh runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${CONVGATE_DEPS:-$HOME/.cache/convgate-deps}/venv"
"$venv/bin/pip" install --quiet --no-build-isolation --no-deps . >&2
"$venv/bin/python" -c "import convgate; print('import convgate:', convgate.version(), 'in', '$venv')"
# pip configured build/ with its own temporary install prefix; the tool's install goes elsewhere.
cmake -S . -B build -DCMAKE_INSTALL_PREFIX=/usr/local >/dev/null
