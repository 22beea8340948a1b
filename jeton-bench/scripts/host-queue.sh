#!/usr/bin/env bash
# Drain time of a long machine-wide queue: N `jeton run` waiters (default 200) behind a limit of
# L (default 3), each holding its permit HOLD seconds (default 0.05). A blocker holds all the
# permits while the waiters start and queue; the drain is timed from its release to the last
# waiter's exit, against the ideal N*HOLD/L. Also prints the resident memory of the waiters.
# Usage: jeton-bench/scripts/host-queue.sh [N] [L] [HOLD]
set -euo pipefail
n=${1:-200} limit=${2:-3} hold=${3:-0.05}
root=$(cd "$(dirname "$0")/../.." && pwd)
jeton="$root/jeton"
"$jeton" --version >/dev/null # builds it if needed
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go="$dir/go"
"$jeton" --dir "$dir" run --name q --permits "$limit" --weight "$limit" -- \
  sh -c "while [ ! -e $go ]; do sleep 0.01; done" &
blocker=$!
until "$jeton" --dir "$dir" status --name q --json 2>/dev/null | grep -q "\"held\": $limit"; do sleep 0.1; done
start=$(date +%s.%N)
pids=()
for _ in $(seq "$n"); do
  "$jeton" --dir "$dir" run --name q -- sleep "$hold" &
  pids+=($!)
done
until [ "$("$jeton" --dir "$dir" status --name q --json | grep -o '"pid"' | wc -l)" -ge $((n + 1)) ]; do
  sleep 0.5
done
queued=$(date +%s.%N)
rss=$(for p in "${pids[@]}"; do awk '/VmRSS/ {print $2}' "/proc/$p/status" 2>/dev/null; done \
  | sort -n | awk '{a[NR]=$1} END {print a[int(NR/2)+1] " kB median, " a[NR] " kB max"}')
touch "$go"
release=$(date +%s.%N)
wait "${pids[@]}"
done_at=$(date +%s.%N)
wait "$blocker"
ideal=$(echo "$n * $hold / $limit" | bc -l)
printf 'waiters: %d, limit %d, hold %ss\n' "$n" "$limit" "$hold"
printf 'all queued after:  %.1f s (JVM start-up)\n' "$(echo "$queued - $start" | bc -l)"
printf 'drain:             %.2f s (ideal %.2f s, ratio %.2f)\n' "$(echo "$done_at - $release" | bc -l)" \
  "$ideal" "$(echo "($done_at - $release) / $ideal" | bc -l)"
printf 'waiting jeton RSS: %s\n' "$rss"
