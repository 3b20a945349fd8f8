#!/usr/bin/env bash
# The HTML report at scale: a per-node failure over a 1,000-node model and a batch of 500 models,
# each page's size, the time convgate takes to write it, and the time headless Chromium takes to
# render it, beside the time Chromium takes to render an empty page (its own start-up: the
# baseline the page's cost is measured against).
#   chain1000.onnx     x [1, 64] -> 1,000 nodes (Mul by a constant, then Add of one, alternating)
#   chain1000_bad.onnx the same with the constant of node 700 changed by 1%: the culprit
#   summary.json       a batch of 500 models x 2 conversions (synthesized, verdicts mixed)
#
# Usage: bench/html_report.sh
# Environment: BUILD_DIR (default build). Needs chromium (./scripts/setup.sh installs it).
# Prints, per page: bytes, convgate's seconds, Chromium's render seconds, and the render's
# seconds over the empty page's.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
CONVGATE="$PWD/$BUILD_DIR/src/cli/convgate"
WORK=$(mktemp -d /tmp/convgate_html_bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

/usr/bin/python3 - "$WORK" <<'PYEOF'
import json, os, sys
import onnx
from onnx import helper, TensorProto

work = sys.argv[1]

def chain(path, bad):
    nodes, inits, prev = [], [], "x"
    for i in range(1000):
        out = "t%d" % i if i < 999 else "y"
        const = "c%d" % i
        value = (1.0005 if i % 2 == 0 else 0.001)
        if bad and i == 700:
            value *= 1.01
        inits.append(helper.make_tensor(const, TensorProto.FLOAT, [1], [value]))
        nodes.append(helper.make_node("Mul" if i % 2 == 0 else "Add", [prev, const], [out],
                                      name="node%d" % i))
        prev = out
    graph = helper.make_graph(nodes, "chain1000",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)

chain(os.path.join(work, "chain1000.onnx"), False)
chain(os.path.join(work, "chain1000_bad.onnx"), True)

jobs = []
for m in range(500):
    for conversion in ("to:fp16", "to:opset:17"):
        verdict = "pass" if (m * 7 + len(conversion)) % 11 else ("fail" if m % 2 else "error")
        jobs.append({"id": "model%03d-%s" % (m, conversion[3:]), "model_id": "org/model%03d" % m,
                     "conversion": conversion, "verdict": verdict, "command": "verify",
                     "error_category": "convert-failed" if verdict == "error" else "",
                     "result_dir": "batch/model%03d-%s" % (m, conversion[3:])})
os.makedirs(os.path.join(work, "batch"))
summary = {"manifest": "zoo.yaml", "entries": 1000, "jobs": jobs,
           "passed": sum(j["verdict"] == "pass" for j in jobs),
           "failed": sum(j["verdict"] == "fail" for j in jobs),
           "errors": sum(j["verdict"] == "error" for j in jobs),
           "errors_by_category": {"convert-failed": sum(j["verdict"] == "error" for j in jobs)},
           "exit_code": 3}
json.dump(summary, open(os.path.join(work, "batch", "summary.json"), "w"))
open(os.path.join(work, "empty.html"), "w").write("<!DOCTYPE html><html><body></body></html>\n")
PYEOF

seconds() {  # wall seconds of a command, its output discarded
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1 || true
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l
}

render() {  # Chromium's wall seconds to load and lay out a page, offline
  seconds unshare -n chromium --headless --no-sandbox --disable-gpu \
    --user-data-dir="$WORK/profile" --window-size=1200,1400 \
    --screenshot="$WORK/shot.png" "file://$1"
}

write_pernode=$(seconds "$CONVGATE" compare "$WORK/chain1000.onnx" "$WORK/chain1000_bad.onnx" \
  --per-node --html "$WORK/pernode.html")
write_batch=$(seconds "$CONVGATE" report "$WORK/batch" --html "$WORK/batch.html")
render "$WORK/empty.html" >/dev/null  # a first start warms the disk cache
empty=$(render "$WORK/empty.html")
pernode=$(render "$WORK/pernode.html")
batch=$(render "$WORK/batch.html")

printf '%-30s %10s %12s %12s %14s\n' page bytes "write s" "render s" "render/empty"
printf '%-30s %10s %12s %12.2f %14s\n' "empty page (baseline)" - - "$empty" 1.00
printf '%-30s %10d %12.2f %12.2f %14.2f\n' "per-node, 1,000 nodes" \
  "$(stat -c %s "$WORK/pernode.html")" "$write_pernode" "$pernode" "$(echo "$pernode / $empty" | bc -l)"
printf '%-30s %10d %12.2f %12.2f %14.2f\n' "batch, 500 models x 2" \
  "$(stat -c %s "$WORK/batch.html")" "$write_batch" "$batch" "$(echo "$batch / $empty" | bc -l)"
grep -c "culprit: node700" "$WORK/pernode.html" | sed 's/^/culprit marked at node700: /'
