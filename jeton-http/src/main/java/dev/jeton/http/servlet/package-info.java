/**
 * The Jakarta Servlet 6 adapter: {@link dev.jeton.http.servlet.AdmissionFilter}, a {@code Filter}
 * that admits each request through an {@link dev.jeton.http.AdmissionControl}, for Spring MVC,
 * Jetty, Tomcat, Undertow and any other servlet container.
 *
 * <p>Every type in this package is null-marked: no parameter or result is {@code null} unless it is
 * annotated {@code @Nullable}.
 */
@NullMarked
package dev.jeton.http.servlet;

import org.jspecify.annotations.NullMarked;
