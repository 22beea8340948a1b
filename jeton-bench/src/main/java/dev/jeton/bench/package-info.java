/**
 * JMH benchmarks and memory measurements comparing Jeton's {@link dev.jeton.Semaphore} with {@code
 * java.util.concurrent.Semaphore}, kotlinx.coroutines' {@code Semaphore} and asyncutil's {@code
 * FairAsyncSemaphore}. Each library is reached through one {@link dev.jeton.bench.Limiter}, so
 * every benchmark is written once. {@link dev.jeton.bench.RedisBenchmark} compares Jeton's {@code
 * RedisSemaphore} with Redisson's semaphores, each reached through a {@link
 * dev.jeton.bench.RedisFleet}. {@link dev.jeton.bench.MutexBenchmark} and {@link
 * dev.jeton.bench.ReadWriteLockBenchmark} compare Jeton's {@code Mutex} and {@code ReadWriteLock}
 * with the JDK's locks and kotlinx's {@code Mutex}, through {@link dev.jeton.bench.Locker} and
 * {@link dev.jeton.bench.RwLocker}; with {@code -p recordWaits=true} they time every acquire, and
 * the profiler {@link dev.jeton.bench.WaitTails} prints the waits' p99.9 and longest beside the
 * throughput (on virtual threads: {@code VirtualLockBenchmark}, src/main/java21). {@link
 * dev.jeton.bench.BarrierBenchmark} compares Jeton's {@code Barrier} with {@code CyclicBarrier} and
 * {@code Phaser}, through {@link dev.jeton.bench.Meeter}. {@link dev.jeton.bench.ChannelBenchmark}
 * compares Jeton's {@code Channel} with the JDK's blocking queues and kotlinx's {@code Channel}
 * (and, built on JDK 21 and newer, with jox's: src/main/java21).
 *
 * <p>Every benchmark forks with a fixed, pre-touched heap ({@code -Xms1g -Xmx1g
 * -XX:+AlwaysPreTouch}): on the development VM, heap pages touched for the first time were very
 * slow, and while the heap grew, allocating benchmarks ran up to 15 times slower for whole
 * iterations. Passing {@code -jvmArgsAppend} on the command line replaces these flags: repeat them.
 *
 * <p>{@link dev.jeton.bench.QueuedWaiterMemory}, {@link dev.jeton.bench.LockWaiterMemory}, {@link
 * dev.jeton.bench.BarrierWaiterMemory}, {@link dev.jeton.bench.ChannelMemory} and {@link
 * dev.jeton.bench.RedisRoundTrips} are plain programs, not benchmarks.
 */
@NullMarked
package dev.jeton.bench;

import org.jspecify.annotations.NullMarked;
