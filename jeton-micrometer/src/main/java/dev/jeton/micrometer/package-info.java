/**
 * Micrometer meters for Jeton: {@link dev.jeton.micrometer.SemaphoreMetrics} for any {@link
 * dev.jeton.Semaphore}, {@link dev.jeton.micrometer.AdmissionMetrics} for jeton-http's admission
 * control.
 */
@NullMarked
package dev.jeton.micrometer;

import org.jspecify.annotations.NullMarked;
