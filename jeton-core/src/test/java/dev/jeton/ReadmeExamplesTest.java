package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** The README's examples, as written there, so that they keep compiling and doing what it says. */
class ReadmeExamplesTest {
  private final Semaphore db = Semaphore.create(10);

  private String runQuery() {
    assertTrue(db.available() < db.limit(), "runs under a permit");
    return "rows";
  }

  private void renderReport() {}

  private CompletableFuture<String> callService() {
    return CompletableFuture.completedFuture("response");
  }

  private CompletableFuture<String> callService(String name) {
    return CompletableFuture.completedFuture("hello " + name);
  }

  @Test
  void blocking() throws Exception {
    try (Permit p = db.acquire(1)) {
      runQuery();
    }
    assertEquals(10, db.available());
  }

  @Test
  void weights() throws Exception {
    Semaphore cpu = Semaphore.create(8);
    try (Permit p = cpu.acquire(4)) {
      renderReport();
      assertEquals(4, cpu.available());
    }
  }

  private String withoutBlocking() {
    Optional<Permit> p = db.tryAcquire(1);
    if (p.isEmpty()) {
      return "busy, try later";
    }
    try (Permit permit = p.get()) {
      return runQuery();
    }
  }

  @Test
  void withoutBlocking_example() throws Exception {
    assertEquals("rows", withoutBlocking());
    Permit all = db.acquire(10);
    assertEquals("busy, try later", withoutBlocking());
    all.release();
  }

  private String withATimeout() throws InterruptedException {
    try (Permit p = db.acquire(1, Duration.ofMillis(200))) {
      return runQuery();
    } catch (TimeoutException e) {
      return "too busy";
    }
  }

  @Test
  void withATimeout_example() throws Exception {
    assertEquals("rows", withATimeout());
    Permit all = db.acquire(10);
    assertEquals("too busy", withATimeout());
    all.release();
    assertEquals(0, db.queueLength());
  }

  @Test
  void asynchronously() {
    CompletableFuture<Permit> f = db.acquireAsync(1);
    f.thenAccept(permit -> callService().whenComplete((r, e) -> permit.release()));

    CompletableFuture<Permit> timed = db.acquireAsync(1, Duration.ofSeconds(1));
    f.cancel(false);
    timed.join().release();
    assertEquals(10, db.available());
  }

  @Test
  void tasks() throws Exception {
    String result = db.call(1, () -> runQuery());
    CompletableFuture<String> r = db.callAsync(1, () -> callService());
    Function<String, CompletableFuture<String>> limited =
        db.wrapAsync(1, name -> callService(name));
    assertEquals("rows", result);
    assertEquals("response", r.join());
    assertEquals("hello jeton", limited.apply("jeton").join());
    assertEquals(10, db.available());
  }

  @Test
  void limitIdleAndClose() {
    db.setLimit(20);
    db.setLimit(5);
    db.awaitIdle().join();
    db.close();
    assertEquals(5, db.available());
  }

  private final AdaptiveLimit adaptive =
      AdaptiveLimit.builder()
          .initialLimit(10)
          .minLimit(2)
          .maxLimit(200)
          .build(Semaphore.create(10));

  private String search(String query) throws TimeoutException {
    assertEquals(1, adaptive.inFlight(), "runs as a sample");
    return "results for " + query;
  }

  private String adaptively(String query) throws TimeoutException {
    Optional<Permit> p = adaptive.semaphore().tryAcquire(1);
    if (p.isEmpty()) {
      return "busy, try later"; // best effort: answer at once
    }
    try (Permit permit = p.get()) {
      AdaptiveLimit.Sample sample = adaptive.begin();
      try {
        String results = search(query);
        sample.success(); // its latency is a sample
        return results;
      } catch (TimeoutException e) {
        sample.dropped(); // overload downstream: a congestion signal
        throw e;
      } finally {
        sample.ignore(); // any other ending is not a sample; after the two above, does nothing
      }
    }
  }

  @Test
  void adaptive_example() throws Exception {
    assertEquals("results for jeton", adaptively("jeton"));
    assertEquals(0, adaptive.inFlight());
    assertEquals(10, adaptive.limit());
    assertEquals(10, adaptive.semaphore().limit());
  }

  @Test
  void builderAndStatistics() throws Exception {
    ExecutorService executor = Executors.newSingleThreadExecutor();
    try {
      Semaphore s =
          Semaphore.builder()
              .name("payments-db")
              .limit(10)
              .completionExecutor(executor)
              .statistics(true)
              .fairness(Fairness.strictFifo()) // the default; boundedBarging() for a hot semaphore
              .build();
      Permit held = s.acquire(3);
      SemaphoreStats stats = s.stats().orElseThrow();
      assertEquals(1, stats.acquired());
      assertEquals(0, stats.timedOut());
      assertEquals(0, stats.peakQueueLength());
      assertEquals(Duration.ZERO, stats.maxWait());
      assertEquals("Semaphore[name=payments-db, limit=10, available=7, queued=0]", s.toString());
      held.release();
    } finally {
      executor.shutdownNow();
    }
  }

  // ------------------------------------------------------------------ Parallel

  record Page(String url) {}

  record Report(String file) {}

  private CompletableFuture<Page> fetchAsync(String url) {
    return CompletableFuture.completedFuture(new Page(url));
  }

  private Report parse(String file) throws java.io.IOException {
    if (file.isEmpty()) {
      throw new java.io.IOException("no file name");
    }
    return new Report(file);
  }

  private int sizeClass(java.nio.file.Path file) {
    return file.toString().length() > 5 ? 50 : 1;
  }

  private final java.util.List<java.nio.file.Path> uploaded =
      java.util.Collections.synchronizedList(new java.util.ArrayList<>());

  private void upload(java.nio.file.Path file) {
    uploaded.add(file);
  }

  @Test
  void parallel() throws Exception {
    java.util.List<String> urls = java.util.List.of("a", "b", "c");
    ExecutorService executor = Executors.newCachedThreadPool();
    try {
      CompletableFuture<java.util.List<Page>> pages =
          Parallel.limit(8).mapAsync(urls, url -> fetchAsync(url));
      assertEquals(java.util.List.of(new Page("a"), new Page("b"), new Page("c")), pages.join());

      java.util.List<String> files = java.util.List.of("x.csv", "y.csv");
      CompletableFuture<java.util.List<Report>> reports =
          Parallel.limit(4).map(files, executor, f -> parse(f));
      assertEquals(java.util.List.of(new Report("x.csv"), new Report("y.csv")), reports.join());

      java.util.List<Report> all = Parallel.limit(4).mapAll(files, f -> parse(f));
      assertEquals(reports.join(), all);

      java.util.List<java.nio.file.Path> paths =
          java.util.List.of(java.nio.file.Path.of("big-file"), java.nio.file.Path.of("s"));
      Parallel.limit(100)
          .<java.nio.file.Path>weighted(f -> sizeClass(f))
          .forEach(paths, executor, f -> upload(f))
          .join();
      assertEquals(2, uploaded.size());
    } finally {
      executor.shutdown();
    }
  }

  // ------------------------------------------------------------------ KeyedSemaphore

  private final java.util.List<java.net.URI> fetched = new java.util.ArrayList<>();

  private void fetch(java.net.URI url) {
    fetched.add(url);
  }

  private int planLimit(String tenant) {
    return tenant.equals("acme") ? 8 : 2;
  }

  @Test
  void keyed() throws Exception {
    java.net.URI url = java.net.URI.create("https://example.com/a");
    KeyedSemaphore<String> hosts = KeyedSemaphore.builder().limitPerKey(4).globalLimit(50).build();
    try (Permit p = hosts.forKey(url.getHost()).acquire(1)) {
      fetch(url);
      assertEquals(3, hosts.forKey("example.com").available());
      assertEquals(java.util.OptionalInt.of(49), hosts.globalAvailable());
    }
    assertEquals(0, hosts.keyCount(), "idle keys have no entry");

    KeyedSemaphore<String> tenants =
        KeyedSemaphore.builder().<String>limitPerKey(t -> planLimit(t)).build();
    CompletableFuture<Permit> f = tenants.forKey("acme").acquireAsync(2);
    assertEquals(6, tenants.forKey("acme").available());
    assertEquals(2, tenants.forKey("other").limit());
    f.join().release();
    assertEquals(java.util.List.of(url), fetched);
  }

  // ------------------------------------------------------------------ PriorityScheduler

  private Report buildReport() {
    return new Report("today");
  }

  private final java.util.concurrent.atomic.AtomicInteger reindexed =
      new java.util.concurrent.atomic.AtomicInteger();

  private int reindex() {
    return reindexed.incrementAndGet();
  }

  @Test
  void priorityScheduler() throws Exception {
    ExecutorService executor = Executors.newCachedThreadPool();
    CompletableFuture<Report> urgentResult;
    CompletableFuture<String> pageResult;
    try {
      try (PriorityScheduler scheduler =
          PriorityScheduler.builder()
              .limit(4)
              .executor(executor)
              .aging(Duration.ofSeconds(10))
              .build()) {
        CompletableFuture<Report> urgent =
            scheduler.submit(Priority.HIGH, () -> buildReport()); // blocking
        CompletableFuture<String> page =
            scheduler.submitAsync(Priority.LOW, () -> callService()); // async
        scheduler.submit(7, () -> reindex()); // any int: higher runs first
        scheduler.queued(Priority.LOW);
        scheduler.running(); // counts, per priority or in all
        page.cancel(false); // if not started yet, it never will
        urgentResult = urgent;
        pageResult = page;
      } // close(): finish what is queued, then return
    } finally {
      executor.shutdown();
    }
    assertEquals(new Report("today"), urgentResult.join());
    assertTrue(pageResult.isDone(), "started at once (4 free slots) or cancelled: done either way");
    assertEquals(1, reindexed.get(), "close() waited for the queued task");
  }

  // ---------------------------------------------------------------- locks

  private int balance;
  private final int amount = 5;
  private final Store store = new Store();
  private final String id = "doc";
  private final String edit = "+1";

  /** An asynchronous document store, for the Mutex example. */
  private static final class Store {
    final java.util.Map<String, Doc> docs = new java.util.concurrent.ConcurrentHashMap<>();

    CompletableFuture<Doc> load(String id) {
      return CompletableFuture.supplyAsync(() -> docs.getOrDefault(id, new Doc("")));
    }

    CompletableFuture<Void> save(Doc doc) {
      return CompletableFuture.runAsync(() -> docs.put("doc", doc));
    }
  }

  private record Doc(String text) {
    Doc withEdit(String edit) {
      return new Doc(text + edit);
    }
  }

  @Test
  void mutex() throws Exception {
    Mutex mutex = Mutex.create();

    try (Guard guard = mutex.lock()) { // blocking; lock(Duration) to give up
      balance += amount;
    }

    CompletableFuture<Void> saved =
        mutex.callAsync( // held until the stage completes
            () -> store.load(id).thenCompose(doc -> store.save(doc.withEdit(edit))));

    Optional<Guard> maybe = mutex.tryLock(); // takes the lock if it is free

    Mutex inOrder = Mutex.builder().fairness(Fairness.strictFifo()).build();

    saved.join();
    inOrder.tryLock().orElseThrow().unlock();
    maybe.ifPresent(Guard::unlock);
    assertEquals(5, balance);
    assertEquals(new Doc("+1"), store.docs.get("doc"));
    assertTrue(!mutex.isLocked(), "every guard unlocked");
  }

  private final java.util.Map<String, String> cache = new java.util.HashMap<>();
  private final String key = "k";
  private final String fresh = "v2";
  private final java.util.List<java.util.Map<String, String>> published =
      new java.util.ArrayList<>();

  private void publish(java.util.Map<String, String> snapshot) {
    published.add(snapshot);
  }

  @Test
  void readWriteLock() throws Exception {
    ReadWriteLock lock = ReadWriteLock.create();
    cache.put(key, "v1");

    String value = lock.callRead(() -> cache.get(key)); // many readers at once
    lock.callWrite(() -> cache.put(key, fresh)); // one writer, no readers

    try (Guard read = lock.write().downgrade()) { // write, then keep reading:
      publish(java.util.Map.copyOf(cache)); // no writer in between
    }

    assertEquals("v1", value);
    assertEquals(java.util.List.of(java.util.Map.of(key, fresh)), published);
    assertEquals(0, lock.readers());
    assertTrue(!lock.isWriteLocked());
  }

  // ---------------------------------------------------------------- barrier

  /** Four parts computed in parallel, merged once per step, for the Barrier example. */
  private static final class Grid {
    final java.util.concurrent.atomic.AtomicIntegerArray computed =
        new java.util.concurrent.atomic.AtomicIntegerArray(4);
    final java.util.List<String> merges = new java.util.concurrent.CopyOnWriteArrayList<>();

    void compute(int part) {
      computed.incrementAndGet(part);
    }

    void merge() {
      merges.add(computed.toString());
    }
  }

  private final Grid grid = new Grid();

  @Test
  void barrier() throws Exception {
    Barrier barrier =
        Barrier.builder()
            .parties(4)
            .action(
                grid::merge) // once per generation, by the last to arrive, before anyone goes on
            .build();

    int steps = 3;
    java.util.List<java.util.List<Integer>> indices =
        new java.util.concurrent.CopyOnWriteArrayList<>();
    ExecutorService workers = Executors.newFixedThreadPool(4);
    try {
      java.util.List<java.util.concurrent.Future<?>> done = new java.util.ArrayList<>();
      for (int p = 0; p < 4; p++) {
        int part = p;
        done.add(
            workers.submit(
                () -> {
                  java.util.List<Integer> mine = new java.util.ArrayList<>();
                  for (int step = 0; step < steps; step++) { // in each of the 4 workers
                    grid.compute(part);
                    Barrier.Arrival arrival =
                        barrier.await(); // index 0 = first to arrive, 3 = last
                    mine.add(arrival.index());
                  }
                  indices.add(mine);
                  return null;
                }));
      }
      for (java.util.concurrent.Future<?> f : done) {
        f.get(5, java.util.concurrent.TimeUnit.MINUTES); // a hang guard only
      }
    } finally {
      workers.shutdown();
    }
    assertEquals(
        java.util.List.of("[1, 1, 1, 1]", "[2, 2, 2, 2]", "[3, 3, 3, 3]"),
        grid.merges,
        "each merge saw every part of its step, and none of the next");
    for (int step = 0; step < steps; step++) {
      java.util.Set<Integer> seen = new java.util.HashSet<>();
      for (java.util.List<Integer> mine : indices) {
        seen.add(mine.get(step));
      }
      assertEquals(java.util.Set.of(0, 1, 2, 3), seen, "indices of step " + step);
    }

    CompletableFuture<Barrier.Arrival> later =
        barrier.awaitAsync(Duration.ofSeconds(30)); // from code that must not block
    barrier.register(); // one more party, from this generation on
    barrier.arriveAndDeregister(); // arrive once more, then one party fewer
    barrier.breakBarrier(new java.util.concurrent.CancellationException("shutting down"));

    java.util.concurrent.ExecutionException broken =
        org.junit.jupiter.api.Assertions.assertThrows(
            java.util.concurrent.ExecutionException.class, later::get);
    assertTrue(broken.getCause() instanceof BarrierBrokenException, broken.toString());
    assertEquals(4, barrier.parties());
    assertEquals(0, barrier.arrived(), "the next generation starts clean");
  }

  /** A unit of work, for the Channel example. */
  private static final class Job {
    static final java.util.concurrent.atomic.AtomicInteger RUN =
        new java.util.concurrent.atomic.AtomicInteger();

    void run() {
      RUN.incrementAndGet();
    }
  }

  /** A value that holds a resource, for the Channel example. */
  private static final class Frame {
    boolean released;

    void release() {
      released = true;
    }
  }

  @Test
  void channel() throws Exception {
    java.util.List<Job> batch = java.util.List.of(new Job(), new Job(), new Job());
    Channel<Job> jobs = Channel.buffered(64); // a send waits while 64 are buffered

    // producer
    for (Job job : batch) {
      jobs.send(job); // blocks while full
    }
    jobs.close(); // no more sends; receivers drain what is left

    // consumer: the loop ends at close, once drained
    for (Job job : jobs) {
      job.run();
    }
    assertEquals(3, Job.RUN.get());

    Frame old = new Frame();
    Frame frame = new Frame();
    Channel<Frame> latest =
        Channel.<Frame>builder()
            .capacity(1)
            .overflow(Channel.Overflow.DROP_OLDEST) // "conflated": a slow reader sees the newest
            .onUndelivered(Frame::release) // every value no receiver will get comes here
            .build();
    latest.send(old);
    latest.trySend(frame); // never waits with a drop policy
    assertTrue(old.released);
    assertEquals(Optional.of(frame), latest.tryReceive());

    Channel<String> handoff = Channel.rendezvous(); // a send waits for a receiver
    CompletableFuture<Void> sent = handoff.sendAsync("hello");
    Optional<String> got = handoff.tryReceive(); // Optional[hello]; sent completes
    CompletableFuture<String> next = handoff.receiveAsync(Duration.ofSeconds(1));
    handoff.close(); // next fails: ChannelClosedException
    Optional<String> end = handoff.receiveOrClosed(); // Optional.empty(): closed, as a value

    assertEquals(Optional.of("hello"), got);
    assertTrue(sent.isDone() && !sent.isCompletedExceptionally());
    java.util.concurrent.ExecutionException closed =
        org.junit.jupiter.api.Assertions.assertThrows(
            java.util.concurrent.ExecutionException.class, next::get);
    assertTrue(closed.getCause() instanceof ChannelClosedException, closed.toString());
    assertEquals(Optional.empty(), end);
  }

  @Test
  void select() throws Exception {
    Channel<String> orders = Channel.buffered(16);
    Channel<String> alerts = Channel.rendezvous();
    Channel<String> reports = Channel.buffered(1);
    String report = "report";
    orders.send("o1");

    // Whichever comes first; give up after a second.
    String what =
        Select.select(
            orders.onReceive(order -> "order " + order),
            alerts.onReceive(alert -> "alert " + alert),
            Select.onTimeout(Duration.ofSeconds(1), () -> "idle"));

    // Send if there is room, else go on at once: a report not sent is still yours.
    boolean sent = Select.select(reports.onSend(report, () -> true), Select.otherwise(() -> false));

    assertEquals("order o1", what);
    assertTrue(sent);
    assertFalse(Select.select(reports.onSend(report, () -> true), Select.otherwise(() -> false)));
    orders.send("o2");
    CompletableFuture<Void> alarm = alerts.sendAsync("fire");

    // Alerts first: a biased select takes the first ready clause in the order given.
    String next =
        Select.selectBiased(
            alerts.onReceive(alert -> "alert " + alert),
            orders.onReceive(order -> "order " + order));

    assertEquals("alert fire", next);
    assertTrue(alarm.isDone());
    assertEquals(Optional.of("o2"), orders.tryReceive());

    // Without blocking a thread; cancelling the future takes it out of both channels.
    CompletableFuture<String> later =
        Select.selectAsync(
            orders.onReceiveOrClosed(order -> order.orElse("no more orders")),
            alerts.onReceive(alert -> "alert " + alert));

    assertFalse(later.isDone());
    orders.close();
    assertEquals("no more orders", later.get());
  }

  /** "Forgotten permits: leak detection": the builder as written there. */
  @Test
  void leakDetection_builder() throws Exception {
    Semaphore db =
        Semaphore.builder()
            .name("payments-db")
            .limit(10)
            .leakDetection(LeakDetection.PARANOID) // every permit watched; SAMPLED: 1 in 1,024
            .releaseLeaked(true) // give a leaked permit back once reported
            .build();
    try (Permit p = db.acquire(1)) {
      assertEquals(9, db.available());
    }
    assertEquals(10, db.available());
  }
}
