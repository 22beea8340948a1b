package dev.jeton.http.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.jeton.http.AdmissionControl;
import dev.jeton.http.Reason;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Clients that never read their response (issue 29): each holds a permit while the server's write
 * to it blocks, so a few of them can take every permit, and honest clients get 503. The server's
 * own write timeout is what bounds it: in Jetty, the connector's idle timeout, here 500 ms. Real
 * sockets send a request for a large body and never read a byte.
 */
class SlowReaderTest {
  private static final HttpClient CLIENT =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private static final int LIMIT = 2;

  private final TestApp app = new TestApp();
  private final AdmissionControl<HttpServletRequest> control =
      AdmissionControl.<HttpServletRequest>builder().limit(LIMIT).build();
  private final List<Socket> readers = new ArrayList<>();
  private ServletServer server;

  @AfterEach
  void stop() throws Exception {
    for (Socket s : readers) {
      s.close();
    }
    app.gate.countDown();
    server.close();
    control.close();
  }

  /** A client that asks for {@code path} and then reads nothing. */
  private Socket nonReader(URI uri) throws Exception {
    Socket socket = new Socket();
    socket.setReceiveBufferSize(4096); // as little as the system allows: the server blocks soon
    socket.connect(new java.net.InetSocketAddress(uri.getHost(), uri.getPort()));
    OutputStream out = socket.getOutputStream();
    out.write(
        ("GET " + uri.getPath() + " HTTP/1.1\r\nHost: test\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII));
    out.flush();
    readers.add(socket);
    return socket;
  }

  private HttpResponse<String> get(String path) throws Exception {
    return CLIENT.send(
        HttpRequest.newBuilder(server.uri(path))
            .timeout(Duration.ofSeconds(TestApp.GUARD_SECONDS))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void jettysIdleTimeoutGivesTheirPermitsBack() throws Exception {
    server =
        ServletServer.jetty(
            app.servlet,
            List.<Filter>of(app.probe, new AdmissionFilter(control)),
            Duration.ofMillis(500));
    for (int i = 0; i < LIMIT; i++) {
      nonReader(server.uri("/large"));
    }
    TestApp.awaitTrue(() -> control.inFlight() == LIMIT, "every permit taken by a non-reader");
    Responses.checkRejection(get("/work?short"), Reason.LIMIT_REACHED); // the harm

    // Nobody reads; Jetty's idle timeout fails the blocked writes, and the tickets come back.
    TestApp.awaitTrue(() -> control.inFlight() == 0, "the permits back at the idle timeout");
    readers.forEach(s -> assertFalse(s.isClosed(), "the clients are still there, reading nothing"));
    assertEquals(LIMIT, control.stats().ticketsAbandoned(), "a failed write: abandoned");
    app.gate.countDown();
    assertEquals(200, get("/work?short").statusCode());
  }
}
