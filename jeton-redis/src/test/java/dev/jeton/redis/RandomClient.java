package dev.jeton.redis;

import dev.jeton.redis.testing.Await;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.Writer;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A client process for {@link RedisRandomizedIntegrationTest}: makes {@code count} random requests
 * on a Redis semaphore, one after the other, and writes what happened to its history file, one line
 * per event, flushed at once (the format is parsed by {@link RandomizedHistoryChecker}).
 *
 * <p>Each request has a random weight (1 to 3) and a random kind: a blocking {@code acquire}, an
 * {@code acquire} with a short timeout (blocking or asynchronous), an asynchronous acquire
 * cancelled after a short delay unless granted by then, or a {@code tryAcquire}. A granted lease is
 * used at the fenced resource run by the test ({@code BEGIN} with its tokens, a hold of a few
 * milliseconds, {@code END}), then released, and the release's answer recorded.
 *
 * <p>Request {@code pauseAt} (if not -1) is the test's pause: the client takes one permit, begins
 * using it at the resource, prints {@code HOLDING <lease id>} and waits for a {@code go} line on
 * stdin. The test freezes the process with SIGSTOP meanwhile, for longer than the lease time; on
 * waking, the client waits for the loss notice, writes to the resource with its stale tokens, and
 * releases.
 *
 * <p>Stdout: {@code READY} once connected (then it waits for {@code start} on stdin), {@code
 * HOLDING <id>}, {@code DONE} at the end, {@code FAILED <error>} on an unexpected error.
 *
 * <p>Clients of odd index reach Redis through Jedis ({@link RedisSemaphore.Builder#jedis()}), the
 * others through Lettuce: one fleet, both clients.
 *
 * <p>Arguments: uri name limit seed count historyFile resourcePort clientIndex pauseAt leaseMillis
 */
public final class RandomClient {
  /** The owner every client puts on its requests: {@code rc-<index>}, read back from Redis. */
  static final String OWNER_PREFIX = "rc-";

  enum Kind {
    BLOCKING,
    TIMED,
    ASYNC_TIMED,
    ASYNC_CANCEL,
    TRY
  }

  private final RedisSemaphore semaphore;
  private final History history;
  private final PrintWriter resourceOut;
  private final BufferedReader resourceIn;
  private final BufferedReader stdin;

  private RandomClient(
      RedisSemaphore semaphore, History history, Socket resource, BufferedReader stdin)
      throws IOException {
    this.semaphore = semaphore;
    this.history = history;
    this.resourceOut =
        new PrintWriter(
            new java.io.OutputStreamWriter(resource.getOutputStream(), StandardCharsets.UTF_8),
            true);
    this.resourceIn =
        new BufferedReader(
            new InputStreamReader(resource.getInputStream(), StandardCharsets.UTF_8));
    this.stdin = stdin;
  }

  public static void main(String[] args) throws Exception {
    String uri = args[0];
    String name = args[1];
    int limit = Integer.parseInt(args[2]);
    long seed = Long.parseLong(args[3]);
    int count = Integer.parseInt(args[4]);
    Path historyFile = Path.of(args[5]);
    int resourcePort = Integer.parseInt(args[6]);
    int index = Integer.parseInt(args[7]);
    int pauseAt = Integer.parseInt(args[8]);
    Duration lease = Duration.ofMillis(Long.parseLong(args[9]));

    BufferedReader stdin =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    try (History history = new History(historyFile)) {
      history.line("CLIENT " + index + " " + ProcessHandle.current().pid() + " " + seed);
      try {
        RedisSemaphore.Builder builder = RedisSemaphore.builder(name).uri(uri);
        if (index % 2 == 1) {
          builder.jedis(); // a fleet of both clients: every other one on Jedis
        }
        RedisSemaphore semaphore =
            builder
                .limit(limit)
                .owner(OWNER_PREFIX + index)
                .options(
                    RedisSemaphoreOptions.defaults()
                        .withLeaseTime(lease)
                        .withPollInterval(Duration.ofMillis(100))
                        // A waiter that misses polls for this long drops out of the queue and
                        // asks again at the back: a stall of the machine, not a bug. The checker
                        // counts that as a failure, so leave it room.
                        .withWaiterExpiry(Duration.ofSeconds(5)))
                .open();
        try (Socket resource = new Socket(InetAddress.getLoopbackAddress(), resourcePort)) {
          resource.setTcpNoDelay(true);
          RandomClient client = new RandomClient(semaphore, history, resource, stdin);
          System.out.println("READY");
          client.awaitLine("start");
          client.run(new Random(seed), count, pauseAt);
          // One more round trip on the command connection: every cancel sent before it has
          // reached Redis when it returns, so the process can exit.
          history.line("FINAL available " + semaphore.available());
          client.resourceOut.println("BYE");
        }
        semaphore.close();
        history.line("END " + count);
      } catch (Throwable e) {
        history.line("ERROR " + oneLine(e));
        System.out.println("FAILED " + oneLine(e));
        System.out.flush();
        System.exit(1);
      }
    }
    System.out.println("DONE");
    System.out.flush();
    System.exit(0);
  }

  private void run(Random random, int count, int pauseAt) throws Exception {
    for (int i = 0; i < count; i++) {
      if (i == pauseAt) {
        pausedRound(i);
        continue;
      }
      int weight = 1 + random.nextInt(3);
      int roll = random.nextInt(100);
      Kind kind =
          roll < 30
              ? Kind.BLOCKING
              : roll < 45
                  ? Kind.TIMED
                  : roll < 60 ? Kind.ASYNC_TIMED : roll < 82 ? Kind.ASYNC_CANCEL : Kind.TRY;
      long param =
          switch (kind) {
            case TIMED, ASYNC_TIMED -> 5 + random.nextInt(200); // the timeout, ms
            case ASYNC_CANCEL -> random.nextInt(150); // the delay before cancelling, ms
            default -> 0;
          };
      int holdMillis = 1 + random.nextInt(15);
      history.line("REQ " + i + " " + kind + " " + weight + " " + param + " " + now());
      long started = System.nanoTime();
      Lease lease = null;
      String failure = null;
      try {
        switch (kind) {
          case BLOCKING -> lease = semaphore.acquire(weight);
          case TIMED -> lease = semaphore.acquire(weight, Duration.ofMillis(param));
          case ASYNC_TIMED -> {
            try {
              lease = semaphore.acquireLeaseAsync(weight, Duration.ofMillis(param)).get();
            } catch (ExecutionException e) {
              if (e.getCause() instanceof TimeoutException) {
                failure = "TIMEOUT";
              } else {
                throw e;
              }
            }
          }
          case ASYNC_CANCEL -> {
            CompletableFuture<Lease> future = semaphore.acquireLeaseAsync(weight);
            try {
              lease = future.get(param, TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
              if (future.cancel(true)) {
                failure = "CANCEL";
              } else {
                lease = future.join(); // granted as we cancelled: the grant won
              }
            }
          }
          case TRY -> {
            lease = semaphore.tryAcquireLease(weight).orElse(null);
            if (lease == null) {
              failure = "BUSY";
            }
          }
        }
      } catch (TimeoutException e) {
        failure = "TIMEOUT";
      }
      long elapsed = System.nanoTime() - started;
      if (lease == null) {
        history.line(failure + " " + i + " " + elapsed + " " + now());
        continue;
      }
      granted(i, lease, elapsed);
      String tokens = FencingToken.format(lease.fencingTokens());
      resource(i, "BEGIN " + lease.id() + " " + lease.permits() + " " + tokens);
      Thread.sleep(holdMillis);
      resource(i, "END " + lease.id());
      release(i, lease);
    }
  }

  /** The test's pause: hold one permit while the test freezes this process. */
  private void pausedRound(int i) throws Exception {
    history.line("REQ " + i + " PAUSED 1 0 " + now());
    long started = System.nanoTime();
    Lease lease = semaphore.acquire(1);
    granted(i, lease, System.nanoTime() - started);
    String tokens = FencingToken.format(lease.fencingTokens());
    resource(i, "BEGIN " + lease.id() + " 1 " + tokens);
    history.line("PAUSE " + i + " " + lease.id() + " " + now());
    System.out.println("HOLDING " + lease.id());
    awaitLine("go");
    history.line("RESUMED " + i + " " + now());
    try {
      lease.lost().toCompletableFuture().get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      history.line("NOLOSS " + i + " " + lease.id() + " " + now());
    }
    // A holder that does not look at its lease before writing: the resource must fence it off
    // if the permit's new holder has written since.
    resource(i, "WRITE " + lease.id() + " " + tokens);
    resource(i, "END " + lease.id());
    release(i, lease);
  }

  private void granted(int i, Lease lease, long elapsedNanos) {
    history.line(
        "GRANT "
            + i
            + " "
            + lease.id()
            + " "
            + lease.permits()
            + " "
            + FencingToken.format(lease.fencingTokens())
            + " "
            + lease.expiresAt().toEpochMilli()
            + " "
            + elapsedNanos
            + " "
            + now());
    String id = lease.id();
    lease
        .lost()
        .thenAccept(
            loss -> history.line("LOST " + id + " " + now() + " " + oneLine(loss.reason())));
  }

  private void release(int i, Lease lease) throws Exception {
    boolean held = lease.isHeld();
    boolean lost = lease.lost().toCompletableFuture().isDone();
    long before = now();
    boolean released = lease.releaseAsync().get(Await.HANG_GUARD.toSeconds(), TimeUnit.SECONDS);
    history.line(
        "RELEASE "
            + i
            + " "
            + lease.id()
            + " "
            + held
            + " "
            + lost
            + " "
            + released
            + " "
            + before
            + " "
            + now());
  }

  private void resource(int i, String message) throws IOException {
    resourceOut.println(message);
    String reply = resourceIn.readLine();
    if (reply == null) {
      throw new IOException("the fenced resource closed the connection");
    }
    history.line("RES " + i + " " + message.substring(0, message.indexOf(' ')) + " " + reply);
  }

  private void awaitLine(String expected) throws IOException {
    for (String line; (line = stdin.readLine()) != null; ) {
      if (line.equals(expected)) {
        return;
      }
    }
    throw new IOException("stdin closed before '" + expected + "'");
  }

  /**
   * Wall-clock microseconds since the epoch: CLOCK_REALTIME on Linux, the clock Redis reads for
   * TIME and for the MONITOR timestamps, so these times compare with Redis's on one machine.
   */
  static long now() {
    Instant now = Instant.now();
    return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
  }

  private static String oneLine(Throwable e) {
    return oneLine(String.valueOf(e));
  }

  private static String oneLine(String text) {
    return text.replaceAll("\\s+", " ");
  }

  /** The history file: one line per event, flushed at once, from any thread. */
  static final class History implements AutoCloseable {
    private final Writer out;

    History(Path file) throws IOException {
      this.out = Files.newBufferedWriter(file, StandardCharsets.UTF_8);
    }

    synchronized void line(String line) {
      try {
        out.write(line);
        out.write('\n');
        out.flush();
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }

    @Override
    public synchronized void close() throws IOException {
      out.close();
    }
  }
}
