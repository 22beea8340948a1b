package dev.jeton.redis;

import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Connection;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisPubSub;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.util.JedisURIHelper;

/**
 * A {@link Link} over Jedis, for one server (or a primary) at a {@code redis://} URI: what a
 * short-lived process opens, since it starts in a fraction of Lettuce's time (decision 62).
 *
 * <p>What it gives up against {@link LettuceLink}: calls go one at a time (no pipelining: a
 * handle's calls wait for each other's round trips), and it knows neither Sentinel, Cluster, TLS
 * nor Unix sockets (use the default client for those).
 */
final class JedisLink implements Link {
  /*
   * Overview
   *
   * One thread, the command thread, runs the calls one after another in the order they were
   * sent, on one connection that only it touches: so Redis runs them in that order, as over
   * Lettuce's one connection. A call that finds no connection opens one; a call that fails on
   * its connection (Redis gone, no reply in time) closes it and fails with the reason, as
   * Lettuce's connections do while disconnected (REJECT_COMMANDS): the semaphore's callers retry
   * within their timeouts, and the next call connects again.
   *
   * A second thread, the wake-up thread, holds the subscription: subscribing blocks it until its
   * connection ends, and it then subscribes again, 100 ms later at first, doubling up to 1 s,
   * until the link is closed. Messages lost meanwhile are found by the waiters' polls.
   *
   * Closing: the command thread runs what was sent before, closes its connection and ends; the
   * subscription ends by UNSUBSCRIBE, or by closing its socket when it is not subscribed at that
   * moment; closeAsync completes when both threads have ended, and awaitClosed joins them, so a
   * process may exit at once (a JVM that exits while a thread reads a socket waits 300 ms).
   *
   * A call that fails in this process (an Error, such as running out of memory on a huge reply)
   * fails alone and drops its connection. If the command thread dies all the same (an Error
   * raised while failing the call), the link is over: that call, the calls queued behind it and
   * every later one fail with the reason, never leaving a caller waiting.
   *
   * Fields: `connection` is the command thread's alone; `pubsub` and `subscribed` are written by
   * the wake-up thread and read by close (volatile); `closed` and `died` are volatile;
   * `listeners` is a concurrent map. `wakeUpThread` is set under the link's monitor, which
   * subscribe and closeAsync hold, so a close sees a subscription's thread started or none; it is
   * read without it (volatile) by awaitClosed and onItsThread, so it carries no @GuardedBy.
   */

  private static final int RECONNECT_FIRST_MILLIS = 100;
  private static final int RECONNECT_MAX_MILLIS = 1000;

  private final HostAndPort address;
  private final JedisClientConfig config;
  private final ThreadPoolExecutor commands;
  private final Thread commandThread;
  private final CompletableFuture<Void> commandsEnded = new CompletableFuture<>();
  private final CompletableFuture<Void> wakeUpsEnded = new CompletableFuture<>();
  private final Map<String, Consumer<String>> listeners = new ConcurrentHashMap<>();
  private @Nullable Connection connection; // the command thread's
  private volatile @Nullable Thread wakeUpThread;
  private volatile @Nullable JedisPubSub pubsub;
  private volatile @Nullable Connection subscribed;
  private volatile boolean closed;

  /** What ended the command thread, if something did: every call since fails with it. */
  private volatile @Nullable Throwable died;

  private JedisLink(HostAndPort address, JedisClientConfig config, Connection first) {
    this.address = address;
    this.config = config;
    this.connection = first; // handed to the command thread by its start
    Thread[] made = new Thread[1];
    this.commands =
        new ThreadPoolExecutor(
            1,
            1,
            0,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            task -> {
              Thread thread = new Thread(task, "jeton-redis-commands");
              thread.setDaemon(true);
              made[0] = thread;
              return thread;
            }) {
          @Override
          protected void afterExecute(Runnable task, @Nullable Throwable thrown) {
            if (thrown != null) {
              commandThreadDied(task, thrown); // on the command thread, as it dies
            }
          }

          @Override
          protected void terminated() {
            commandsEnded.complete(null); // on the command thread, as it ends
          }
        };
    commands.prestartCoreThread();
    this.commandThread = java.util.Objects.requireNonNull(made[0]);
  }

  /**
   * Connects to the server at {@code uri}, {@code redis://[[user]:password@]host[:port][/db]}.
   *
   * @throws IllegalArgumentException if it is not such a URI
   * @throws RedisConnectionException if the server cannot be reached or refuses the connection
   */
  static JedisLink connect(String uri) {
    URI parsed = JedisCodec.parse(uri);
    HostAndPort address = JedisURIHelper.getHostAndPort(parsed);
    DefaultJedisClientConfig.Builder config =
        DefaultJedisClientConfig.builder()
            .connectionTimeoutMillis((int) COMMAND_TIMEOUT.toMillis())
            .socketTimeoutMillis((int) COMMAND_TIMEOUT.toMillis())
            .user(JedisURIHelper.getUser(parsed))
            .password(JedisURIHelper.getPassword(parsed));
    if (JedisURIHelper.hasDbIndex(parsed)) {
      config.database(JedisURIHelper.getDBIndex(parsed));
    }
    JedisClientConfig built = config.build();
    return new JedisLink(address, built, open(address, built));
  }

  private static Connection open(HostAndPort address, JedisClientConfig config) {
    try {
      return new Connection(address, config);
    } catch (JedisException e) {
      // Jedis keeps the socket's own reason (connection refused, no route) as a suppressed one
      Throwable[] suppressed = e.getSuppressed();
      Throwable reason =
          suppressed.length > 0 ? suppressed[suppressed.length - 1] : JedisCodec.translate(e);
      throw new RedisConnectionException("Unable to connect to " + address, reason);
    }
  }

  // ---------------------------------------------------------------- calls

  /** A piece of work done on the command connection. */
  private interface Work<T> {
    T on(Connection connection);
  }

  /** Runs {@code work} on the command thread; fails with Lettuce's exceptions. */
  private <T> CompletableFuture<T> call(Work<T> work) {
    CompletableFuture<T> result = new CompletableFuture<>();
    try {
      commands.execute(new Call<>(work, result));
    } catch (RejectedExecutionException e) {
      Throwable death = died;
      result.completeExceptionally(
          death != null
              ? threadDied(death)
              : new RedisException("the connection to Redis is closed"));
    }
    return result;
  }

  /**
   * One call: its work, and the future its caller waits for, which completes whatever happens, so
   * that no caller waits for ever. A call that fails on this side (out of memory reading a reply)
   * fails alone, and drops its connection, which it left in the middle of a reply.
   */
  private final class Call<T> implements Runnable {
    private final Work<T> work;
    private final CompletableFuture<T> result;

    Call(Work<T> work, CompletableFuture<T> result) {
      this.work = work;
      this.result = result;
    }

    @Override
    public void run() {
      T value;
      try {
        value = work.on(connection());
      } catch (JedisException e) {
        if (e instanceof JedisConnectionException) {
          dropConnection();
        }
        result.completeExceptionally(JedisCodec.translate(e));
        return;
      } catch (RuntimeException e) {
        result.completeExceptionally(e);
        return;
      } catch (Error e) {
        dropConnection();
        result.completeExceptionally(Calls.failedInThisProcess(e));
        return;
      }
      result.complete(value);
    }

    void fail(Throwable death) {
      result.completeExceptionally(threadDied(death));
    }
  }

  /**
   * The command thread is dying of {@code thrown} (an Error that escaped a call: one raised while
   * failing it, out of memory again): the link can run nothing more, so the call, every call queued
   * behind it and every later one fail with the reason (they waited for ever before).
   */
  private void commandThreadDied(Runnable task, Throwable thrown) {
    died = thrown;
    commands.shutdown(); // no thread replaces this one; later calls are refused
    List<Runnable> queued = new ArrayList<>();
    queued.add(task);
    commands.getQueue().drainTo(queued);
    for (Runnable r : queued) {
      if (r instanceof Call) {
        ((Call<?>) r).fail(thrown);
      }
    }
    dropConnection();
  }

  private static RedisException threadDied(Throwable death) {
    return new RedisException("the thread that calls Redis died: " + death, death);
  }

  /** The command connection, opened again if the last one failed (command thread only). */
  private Connection connection() {
    Connection current = connection;
    if (current != null && !current.isBroken()) {
      return current;
    }
    dropConnection();
    Connection fresh = open(address, config);
    connection = fresh;
    return fresh;
  }

  private void dropConnection() {
    Connection current = connection;
    connection = null;
    if (current != null) {
      closeQuietly(current);
    }
  }

  @Override
  public CompletableFuture<List<Object>> run(String function, String[] keys, String[] args) {
    CommandArguments fcall = new CommandArguments(Protocol.Command.FCALL);
    fcall.add(function).add(keys.length);
    for (String key : keys) {
      fcall.key(key);
    }
    for (String arg : args) {
      fcall.add(arg);
    }
    CompletableFuture<List<Object>> reply =
        call(
            c -> {
              try {
                return JedisCodec.functionReply(c.executeCommand(fcall));
              } catch (JedisDataException e) {
                if (!Library.isMissingFunction(JedisCodec.translate(e))) {
                  throw e;
                }
                c.executeCommand(
                    new CommandArguments(Protocol.Command.FUNCTION)
                        .add("LOAD")
                        .add("REPLACE")
                        .add(Library.LIBRARY));
                return JedisCodec.functionReply(c.executeCommand(fcall));
              }
            });
    CompletableFuture<List<Object>> explained = new CompletableFuture<>();
    reply.whenComplete(
        (result, failure) -> {
          if (failure != null) {
            explained.completeExceptionally(
                java.util.Objects.requireNonNull(Library.explain(failure)));
          } else {
            explained.complete(result);
          }
        });
    return explained;
  }

  @Override
  public CompletableFuture<Long> waitForReplicas(int replicas, Duration timeout) {
    return call(
        c ->
            (Long)
                c.executeCommand(
                    new CommandArguments(Protocol.Command.WAIT)
                        .add(replicas)
                        .add(timeout.toMillis())));
  }

  @Override
  public List<String> keys(String pattern) {
    return Calls.join(
        call(
            c -> {
              List<String> found = new ArrayList<>();
              String cursor = "0";
              do {
                List<Object> page =
                    JedisCodec.list(
                        c.executeCommand(
                            new CommandArguments(Protocol.Command.SCAN)
                                .add(cursor)
                                .add("MATCH")
                                .add(pattern)
                                .add("COUNT")
                                .add(1000)));
                cursor = (String) page.get(0);
                for (Object key : (List<?>) page.get(1)) {
                  found.add((String) key);
                }
              } while (!cursor.equals("0"));
              return found;
            }));
  }

  // ---------------------------------------------------------------- wake-ups

  /** Subscribes to one channel for the link's life; a link takes one subscription only. */
  @Override
  public synchronized CompletableFuture<Void> subscribe(String channel, Consumer<String> listener) {
    if (wakeUpThread != null) {
      throw new IllegalStateException("a Jedis link takes one subscription");
    }
    listeners.put(channel, listener);
    CompletableFuture<Void> first = new CompletableFuture<>();
    Thread thread = new Thread(() -> subscribeWhileOpen(channel, first), "jeton-redis-wake-ups");
    thread.setDaemon(true);
    wakeUpThread = thread;
    thread.start();
    return first;
  }

  private void subscribeWhileOpen(String channel, CompletableFuture<Void> first) {
    try {
      int backoff = RECONNECT_FIRST_MILLIS;
      while (!closed) {
        Connection c = null;
        try {
          c = new Connection(address, config);
          subscribed = c;
          JedisPubSub listening = new Listening(first);
          pubsub = listening;
          if (!closed) {
            listening.proceed(c, channel); // returns when unsubscribed or the connection ends
          }
          backoff = RECONNECT_FIRST_MILLIS;
        } catch (JedisException e) {
          if (!first.isDone()) {
            first.completeExceptionally(
                new RedisConnectionException(
                    "Unable to subscribe at " + address + ": " + e.getMessage(),
                    JedisCodec.translate(e)));
            return;
          }
        } finally {
          pubsub = null;
          subscribed = null;
          if (c != null) {
            closeQuietly(c);
          }
        }
        if (!closed) {
          try {
            Thread.sleep(backoff);
          } catch (InterruptedException e) {
            return; // closed
          }
          backoff = Math.min(2 * backoff, RECONNECT_MAX_MILLIS);
        }
      }
    } finally {
      first.completeExceptionally(new RedisException("the connection to Redis is closed"));
      wakeUpsEnded.complete(null);
    }
  }

  /** The subscription's listener. */
  private final class Listening extends JedisPubSub {
    private final CompletableFuture<Void> first;

    Listening(CompletableFuture<Void> first) {
      this.first = first;
    }

    @Override
    public void onSubscribe(String channel, int subscribedChannels) {
      first.complete(null);
      if (closed) {
        unsubscribe(); // closed while subscribing: close may have found nothing to end
      }
    }

    @Override
    public void onMessage(String channel, String message) {
      Consumer<String> listener = listeners.get(channel);
      if (listener != null) {
        listener.accept(message);
      }
    }
  }

  @Override
  public void ignore(String channel) {
    listeners.remove(channel);
  }

  // ---------------------------------------------------------------- closing

  @Override
  public synchronized CompletableFuture<Void> closeAsync() {
    if (!closed) {
      closed = true;
      try {
        commands.execute(this::dropConnection);
      } catch (RejectedExecutionException alreadyShut) {
        // nothing more to run
      }
      commands.shutdown();
      endSubscription();
      if (wakeUpThread == null) {
        wakeUpsEnded.complete(null);
      }
    }
    return CompletableFuture.allOf(commandsEnded, wakeUpsEnded);
  }

  private void endSubscription() {
    JedisPubSub listening = pubsub;
    if (listening != null && listening.isSubscribed()) {
      try {
        listening.unsubscribe();
        return;
      } catch (JedisException e) {
        // the connection failed meanwhile: close it below
      }
    }
    Connection c = subscribed;
    if (c != null) {
      closeQuietly(c); // ends a subscription in progress
    }
    Thread thread = wakeUpThread;
    if (thread != null) {
      thread.interrupt(); // ends a wait before subscribing again
    }
  }

  @Override
  public void awaitClosed(CompletableFuture<?> closing) {
    if (onItsThread()) {
      return; // the command thread must stay free to run the close
    }
    Calls.awaitQuietly(closing, Duration.ofSeconds(3));
    try {
      commandThread.join(1000);
      Thread thread = wakeUpThread;
      if (thread != null) {
        thread.join(1000);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public boolean onItsThread() {
    Thread self = Thread.currentThread();
    return self == commandThread || self == wakeUpThread;
  }

  private static void closeQuietly(Connection c) {
    try {
      c.close();
    } catch (RuntimeException e) {
      // closing a connection that failed
    }
  }
}
