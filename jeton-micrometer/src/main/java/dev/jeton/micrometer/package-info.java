/**
 * Micrometer meters for Jeton: {@link dev.jeton.micrometer.SemaphoreMetrics} for any {@link
 * dev.jeton.Semaphore}.
 */
@NullMarked
package dev.jeton.micrometer;

import org.jspecify.annotations.NullMarked;
