#!/bin/bash
# `cmake --install` of the build into a fresh prefix, then a program outside the project
# (tests/install/consumer) built against find_package(convgate) from that prefix and run: a
# faithful conversion passes, a perturbed one fails, a conversion verified in-process passes. The
# installed binary runs from the prefix too.
#
#   tests/install/install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
BUILD=$(realpath "$1")
SOURCE=$(realpath "$2")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
PREFIX=$WORK/prefix
EXAMPLES=$BUILD/examples

fail() { echo "install_test: $*" >&2; exit 1; }

cmake --install "$BUILD" --prefix "$PREFIX" > "$WORK/install.log" ||
  fail "cmake --install failed: $(tail -5 "$WORK/install.log")"
for file in bin/convgate include/convgate/convgate.h lib/cmake/convgate/convgateConfig.cmake \
    lib/cmake/convgate/convgateConfigVersion.cmake share/convgate/runtime/hf_runner.py \
    share/convgate/runtime/openvino_runner.py; do
  [[ -e $PREFIX/$file ]] || fail "$file is missing from the installed prefix $PREFIX"
done
ls "$PREFIX"/lib/libconvgate.so* > /dev/null || fail "no libconvgate.so in $PREFIX/lib"
# Only the API's header is installed: the modules' headers are internals.
[[ ! -e $PREFIX/include/convgate/gate ]] || fail "internal headers were installed"

cmake -S "$SOURCE/tests/install/consumer" -B "$WORK/consumer" -DCMAKE_PREFIX_PATH="$PREFIX" \
  -DCMAKE_BUILD_TYPE=Release > "$WORK/configure.log" 2>&1 ||
  fail "configuring the consumer against $PREFIX failed: $(tail -20 "$WORK/configure.log")"
cmake --build "$WORK/consumer" > "$WORK/build.log" 2>&1 ||
  fail "building the consumer failed: $(tail -20 "$WORK/build.log")"
# Captured first: `ldd | grep -q` under pipefail fails when grep's early exit kills ldd (SIGPIPE).
libraries=$(ldd "$WORK/consumer/gate")
[[ $libraries == *"$PREFIX/lib/libconvgate.so"* ]] ||
  fail "the consumer does not use the installed libconvgate.so: $libraries"

expect() {  # expect CODE TEXT COMMAND...: exit code CODE and TEXT on stdout
  local code=$1 text=$2 out rc=0
  shift 2
  out=$("$@" 2>&1) || rc=$?
  [[ $rc -eq $code ]] || fail "'$*' exited $rc, expected $code:"$'\n'"$out"
  [[ $out == *"$text"* ]] || fail "'$*' printed no '$text':"$'\n'"$out"
  echo "ok: $* -> $rc ($text)"
}
expect 0 ": pass" "$WORK/consumer/gate" "$EXAMPLES/tinycnn.onnx" "$EXAMPLES/tinycnn_converted.onnx"
expect 1 ": fail" "$WORK/consumer/gate" "$EXAMPLES/tinycnn.onnx" "$EXAMPLES/tinycnn_perturbed.onnx"
expect 3 ": error" "$WORK/consumer/gate" "$EXAMPLES/tinycnn.onnx" "$WORK/missing.onnx"
CONVGATE_CACHE_DIR=$WORK/cache expect 0 ": pass" "$WORK/consumer/gate" "$EXAMPLES/tinycnn.onnx" --to fp16
expect 0 "PASS" "$PREFIX/bin/convgate" compare "$EXAMPLES/tinycnn.onnx" "$EXAMPLES/tinycnn_converted.onnx"
echo "install_test: passed ($PREFIX)"
