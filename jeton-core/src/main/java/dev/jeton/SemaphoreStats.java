package dev.jeton;

import java.time.Duration;

/**
 * A snapshot of a semaphore's statistics, taken by {@link Semaphore#stats()} when statistics are
 * enabled ({@link Semaphore.Builder#statistics(boolean)}).
 *
 * <p>Counts are of requests, not permits: a request for 3 permits that is granted counts once in
 * {@code acquired}. Wait times are measured from the moment a request joins the queue to the moment
 * it is granted; requests granted at once wait zero.
 *
 * @param acquired requests granted, at once or after waiting
 * @param released granted requests given back: each {@link Permit} counts once, whatever its weight
 *     and however often it is released, so {@code acquired - released} is the number of {@code
 *     Permit}s held now
 * @param timedOut requests that gave up because their timeout expired
 * @param cancelled requests withdrawn by cancellation or interruption
 * @param rejected {@link Semaphore#tryAcquire(int)} calls that found no room
 * @param queueLength requests queued now
 * @param peakQueueLength the most requests ever queued at once
 * @param totalWait the sum of the waits of every granted request
 * @param maxWait the longest wait of any granted request
 * @param leaked granted requests whose {@link Permit} was collected without having been released,
 *     as leak detection reported them (see {@link LeakDetection}); they count in {@code acquired},
 *     not in {@code released}
 */
public record SemaphoreStats(
    long acquired,
    long released,
    long timedOut,
    long cancelled,
    long rejected,
    int queueLength,
    int peakQueueLength,
    Duration totalWait,
    Duration maxWait,
    long leaked) {}
