package dev.jeton.http.servlet;

/** The servlet adapter in embedded Tomcat 11. */
final class TomcatAdmissionFilterTest extends AdmissionFilterContract {
  @Override
  ServletServer.Kind kind() {
    return ServletServer.Kind.TOMCAT;
  }
}
