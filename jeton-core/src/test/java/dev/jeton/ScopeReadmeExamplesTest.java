package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * The README's Scope examples, as written there, so that they keep compiling and doing what it
 * says.
 */
class ScopeReadmeExamplesTest {
  record User(String name) {}

  record Order(int number) {}

  record Page(User user, List<Order> orders) {}

  private final Users users = id -> new User("user " + id);
  private final Shop shop = id -> CompletableFuture.supplyAsync(() -> List.of(new Order(id)));

  interface Users {
    User find(int id) throws InterruptedException;
  }

  interface Shop {
    CompletableFuture<List<Order>> ordersOf(int id);
  }

  private Page page(int id) throws Exception {
    try (Scope scope = Scope.open()) {
      CompletableFuture<User> user = scope.fork(() -> users.find(id)); // blocking, own thread
      CompletableFuture<List<Order>> orders = scope.forkAsync(() -> shop.ordersOf(id)); // a stage
      scope.join(); // both done; or the first failure thrown, the other cancelled
      return new Page(user.join(), orders.join());
    } // close(): cancels whatever is left and waits for it
  }

  @Test
  void forkAndJoin() throws Exception {
    assertEquals(new Page(new User("user 7"), List.of(new Order(7))), page(7));
  }

  // ---------------------------------------------------------------- deadline and teardown

  private final Semaphore db = Semaphore.create(1);
  private final Pool pool = new Pool();
  private final List<Shard> shards = List.of(new Shard(), new Shard(), new Shard());

  /** Closing it fails the queries still running on it, as a real connection's close does. */
  static final class Connection {
    final AtomicBoolean closed = new AtomicBoolean();
    final List<CompletableFuture<String>> running = new CopyOnWriteArrayList<>();

    void close() {
      closed.set(true);
      running.forEach(query -> query.completeExceptionally(new IllegalStateException("closed")));
    }
  }

  static final class Pool {
    final Connection connection = new Connection();

    Connection open() {
      return connection;
    }
  }

  /** A shard that never answers: the deadline ends the scope. */
  static final class Shard {
    CompletableFuture<String> query(Connection connection) {
      CompletableFuture<String> query = new CompletableFuture<>();
      connection.running.add(query);
      return query;
    }
  }

  private void deadlineAndTeardown() throws Exception {
    try (Scope scope = Scope.builder().deadline(Duration.ofSeconds(2)).open()) {
      Connection connection = pool.open();
      scope.teardown(connection::close); // once, after every task has ended; hooks in reverse order
      for (Shard shard : shards) {
        scope.forkAsync(() -> db.callAsync(1, () -> shard.query(connection)));
      }
      scope.join(); // late: CancellationException caused by TimeoutException
    } // the db requests still queued were withdrawn
  }

  @Test
  void deadlineAndTeardown_example() {
    CancellationException late =
        assertThrows(CancellationException.class, this::deadlineAndTeardown);
    assertInstanceOf(TimeoutException.class, late.getCause());
    assertTrue(pool.connection.closed.get(), "the hook closed the connection");
    assertEquals(0, db.queueLength(), "the two requests that queued were withdrawn");
    // callAsync holds its permit until the query really ends, not when its future is cancelled:
    // the hook's close ended the one query that ran.
    assertEquals(1, db.available(), "the one that ran gave its permit back");
  }

  // ---------------------------------------------------------------- supervisor

  private final List<Job> jobs = List.of(new Job(false), new Job(true), new Job(false));
  private final Log log = new Log();

  /** A job with a result: fork takes a task that returns one (a void one returns null). */
  record Job(boolean fails) {
    String run() {
      if (fails) {
        throw new IllegalStateException("job failed on purpose");
      }
      return "done";
    }
  }

  static final class Log {
    final List<Throwable> warned = new CopyOnWriteArrayList<>();

    void warn(String message, Throwable failure) {
      warned.add(failure);
    }
  }

  /**
   * Stands for {@code java.util.concurrent.Executors} in the example, which calls a JDK 21 method:
   * the tests compile for JDK 17, so this gives virtual threads on 21+ and a pool of platform
   * threads before, and the example runs on both.
   */
  static final class Executors {
    static ExecutorService newVirtualThreadPerTaskExecutor() {
      return ScopeTest.executorOfThisJdk();
    }
  }

  @Test
  void supervisor() throws Exception {
    try (Scope scope =
        Scope.builder()
            .supervisor() // a failure cancels nothing
            .executor(Executors.newVirtualThreadPerTaskExecutor())
            .open()) {
      for (Job job : jobs) {
        scope.fork(job::run);
      }
      scope.join(); // all ended, whatever they did
      scope.failures().forEach(failure -> log.warn("job failed", failure));
    }
    assertEquals(1, log.warned.size());
    assertEquals("job failed on purpose", log.warned.get(0).getMessage());
  }
}
