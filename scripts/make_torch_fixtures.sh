#!/usr/bin/env bash
# Exports the torchvision test fixtures once and reuses them afterwards:
#   resnet18.pt, resnet18.onnx, mobilenet_v2.pt, mobilenet_v2.onnx
# (seeded random weights and BatchNorm statistics, TorchScript and ONNX opset 17 with a dynamic
# batch axis; input "input" [N, 3, 224, 224], output "output" [N, 1000]), and
#   resnet18_bn_opset13.onnx
# (the same resnet18 at opset 13 with its BatchNormalization nodes kept: an older export to upgrade
# with --to opset:17, and normalization nodes to break or fold) into
#   ${CONVGATE_FIXTURE_CACHE:-$HOME/.cache/convgate-fixtures}/torchvision-<key>/
# where <key> hashes this script, runtime/torch_export.py and the python3-torch and
# python3-torchvision versions, so a change to any of them exports again. The folder appears
# atomically (exported into a temporary folder, then renamed), so an interrupted or concurrent run
# never leaves a half-written one; manifest.jsonl holds torch_export.py's record of each export.
# Never committed: the five files are ~170 MB.
#
# Prints the folder on the last line of stdout. Exit codes: 0 ready, 1 an export failed.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
EXPORT="$HERE/../runtime/torch_export.py"
PYTHON=/usr/bin/python3  # Debian's python: python3-torch, python3-torchvision
CACHE="${CONVGATE_FIXTURE_CACHE:-$HOME/.cache/convgate-fixtures}"
MODELS=(resnet18 mobilenet_v2)
SEED=0
OPSET=17

STAGING=""  # the temporary folder of an export in progress, removed on exit

log() { echo "[torch-fixtures] $*" >&2; }

# dpkg-query answers in milliseconds; importing torch to ask its version takes a second.
package_version() {
  dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo "not-installed"
}

cache_key() {
  {
    sha256sum "$EXPORT" "${BASH_SOURCE[0]}" | cut -d' ' -f1
    package_version python3-torch
    package_version python3-torchvision
    echo "${MODELS[*]} seed=$SEED opset=$OPSET"
  } | sha256sum | cut -c1-16
}

export_all() {
  local dir="$1" model
  for model in "${MODELS[@]}"; do
    log "exporting $model"
    "$PYTHON" "$EXPORT" --model "$model" --seed "$SEED" --opset "$OPSET" --dynamic-batch \
      --to-torchscript "$dir/$model.pt" --to-onnx "$dir/$model.onnx" >>"$dir/manifest.jsonl"
  done
  log "exporting resnet18 at opset 13 with BatchNormalization kept"
  "$PYTHON" "$EXPORT" --model resnet18 --seed "$SEED" --opset 13 --keep-batchnorm --dynamic-batch \
    --to-onnx "$dir/resnet18_bn_opset13.onnx" >>"$dir/manifest.jsonl"
}

main() {
  local final
  final="$CACHE/torchvision-$(cache_key)"
  if [ -f "$final/.complete" ]; then
    log "cached: $final"
    echo "$final"
    return 0
  fi
  mkdir -p "$CACHE"
  STAGING="$(mktemp -d "$CACHE/.torchvision-staging.XXXXXX")"
  chmod 755 "$STAGING"  # mktemp makes it private; the cache may be shared
  trap 'rm -rf "$STAGING"' EXIT
  local start=$SECONDS
  export_all "$STAGING"
  touch "$STAGING/.complete"
  # A concurrent run may have finished first: keep its folder (same key, same content).
  if ! mv -T "$STAGING" "$final" 2>/dev/null; then
    [ -f "$final/.complete" ] || { log "cannot move $STAGING to $final"; return 1; }
  fi
  log "exported in $((SECONDS - start)) s: $final"
  echo "$final"
}

main "$@"
