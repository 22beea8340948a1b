package dev.jeton.http.netty;

import dev.jeton.http.AdmissionControl;
import dev.jeton.http.Decision;
import dev.jeton.http.Rejection;
import dev.jeton.http.Ticket;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Function;

// The README's Netty example ("### Netty"), as written there: keep the two in step.
@ChannelHandler.Sharable
final class AdmissionHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
  private final AdmissionControl<FullHttpRequest> control;
  private final Executor workers; // the application may block: never on an event loop
  private final Function<FullHttpRequest, FullHttpResponse> app;

  AdmissionHandler(
      AdmissionControl<FullHttpRequest> control,
      Executor workers,
      Function<FullHttpRequest, FullHttpResponse> app) {
    super(false); // the request outlives channelRead0: released when the application is done
    this.control = control;
    this.workers = workers;
    this.app = app;
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
    CompletableFuture<Decision> decision = control.admitAsync(request);
    ChannelFutureListener gone = closed -> decision.cancel(false); // the client left the queue
    ctx.channel().closeFuture().addListener(gone);
    decision.whenComplete(
        (d, cancelled) -> { // on the thread that decided: must not block
          ctx.channel().closeFuture().removeListener(gone);
          if (d instanceof Ticket ticket) {
            CompletableFuture.supplyAsync(() -> app.apply(request), workers)
                .thenApply( // a rate limit's headers, if asked for
                    response -> {
                      control.rateLimitHeaders(request).forEach(response.headers()::set);
                      return response;
                    })
                .whenComplete(
                    (response, failed) -> {
                      request.release();
                      ctx.writeAndFlush(
                              failed == null
                                  ? response
                                  : text(
                                      HttpResponseStatus.INTERNAL_SERVER_ERROR, "internal error\n"))
                          .addListener(
                              written -> {
                                if (failed == null && written.isSuccess()) {
                                  ticket.close();
                                } else {
                                  ticket.abandon(); // the application threw, or the client is gone
                                }
                              });
                    });
          } else {
            request.release();
            if (d instanceof Rejection r) { // else the request was withdrawn from the queue
              FullHttpResponse response = text(HttpResponseStatus.valueOf(r.status()), r.message());
              response.headers().set(HttpHeaderNames.RETRY_AFTER, r.retryAfterSeconds());
              r.headers().forEach(response.headers()::set); // a rate limit's RateLimit headers
              ctx.writeAndFlush(response);
            }
          }
        });
  }

  static FullHttpResponse text(HttpResponseStatus status, String body) {
    FullHttpResponse response =
        new DefaultFullHttpResponse(
            HttpVersion.HTTP_1_1, status, Unpooled.copiedBuffer(body, StandardCharsets.UTF_8));
    response
        .headers()
        .set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8")
        .setInt(HttpHeaderNames.CONTENT_LENGTH, response.content().readableBytes());
    return response;
  }
}
