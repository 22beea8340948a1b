package dev.jeton.internal.engine;

import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * A future that Jeton hands out for a request or a task, whose outcome only its own completion
 * paths may set: {@link #obtrudeValue} and {@link #obtrudeException} throw {@link
 * UnsupportedOperationException}.
 *
 * <p>Obtruding sets the result without any of the hooks that a request's future runs when it is
 * completed (withdrawing the request, giving back a grant that reached no one), and overwrites a
 * result already set: a waiting request obtruded stayed queued, and its grant, when it came,
 * reached no one (a semaphore's permit was lost for good); a granted one obtruded lost its permit
 * or guard from the caller's view. Refusing is the one behaviour that cannot strand anything;
 * {@code cancel}, {@code complete} and {@code completeExceptionally} are the ways to give a request
 * up.
 *
 * @param <T> the future's value
 */
public abstract class ObtrudeRefusingFuture<T extends @Nullable Object>
    extends CompletableFuture<T> {

  /** For subclasses. */
  protected ObtrudeRefusingFuture() {}

  /** Refused: see the class comment. */
  @Override
  public final void obtrudeValue(T value) {
    throw refused("obtrudeValue");
  }

  /** Refused: see the class comment. */
  @Override
  public final void obtrudeException(Throwable failure) {
    throw refused("obtrudeException");
  }

  private static UnsupportedOperationException refused(String method) {
    return new UnsupportedOperationException(
        method
            + " is not supported by Jeton's futures: it would bypass the withdrawal of the"
            + " request; cancel or complete the future to give it up");
  }
}
