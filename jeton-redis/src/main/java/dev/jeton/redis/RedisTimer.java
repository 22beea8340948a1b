package dev.jeton.redis;

import dev.jeton.internal.engine.Timer;

/**
 * The timer of every Redis handle in the process: an instance of the engine's {@link Timer} with a
 * thread of its own, not {@link Timer#shared()}. The shared timer's tasks complete futures whose
 * callbacks may run on its thread, so a task there can wait behind a user's slow callback; none of
 * the tasks below may:
 *
 * <ul>
 *   <li>lease watches ({@link RedisLease}) and renewal rounds ({@link Leases#renewAll}): a late
 *       renewal loses a lease that was being renewed, and a late watch leaves its holder believing
 *       a lease that Redis has already expired;
 *   <li>polls ({@link Requests#pollAll}): they keep waiters' queue entries alive in Redis, and a
 *       late one lets them expire (the waiter is resubmitted at the back of the queue);
 *   <li>request timeouts ({@link Requests#submit}): a timeout also withdraws the request from the
 *       queue of every process, so a late one holds up the fleet, not only its caller.
 * </ul>
 *
 * <p>None of these tasks runs a user's code, so they hold up no one else: a request's completion is
 * handed off (see {@link Handoff}) and a lease's loss is told on the completion executor.
 */
final class RedisTimer {
  static final Timer TIMER = new Timer("jeton-redis-timer");

  private RedisTimer() {}
}
