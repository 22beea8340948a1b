# Markdown rows of BENCHMARKS.md's "Issue 31: hot locks" tables, from JMH's JSON results (-rf json)
# of the lock benchmarks run with -p recordWaits=false,true -prof dev.jeton.bench.WaitTails. One
# row per implementation and thread count, in the order of the results:
#   | threads | impl | ops/us untimed ± error | ops/us timed | p99.9 | longest |
# the throughput from the untimed run (recordWaits=false), the waits (in us) from the timed one;
# for the read-write lock the reader's p99.9 and longest, then the writer's. $only is a regular
# expression that picks the benchmarks of one table. Usage (from the repository root):
#   jq -r -s --arg only 'contended|mutex' -f jeton-bench/scripts/hot-locks-rows.jq hot-locks-*.json
#   jq -r -s --arg only 'acquireRelease|semaphore' -f jeton-bench/scripts/hot-locks-rows.jq hot-locks-*.json
#   jq -r -s --arg only 'readOrWrite' -f jeton-bench/scripts/hot-locks-rows.jq hot-locks-*.json
def r: if type != "number" then (. // "" | tostring) elif . >= 100 then (round | tostring) else (. * 1000 | round / 1000 | tostring) end;
def threads: if .params.virtualThreads then "\(.params.virtualThreads) virtual" else "\(.threads)" end;
def key: "\(.benchmark) \(.params.impl) \(threads)";
def tail($k): .secondaryMetrics["·\($k)"].score | r;
def tails: if (.benchmark | test("readOrWrite"))
  then "\(tail("read.wait.p99.9")) | \(tail("read.wait.max")) | \(tail("write.wait.p99.9")) | \(tail("write.wait.max"))"
  else "\(tail("wait.p99.9")) | \(tail("wait.max"))" end;
(add | map(select(.benchmark | test($only)))) as $all
| ($all | map(key)) as $keys
| range($keys | length) as $i | select(($keys | index($keys[$i])) == $i) | $keys[$i] as $k
| [$all[] | select(key == $k)] as $rows
| ($rows | map(select(.params.recordWaits == "false")) | first) as $untimed
| ($rows | map(select(.params.recordWaits == "true")) | first) as $timed
| "| \($rows[0] | threads) | \($rows[0].params.impl) | "
  + "\($untimed.primaryMetric.score | r) ± \($untimed.primaryMetric.scoreError | r) | "
  + "\($timed.primaryMetric.score | r) | \(if $timed then ($timed | tails) else "" end) |"
