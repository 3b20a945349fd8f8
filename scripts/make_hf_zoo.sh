#!/usr/bin/env bash
# Builds the tiny offline Hugging Face model zoo once and reuses it afterwards:
#   bert, t5, gpt2, vit, clip, whisper, wav2vec2, llama, bert-cls, bert-ner
# (2 layers, hidden size 32, seeded random weights in safetensors, a tokenizer trained locally,
# preprocessor and generation configs; scripts/make_hf_zoo.py says what each folder holds) into
#   ${CONVGATE_FIXTURE_CACHE:-$HOME/.cache/convgate-fixtures}/hf-zoo-<key>/
# where <key> hashes this script, scripts/make_hf_zoo.py and the versions of the Python packages
# that make the bytes (transformers, tokenizers, torch, safetensors in the project's venv), so a
# change to any of them builds again. The folder appears atomically (built into a temporary folder,
# then renamed), so an interrupted or concurrent run never leaves a half-written one;
# manifest.json lists the models, their optimum export task and their deterministic input.
# Never committed. The Hugging Face Hub is never contacted (HF_HUB_OFFLINE=1).
#
# Python: $CONVGATE_VENV/bin/python, CONVGATE_VENV defaulting to
# ${CONVGATE_DEPS:-$HOME/.cache/convgate-deps}/venv (made by scripts/setup.sh).
#
# Prints the folder on the last line of stdout. Exit codes: 0 ready, 1 the build failed.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUILD="$HERE/make_hf_zoo.py"
VENV="${CONVGATE_VENV:-${CONVGATE_DEPS:-$HOME/.cache/convgate-deps}/venv}"
PYTHON="$VENV/bin/python"
CACHE="${CONVGATE_FIXTURE_CACHE:-$HOME/.cache/convgate-fixtures}"
SEED=0

STAGING=""  # the temporary folder of a build in progress, removed on exit

log() { echo "[hf-zoo] $*" >&2; }

# The installed distributions' metadata folder names carry their versions: listing them takes
# milliseconds, importing torch to ask takes seconds.
package_versions() {
  local site
  for site in "$VENV"/lib/python3*/site-packages; do
    (cd "$site" && ls -d transformers-*.dist-info tokenizers-*.dist-info torch-*.dist-info \
      safetensors-*.dist-info 2>/dev/null) || true
  done
}

cache_key() {
  {
    sha256sum "$BUILD" "${BASH_SOURCE[0]}" | cut -d' ' -f1
    package_versions
    echo "seed=$SEED"
  } | sha256sum | cut -c1-16
}

main() {
  if [ ! -x "$PYTHON" ]; then
    log "no Python venv at $VENV (run scripts/setup.sh, or set CONVGATE_VENV)"
    return 1
  fi
  local final
  final="$CACHE/hf-zoo-$(cache_key)"
  if [ -f "$final/.complete" ]; then
    log "cached: $final"
    echo "$final"
    return 0
  fi
  mkdir -p "$CACHE"
  STAGING="$(mktemp -d "$CACHE/.hf-zoo-staging.XXXXXX")"
  chmod 755 "$STAGING"  # mktemp makes it private; the cache may be shared
  trap 'rm -rf "$STAGING"' EXIT
  local start=$SECONDS
  log "building into $STAGING"
  if ! HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 "$PYTHON" "$BUILD" --out "$STAGING/zoo" \
      --seed "$SEED" >"$STAGING/build.json"; then
    log "building the zoo failed (make_hf_zoo.py's message above)"
    return 1
  fi
  mv "$STAGING/zoo"/* "$STAGING/"
  rmdir "$STAGING/zoo"
  touch "$STAGING/.complete"
  # A concurrent run may have finished first: keep its folder (same key, same content).
  if ! mv -T "$STAGING" "$final" 2>/dev/null; then
    [ -f "$final/.complete" ] || { log "cannot move $STAGING to $final"; return 1; }
  fi
  log "built in $((SECONDS - start)) s: $final"
  echo "$final"
}

main "$@"
