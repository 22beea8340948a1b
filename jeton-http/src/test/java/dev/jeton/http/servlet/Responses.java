package dev.jeton.http.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.http.Reason;
import java.net.http.HttpResponse;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/** What the adapter's tests check of the responses a client gets. */
final class Responses {
  private Responses() {}

  /**
   * Waits for every response; each must be a 200 {@code ok} or a rejection (503, a valid {@code
   * Retry-After}, a text/plain body naming {@code reason}, any if null); returns how many of each
   * status.
   */
  static Map<Integer, Integer> checkAll(
      List<CompletableFuture<HttpResponse<String>>> responses, @Nullable Reason reason)
      throws Exception {
    Map<Integer, Integer> statuses = new TreeMap<>();
    for (CompletableFuture<HttpResponse<String>> f : responses) {
      HttpResponse<String> r = f.get(TestApp.GUARD_SECONDS, TimeUnit.SECONDS);
      statuses.merge(r.statusCode(), 1, Integer::sum);
      if (r.statusCode() == 200) {
        assertEquals("ok", r.body());
      } else {
        assertEquals(503, r.statusCode(), r::body);
        checkRejection(r, reason);
      }
    }
    return statuses;
  }

  static void checkRetryAfter(HttpResponse<String> rejected) {
    checkRejection(rejected, Reason.LIMIT_REACHED);
  }

  /**
   * A valid rejection: a {@code Retry-After} in [1, 30] s, a text/plain body naming why ({@code
   * reason}, or any reason if null).
   */
  static void checkRejection(HttpResponse<String> rejected, @Nullable Reason reason) {
    String retryAfter = rejected.headers().firstValue("Retry-After").orElseThrow();
    long seconds = Long.parseLong(retryAfter);
    assertTrue(seconds >= 1 && seconds <= 30, () -> "Retry-After: " + retryAfter);
    String type = rejected.headers().firstValue("Content-Type").orElseThrow();
    assertTrue(type.startsWith("text/plain"), type);
    assertTrue(
        Arrays.stream(Reason.values())
            .anyMatch(r -> (reason == null || r == reason) && rejected.body().contains(r.name())),
        rejected::body);
  }
}
