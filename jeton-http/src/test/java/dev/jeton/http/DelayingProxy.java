package dev.jeton.http;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A TCP proxy that delays every chunk it forwards, in either direction, by a fixed time, as a
 * network with that latency would (tc/netem): chunks keep their order, and each is due its delay
 * after it arrived, so many in flight are delayed together, not one after another. A healthy but
 * distant server: it answers everything, each answer a round trip of twice the delay later.
 */
final class DelayingProxy implements AutoCloseable {
  private final ServerSocket server;
  private final int targetPort;
  private final long delayNanos;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private volatile boolean closed;

  /** Listens on a free loopback port, forwarding to {@code targetPort} on loopback. */
  DelayingProxy(int targetPort, Duration delay) {
    this.targetPort = targetPort;
    this.delayNanos = delay.toNanos();
    try {
      server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    daemon("proxy-accept", this::accept);
  }

  /** A {@code redis://} address through this proxy. */
  String redisUri() {
    return "redis://127.0.0.1:" + server.getLocalPort();
  }

  private void accept() {
    while (!closed) {
      try {
        Socket client = server.accept();
        Socket target = new Socket();
        target.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort));
        client.setTcpNoDelay(true);
        target.setTcpNoDelay(true);
        sockets.add(client);
        sockets.add(target);
        forward(client, target);
        forward(target, client);
      } catch (IOException e) {
        return; // closed
      }
    }
  }

  /** Reads chunks from {@code from} as they come; a second thread writes each when it is due. */
  private void forward(Socket from, Socket to) {
    LinkedBlockingQueue<Chunk> due = new LinkedBlockingQueue<>();
    daemon(
        "proxy-read",
        () -> {
          byte[] buffer = new byte[64 * 1024];
          try (InputStream in = from.getInputStream()) {
            for (int n; (n = in.read(buffer)) >= 0; ) {
              due.add(new Chunk(Arrays.copyOf(buffer, n), System.nanoTime() + delayNanos));
            }
          } catch (IOException e) {
            // closed
          }
          due.add(Chunk.END);
        });
    daemon(
        "proxy-write",
        () -> {
          try (OutputStream out = to.getOutputStream()) {
            for (Chunk c; (c = due.take()) != Chunk.END; ) {
              long wait = c.dueNanos - System.nanoTime();
              if (wait > 0) {
                TimeUnit.NANOSECONDS.sleep(wait);
              }
              out.write(c.bytes);
              out.flush();
            }
          } catch (IOException | InterruptedException e) {
            // closed
          }
          closeQuietly(to);
          closeQuietly(from);
        });
  }

  private record Chunk(byte[] bytes, long dueNanos) {
    static final Chunk END = new Chunk(new byte[0], 0);
  }

  private static void daemon(String name, Runnable task) {
    Thread t = new Thread(task, name);
    t.setDaemon(true);
    t.start();
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      // closing
    }
  }

  @Override
  public void close() {
    closed = true;
    try {
      server.close();
    } catch (IOException e) {
      // closing
    }
    sockets.forEach(DelayingProxy::closeQuietly);
  }
}
