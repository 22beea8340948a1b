package dev.jeton.http;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;

/** Reads a decision that must already have been made. */
final class Decided {
  private Decided() {}

  static Ticket ticket(CompletableFuture<Decision> f) {
    assertTrue(f.isDone(), "not decided yet");
    return assertInstanceOf(Ticket.class, f.join());
  }

  static Reason rejected(CompletableFuture<Decision> f) {
    assertTrue(f.isDone(), "not decided yet");
    return assertInstanceOf(Rejection.class, f.join()).reason();
  }
}
