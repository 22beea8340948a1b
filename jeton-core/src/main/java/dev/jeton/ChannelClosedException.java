package dev.jeton;

import org.jspecify.annotations.Nullable;

/**
 * Thrown, or used to fail a future, by a send to a {@link Channel} that is closed or cancelled, and
 * by a receive from one that is closed and drained, or cancelled. When the channel was closed with
 * a cause ({@link Channel#close(Throwable)}), that cause is this exception's cause.
 */
public final class ChannelClosedException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception with a message and the cause the channel was closed with, if any. */
  public ChannelClosedException(String message, @Nullable Throwable cause) {
    super(message, cause);
  }
}
