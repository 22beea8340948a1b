package dev.jeton.bench;

import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * A minimal HTTP/1.1 client for the load generator: one keep-alive connection, a GET written in one
 * system call, and a blocking read of the status line, the headers and the body (by {@code
 * Content-Length} or chunked). It reconnects after an error or a {@code Connection: close}. Not for
 * general use: no redirects, no TLS, ASCII headers only, no pipelining.
 */
final class RawHttp implements AutoCloseable {
  private final InetSocketAddress address;
  private final byte[] request;
  private @Nullable Connection connection;
  private final StringBuilder line = new StringBuilder();

  /** What one exchange answered: the status, and whether a Retry-After header came with it. */
  record Answer(int status, boolean retryAfter) {}

  private record Connection(Socket socket, InputStream in, OutputStream out) {}

  RawHttp(InetSocketAddress address, String path) {
    this.address = address;
    this.request =
        ("GET "
                + path
                + " HTTP/1.1\r\nHost: "
                + address.getHostString()
                + ":"
                + address.getPort()
                + "\r\nAccept: */*\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII);
  }

  /** Sends the request and reads the whole answer; on an error the connection is closed. */
  Answer get() throws IOException {
    try {
      Connection c = connection;
      if (c == null) {
        Socket s = new Socket();
        s.setTcpNoDelay(true);
        s.connect(address, 10_000);
        s.setSoTimeout(30_000);
        c =
            new Connection(
                s, new BufferedInputStream(s.getInputStream(), 8192), s.getOutputStream());
        connection = c;
      }
      c.out().write(request);
      c.out().flush();
      return read(c.in());
    } catch (IOException | RuntimeException e) {
      close();
      throw e;
    }
  }

  private Answer read(InputStream in) throws IOException {
    String status = readLine(in);
    if (!status.startsWith("HTTP/1.1 ") || status.length() < 12) {
      throw new IOException("not an HTTP/1.1 status line: " + status);
    }
    int code = Integer.parseInt(status.substring(9, 12));
    long length = -1;
    boolean chunked = false;
    boolean retryAfter = false;
    boolean closeAfter = false;
    for (String header = readLine(in); !header.isEmpty(); header = readLine(in)) {
      int colon = header.indexOf(':');
      if (colon < 0) {
        throw new IOException("bad header line: " + header);
      }
      String name = header.substring(0, colon).trim().toLowerCase(Locale.ROOT);
      String value = header.substring(colon + 1).trim();
      switch (name) {
        case "content-length" -> length = Long.parseLong(value);
        case "transfer-encoding" -> chunked = value.equalsIgnoreCase("chunked");
        case "retry-after" -> retryAfter = !value.isEmpty();
        case "connection" -> closeAfter = value.equalsIgnoreCase("close");
        default -> {}
      }
    }
    if (chunked) {
      for (long size; (size = Long.parseLong(chunkSize(readLine(in)), 16)) > 0; ) {
        skip(in, size);
        readLine(in); // the CRLF after the chunk
      }
      while (!readLine(in).isEmpty()) {
        // trailers, up to the empty line
      }
    } else if (length > 0) {
      skip(in, length);
    } else if (length < 0) {
      throw new IOException("an answer without Content-Length or chunked encoding");
    }
    if (closeAfter) {
      close();
    }
    return new Answer(code, retryAfter);
  }

  private static String chunkSize(String line) {
    int semicolon = line.indexOf(';');
    return (semicolon < 0 ? line : line.substring(0, semicolon)).trim();
  }

  private String readLine(InputStream in) throws IOException {
    line.setLength(0);
    for (int b; (b = in.read()) != '\n'; ) {
      if (b < 0) {
        throw new EOFException("the server closed the connection");
      }
      if (b != '\r') {
        line.append((char) b);
      }
    }
    return line.toString();
  }

  private static void skip(InputStream in, long n) throws IOException {
    for (long left = n; left > 0; ) {
      long skipped = in.skip(left);
      if (skipped <= 0) {
        if (in.read() < 0) {
          throw new EOFException("the body ended early");
        }
        skipped = 1;
      }
      left -= skipped;
    }
  }

  @Override
  public void close() {
    Connection c = connection;
    connection = null;
    if (c != null) {
      try {
        c.socket().close();
      } catch (IOException ignored) {
        // closing after an error: nothing more to do
      }
    }
  }
}
