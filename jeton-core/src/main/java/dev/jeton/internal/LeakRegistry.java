package dev.jeton.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * Where the records of watched grants live until their grant is released or collected, and the
 * thread that reports the ones collected unreleased.
 *
 * <p>A phantom reference is enqueued only if it is itself reachable when its referent is found
 * unreachable, so each record needs a home that is not its grant: a slot here. Adding and removing
 * are on the acquire and release paths of every watched grant (every grant, at {@code paranoid}),
 * so neither may cost more than a few nanoseconds:
 *
 * <ul>
 *   <li>The slots are striped by thread id: a thread adds to its own stripe, under that stripe's
 *       spin lock, which another thread rarely holds. It takes the first empty slot from a cursor
 *       on, and doubles the stripe's array when the next 64 are all taken.
 *   <li>Removing empties the record's slot with one compare-and-set, without the lock: only a lock
 *       holder writes a record into an empty slot, and only the record's own release (or the
 *       reporter) empties it.
 *   <li>A removal that races with the array's doubling may empty the old array after the copy, and
 *       leave the record in the new one. It is harmless: the record is marked forgotten first, and
 *       when its grant is collected the reporter gets it, finds it forgotten, and empties its slot
 *       then (by compare-and-set, so that it never empties another record's).
 * </ul>
 *
 * <p>The reporter, one daemon thread for the JVM, waits on the reference queue and hands each
 * record it gets to its tracker. While any primitive watches at {@code paranoid}, it also wakes
 * once a second to refresh a coarse clock, which stamps the records that take no stack: reading
 * {@code System.nanoTime()} costs more than the rest of a record on some machines (25 ns here).
 *
 * <p>A slot is named by one negative {@code int}, its code: the stripe's index in the low {@link
 * #STRIPE_BITS} bits, the index in the stripe's array above them, the whole negated. A watched
 * {@link ReleaseOnce} keeps the code in its flag (see there), so that it needs no field for its
 * record; the code stays valid when the array doubles, which keeps every index. A stripe holds at
 * most {@link #MAX_SLOTS} records: a grant made when its stripe is full is not watched.
 *
 * <p>Invariants: a record is in at most one slot but for the stale copy above, which only the
 * reporter removes; {@code Stripe.slots} and {@code Stripe.cursor} change only under the stripe's
 * lock; a slot goes from null to a record only under the lock.
 */
final class LeakRegistry {
  private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(LeakRecord[].class);
  private static final long TICK_MILLIS = 1000;

  /** How many low bits of a slot code name the stripe; there are at most 2^STRIPE_BITS stripes. */
  private static final int STRIPE_BITS = 8;

  /** How many records a stripe holds at most, so that every slot has a code. */
  static final int MAX_SLOTS = 1 << (31 - STRIPE_BITS);

  /** The registry, made (and its reporter started) when the first primitive watches. */
  private static final class Holder {
    static final LeakRegistry INSTANCE = new LeakRegistry();
  }

  static LeakRegistry instance() {
    return Holder.INSTANCE;
  }

  final ReferenceQueue<Object> collected = new ReferenceQueue<>();
  private final Stripe[] stripes;
  private final @Nullable Thread reporter; // null: a test's registry, which reports nothing
  private volatile long coarseNanos = System.nanoTime();
  private volatile boolean ticking;

  private LeakRegistry() {
    this(defaultStripes(), 16, true);
  }

  /**
   * A registry of {@code stripeCount} stripes (a power of two, at most 2^STRIPE_BITS) of {@code
   * initialSlots} slots each, with its reporter thread if {@code reporting}: the JVM's has one; the
   * tests' registries have none, and small arrays, to see them double.
   */
  LeakRegistry(int stripeCount, int initialSlots, boolean reporting) {
    stripes = new Stripe[stripeCount];
    for (int i = 0; i < stripeCount; i++) {
      stripes[i] = new Stripe(i, initialSlots);
    }
    reporter = reporting ? new Thread(this::report, "jeton-leak-reporter") : null;
    if (reporter != null) {
      reporter.setDaemon(true);
      reporter.start();
    }
  }

  private static int defaultStripes() {
    int wanted = Math.min(1 << STRIPE_BITS, 4 * Runtime.getRuntime().availableProcessors());
    return Integer.highestOneBit(Math.max(1, wanted - 1)) << 1;
  }

  /** The clock of records that take no stack: at most a second behind while paranoid watches. */
  long coarseNanos() {
    return coarseNanos;
  }

  /** A primitive watches every grant: keep the coarse clock going from now on. */
  void startTicking() {
    if (!ticking) {
      coarseNanos = System.nanoTime();
      ticking = true;
      Thread thread = reporter;
      if (thread != null) {
        thread.interrupt(); // out of an untimed wait
      }
    }
  }

  /** Keeps {@code record} until it is forgotten or reported: its slot's code, or 0 if no room. */
  int add(LeakRecord record) {
    @SuppressWarnings("deprecation") // Thread.threadId() is JDK 19+; this is the same number
    long id = Thread.currentThread().getId();
    Stripe stripe = stripes[(int) id & (stripes.length - 1)];
    stripe.lock();
    try {
      return stripe.place(record) ? code(stripe, record.slot) : 0;
    } finally {
      stripe.unlock();
    }
  }

  private static int code(Stripe stripe, int slot) {
    return -1 - ((slot << STRIPE_BITS) | stripe.index);
  }

  /**
   * {@code grant}, whose record is in the slot of {@code code}, was released: forgets the record.
   * Called once per grant, by the call that ended it, so the slot still holds its record.
   */
  void forget(int code, Object grant) {
    int bits = -1 - code;
    Stripe stripe = stripes[bits & ((1 << STRIPE_BITS) - 1)];
    LeakRecord record = (LeakRecord) SLOT.getAcquire(stripe.slots, bits >>> STRIPE_BITS);
    if (record != null) {
      LeakRecord.forgetOnce(record, grant);
    }
  }

  /**
   * Empties the slot of {@code record}, whose {@link ReleaseOnce} grant was just released, once.
   * The slot holds the record: only the record's one release, or the reporter once its grant is
   * collected, ever empties it, and only a lock holder fills an empty slot. So a release store
   * does, where {@link #removeIfHeld} needs a compare-and-set; if the array doubled meanwhile, the
   * stale copy is the reporter's (see above).
   */
  static void removeReleased(LeakRecord record) {
    Stripe stripe = record.stripe;
    if (stripe != null) {
      LeakRecord[] slots = stripe.slots;
      if (SLOT.getAcquire(slots, record.slot) == record) {
        SLOT.setRelease(slots, record.slot, null);
      }
    }
  }

  /**
   * Empties {@code record}'s slot if it still holds it: by compare-and-set, as the slot may have
   * been emptied and taken by another record since (a stale copy; a guard unlocked twice).
   */
  static void removeIfHeld(LeakRecord record) {
    Stripe stripe = record.stripe;
    if (stripe != null) {
      SLOT.compareAndSet(stripe.slots, record.slot, record, null);
    }
  }

  /** The stripe of index {@code index}; for tests, which decode slot codes themselves. */
  Stripe stripeAt(int index) {
    return stripes[index];
  }

  /** How many slots hold a record not forgotten: the grants watched and held now. For tests. */
  int watchedNow() {
    int count = 0;
    for (Stripe stripe : stripes) {
      LeakRecord[] slots = stripe.slots;
      for (int i = 0; i < slots.length; i++) {
        LeakRecord record = (LeakRecord) SLOT.getAcquire(slots, i);
        if (record != null && !record.isForgotten()) {
          count++;
        }
      }
    }
    return count;
  }

  private void report() {
    while (true) {
      try {
        Reference<?> ref = ticking ? collected.remove(TICK_MILLIS) : collected.remove();
        coarseNanos = System.nanoTime();
        while (ref != null) {
          LeakRecord record = (LeakRecord) ref;
          removeIfHeld(record); // a stale copy (see above), or a leak
          if (!record.isForgotten()) {
            record.tracker.leaked(record);
          }
          ref = collected.poll();
        }
      } catch (InterruptedException e) {
        // startTicking: wait again, with a timeout now
      } catch (RuntimeException e) {
        // LeakTracker.leaked catches what its logger and its give-back throw; this is the last
        // guard, so that one record can never end the reporting of the rest.
      }
    }
  }

  /** One thread-id stripe of slots. */
  static final class Stripe {
    private static final VarHandle LOCK;

    static {
      try {
        LOCK = MethodHandles.lookup().findVarHandle(Stripe.class, "lock", int.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    /** How many slots an insertion looks at before it doubles the array. */
    private static final int SCAN = 64;

    @SuppressWarnings("unused") // through LOCK
    private volatile int lock;

    final int index;
    volatile LeakRecord[] slots;
    private int cursor;

    Stripe(int index, int initialSlots) {
      this.index = index;
      this.slots = new LeakRecord[initialSlots];
    }

    void lock() {
      int spins = 0;
      while (!LOCK.compareAndSet(this, 0, 1)) {
        if (++spins < 64) {
          Thread.onSpinWait();
        } else {
          Thread.yield(); // the holder may be descheduled; its section is a few stores
        }
      }
    }

    void unlock() {
      LOCK.setRelease(this, 0);
    }

    /**
     * Puts {@code record} in an empty slot among the next {@link #SCAN} from the cursor, or doubles
     * the array if none of them is (so that a crowded stripe never costs a long scan). Under the
     * lock. False if the array is full at {@link #MAX_SLOTS}.
     */
    boolean place(LeakRecord record) {
      LeakRecord[] current = slots;
      int length = current.length;
      int i = cursor;
      for (int k = Math.min(length, SCAN); k > 0; k--) {
        if (SLOT.getAcquire(current, i) == null) {
          put(current, i, record);
          return true;
        }
        i = i + 1 == length ? 0 : i + 1;
      }
      if (length >= MAX_SLOTS) {
        return false;
      }
      LeakRecord[] doubled = Arrays.copyOf(current, 2 * length);
      slots = doubled;
      put(doubled, length, record);
      return true;
    }

    private void put(LeakRecord[] array, int i, LeakRecord record) {
      record.stripe = this;
      record.slot = i;
      SLOT.setRelease(array, i, record);
      cursor = i + 1 == array.length ? 0 : i + 1;
    }
  }
}
