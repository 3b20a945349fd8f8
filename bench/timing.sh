# Helpers the whole-process benches source (bench/openvino_verify.sh, bench/hf_verify.sh,
# bench/hf_runner.sh). They expect $OUT, a scratch folder the caller owns.

# wall COMMAND... -> the command's wall seconds; its output goes to $OUT/log, shown (and the bench
# stopped) when it fails.
wall() {
  /usr/bin/time -f '%e' -o "$OUT/time" "$@" >"$OUT/log" 2>&1 || {
    cat "$OUT/log" >&2
    echo "failed: $*" >&2
    exit 1
  }
  tail -n 1 "$OUT/time"
}

# median: the median of the numbers on stdin, one per line.
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
