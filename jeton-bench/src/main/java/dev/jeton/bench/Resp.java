package dev.jeton.bench;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A blocking RESP2 connection to Redis, for the benchmarks' housekeeping (is the server up, flush,
 * command statistics, {@code MONITOR}): not for anything measured. Replies come back as String
 * (simple and bulk strings), Long, a List of replies, or null; an error reply throws.
 */
final class Resp implements AutoCloseable {
  private final Socket socket;
  private final InputStream in;
  private final OutputStream out;

  private Resp(Socket socket) throws IOException {
    this.socket = socket;
    this.in = new BufferedInputStream(socket.getInputStream());
    this.out = socket.getOutputStream();
  }

  /** Connects to {@code host:port}, giving up after {@code timeoutMillis}. */
  static Resp connect(String host, int port, int timeoutMillis) throws IOException {
    Socket socket = new Socket();
    try {
      socket.connect(new InetSocketAddress(host, port), timeoutMillis);
      socket.setSoTimeout(timeoutMillis);
      socket.setTcpNoDelay(true);
      return new Resp(socket);
    } catch (IOException e) {
      socket.close();
      throw e;
    }
  }

  /** How long a read may block, in ms; 0 for ever. */
  void readTimeout(int millis) {
    try {
      socket.setSoTimeout(millis);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Sends a command and returns its reply. */
  @Nullable Object call(String... command) {
    send(command);
    return read();
  }

  /** Sends a command without reading its reply. */
  void send(String... command) {
    try {
      ByteArrayOutputStream buffer = new ByteArrayOutputStream();
      buffer.write(
          ('*' + Integer.toString(command.length) + "\r\n").getBytes(StandardCharsets.UTF_8));
      for (String part : command) {
        byte[] bytes = part.getBytes(StandardCharsets.UTF_8);
        buffer.write(
            ('$' + Integer.toString(bytes.length) + "\r\n").getBytes(StandardCharsets.UTF_8));
        buffer.write(bytes);
        buffer.write('\r');
        buffer.write('\n');
      }
      buffer.writeTo(out);
      out.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Reads one reply. */
  @Nullable Object read() {
    try {
      int type = in.read();
      if (type < 0) {
        throw new EOFException("Redis closed the connection");
      }
      String line = readLine();
      return switch (type) {
        case '+' -> line;
        case '-' -> throw new IllegalStateException("Redis: " + line);
        case ':' -> Long.parseLong(line);
        case '$' -> {
          int length = Integer.parseInt(line);
          if (length < 0) {
            yield null;
          }
          byte[] bytes = in.readNBytes(length + 2);
          yield new String(bytes, 0, length, StandardCharsets.UTF_8);
        }
        case '*' -> {
          int count = Integer.parseInt(line);
          if (count < 0) {
            yield null;
          }
          List<@Nullable Object> items = new ArrayList<>(count);
          for (int i = 0; i < count; i++) {
            items.add(read());
          }
          yield items;
        }
        default ->
            throw new IllegalStateException("not a RESP2 reply: '" + (char) type + line + "'");
      };
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private String readLine() throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    while (true) {
      int b = in.read();
      if (b < 0) {
        throw new EOFException("Redis closed the connection");
      }
      if (b == '\r') {
        int lf = in.read();
        if (lf != '\n') {
          throw new IllegalStateException("malformed RESP line");
        }
        return line.toString(StandardCharsets.UTF_8);
      }
      line.write(b);
    }
  }

  @Override
  public void close() {
    try {
      socket.close();
    } catch (IOException ignored) {
      // closing: nothing to do
    }
  }
}
