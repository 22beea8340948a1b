#!/usr/bin/env bash
# Issue 13 benchmarks: the semaphore before and after the wait-queue engine, then the new locks
# and the barrier.
#
# Builds the benchmarks jar of the current tree (uncommitted changes included) and of commit
# $BEFORE (default 7078074, the last commit before the engine; built in a temporary git worktree,
# removed at exit; it has no Mutex nor ReadWriteLock). Then, Jeton only, before and after
# alternately: ContendedBenchmark at each of $THREADS, UncontendedBenchmark, and
# QueuedWaiterMemory; then, on the current tree only: MutexBenchmark (uncontended, and contended
# at each of $THREADS, each beside its floors from LockFloorBenchmark), ReadWriteLockBenchmark at
# each of $THREADS, LockWaiterMemory, BarrierBenchmark with each of $THREADS as the number of
# parties, and BarrierWaiterMemory.
# Each run's output goes to OUT_DIR/NAME.txt (JMH's JSON to OUT_DIR/NAME.json), and the result
# tables, with the read-write lock's wait tails, are gathered in OUT_DIR/summary.txt.
#
# Usage: jeton-bench/scripts/issue13-bench.sh OUT_DIR
# Knobs (environment, defaults in brackets):
#   FORKS [1], WI [2], I [3]   JMH forks, warm-up and measurement iterations
#   W [1s]                     warm-up iteration time
#   R [2s]                     measurement iteration time of the contended benchmarks and the
#                              barrier
#   RU [1s]                    measurement iteration time of the uncontended ones
#   THREADS ["2 4 8"]          thread counts of the contended benchmarks (the barrier's parties)
#   JMH_ARGS [""]              more JMH options for every run (e.g. "-p limit=1")
#   BEFORE [7078074]           the commit to compare with
#   JAVA [java]                the JVM that runs the benchmarks
#   MVN ["mvn -B -ntp -q"]     the build command (add -o to build offline)
#   SKIP_BUILD [unset]         if set, reuse OUT_DIR/bench-before.jar and bench-after.jar
# Smoke test: FORKS=1 WI=0 I=1 W=200ms R=200ms RU=200ms THREADS=2 issue13-bench.sh /tmp/i13
#
# The machine must be otherwise idle for the figures to mean anything (see BENCHMARKS.md).
set -euo pipefail
if [ $# -ne 1 ]; then
  sed -n '2,/^$/s/^# \{0,1\}//p' "$0" >&2
  exit 2
fi
FORKS=${FORKS:-1} WI=${WI:-2} I=${I:-3} W=${W:-1s} R=${R:-2s} RU=${RU:-1s}
THREADS=${THREADS:-2 4 8} JMH_ARGS=${JMH_ARGS:-} BEFORE=${BEFORE:-7078074}
JAVA=${JAVA:-java} MVN=${MVN:-mvn -B -ntp -q}

root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
before_jar="$out/bench-before.jar"
after_jar="$out/bench-after.jar"

# Builds the benchmarks jar of the tree $1 into $2. `package` only, in one reactor (-am): nothing is
# installed, so the local Maven repository keeps whatever jeton-core others build against.
build() {
  (cd "$1" && $MVN -pl jeton-bench -am package -DskipTests)
  cp "$1/jeton-bench/target/benchmarks.jar" "$2"
}

if [ -z "${SKIP_BUILD:-}" ]; then
  before_tree=$(mktemp -d)
  trap 'git -C "$root" worktree remove --force "$before_tree" 2>/dev/null || rm -rf "$before_tree"' EXIT
  echo "building $BEFORE (before) in $before_tree"
  git -C "$root" worktree add --detach "$before_tree" "$BEFORE" >/dev/null 2>&1
  build "$before_tree" "$before_jar"
  echo "building the current tree (after): $(git -C "$root" describe --always --dirty)"
  build "$root" "$after_jar"
  {
    echo "before: $(git -C "$root" rev-parse "$BEFORE")"
    echo "after:  $(git -C "$root" rev-parse HEAD)$(git -C "$root" diff --quiet HEAD || echo ' + uncommitted changes')"
  } >"$out/versions.txt"
fi

# jmh NAME JAR ARGS...: one JMH run, its output in NAME.txt and NAME.json.
jmh() {
  local name=$1 jar=$2
  shift 2
  echo "$(date +%T) $name"
  # shellcheck disable=SC2086 # JMH_ARGS is a list of words
  "$JAVA" -jar "$jar" "$@" -f "$FORKS" -wi "$WI" -i "$I" -w "$W" $JMH_ARGS \
    -rf json -rff "$out/$name.json" >"$out/$name.txt" 2>&1
}

# memory NAME JAR CLASS: one of the plain JOL programs.
memory() {
  echo "$(date +%T) $1"
  "$JAVA" -Djdk.attach.allowAttachSelf=true -cp "$2" "dev.jeton.bench.$3" >"$out/$1.txt" 2>&1
}

for t in $THREADS; do
  for v in before after; do
    jmh "contended-t$t-$v" "$out/bench-$v.jar" ContendedBenchmark -p impl=jeton -t "$t" -r "$R"
  done
done
for v in before after; do
  jmh "uncontended-$v" "$out/bench-$v.jar" UncontendedBenchmark -p impl=jeton -r "$RU"
done
for v in before after; do
  memory "semaphore-memory-$v" "$out/bench-$v.jar" QueuedWaiterMemory
done

jmh mutex-uncontended "$after_jar" \
  'MutexBenchmark.uncontended|LockFloorBenchmark.(constantCas|loadThenCas)' -r "$RU"
for t in $THREADS; do
  jmh "mutex-contended-t$t" "$after_jar" 'MutexBenchmark.contended|LockFloorBenchmark.*Handoff' \
    -t "$t" -r "$R"
done
for t in $THREADS; do
  # Timed, as it always was before issue 31, and its waits' p99.9 and longest in the table.
  jmh "rwlock-t$t" "$after_jar" ReadWriteLockBenchmark -t "$t" -r "$R" \
    -p recordWaits=true -prof dev.jeton.bench.WaitTails
done
memory lock-memory "$after_jar" LockWaiterMemory
for t in $THREADS; do
  jmh "barrier-t$t" "$after_jar" BarrierBenchmark -t "$t" -r "$R"
done
memory barrier-memory "$after_jar" BarrierWaiterMemory

# The result tables (the read-write lock's with its wait tails).
(
  cd "$out"
  for f in contended-t*.txt uncontended-*.txt mutex-*.txt rwlock-*.txt barrier-t*.txt; do
    [ -e "$f" ] || continue
    echo "== ${f%.txt}"
    sed -n '/^Benchmark /,$p' "$f"
    echo
  done
  for f in semaphore-memory-before.txt semaphore-memory-after.txt lock-memory.txt \
    barrier-memory.txt; do
    echo "== ${f%.txt}"
    sed -n '/^impl \|^lock \|^barrier /,/^$/p' "$f"
  done
) >"$out/summary.txt"
echo "done: $out/summary.txt"
