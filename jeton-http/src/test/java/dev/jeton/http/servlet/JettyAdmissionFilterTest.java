package dev.jeton.http.servlet;

/** The servlet adapter in embedded Jetty 12 (ee10). */
final class JettyAdmissionFilterTest extends AdmissionFilterContract {
  @Override
  ServletServer.Kind kind() {
    return ServletServer.Kind.JETTY;
  }
}
