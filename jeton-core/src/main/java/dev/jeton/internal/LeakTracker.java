package dev.jeton.internal;

import dev.jeton.LeakDetection;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * One primitive's watch over its grants (see {@link LeakDetection}): decides which grants are
 * watched, makes their records, and reports the ones collected unreleased.
 *
 * <p>A primitive holds a tracker only if it watches at all ({@link #of} is null at {@code off}),
 * and for each grant it makes asks {@link #watches()} (one countdown, or always at {@code
 * paranoid}) before anything else, so that an unwatched grant costs a load, a decrement and a
 * store. A watched grant gets a {@link LeakRecord}, kept in the {@link LeakRegistry} until the
 * grant is released ({@link LeakRecord#forget}) or collected; a collected one that was never
 * released is reported here, once, on the registry's reporter thread.
 *
 * <p>The countdown is a plain field, written by every acquiring thread without synchronization: a
 * lost update moves a sample, nothing more, and it costs no atomic instruction.
 */
public final class LeakTracker {
  /** One acquisition in this many is sampled (watched, with its stack, at {@code sampled}). */
  public static final int SAMPLING_INTERVAL = 1024;

  /** The logger of every report. */
  public static final String LOGGER = "dev.jeton.leak";

  private static final System.Logger REPORTS = System.getLogger(LOGGER);

  /** The system property that sets the level of primitives whose builder set none. */
  public static final String PROPERTY = "jeton.leakDetection";

  private final boolean watchesEvery; // every grant watched, else one in SAMPLING_INTERVAL
  private final boolean stackOfEvery; // every watched grant's stack, else one in SAMPLING_INTERVAL
  private final boolean releaseLeaked;
  private final String owner;
  private final AtomicLong leaked = new AtomicLong();
  private int countdown = SAMPLING_INTERVAL; // racy on purpose: see the class comment

  LeakTracker(boolean paranoid, boolean releaseLeaked, String owner) {
    this(paranoid, false, releaseLeaked, owner);
  }

  private LeakTracker(
      boolean watchesEvery, boolean stackOfEvery, boolean releaseLeaked, String owner) {
    this.watchesEvery = watchesEvery;
    this.stackOfEvery = stackOfEvery;
    this.releaseLeaked = releaseLeaked;
    this.owner = owner;
    if (watchesEvery) {
      LeakRegistry.instance().startTicking();
    }
  }

  /**
   * The tracker of a primitive named {@code owner} in reports, or null if it watches nothing: at
   * {@code level}, or if that is null at the level of the system property {@link #PROPERTY}, read
   * now.
   *
   * @throws IllegalArgumentException if the property is needed and names no level
   */
  public static @Nullable LeakTracker of(
      @Nullable LeakDetection level, boolean releaseLeaked, String owner) {
    LeakDetection effective = effective(level);
    if (effective == LeakDetection.OFF) {
      return null;
    }
    return new LeakTracker(effective == LeakDetection.PARANOID, false, releaseLeaked, owner);
  }

  /**
   * As {@link #of}, for a primitive each of whose grants costs a round trip to a server (a Redis
   * lease), beside which watching one costs nothing worth sparing: each level watches one step
   * more. {@code sampled} watches every grant, with the stack of one in {@value
   * #SAMPLING_INTERVAL}; {@code paranoid} records every stack too. So the default finds the first
   * lease that a process drops, which on a fleet-wide limit of a few permits is one too many.
   */
  public static @Nullable LeakTracker ofRoundTrips(
      @Nullable LeakDetection level, boolean releaseLeaked, String owner) {
    LeakDetection effective = effective(level);
    if (effective == LeakDetection.OFF) {
      return null;
    }
    return new LeakTracker(true, effective == LeakDetection.PARANOID, releaseLeaked, owner);
  }

  private static LeakDetection effective(@Nullable LeakDetection level) {
    return level != null ? level : levelOf(System.getProperty(PROPERTY));
  }

  /**
   * The level a value of the system property {@code jeton.leakDetection} names: {@code off}, {@code
   * sampled} or {@code paranoid}, in any case; sampled, the default, if unset.
   *
   * @throws IllegalArgumentException for any other value, naming the ones it takes
   */
  public static LeakDetection levelOf(@Nullable String property) {
    if (property == null) {
      return LeakDetection.SAMPLED;
    }
    try {
      return LeakDetection.valueOf(property.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          PROPERTY + " is '" + property + "': it takes off, sampled or paranoid", e);
    }
  }

  /** Whether the grant being made is watched; asked once per grant. */
  public boolean watches() {
    return watchesEvery || sampleDue();
  }

  private boolean sampleDue() {
    int left = countdown - 1;
    if (left > 0) {
      countdown = left;
      return false;
    }
    countdown = SAMPLING_INTERVAL;
    return true;
  }

  /** Whether leaked grants are given back once reported: then {@link #watch} wants a give-back. */
  public boolean releasesLeaked() {
    return releaseLeaked;
  }

  /**
   * Watches {@code grant}, a {@code kind} ("permit", "lock", ...) of {@code permits} (0 for a lock,
   * whose report counts none): if it is collected unreleased, it is reported and, if this tracker
   * releases leaked grants, {@code giveBack} runs. Call only when {@link #watches()} said so,
   * before the grant is handed out.
   */
  public void watch(ReleaseOnce grant, String kind, int permits, @Nullable Runnable giveBack) {
    int code = LeakRegistry.instance().add(newRecord(grant, kind, permits, giveBack));
    if (code != 0) {
      grant.watchAt(code);
    }
  }

  /**
   * As {@link #watch}, for a grant that is not a {@link ReleaseOnce}: it keeps the record, and
   * hands it to {@link LeakRecord#forget} when released.
   */
  public LeakRecord record(Object grant, String kind, int permits, @Nullable Runnable giveBack) {
    LeakRecord record = newRecord(grant, kind, permits, giveBack);
    LeakRegistry.instance().add(record);
    return record;
  }

  /**
   * For a grant that will arrive later on another thread (a server's answer): decides now, on the
   * acquiring thread, whether it will be watched, and takes the stack now if the level records it;
   * null if it will not be watched. Its grant is recorded with {@link #record(Object, Acquisition,
   * String, int, Runnable)}.
   */
  public @Nullable Acquisition acquiring() {
    return watches() ? new Acquisition(stackDue() ? new AcquiredHere() : null) : null;
  }

  /**
   * As {@link #record(Object, String, int, Runnable)}, for the grant of an {@code acquisition}
   * taken on the acquiring thread earlier: its report shows that thread's stack, if one was taken.
   */
  public LeakRecord record(
      Object grant,
      Acquisition acquisition,
      String kind,
      int permits,
      @Nullable Runnable giveBack) {
    LeakRecord record = newRecord(grant, kind, permits, giveBack, acquisition.acquiredAt);
    LeakRegistry.instance().add(record);
    return record;
  }

  private LeakRecord newRecord(
      Object grant, String kind, int permits, @Nullable Runnable giveBack) {
    return newRecord(grant, kind, permits, giveBack, stackDue() ? new AcquiredHere() : null);
  }

  /** Whether the grant being watched records its stack (then it is timed to the nanosecond). */
  private boolean stackDue() {
    return stackOfEvery || !watchesEvery || sampleDue();
  }

  private LeakRecord newRecord(
      Object grant,
      String kind,
      int permits,
      @Nullable Runnable giveBack,
      @Nullable Throwable acquiredAt) {
    LeakRegistry registry = LeakRegistry.instance();
    return new LeakRecord(
        grant,
        registry.collected,
        this,
        kind,
        permits,
        acquiredAt != null ? System.nanoTime() : registry.coarseNanos(),
        acquiredAt,
        releaseLeaked ? giveBack : null);
  }

  /**
   * A watch decided on the acquiring thread (see {@link #acquiring()}), with its stack if taken.
   */
  public static final class Acquisition {
    final @Nullable Throwable acquiredAt;

    Acquisition(@Nullable Throwable acquiredAt) {
      this.acquiredAt = acquiredAt;
    }
  }

  /** How many grants were reported leaked. */
  public long leaked() {
    return leaked.get();
  }

  /** Reports {@code record}'s grant, collected unreleased; on the reporter thread. */
  void leaked(LeakRecord record) {
    leaked.incrementAndGet();
    Runnable giveBack = record.giveBack;
    try {
      REPORTS.log(System.Logger.Level.WARNING, report(record, giveBack != null), record.acquiredAt);
    } catch (RuntimeException e) {
      // a logger that fails loses the report, not the give-back below
    }
    if (giveBack != null) {
      try {
        giveBack.run();
      } catch (RuntimeException e) {
        REPORTS.log(
            System.Logger.Level.WARNING,
            "Jeton could not give back a leaked " + record.kind + " of " + owner,
            e);
      }
    }
  }

  private String report(LeakRecord record, boolean givenBack) {
    long heldNanos = Math.max(0, System.nanoTime() - record.acquiredNanos);
    String held =
        record.acquiredAt != null
            ? String.format(Locale.ROOT, "%.3f s", heldNanos / 1e9)
            : "about " + Math.round(heldNanos / 1e9) + " s";
    StringBuilder text =
        new StringBuilder("Jeton: a ")
            .append(record.kind)
            .append(" of ")
            .append(owner)
            .append(" was never released: ");
    if (record.permits > 0) {
      text.append(record.permits).append(record.permits == 1 ? " permit " : " permits ");
    }
    text.append("held for ")
        .append(held)
        .append(" until the garbage collector found it unreachable. ");
    if (givenBack) {
      text.append("Its permits are given back now.");
    } else {
      text.append(
          "Its permits stay taken (the work they guarded may still run); the builder's"
              + " releaseLeaked(true) gives leaked permits back once reported.");
    }
    if (record.acquiredAt == null) {
      text.append(
          " Where it was acquired is not known: one acquisition in "
              + SAMPLING_INTERVAL
              + " records its stack.");
    } else {
      text.append(" It was acquired here:");
    }
    return text.toString();
  }

  /** The stack of a sampled acquisition, printed with its report. */
  static final class AcquiredHere extends Throwable {
    private static final long serialVersionUID = 1;

    AcquiredHere() {
      super("the acquisition of the leaked grant", null, false, true);
    }
  }
}
