package dev.jeton.http.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.jeton.http.AdmissionControl;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.FilterRegistration;
import jakarta.servlet.ServletContext;
import jakarta.servlet.http.HttpServletRequest;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import org.apache.catalina.Context;
import org.apache.catalina.startup.Tomcat;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's servlet examples, as written there (between the markers), so that they keep
 * compiling and registering a filter that works.
 */
class ServletReadmeExamplesTest {
  private final TestApp app = new TestApp();

  private final AdmissionControl<HttpServletRequest> admission =
      // README: builder
      AdmissionControl.<HttpServletRequest>builder()
          .limit(64)
          .queue(200, Duration.ofMillis(500))
          .exempt(request -> request.getRequestURI().startsWith("/health"))
          .build();

  // README: end

  @AfterEach
  void closeAdmission() {
    admission.close();
  }

  /** The portable registration, run by Tomcat as a ServletContainerInitializer would. */
  private void register(ServletContext servletContext) {
    // README: servlet api
    FilterRegistration.Dynamic registration =
        servletContext.addFilter("admission", new AdmissionFilter(admission));
    registration.setAsyncSupported(true);
    registration.addMappingForUrlPatterns(EnumSet.of(DispatcherType.REQUEST), false, "/*");
    // README: end
  }

  @Test
  void throughTheServletApiInTomcat(@TempDir Path base) throws Exception {
    Tomcat tomcat = new Tomcat();
    tomcat.setBaseDir(base.toString());
    tomcat.setPort(0);
    tomcat.getConnector().setProperty("address", ServletServer.LOOPBACK);
    Context context = tomcat.addContext("", null);
    context.addServletContainerInitializer((classes, ctx) -> register(ctx), null);
    Tomcat.addServlet(context, "app", app.servlet).setAsyncSupported(true);
    context.addServletMappingDecoded("/*", "app");
    tomcat.start();
    try {
      assertAdmits(tomcat.getConnector().getLocalPort());
    } finally {
      tomcat.stop();
      tomcat.destroy();
    }
  }

  @Test
  void inEmbeddedJetty() throws Exception {
    Server server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost(ServletServer.LOOPBACK);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler("/");
    context.addServlet(new ServletHolder(app.servlet), "/*");
    // README: jetty
    FilterHolder holder = new FilterHolder(new AdmissionFilter(admission));
    holder.setAsyncSupported(true);
    context.addFilter(holder, "/*", EnumSet.of(DispatcherType.REQUEST));
    // README: end
    server.setHandler(context);
    server.start();
    try {
      assertAdmits(connector.getLocalPort());
    } finally {
      server.stop();
    }
  }

  private void assertAdmits(int port) throws Exception {
    HttpClient client = HttpClient.newHttpClient();
    String base = "http://" + ServletServer.LOOPBACK + ":" + port;
    app.gate.countDown();
    HttpResponse<String> work =
        client.send(
            HttpRequest.newBuilder(URI.create(base + "/work")).build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals("ok", work.body());
    HttpResponse<String> health =
        client.send(
            HttpRequest.newBuilder(URI.create(base + "/health")).build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals("up", health.body());
    assertEquals(1, admission.stats().admitted());
    assertEquals(1, admission.stats().exempted());
  }
}
