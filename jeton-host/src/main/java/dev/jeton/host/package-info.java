/**
 * A semaphore shared by every process of one machine: {@link dev.jeton.host.HostSemaphore}. Holding
 * a permit is holding OS file locks, so a process that dies frees its permits at once.
 */
@NullMarked
package dev.jeton.host;

import org.jspecify.annotations.NullMarked;
