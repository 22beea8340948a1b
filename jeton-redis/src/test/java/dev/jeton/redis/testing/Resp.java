package dev.jeton.redis.testing;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ProtocolException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Just enough of the Redis protocol (RESP2) to send one command over a fresh socket and read its
 * reply. The fixtures use it instead of a client library so that they test nothing but the server.
 *
 * <p>A reply is a {@link String} (simple or bulk string), a {@link Long} (integer), an {@link
 * ErrorReply} (error reply), a {@code List<Object>} of replies (array), or {@code null} (nil).
 */
final class Resp {
  private Resp() {}

  /** An error reply, such as {@code ERR unknown command} or {@code MOVED 866 127.0.0.1:7001}. */
  record ErrorReply(String message) {}

  /**
   * Connects to {@code 127.0.0.1:port}, sends {@code args} as one command and reads one reply.
   *
   * @param timeout bounds the connect and every read, so a stopped server fails the call instead of
   *     hanging it
   */
  static Object call(int port, Duration timeout, String... args) throws IOException {
    if (args.length == 0) {
      throw new IllegalArgumentException("no command");
    }
    int millis = Math.toIntExact(Math.max(1, timeout.toMillis()));
    try (Socket socket = new Socket()) {
      InetAddress loopback = InetAddress.getByAddress(new byte[] {127, 0, 0, 1});
      socket.connect(new InetSocketAddress(loopback, port), millis);
      socket.setSoTimeout(millis);
      socket.setTcpNoDelay(true);
      OutputStream out = socket.getOutputStream();
      out.write(encode(args));
      out.flush();
      return read(new BufferedInputStream(socket.getInputStream()));
    }
  }

  /**
   * Renders a reply as text: strings as they are, errors as their message ({@code ERR ...}),
   * integers in decimal, nil as {@code (nil)}, and the elements of arrays, nested ones flattened,
   * one per line.
   */
  static String render(Object reply) {
    StringBuilder text = new StringBuilder();
    render(reply, text);
    return text.toString();
  }

  private static void render(Object reply, StringBuilder text) {
    if (reply instanceof List<?> elements) {
      for (int i = 0; i < elements.size(); i++) {
        if (i > 0) {
          text.append('\n');
        }
        render(elements.get(i), text);
      }
    } else if (reply instanceof ErrorReply error) {
      text.append(error.message());
    } else {
      text.append(reply == null ? "(nil)" : reply);
    }
  }

  private static byte[] encode(String... args) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    writeAscii(bytes, "*" + args.length + "\r\n");
    for (String arg : args) {
      byte[] utf8 = arg.getBytes(StandardCharsets.UTF_8);
      writeAscii(bytes, "$" + utf8.length + "\r\n");
      bytes.writeBytes(utf8);
      writeAscii(bytes, "\r\n");
    }
    return bytes.toByteArray();
  }

  private static void writeAscii(ByteArrayOutputStream bytes, String text) {
    bytes.writeBytes(text.getBytes(StandardCharsets.US_ASCII));
  }

  private static Object read(InputStream in) throws IOException {
    int type = in.read();
    if (type < 0) {
      throw new EOFException("the server closed the connection without replying");
    }
    String line = readLine(in);
    return switch (type) {
      case '+' -> line;
      case '-' -> new ErrorReply(line);
      case ':' -> Long.parseLong(line);
      case '$' -> readBulk(in, Integer.parseInt(line));
      case '*' -> readArray(in, Integer.parseInt(line));
      default ->
          throw new ProtocolException("unexpected reply type '" + (char) type + "': " + line);
    };
  }

  private static Object readBulk(InputStream in, int length) throws IOException {
    if (length < 0) {
      return null;
    }
    byte[] data = in.readNBytes(length);
    if (data.length < length || in.read() != '\r' || in.read() != '\n') {
      throw new EOFException("truncated bulk string");
    }
    return new String(data, StandardCharsets.UTF_8);
  }

  private static Object readArray(InputStream in, int count) throws IOException {
    if (count < 0) {
      return null;
    }
    List<Object> elements = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      elements.add(read(in));
    }
    return elements;
  }

  private static String readLine(InputStream in) throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    int previous = -1;
    while (true) {
      int b = in.read();
      if (b < 0) {
        throw new EOFException("truncated reply");
      }
      if (previous == '\r' && b == '\n') {
        byte[] bytes = line.toByteArray();
        return new String(bytes, 0, bytes.length - 1, StandardCharsets.UTF_8);
      }
      line.write(b);
      previous = b;
    }
  }
}
