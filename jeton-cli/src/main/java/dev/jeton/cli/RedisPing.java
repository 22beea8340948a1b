package dev.jeton.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLSocketFactory;

/**
 * Whether a Redis answers at all, asked on a connection of its own: {@link RedisBound} asks before
 * it says that Redis did not answer, so that a process too slow to hear Redis (a machine so busy
 * that the client has not even started) is not taken for a Redis that is silent.
 *
 * <p>It sends an inline {@code PING} and waits for the first byte of any reply: {@code +PONG}, or
 * an error such as {@code -NOAUTH} (no password is sent: any reply shows the server is there). A
 * stopped Redis, a hung host or a network that drops packets still let the kernel accept the
 * connection, and then send nothing. Each host the URI names is asked in turn (a Sentinel's, a
 * Cluster's seeds) until one answers, within one bound in all; TLS for the {@code rediss} schemes
 * (with the JVM's default trust: a URI that turns verification off is not followed here, and such a
 * Redis is then taken as silent, as it was before this probe).
 */
final class RedisPing {
  private static final byte[] PING = "PING\r\n".getBytes(StandardCharsets.US_ASCII);

  private RedisPing() {}

  /** Whether the Redis of {@code uri} (its password may be left out) answers within {@code d}. */
  static boolean answers(String uri, Duration within) {
    long deadline = System.nanoTime() + within.toNanos();
    int schemeEnd = uri.indexOf("://");
    if (schemeEnd < 0) {
      return false;
    }
    String scheme = uri.substring(0, schemeEnd);
    String rest = uri.substring(schemeEnd + 3);
    try {
      if (scheme.contains("socket")) {
        return answersOnSocket(rest.split("[?#]", 2)[0], deadline);
      }
      boolean tls =
          scheme.startsWith("rediss") || scheme.contains("+ssl") || scheme.contains("+tls");
      int defaultPort = scheme.contains("sentinel") ? 26379 : 6379;
      for (InetSocketAddress address : addresses(rest, defaultPort)) {
        if (answersAt(address, tls, deadline)) {
          return true;
        }
      }
    } catch (RuntimeException | IOException unreadable) {
      return false; // a URI this cannot follow: as without the probe
    }
    return false;
  }

  /** The hosts of the authority that {@code rest} (a URI after its scheme) starts with. */
  static List<InetSocketAddress> addresses(String rest, int defaultPort) {
    String authority = rest.split("[/?#]", 2)[0];
    authority = authority.substring(authority.lastIndexOf('@') + 1); // no user or password
    List<InetSocketAddress> addresses = new ArrayList<>();
    for (String hostAndPort : authority.split(",")) {
      String host = hostAndPort;
      int port = defaultPort;
      int colon = hostAndPort.lastIndexOf(':');
      if (colon > hostAndPort.lastIndexOf(']')) { // not inside an IPv6 address
        host = hostAndPort.substring(0, colon);
        port = Integer.parseInt(hostAndPort.substring(colon + 1));
      }
      if (host.startsWith("[") && host.endsWith("]")) {
        host = host.substring(1, host.length() - 1);
      }
      addresses.add(InetSocketAddress.createUnresolved(host, port));
    }
    return addresses;
  }

  private static boolean answersAt(InetSocketAddress unresolved, boolean tls, long deadline) {
    int millis = millisLeft(deadline);
    if (millis <= 0) {
      return false;
    }
    InetSocketAddress address =
        new InetSocketAddress(unresolved.getHostString(), unresolved.getPort());
    try (Socket plain = new Socket()) {
      plain.connect(address, millis);
      Socket socket = plain;
      if (tls) {
        socket =
            ((SSLSocketFactory) SSLSocketFactory.getDefault())
                .createSocket(plain, unresolved.getHostString(), unresolved.getPort(), true);
      }
      try (Socket s = socket) {
        int left = millisLeft(deadline);
        if (left <= 0) {
          return false;
        }
        s.setSoTimeout(left); // the TLS handshake, on the first write, is bounded by it too
        OutputStream out = s.getOutputStream();
        out.write(PING);
        out.flush();
        InputStream in = s.getInputStream();
        return in.read() >= 0;
      }
    } catch (IOException silentOrUnreachable) {
      return false;
    }
  }

  private static boolean answersOnSocket(String path, long deadline) throws IOException {
    try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      channel.connect(UnixDomainSocketAddress.of(path)); // local: at once, or refused
      channel.write(ByteBuffer.wrap(PING));
      channel.configureBlocking(false);
      ByteBuffer one = ByteBuffer.allocate(1);
      while (millisLeft(deadline) > 0) {
        if (channel.read(one) != 0) {
          return one.position() == 1;
        }
        Thread.sleep(5); // a unix socket has no read timeout; polled, for two seconds at most
      }
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private static int millisLeft(long deadline) {
    long left = (deadline - System.nanoTime()) / 1_000_000;
    return (int) Math.min(Integer.MAX_VALUE, Math.max(0, left));
  }
}
