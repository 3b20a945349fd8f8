#!/usr/bin/env bash
# Builds the TensorFlow SavedModel fixture (scripts/make_tf_fixtures.py: tiny_cnn/, a small CNN
# as a tf.Module SavedModel, with one sample and TensorFlow's outputs on it) once, into
#   ${CONVGATE_FIXTURE_CACHE:-$HOME/.cache/convgate-fixtures}/tf-<key>/
# where <key> hashes this script, make_tf_fixtures.py and the venv's TensorFlow version. The
# folder appears atomically (built in a staging folder, then renamed). Python: the project venv
# ($CONVGATE_VENV, default ${CONVGATE_DEPS:-~/.cache/convgate-deps}/venv), which carries
# tensorflow-cpu (scripts/python-requirements.txt). Never committed.
#
# Prints the folder on the last line of stdout. Exit codes: 0 ready, 1 the build failed (or the
# venv has no TensorFlow: run ./scripts/setup.sh).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUILD="$HERE/make_tf_fixtures.py"
VENV="${CONVGATE_VENV:-${CONVGATE_DEPS:-$HOME/.cache/convgate-deps}/venv}"
PYTHON="$VENV/bin/python"
CACHE="${CONVGATE_FIXTURE_CACHE:-$HOME/.cache/convgate-fixtures}"
STAGING=""

log() { echo "[tf-fixtures] $*" >&2; }

# The version from the dist-info folder's name: importing TensorFlow to ask takes seconds.
tf_version() {
  local info
  info="$(ls -d "$VENV"/lib/python3*/site-packages/tensorflow_cpu-*.dist-info 2>/dev/null | head -1)"
  [ -n "$info" ] || { log "no tensorflow-cpu in $VENV: run ./scripts/setup.sh"; return 1; }
  basename "$info" .dist-info
}

main() {
  local version final start
  version="$(tf_version)"
  final="$CACHE/tf-$( { sha256sum "$BUILD" "${BASH_SOURCE[0]}" | cut -d' ' -f1; echo "$version"; } |
    sha256sum | cut -c1-16)"
  if [ -f "$final/.complete" ]; then
    log "cached: $final"
    echo "$final"
    return 0
  fi
  mkdir -p "$CACHE"
  STAGING="$(mktemp -d "$CACHE/.tf-staging.XXXXXX")"
  chmod 755 "$STAGING"
  trap 'rm -rf "$STAGING"' EXIT
  start=$SECONDS
  log "building tiny_cnn with $version"
  "$PYTHON" "$BUILD" "$STAGING" >"$STAGING/manifest.jsonl"
  touch "$STAGING/.complete"
  if ! mv -T "$STAGING" "$final" 2>/dev/null; then
    [ -f "$final/.complete" ] || { log "cannot move $STAGING to $final"; return 1; }
  fi
  log "built in $((SECONDS - start)) s: $final"
  echo "$final"
}

main "$@"
