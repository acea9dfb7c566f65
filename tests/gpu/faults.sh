#!/usr/bin/env bash
# On a host with 4 GPUs (for `make test-gpu`): a scenario of
# tests/mp/test_rank_faults on the CUDA backend, 4 ranks on GPUs 0-3, then
# the GPUs' memory. kill_coll V, kill_p2p V, kill_wait V: kill -9 of rank V
# during a stream of all-reduces (sends/receives, window waits); every other
# rank's synchronize fails naming it within 2 s (the program measures and
# prints the time); abort_thread: rank 0 aborts from a second thread while
# its all-reduce waits in a kernel, and that wait ends at once (ABORTED);
# abort: rank 1 aborts between two all-reduces. Every process exits, and
# within 10 s nvidia-smi shows each GPU's memory.used back at its value
# before the run (tests/gpu/memory_back.sh).
#   bash tests/gpu/faults.sh [BUILD] [SCENARIO [VICTIM]]   (default kill_coll 2)
set -u
B=${B:-${1:-build}}
scenario=${2:-kill_coll}
victim=${3:-}
case "$scenario" in kill_*) victim=${victim:-2} ;; esac
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "FAIL: $*"; exit 1; }

command -v nvidia-smi >/dev/null || fail "no nvidia-smi: run this on a GPU host"
ngpus=$(nvidia-smi -L | grep -c '^GPU ')
[ "$ngpus" -ge 4 ] || fail "the scenarios run 4 ranks, one GPU each; this host has $ngpus GPUs"
before=$(bash "$here/memory_back.sh" --now) || fail "nvidia-smi --query-gpu=memory.used failed"
echo "GPU memory.used before (MiB, GPU 0..$((ngpus - 1))): $before"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2086 # victim is empty or one number
SYMCOMM_BACKEND=cuda "$B/tests/mp/test_rank_faults" "$scenario" $victim 2>&1 | tee "$tmp/out"
[ "${PIPESTATUS[0]}" -eq 0 ] ||
  fail "test_rank_faults $scenario${victim:+ $victim} on the CUDA backend failed (its output is above)"
# "kill_coll: kill -9 of rank 2 noticed by every other rank within 0.412 s"
noticed=$(grep -Eo 'noticed by .*' "$tmp/out" | tail -n 1)
memory=$(bash "$here/memory_back.sh" "$before" 10) || fail "$memory"
echo "$memory"
echo "ok: $scenario${victim:+ $victim} on 4 GPUs: $noticed; GPU memory back"
