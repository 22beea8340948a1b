/**
 * Admission control for the JDK's own HTTP server ({@code com.sun.net.httpserver}): {@link
 * dev.jeton.http.jdk.AdmissionFilter}.
 *
 * <p>Every type in this package is null-marked: no parameter or result is {@code null} unless it is
 * annotated {@code @Nullable}.
 */
@NullMarked
package dev.jeton.http.jdk;

import org.jspecify.annotations.NullMarked;
