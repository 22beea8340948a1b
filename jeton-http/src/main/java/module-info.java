/**
 * Jeton HTTP: admission control in front of an HTTP server. A framework-neutral core ({@code
 * dev.jeton.http}) and adapters for the JDK's {@code com.sun.net.httpserver} ({@code
 * dev.jeton.http.jdk}) and Jakarta Servlet 6 ({@code dev.jeton.http.servlet}).
 */
module dev.jeton.http {
  requires transitive dev.jeton.core;
  // The server APIs: each adapter needs its own, and the server provides it at run time.
  requires static jakarta.servlet;
  requires static jdk.httpserver;
  // Nullness annotations only: a user needs them neither to compile nor to run (decision 36).
  requires static org.jspecify;
  // @GuardedBy only, checked when compiling (decision 91).
  requires static com.google.errorprone.annotations;

  exports dev.jeton.http;
  exports dev.jeton.http.jdk;
  exports dev.jeton.http.servlet;
}
