package dev.jeton;

import dev.jeton.internal.engine.WaitNode;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/**
 * The state of one key of a {@link KeyedSemaphore} while it has one: the key's {@link
 * FifoSemaphore}, its use count and the flags that keep it (see the overview in KeyedSemaphore,
 * invariants K1 to K3), and, with a global limit, the requests that hold the key's permits while
 * they wait for the global ones.
 */
final class KeyEntry {
  private static final int CLOSED = 1;
  private static final int LIMIT_CHANGED = 2;
  private static final int USE = 4;
  private static final int RETIRED = -1;
  private static final VarHandle STATE;

  static {
    try {
      STATE = MethodHandles.lookup().findVarHandle(KeyEntry.class, "state", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  final FifoSemaphore semaphore;
  final int configuredLimit;

  /**
   * Requests of this key holding its permits while they wait for the global limit, with their
   * weights. Only used with a global limit.
   */
  private final @Nullable Map<CompletableFuture<Permit>, Integer> waitingForGlobal;

  private volatile int state = USE; // made in use by its creator

  KeyEntry(String name, int limit, @Nullable Executor completionExecutor, boolean global) {
    this.semaphore =
        new FifoSemaphore(name, limit, Fairness.strictFifo(), completionExecutor, false);
    this.configuredLimit = limit;
    this.waitingForGlobal = global ? new ConcurrentHashMap<>(2) : null;
  }

  /**
   * The requests waiting for their key's permits, and those that have them and wait for the global
   * limit.
   */
  int queueLength() {
    Map<CompletableFuture<Permit>, Integer> waiting = waitingForGlobal;
    return semaphore.queueLength() + (waiting != null ? waiting.size() : 0);
  }

  boolean tryUse() {
    int s = state;
    while (s != RETIRED) {
      int seen = (int) STATE.compareAndExchange(this, s, s + USE);
      if (seen == s) {
        return true;
      }
      s = seen;
    }
    return false;
  }

  /** Ends a use; true if none is left. */
  boolean endUse() {
    return (int) STATE.getAndAdd(this, -USE) - USE < USE;
  }

  /**
   * Retires the entry if it has no use and, unless {@code evenIfKept}, no flag keeps it (see
   * KeyedSemaphore's overview: flags keep nothing once the keyed semaphore is closed).
   */
  boolean tryRetire(boolean evenIfKept) {
    if (!evenIfKept) {
      return STATE.compareAndSet(this, 0, RETIRED);
    }
    int s = state;
    while (s >= 0 && s < USE) {
      int seen = (int) STATE.compareAndExchange(this, s, RETIRED);
      if (seen == s) {
        return true;
      }
      s = seen;
    }
    return false;
  }

  /** Marks the key closed (invariant K3). The caller holds a use. */
  void markClosed() {
    setFlag(CLOSED, true);
  }

  /** Makes LIMIT_CHANGED match the semaphore's limit (invariant K2). The caller holds a use. */
  void syncLimitFlag() {
    for (; ; ) {
      boolean changed = semaphore.limit() != configuredLimit;
      setFlag(LIMIT_CHANGED, changed);
      if ((semaphore.limit() != configuredLimit) == changed) {
        return;
      }
    }
  }

  private void setFlag(int flag, boolean on) {
    int s = state;
    for (; ; ) {
      int next = on ? s | flag : s & ~flag;
      if (next == s) {
        return;
      }
      int seen = (int) STATE.compareAndExchange(this, s, next);
      if (seen == s) {
        return;
      }
      s = seen;
    }
  }

  /**
   * Records a request waiting for the global limit, and fails it at once if the key was closed or
   * its limit lowered below it before it was recorded. Whoever waits for it calls {@link
   * #stopWaitingForGlobal} once it is done, before the request's own caller hears of it.
   */
  void waitForGlobal(CompletableFuture<Permit> globalRequest, int permits) {
    Objects.requireNonNull(waitingForGlobal).put(globalRequest, permits);
    failIfRefused(globalRequest, permits);
  }

  /** The request waits for the global limit no more: it stops counting in queueLength(). */
  void stopWaitingForGlobal(CompletableFuture<Permit> globalRequest) {
    Objects.requireNonNull(waitingForGlobal).remove(globalRequest);
  }

  /** Fails the requests waiting for the global limit that the key now refuses. */
  void failRefusedGlobalWaits() {
    Map<CompletableFuture<Permit>, Integer> waiting = waitingForGlobal;
    if (waiting != null) {
      waiting.forEach(this::failIfRefused);
    }
  }

  private void failIfRefused(CompletableFuture<Permit> globalRequest, int permits) {
    if ((state & CLOSED) != 0) {
      globalRequest.completeExceptionally(semaphore.failure(WaitNode.FAILED_CLOSED, permits));
    } else if (permits > semaphore.limit()) {
      globalRequest.completeExceptionally(semaphore.failure(WaitNode.FAILED_LIMIT, permits));
    }
  }
}
