#!/usr/bin/env bash
# Builds the unit tests with AddressSanitizer and UndefinedBehaviorSanitizer (the asan preset: gcc,
# Debug, -fsanitize=address,undefined -fno-sanitize-recover=undefined) and runs them: every
# module's GoogleTest binary and the fuzz corpus replays (ctest label unit). Only the unit test
# binaries are built (target unit_tests), not the CLI and its integration tests, which spend their
# time in ONNX Runtime and subprocesses the sanitizers do not look into.
#
# A sanitizer report fails the test that made it: the test preset "asan" (CMakePresets.json) sets
#   ASAN_OPTIONS  halt_on_error=1 abort_on_error=1: stop at the first report, with SIGABRT;
#                 detect_leaks=1 (LeakSanitizer at exit); detect_stack_use_after_return=1 and
#                 strict_string_checks=1 catch more than the defaults;
#   UBSAN_OPTIONS halt_on_error=1 abort_on_error=1 print_stacktrace=1 (the build already makes
#                 UBSan checks fatal; this keeps them fatal in anything built without that flag).
# Extra arguments go to ctest, e.g. -R io_test.
set -euo pipefail
cd "$(dirname "$0")/.."

export ORT_DISABLE_TELEMETRY=1
start=$(date +%s)
cmake --preset asan >/dev/null
cmake --build build-asan --target unit_tests
built=$(date +%s)
status=0
ctest --preset asan "$@" || status=$?
echo "asan: build $((built - start)) s, unit tests $(($(date +%s) - built)) s"
exit "$status"
