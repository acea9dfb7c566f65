#!/usr/bin/env bash
# On a GPU host: waits until every GPU's memory.used (nvidia-smi, MiB) is at
# most what BEFORE gave ("used0 used1 ...", as `memory_back.sh --now` prints),
# for at most SECONDS (default 10); says how long it took, or fails showing
# both.
#   bash tests/gpu/memory_back.sh --now
#   bash tests/gpu/memory_back.sh "BEFORE" [SECONDS]
set -u
used() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | tr -d ' ' | paste -sd' '; }
if [ "${1:-}" = --now ]; then
  used
  exit
fi
before=${1:?usage: memory_back.sh --now | memory_back.sh "BEFORE" [SECONDS]}
limit=${2:-10}
read -ra b <<<"$before"
start=$(date +%s%N)
while :; do
  now=$(used) || { echo "FAIL: nvidia-smi --query-gpu=memory.used failed"; exit 1; }
  read -ra n <<<"$now"
  back=1
  [ ${#n[@]} -eq ${#b[@]} ] || back=0
  for i in "${!b[@]}"; do
    [ "${n[$i]:-0}" -le "${b[$i]}" ] || back=0
  done
  ms=$((($(date +%s%N) - start) / 1000000))
  [ $back -eq 1 ] && break
  [ $ms -lt $((limit * 1000)) ] || { echo "FAIL: GPU memory.used $now MiB after $limit s, $before MiB before"; exit 1; }
  sleep 0.1
done
echo "GPU memory.used back to at most its start ($before MiB) after $ms ms: $now MiB"
