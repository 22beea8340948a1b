package dev.jeton.http.servlet;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.Servlet;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.stream.Stream;
import org.apache.catalina.Wrapper;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.core.StandardContext;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.jspecify.annotations.Nullable;

/**
 * An embedded servlet container, started in-process on a free loopback port with one servlet and a
 * chain of filters, as an application would deploy them: every filter is mapped to {@code /*} for
 * every dispatcher type (so the tests see that the admission filter limits only {@code REQUEST}
 * dispatches), and everything supports async.
 */
interface ServletServer extends AutoCloseable {

  /** The address of {@code path} ({@code /work?x=1}) on this server. */
  URI uri(String path);

  /** Stops the server and waits for its threads. */
  @Override
  void close() throws Exception;

  /** The containers the adapter is tested in. */
  enum Kind {
    JETTY {
      @Override
      ServletServer start(Servlet servlet, List<Filter> filters) throws Exception {
        return jetty(servlet, filters, null);
      }
    },

    TOMCAT {
      @Override
      ServletServer start(Servlet servlet, List<Filter> filters) throws Exception {
        // Tomcat logs each start and stop at INFO through java.util.logging: noise in a test.
        QUIET.setLevel(Level.WARNING);
        Path base = Files.createTempDirectory("jeton-tomcat");
        Tomcat tomcat = new Tomcat();
        tomcat.setBaseDir(base.toString());
        Connector connector = new Connector();
        connector.setPort(0);
        connector.setProperty("address", LOOPBACK);
        tomcat.setConnector(connector);
        StandardContext context = (StandardContext) tomcat.addContext("", base.toString());
        // Its leak checks on stop need --add-opens and only warn without it.
        context.setClearReferencesThreadLocals(false);
        context.setClearReferencesRmiTargets(false);
        for (int i = 0; i < filters.size(); i++) {
          FilterDef def = new FilterDef();
          def.setFilterName("filter" + i);
          def.setFilter(filters.get(i));
          def.setAsyncSupported("true");
          context.addFilterDef(def);
          FilterMap map = new FilterMap();
          map.setFilterName("filter" + i);
          map.addURLPattern("/*");
          for (DispatcherType type : DispatcherType.values()) {
            map.setDispatcher(type.name());
          }
          context.addFilterMap(map);
        }
        Wrapper wrapper = Tomcat.addServlet(context, "servlet", servlet);
        wrapper.setAsyncSupported(true);
        context.addServletMappingDecoded("/*", "servlet");
        tomcat.start();
        return new Running(
            connector.getLocalPort(),
            () -> {
              try {
                tomcat.stop();
                tomcat.destroy();
              } finally {
                deleteTree(base);
              }
            });
      }
    };

    /** Starts this container with {@code servlet} behind {@code filters}, outermost first. */
    abstract ServletServer start(Servlet servlet, List<Filter> filters) throws Exception;
  }

  /**
   * Jetty as {@link Kind#JETTY} starts it; with {@code idleTimeout} (if not null) set on its
   * connector: a connection with no progress for that long, a blocked write included, is closed.
   */
  static ServletServer jetty(Servlet servlet, List<Filter> filters, @Nullable Duration idleTimeout)
      throws Exception {
    Server server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost(LOOPBACK);
    connector.setPort(0);
    if (idleTimeout != null) {
      connector.setIdleTimeout(idleTimeout.toMillis());
    }
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler("/");
    for (Filter filter : filters) {
      FilterHolder holder = new FilterHolder(filter);
      holder.setAsyncSupported(true);
      context.addFilter(holder, "/*", EnumSet.allOf(DispatcherType.class));
    }
    ServletHolder holder = new ServletHolder(servlet);
    holder.setAsyncSupported(true);
    context.addServlet(holder, "/*");
    server.setHandler(context);
    server.start();
    return new Running(connector.getLocalPort(), server::stop);
  }

  /** A started server: its port, and how to stop it. */
  record Running(int port, AutoCloseable stop) implements ServletServer {
    @Override
    public URI uri(String path) {
      return URI.create("http://" + LOOPBACK + ":" + port + path);
    }

    @Override
    public void close() throws Exception {
      stop.close();
    }
  }

  /** Only loopback: tests never listen on, or send to, any other address. */
  String LOOPBACK = "127.0.0.1";

  /** Held so that the level set on it is not lost to garbage collection. */
  Logger QUIET = Logger.getLogger("org.apache");

  private static void deleteTree(Path root) throws IOException {
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
        Files.delete(p);
      }
    }
  }
}
