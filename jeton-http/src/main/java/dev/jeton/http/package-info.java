/**
 * Admission control for HTTP servers, independent of any server API.
 *
 * <p>An {@link dev.jeton.http.AdmissionControl} decides, per request, to admit it (a {@link
 * dev.jeton.http.Ticket}, closed when the response is done) or to reject it (a {@link
 * dev.jeton.http.Rejection}: a status, a {@code Retry-After} and a {@link dev.jeton.http.Reason}).
 * Adapters for particular servers live in sub-packages; any other server can call the core
 * directly.
 *
 * <p>Every type in this package is null-marked: no parameter or result is {@code null} unless it is
 * annotated {@code @Nullable}.
 */
@NullMarked
package dev.jeton.http;

import org.jspecify.annotations.NullMarked;
