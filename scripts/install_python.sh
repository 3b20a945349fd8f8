#!/usr/bin/env bash
# Installs the Python package (`import convgate`) into the project's venv: `pip install .` with
# scikit-build-core, reusing build/ (pyproject.toml), without build isolation (its build tools are
# the venv's pinned ones) and without dependencies (numpy is the venv's). Run after
# scripts/setup.sh; scripts/quickstart.sh runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${CONVGATE_DEPS:-$HOME/.cache/convgate-deps}/venv"
# Debian's ninja and the venv's stable path (not the venv's own ninja or its versioned folder,
# which a new venv replaces): build/ stays usable for cmake --build after the venv changes.
"$venv/bin/pip" install --quiet --no-build-isolation --no-deps \
  --config-settings=cmake.define.CMAKE_MAKE_PROGRAM="$(command -v ninja)" \
  --config-settings=cmake.define.Python_EXECUTABLE="$venv/bin/python3" . >&2
"$venv/bin/python" -c "import convgate; print('import convgate:', convgate.version(), 'in', '$venv')"
# pip configured build/ with its own temporary install prefix; the tool's install goes elsewhere.
cmake -S . -B build -DCMAKE_INSTALL_PREFIX=/usr/local >/dev/null
