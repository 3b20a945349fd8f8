#!/usr/bin/env bash
# Makes the pipeline test fixtures once (scripts/pipeline_fixtures.py: tiny seeded models as
# TorchScript sources and ONNX targets, some deliberately wrong) and reuses them afterwards, in
#   ${CONVGATE_FIXTURE_CACHE:-$HOME/.cache/convgate-fixtures}/pipeline-<key>/
# where <key> hashes this script, the generator and the python3-torch version. The folder appears
# atomically (made in a temporary folder, then renamed). Never committed. Takes ~10 s.
#
# Prints the folder on the last line of stdout. Exit codes: 0 ready, 1 the generator failed.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
GENERATOR="$HERE/pipeline_fixtures.py"
# Debian's python: its python3-torch is the libtorch the torch backend links, so the TorchScript it
# saves loads there (a newer torch's archives need not).
PYTHON=/usr/bin/python3
CACHE="${CONVGATE_FIXTURE_CACHE:-$HOME/.cache/convgate-fixtures}"
STAGING=""

log() { echo "[pipeline-fixtures] $*" >&2; }

cache_key() {
  {
    sha256sum "$GENERATOR" "${BASH_SOURCE[0]}" | cut -d' ' -f1
    dpkg-query -W -f='${Version}' python3-torch 2>/dev/null || echo "not-installed"
  } | sha256sum | cut -c1-16
}

main() {
  local final
  final="$CACHE/pipeline-$(cache_key)"
  if [ -f "$final/.complete" ]; then
    echo "$final"
    return 0
  fi
  mkdir -p "$CACHE"
  STAGING="$(mktemp -d "$CACHE/.pipeline-staging.XXXXXX")"
  chmod 755 "$STAGING"
  trap 'rm -rf "$STAGING"' EXIT
  log "generating into $STAGING"
  "$PYTHON" "$GENERATOR" "$STAGING" >&2
  touch "$STAGING/.complete"
  if ! mv -T "$STAGING" "$final" 2>/dev/null; then
    [ -f "$final/.complete" ] || { log "cannot move $STAGING to $final"; return 1; }
  fi
  echo "$final"
}

main "$@"
