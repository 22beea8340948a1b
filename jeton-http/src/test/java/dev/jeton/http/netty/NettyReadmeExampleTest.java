package dev.jeton.http.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.http.AdmissionControl;
import dev.jeton.http.Reason;
import dev.jeton.http.Rejection;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerKeepAliveHandler;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The README's Netty example ({@link AdmissionHandler} and the wiring between the markers below),
 * run end to end: a Netty server on a loopback port, the JDK's HttpClient, an application that
 * holds each request until the test releases it. Every wait is for an event; the deadlines only
 * keep a failure from hanging the build.
 */
class NettyReadmeExampleTest {
  private static final long GUARD_SECONDS = 60;
  private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

  // One event-loop thread for every connection: a request that blocked it would stall them all.
  private final EventLoopGroup group =
      new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  private final ExecutorService workers = Executors.newCachedThreadPool();
  private final HttpClient client =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  private final CountDownLatch release = new CountDownLatch(1);
  private final AtomicInteger atWork = new AtomicInteger();
  private final AtomicInteger mostAtWork = new AtomicInteger();
  private final List<String> entered = new CopyOnWriteArrayList<>(); // paths, in order
  private final List<FullHttpRequest> admitted = new CopyOnWriteArrayList<>();
  private final BlockingQueue<Channel> accepted = new LinkedBlockingQueue<>();
  private AdmissionControl<FullHttpRequest> control; // set by start, which each test calls
  private int port;

  /** The application: {@code /throw} throws; any other path waits for {@link #release}. */
  private FullHttpResponse app(FullHttpRequest request) {
    mostAtWork.accumulateAndGet(atWork.incrementAndGet(), Math::max);
    entered.add(request.uri());
    admitted.add(request);
    try {
      if (request.uri().equals("/throw")) {
        throw new IllegalStateException("the application failed");
      }
      if (!release.await(GUARD_SECONDS, TimeUnit.SECONDS)) {
        throw new AssertionError("never released");
      }
      return AdmissionHandler.text(HttpResponseStatus.OK, "ok\n");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    } finally {
      atWork.decrementAndGet();
    }
  }

  private void start(AdmissionControl<FullHttpRequest> admissionControl) throws Exception {
    control = admissionControl;
    Function<FullHttpRequest, FullHttpResponse> app = this::app;
    // README: netty wiring
    AdmissionHandler admission = new AdmissionHandler(control, workers, app); // one for all
    // README: end
    ServerBootstrap bootstrap =
        new ServerBootstrap()
            .group(group)
            .channel(NioServerSocketChannel.class)
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    // README: netty wiring, in the server's ChannelInitializer
                    ch.pipeline()
                        .addLast(
                            new HttpServerCodec(),
                            new HttpServerKeepAliveHandler(),
                            new HttpObjectAggregator(1 << 20),
                            admission);
                    // README: end
                  }
                });
    // The test sees each connection the server accepts (the server channel reads them before it
    // sets them up).
    bootstrap.handler(
        new ChannelInboundHandlerAdapter() {
          @Override
          public void channelRead(ChannelHandlerContext ctx, Object child) {
            accepted.add((Channel) child);
            ctx.fireChannelRead(child);
          }
        });
    Channel server = bootstrap.bind(LOOPBACK, 0).sync().channel();
    port = ((InetSocketAddress) server.localAddress()).getPort();
  }

  @AfterEach
  void stop() throws Exception {
    release.countDown();
    try {
      awaitTrue(() -> control.inFlight() == 0, "in flight back to zero after the test");
      // The handler releases each request before its ticket ends.
      admitted.forEach(request -> assertEquals(0, request.refCnt(), request.uri()));
    } finally {
      control.close();
      group.shutdownGracefully(0, GUARD_SECONDS, TimeUnit.SECONDS).sync();
      workers.shutdown();
      assertTrue(workers.awaitTermination(GUARD_SECONDS, TimeUnit.SECONDS), "workers stopped");
    }
  }

  @Test
  void admitsTheLimitAndRejectsTheRestWithRetryAfter() throws Exception {
    int limit = 4;
    start(AdmissionControl.<FullHttpRequest>builder().limit(limit).build());
    List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      responses.add(send("/work"));
    }
    // The admitted requests hold their permits until released: everyone else is answered first.
    awaitTrue(
        () -> atWork.get() == limit && done(responses) >= 40 - limit,
        "the limit at work and the others answered");
    assertEquals(40 - limit, done(responses));
    assertEquals(limit, control.inFlight());
    for (CompletableFuture<HttpResponse<String>> response : responses) {
      if (response.isDone()) {
        assertRejected(response.join(), Reason.LIMIT_REACHED);
      }
    }
    release.countDown();
    for (CompletableFuture<HttpResponse<String>> response : responses) {
      HttpResponse<String> r = result(response);
      assertTrue(r.statusCode() == 200 || r.statusCode() == 503, "status " + r.statusCode());
    }
    assertEquals(limit, entered.size());
    assertEquals(limit, mostAtWork.get());
    assertEquals(limit, control.stats().admitted());
    assertEquals(40 - limit, control.stats().rejected(Reason.LIMIT_REACHED));
    awaitTrue(() -> control.inFlight() == 0, "in flight back to zero");
  }

  /** A rate of one an hour, burst 1, headers on admitted responses too: both answers carry them. */
  @Test
  void aRateLimitsHeadersReachBothTheAdmittedAndTheRejectedResponse() throws Exception {
    start(
        AdmissionControl.<FullHttpRequest>builder()
            .limit(4)
            .rateLimit(request -> "everyone", 1, Duration.ofHours(1))
            .rateLimitHeaders("hourly", true)
            .build());
    release.countDown();
    HttpResponse<String> admitted = result(send("/work"));
    assertEquals(200, admitted.statusCode());
    assertEquals(
        Optional.of("\"hourly\";q=1;w=3600"), admitted.headers().firstValue("RateLimit-Policy"));
    assertEquals(Optional.of("\"hourly\";r=0;t=3600"), admitted.headers().firstValue("RateLimit"));
    HttpResponse<String> limited = result(send("/work"));
    assertEquals(429, limited.statusCode());
    assertEquals(Optional.of("3600"), limited.headers().firstValue("Retry-After"));
    assertEquals(
        Optional.of("\"hourly\";q=1;w=3600"), limited.headers().firstValue("RateLimit-Policy"));
    assertEquals(Optional.of("\"hourly\";r=0;t=3600"), limited.headers().firstValue("RateLimit"));
    assertEquals(1, entered.size());
  }

  @Test
  void anApplicationThatThrowsAnswers500AndGivesTheTicketBack() throws Exception {
    start(AdmissionControl.<FullHttpRequest>builder().limit(1).build());
    HttpResponse<String> failed = result(send("/throw"));
    assertEquals(500, failed.statusCode());
    assertEquals("internal error\n", failed.body());
    awaitTrue(() -> control.inFlight() == 0, "the ticket back");
    release.countDown();
    assertEquals(200, result(send("/work")).statusCode()); // the one permit was free again
  }

  @Test
  void aClientThatDisconnectsDuringItsRequestGivesTheTicketBackWhenTheWorkEnds() throws Exception {
    start(AdmissionControl.<FullHttpRequest>builder().limit(1).build());
    try (Socket socket = new Socket(LOOPBACK, port)) {
      request(socket, "/work");
      awaitTrue(() -> atWork.get() == 1, "the request at work");
    }
    Channel connection = accepted.poll(GUARD_SECONDS, TimeUnit.SECONDS);
    assertTrue(connection != null, "a connection accepted");
    assertTrue(connection.closeFuture().await(GUARD_SECONDS, TimeUnit.SECONDS), "seen closed");
    // Its work goes on, so its permit stays taken; the response's write then fails.
    assertEquals(1, control.inFlight());
    release.countDown();
    awaitTrue(() -> control.inFlight() == 0, "the ticket back after the failed write");
  }

  @Test
  void queuedRequestsWaitWithoutBlockingTheEventLoopAndGoInOrder() throws Exception {
    CompletableFuture<HttpResponse<String>> first = startQueuedWithOneAtWork();
    List<CompletableFuture<HttpResponse<String>>> waiting = new ArrayList<>();
    for (int i = 1; i <= 4; i++) {
      waiting.add(send("/queued-" + i));
      int queued = i;
      awaitTrue(() -> control.queued() == queued, queued + " queued");
    }
    // Four wait on the one event-loop thread, which still answers a fifth at once.
    assertRejected(result(send("/rejected")), Reason.QUEUE_FULL);
    assertFalse(first.isDone());
    assertEquals(0, done(waiting));
    assertEquals(List.of("/first"), entered);

    release.countDown();
    assertEquals(200, result(first).statusCode());
    for (CompletableFuture<HttpResponse<String>> response : waiting) {
      assertEquals(200, result(response).statusCode());
    }
    assertEquals(List.of("/first", "/queued-1", "/queued-2", "/queued-3", "/queued-4"), entered);
    assertEquals(1, mostAtWork.get());
    awaitTrue(() -> control.inFlight() == 0, "in flight back to zero");
  }

  @Test
  void aClientThatDisconnectsWhileQueuedLeavesTheQueue() throws Exception {
    CompletableFuture<HttpResponse<String>> first = startQueuedWithOneAtWork();
    try (Socket socket = new Socket(LOOPBACK, port)) {
      request(socket, "/leaver");
      awaitTrue(() -> control.queued() == 1, "the second request queued");
    }
    awaitTrue(() -> control.queued() == 0, "the request gone from the queue with its client");
    release.countDown();
    assertEquals(200, result(first).statusCode());
    awaitTrue(() -> control.inFlight() == 0, "in flight back to zero");
    assertEquals(List.of("/first"), entered);
  }

  /** Starts queued mode, a limit of 1 and a queue of 4; returns {@code /first}, at work. */
  private CompletableFuture<HttpResponse<String>> startQueuedWithOneAtWork() throws Exception {
    start(
        AdmissionControl.<FullHttpRequest>builder()
            .limit(1)
            .queue(4, Duration.ofSeconds(GUARD_SECONDS))
            .build());
    CompletableFuture<HttpResponse<String>> first = send("/first");
    awaitTrue(() -> atWork.get() == 1, "the first request at work");
    return first;
  }

  private CompletableFuture<HttpResponse<String>> send(String path) throws URISyntaxException {
    URI uri = new URI("http", null, LOOPBACK.getHostAddress(), port, path, null, null);
    return client.sendAsync(
        HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString());
  }

  private static void request(Socket socket, String path) throws Exception {
    OutputStream out = socket.getOutputStream();
    out.write(
        ("GET " + path + " HTTP/1.1\r\nHost: test\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
    out.flush();
  }

  private static void assertRejected(HttpResponse<String> response, Reason reason) {
    assertEquals(503, response.statusCode());
    String retryAfter = response.headers().firstValue("Retry-After").orElseThrow();
    long seconds = Long.parseLong(retryAfter);
    assertTrue(seconds >= 1, "Retry-After " + retryAfter);
    assertEquals(
        "text/plain; charset=utf-8", response.headers().firstValue("Content-Type").orElseThrow());
    assertEquals(
        new Rejection(503, Duration.ofSeconds(seconds), reason).message(), response.body());
  }

  private static <T> T result(CompletableFuture<T> future) throws Exception {
    return future.get(GUARD_SECONDS, TimeUnit.SECONDS);
  }

  private static long done(List<? extends CompletableFuture<?>> futures) {
    return futures.stream().filter(CompletableFuture::isDone).count();
  }

  private static void awaitTrue(BooleanSupplier condition, String what) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(GUARD_SECONDS);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("timed out waiting for " + what);
      }
      LockSupport.parkNanos(100_000); // leaves the core to the threads awaited
    }
  }
}
