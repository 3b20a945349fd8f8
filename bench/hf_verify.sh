#!/usr/bin/env bash
# A whole `convgate verify` of a Hugging Face model (Path A: optimum-intel export to OpenVINO, the
# export run end to end, compared with the PyTorch original) against what the OpenVINO
# verify-conversion document has a user do: `optimum-cli export openvino` (same task and weight
# format as convgate's export, TensorFlow kept out as convgate's scripts do) and then one Python
# process doing the document's checks (bench/hf_verify.py: load the IR, tokenize "Hello", generate,
# decode, fail on a blank text, compare the token ids with PyTorch's greedy generation).
# Whole processes, wall seconds, median of REPEATS, alternating the two; convgate's conversion
# cache is off (--no-cache), so every run exports.
#
# Usage: bench/hf_verify.sh
# Environment: BUILD_DIR (default build), REPEATS (default 3), MODEL (default: the tiny zoo's gpt2,
# made by scripts/make_hf_zoo.sh), NEW_TOKENS (default 8).
#
# Prints the median seconds of the export, of the Python check, of their sum, of convgate's verify,
# and convgate / (export + check).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
REPEATS="${REPEATS:-3}"
NEW_TOKENS="${NEW_TOKENS:-8}"
CONVGATE="$BUILD_DIR/src/cli/convgate"
VENV="${CONVGATE_DEPS:-$HOME/.cache/convgate-deps}/venv"
MODEL="${MODEL:-$("$ROOT/scripts/make_hf_zoo.sh" | tail -n 1)/gpt2}"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

# shellcheck source=bench/timing.sh
source "$ROOT/bench/timing.sh"

export_s=() check_s=() sum_s=() verify_s=()
for _ in $(seq "$REPEATS"); do
  rm -rf "$OUT/ov" "$OUT/cg" "$OUT/result"
  e=$(wall env USE_TF=0 "$VENV/bin/optimum-cli" export openvino --model "$MODEL" \
    --task text-generation-with-past --weight-format fp16 "$OUT/ov")
  c=$(wall "$VENV/bin/python" "$ROOT/bench/hf_verify.py" "$MODEL" "$OUT/ov" "$NEW_TOKENS")
  v=$(wall "$CONVGATE" verify "$MODEL" --to optimum-openvino --no-cache -o "$OUT/cg" \
    --new-tokens "$NEW_TOKENS" --out "$OUT/result")
  export_s+=("$e") check_s+=("$c") sum_s+=("$(echo "$e + $c" | bc -l)") verify_s+=("$v")
done
e=$(printf '%s\n' "${export_s[@]}" | median)
c=$(printf '%s\n' "${check_s[@]}" | median)
s=$(printf '%s\n' "${sum_s[@]}" | median)
v=$(printf '%s\n' "${verify_s[@]}" | median)
printf '%-28s %8s %8s %8s %8s %8s\n' model export check sum verify ratio
printf '%-28s %8.2f %8.2f %8.2f %8.2f %8.2f\n' "$(basename "$MODEL")" "$e" "$c" "$s" "$v" \
  "$(echo "$v / $s" | bc -l)"
