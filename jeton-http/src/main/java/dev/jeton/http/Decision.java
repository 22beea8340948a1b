package dev.jeton.http;

/**
 * What {@link AdmissionControl} decided for one request: a {@link Ticket} (admitted) or a {@link
 * Rejection}.
 *
 * <pre>{@code
 * Decision decision = control.admit(request);
 * if (decision instanceof Ticket ticket) {
 *   try (ticket) {
 *     handle(request);
 *   }
 * } else if (decision instanceof Rejection r) {
 *   respond(r.status(), r.retryAfterSeconds(), r.message());
 * }
 * }</pre>
 */
public sealed interface Decision permits Ticket, Rejection {}
