package dev.jeton;

import java.time.Duration;

/**
 * What a {@link RateLimiter} has done since it was built, if it keeps statistics: requests counted,
 * not weight.
 *
 * @param admitted requests that passed, at once or after waiting
 * @param timedOut requests that waited in vain until their timeout
 * @param cancelled requests withdrawn while waiting: cancelled, or interrupted
 * @param rejected tries that could not pass at once
 * @param queueLength requests waiting now
 * @param peakQueueLength the most requests that ever waited at once
 * @param totalWait the time all admitted requests spent waiting
 * @param maxWait the longest wait of an admitted request
 */
public record RateLimiterStats(
    long admitted,
    long timedOut,
    long cancelled,
    long rejected,
    int queueLength,
    int peakQueueLength,
    Duration totalWait,
    Duration maxWait) {}
