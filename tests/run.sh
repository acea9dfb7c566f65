#!/usr/bin/env bash
# Runs the test suite listed in tests/suite.txt against one build folder.
#   bash tests/run.sh BUILD [NAME-PATTERN]
# NAME-PATTERN is an extended regular expression matched anywhere in a test's
# name: a plain name picks the tests containing it, 'a|b' either.
# Each line of suite.txt is "name timeout-seconds command..."; $B in the command
# is the build folder. Every test runs as its own process group under a
# timeout, so a hang fails that test only. Logs go to BUILD/test-logs/.
set -u
B=${1:?usage: tests/run.sh BUILD [pattern]}
pattern=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
cd "$top"
logs="$B/test-logs"
mkdir -p "$logs"
export B
export SYMCOMM_TEST_TOP="$top"
# Sanitizer runs: fail on the first report, and keep leak checks on.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1}

pass=0
fail=0
failed=()
start_all=$(date +%s%N)
while read -r name limit cmd; do
  case "$name" in ''|'#'*) continue ;; esac
  if [ -n "$pattern" ] && ! [[ "$name" =~ $pattern ]]; then continue; fi
  log="$logs/$name.log"
  t0=$(date +%s%N)
  timeout -k 5 "$limit" bash -c "$cmd" >"$log" 2>&1
  rc=$?
  ms=$((($(date +%s%N) - t0) / 1000000))
  dt=$(printf '%d.%02d' $((ms / 1000)) $((ms % 1000 / 10)))
  if [ $rc -eq 0 ]; then
    pass=$((pass + 1))
    printf 'PASS %-40s %7s s\n' "$name" "$dt"
  else
    fail=$((fail + 1))
    failed+=("$name")
    why="exit $rc"
    [ $rc -eq 124 ] && why="timed out after ${limit} s"
    printf 'FAIL %-40s %7s s  (%s; log %s)\n' "$name" "$dt" "$why" "$log"
    tail -n 25 "$log" | sed 's/^/     | /'
  fi
done <"$here/suite.txt"
total=$((($(date +%s%N) - start_all) / 1000000000))
printf '%d passed, %d failed in %d s (%s)\n' "$pass" "$fail" "$total" "$B"
if [ $fail -ne 0 ]; then
  printf 'failed: %s\n' "${failed[*]}"
  exit 1
fi
[ $pass -gt 0 ] || { echo "no test matched '$pattern'"; exit 1; }
