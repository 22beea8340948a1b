package dev.jeton.bench;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import org.jspecify.annotations.Nullable;
import org.openjdk.jol.info.GraphLayout;
import org.openjdk.jol.util.Multiset;
import org.openjdk.jol.vm.VM;
import org.openjdk.jol.vm.VirtualMachine;

/**
 * Bytes of heap a semaphore retains per queued waiter, measured with JOL. Not a JMH benchmark: run
 * it from the benchmarks jar,
 *
 * <pre>
 * java -Djdk.attach.allowAttachSelf=true -cp jeton-bench/target/benchmarks.jar dev.jeton.bench.QueuedWaiterMemory
 * </pre>
 *
 * <p>The property is required on JDK 17: it lets JOL attach its instrumentation agent to its own
 * JVM. Without it JOL falls back to {@code Unsafe} field offsets, which do not exist for hidden
 * classes, and kotlinx's semaphore holds a lambda (a hidden class), so the walk fails. (On JDK 21+
 * add {@code -XX:+EnableDynamicAgentLoading} to silence the dynamic-agent warning.)
 *
 * <p><b>Asynchronous waiters</b> (jeton, ibm, kotlinx): a semaphore of limit 1 whose permit is
 * held, then {@value #ASYNC_WAITERS} queued asynchronous requests. Per waiter = (retained size of
 * the semaphore and the returned stages together - retained size of the semaphore with its permit
 * held and nothing queued) / waiters. That includes the stage the caller gets back; the figure
 * "beyond a future" subtracts the shallow size of a plain {@link CompletableFuture} per waiter,
 * leaving what the semaphore itself adds (goal for jeton: at most 64 bytes). For kotlinx the stage
 * is the adapter's {@link KotlinxLimiter.ResumingFuture}, the continuation the suspended acquire
 * holds, which is exactly a plain future in size: what is left is the semaphore's own per-waiter
 * state (its {@code CancellableContinuationImpl} and share of queue segments). Sizes come from
 * {@link GraphLayout#parseInstance}.
 *
 * <p><b>Blocking waiters</b> (jeton, juc-fair, juc-unfair): {@value #BLOCKED_THREADS} platform
 * threads blocked in {@code acquire(1)}. A blocked waiter's node points to its {@link Thread}, and
 * a thread reaches half the heap (its thread group, its class loader and every class...), so JOL's
 * {@code GraphLayout} cannot be used as is; and subtracting the threads' own graphs does not work
 * either, since a parked thread points back to the semaphore (its park blocker) and so the threads'
 * graph contains the whole queue. Instead the same graph walk is done here (JOL's field offsets and
 * sizes, breadth first from the semaphore) with {@code Thread}, {@code Class} and {@code
 * ClassLoader} objects treated as leaves that are not counted. That counts the queue nodes and
 * whatever else the semaphore allocates per waiter, and nothing that belongs to the thread (which
 * exists whether or not it waits; its stack is not on the heap at all). The walk is checked against
 * {@code GraphLayout} on the asynchronous cases, where both apply.
 */
public final class QueuedWaiterMemory {
  static final int ASYNC_WAITERS = 10_000;
  static final int BLOCKED_THREADS = 1_000;

  /** Whether the Thread-excluding walk agreed with GraphLayout wherever both were run. */
  private static boolean walkMatched = true;

  private QueuedWaiterMemory() {}

  public static void main(String[] args) throws Exception {
    long plainFuture = start(QueuedWaiterMemory.class);

    List<String[]> rows = new ArrayList<>();
    List<String> breakdowns = new ArrayList<>();
    for (String impl : new String[] {Limiter.JETON, Limiter.IBM, Limiter.KOTLINX}) {
      rows.add(async(impl, plainFuture, breakdowns));
    }
    for (String impl : new String[] {Limiter.JETON, Limiter.JUC_FAIR, Limiter.JUC_UNFAIR}) {
      rows.add(blocking(impl, breakdowns));
    }

    String[] header = {
      "impl", "waiter", "count", "baseline B", "queued B", "B/waiter", "B/waiter beyond a future"
    };
    print(header, rows);
    System.out.println();
    System.out.println(
        "async: retained (semaphore + returned stages) growth per waiter, JOL GraphLayout;"
            + " 'beyond a future' subtracts "
            + plainFuture
            + " B (a plain CompletableFuture) per waiter.");
    System.out.println(
        "blocking: retained growth of the semaphore per blocked thread, Thread objects excluded.");
    if (walkMatched) {
      System.out.println(
          "check: on the async cases the Thread-excluding walk found exactly GraphLayout's totals.");
    }
    System.out.println();
    System.out.println("Growth per waiter by class (objects per waiter x bytes each):");
    breakdowns.forEach(System.out::println);
  }

  // ------------------------------------------------------------------ asynchronous waiters

  private static String[] async(String impl, long plainFuture, List<String> breakdowns) {
    Limiter limiter = Limiter.create(impl, 1);
    Object semaphore = limiter.unwrap();
    Object held = limiter.tryAcquire();
    if (held == null) {
      throw new IllegalStateException(impl + ": could not take the only permit");
    }
    GraphLayout before = GraphLayout.parseInstance(semaphore);
    long baseline = before.totalSize();

    Object[] roots = new Object[ASYNC_WAITERS + 1];
    roots[0] = semaphore;
    for (int i = 1; i <= ASYNC_WAITERS; i++) {
      CompletionStage<?> stage = limiter.acquireAsync();
      CompletableFuture<?> future = (CompletableFuture<?>) stage; // all three return futures
      if (future.isDone()) {
        throw new IllegalStateException(impl + ": a request was granted while the permit is held");
      }
      roots[i] = future;
    }
    GraphLayout after = GraphLayout.parseInstance(roots);
    long queued = after.totalSize();
    long walked = new Footprint(roots).total;
    if (walked != queued) {
      walkMatched = false;
      System.out.printf(
          Locale.ROOT,
          "note: %s: the Thread-excluding walk found %d B where GraphLayout found %d B%n",
          impl,
          walked,
          queued);
    }
    double perWaiter = (double) (queued - baseline) / ASYNC_WAITERS;
    breakdowns.add(
        breakdown(impl + " async", new Footprint(after), new Footprint(before), ASYNC_WAITERS));

    // Let every waiter through, so the run also shows they were really queued.
    limiter.release(held);
    for (int i = 1; i <= ASYNC_WAITERS; i++) {
      CompletableFuture<?> future = (CompletableFuture<?>) roots[i];
      limiter.release(future.join());
    }
    Checks.allFree(limiter, 1);

    return new String[] {
      impl,
      "async",
      Integer.toString(ASYNC_WAITERS),
      Long.toString(baseline),
      Long.toString(queued),
      format(perWaiter),
      format(perWaiter - plainFuture)
    };
  }

  // ------------------------------------------------------------------ blocking waiters

  private static String[] blocking(String impl, List<String> breakdowns)
      throws InterruptedException {
    // Take the only permit on this thread, so that every waiter queues.
    Object semaphore;
    BlockingAcquire acquire;
    IntSupplier queueLength;
    Runnable letGo;
    if (impl.equals(Limiter.JETON)) {
      dev.jeton.Semaphore s = dev.jeton.Semaphore.create(1);
      semaphore = s;
      acquire = () -> s.acquire(1).release();
      queueLength = s::queueLength;
      letGo = s.acquire(1)::release;
    } else {
      java.util.concurrent.Semaphore s =
          new java.util.concurrent.Semaphore(1, impl.equals(Limiter.JUC_FAIR));
      semaphore = s;
      acquire =
          () -> {
            s.acquire();
            s.release();
          };
      queueLength = s::getQueueLength;
      s.acquire();
      letGo = s::release;
    }
    Footprint before = new Footprint(semaphore);
    long baseline = before.total;

    Thread[] threads = new Thread[BLOCKED_THREADS];
    for (int i = 0; i < threads.length; i++) {
      threads[i] =
          new Thread(
              null,
              () -> {
                try {
                  acquire.run();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              },
              "waiter-" + i,
              256 * 1024);
      threads[i].start();
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (queueLength.getAsInt() < BLOCKED_THREADS || !allParked(threads)) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            impl + ": only " + queueLength.getAsInt() + " threads queued after 60 s");
      }
      Thread.sleep(10);
    }
    Footprint after = new Footprint(semaphore);
    long queued = after.total;
    double perWaiter = (double) (queued - baseline) / BLOCKED_THREADS;
    breakdowns.add(breakdown(impl + " blocking", after, before, BLOCKED_THREADS));

    letGo.run();
    for (Thread t : threads) {
      t.join(TimeUnit.SECONDS.toMillis(60));
      if (t.isAlive()) {
        throw new IllegalStateException(impl + ": " + t.getName() + " never got its permit");
      }
    }
    return new String[] {
      impl,
      "blocking",
      Integer.toString(BLOCKED_THREADS),
      Long.toString(baseline),
      Long.toString(queued),
      format(perWaiter),
      "-"
    };
  }

  /**
   * What every memory program does first: exits with the command to run if JOL cannot attach its
   * agent (needed to size hidden classes), prints the VM's details, and returns the shallow size of
   * a plain {@link CompletableFuture}.
   */
  static long start(Class<?> program) {
    if (!Boolean.getBoolean("jdk.attach.allowAttachSelf")) {
      System.err.println(
          "Run with -Djdk.attach.allowAttachSelf=true: JOL needs its agent to size hidden classes.\n"
              + "  java -Djdk.attach.allowAttachSelf=true -cp jeton-bench/target/benchmarks.jar "
              + program.getName());
      System.exit(2);
    }
    VirtualMachine vm = VM.current();
    System.out.println(vm.details());
    long plainFuture = vm.sizeOf(new CompletableFuture<Object>());
    System.out.printf(
        Locale.ROOT, "Shallow size of a plain CompletableFuture: %d bytes%n%n", plainFuture);
    return plainFuture;
  }

  /** What a blocked thread does: acquire one permit, then give it straight back. */
  interface BlockingAcquire {
    void run() throws InterruptedException;
  }

  /** Whether every thread is parked (timed parks too: kotlinx's runBlocking parks that way). */
  static boolean allParked(Thread[] threads) {
    for (Thread t : threads) {
      Thread.State state = t.getState();
      if (state != Thread.State.WAITING && state != Thread.State.TIMED_WAITING) {
        return false;
      }
    }
    return true;
  }

  // ------------------------------------------------------------------ the graph walk

  /** Total size and per-class count and size of an object graph. */
  static final class Footprint {
    long total;
    final Map<Class<?>, long[]> byClass = new HashMap<>(); // {count, bytes}

    /** From JOL's own walk. */
    Footprint(GraphLayout layout) {
      total = layout.totalSize();
      Multiset<Class<?>> counts = layout.getClassCounts();
      Multiset<Class<?>> sizes = layout.getClassSizes();
      for (Class<?> c : layout.getClasses()) {
        byClass.put(c, new long[] {counts.count(c), sizes.count(c)});
      }
    }

    /**
     * Walks the objects reachable from {@code roots}, breadth first, like JOL's {@code
     * GraphLayout}, except that {@link Thread}, {@link Class} and {@link ClassLoader} objects are
     * neither counted nor followed.
     */
    Footprint(Object... roots) {
      VirtualMachine vm = VM.current();
      IdentityHashMap<Object, Boolean> seen = new IdentityHashMap<>();
      ArrayDeque<Object> pending = new ArrayDeque<>();
      for (Object root : roots) {
        visit(root, seen, pending);
      }
      Object o;
      while ((o = pending.poll()) != null) {
        long size = vm.sizeOf(o);
        total += size;
        long[] entry = byClass.computeIfAbsent(o.getClass(), c -> new long[2]);
        entry[0]++;
        entry[1] += size;
        Class<?> type = o.getClass();
        if (type.isArray()) {
          if (!type.getComponentType().isPrimitive()) {
            for (Object element : (Object[]) o) {
              visit(element, seen, pending);
            }
          }
          continue;
        }
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
          for (Field f : c.getDeclaredFields()) {
            if (!Modifier.isStatic(f.getModifiers()) && !f.getType().isPrimitive()) {
              visit(read(vm, o, f), seen, pending);
            }
          }
        }
      }
    }

    private static void visit(
        @Nullable Object o, IdentityHashMap<Object, Boolean> seen, ArrayDeque<Object> pending) {
      if (o == null || o instanceof Thread || o instanceof Class || o instanceof ClassLoader) {
        return;
      }
      if (seen.put(o, Boolean.TRUE) == null) {
        pending.add(o);
      }
    }

    private static @Nullable Object read(VirtualMachine vm, Object o, Field f) {
      try {
        return vm.getObject(o, vm.fieldOffset(f));
      } catch (RuntimeException noOffset) { // hidden classes (lambdas) have no Unsafe offsets
        try {
          f.setAccessible(true);
          return f.get(o);
        } catch (ReflectiveOperationException | RuntimeException e) {
          throw new IllegalStateException("cannot read " + f + " of " + o.getClass(), e);
        }
      }
    }
  }

  /** The classes whose footprint grew from {@code before} to {@code after}, per waiter. */
  static String breakdown(String label, Footprint after, Footprint before, int waiters) {
    StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "  %-20s", label));
    after.byClass.entrySet().stream()
        .sorted((x, y) -> Long.compare(y.getValue()[1], x.getValue()[1]))
        .forEach(
            e -> {
              long[] was = before.byClass.getOrDefault(e.getKey(), new long[2]);
              long count = e.getValue()[0] - was[0];
              long bytes = e.getValue()[1] - was[1];
              if (bytes != 0) {
                b.append(
                    String.format(
                        Locale.ROOT,
                        " %s %.2f x %.0f B;",
                        shortName(e.getKey()),
                        (double) count / waiters,
                        count == 0 ? 0.0 : (double) bytes / count));
              }
            });
    return b.toString();
  }

  // ------------------------------------------------------------------ output

  private static String shortName(Class<?> c) {
    if (c.isArray()) {
      return c.getSimpleName();
    }
    String name = c.getName();
    return name.substring(name.lastIndexOf('.') + 1);
  }

  static String format(double bytes) {
    return String.format(Locale.ROOT, "%.1f", bytes);
  }

  static void print(String[] header, List<String[]> rows) {
    int[] widths = new int[header.length];
    for (int i = 0; i < header.length; i++) {
      widths[i] = header[i].length();
      for (String[] row : rows) {
        widths[i] = Math.max(widths[i], row[i].length());
      }
    }
    System.out.println(line(header, widths));
    char[] rule = new char[Arrays.stream(widths).sum() + 2 * (widths.length - 1)];
    Arrays.fill(rule, '-');
    System.out.println(new String(rule));
    for (String[] row : rows) {
      System.out.println(line(row, widths));
    }
  }

  private static String line(String[] cells, int[] widths) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < cells.length; i++) {
      if (i > 0) {
        b.append("  ");
      }
      String pad = " ".repeat(widths[i] - cells[i].length());
      b.append(i < 2 ? cells[i] + pad : pad + cells[i]);
    }
    return b.toString();
  }
}
