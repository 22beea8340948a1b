/**
 * A semaphore shared by every process of one machine: {@link dev.jeton.host.HostSemaphore}. Holding
 * a permit is holding OS file locks, so a process that dies frees its permits at once. And a rate
 * limiter shared the same way, {@link dev.jeton.host.HostRateLimiter}, whose waiters hold up no one
 * if they die or stop.
 */
@NullMarked
package dev.jeton.host;

import org.jspecify.annotations.NullMarked;
