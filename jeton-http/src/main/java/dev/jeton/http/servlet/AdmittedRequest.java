package dev.jeton.http.servlet;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.io.IOException;
import org.jspecify.annotations.Nullable;

/**
 * The request an admitted request's application sees: the container's, except that its {@code
 * AsyncContext} tells the request's {@link TicketHold} of each task given to {@code start}, so that
 * the ticket is held until the task returns, and the listeners added to it are given that context
 * in their events, so that a task an {@code onTimeout} starts is held for too. Everything else is
 * the container's.
 */
final class AdmittedRequest extends HttpServletRequestWrapper {
  private final TicketHold hold;
  private volatile @Nullable Tracked tracked; // the last context handed out, handed out again

  AdmittedRequest(HttpServletRequest request, TicketHold hold) {
    super(request);
    this.hold = hold;
  }

  @Override
  public AsyncContext startAsync() {
    return track(super.startAsync());
  }

  @Override
  public AsyncContext startAsync(ServletRequest request, ServletResponse response) {
    return track(super.startAsync(request, response));
  }

  @Override
  public AsyncContext getAsyncContext() {
    return track(super.getAsyncContext());
  }

  AsyncContext track(AsyncContext context) {
    Tracked t = tracked;
    if (t == null || t.context != context) {
      t = new Tracked(context, hold);
      tracked = t;
    }
    return t;
  }

  /** The container's context, whose tasks the hold waits for. */
  private final class Tracked implements AsyncContext {
    final AsyncContext context;
    private final TicketHold hold;

    Tracked(AsyncContext context, TicketHold hold) {
      this.context = context;
      this.hold = hold;
    }

    @Override
    public void start(Runnable task) {
      if (!hold.taskStarted()) {
        context.start(task); // the request is over: nothing is held for it any more
        return;
      }
      try {
        context.start(
            () -> {
              try {
                task.run();
              } finally {
                hold.taskEnded();
              }
            });
      } catch (RuntimeException refused) {
        hold.taskEnded(); // it will not run
        throw refused;
      }
    }

    @Override
    public ServletRequest getRequest() {
      return context.getRequest();
    }

    @Override
    public ServletResponse getResponse() {
      return context.getResponse();
    }

    @Override
    public boolean hasOriginalRequestAndResponse() {
      return context.hasOriginalRequestAndResponse();
    }

    @Override
    public void dispatch() {
      context.dispatch();
    }

    @Override
    public void dispatch(String path) {
      context.dispatch(path);
    }

    @Override
    public void dispatch(ServletContext servletContext, String path) {
      context.dispatch(servletContext, path);
    }

    @Override
    public void complete() {
      context.complete();
    }

    @Override
    public void addListener(AsyncListener listener) {
      context.addListener(new SeesTracked(listener));
    }

    @Override
    public void addListener(
        AsyncListener listener, ServletRequest request, ServletResponse response) {
      context.addListener(new SeesTracked(listener), request, response);
    }

    @Override
    public <T extends AsyncListener> T createListener(Class<T> type) throws ServletException {
      return context.createListener(type);
    }

    @Override
    public void setTimeout(long timeout) {
      context.setTimeout(timeout);
    }

    @Override
    public long getTimeout() {
      return context.getTimeout();
    }
  }

  /** An application's listener, whose events carry the tracked context of their cycle. */
  private final class SeesTracked implements AsyncListener {
    private final AsyncListener listener;

    SeesTracked(AsyncListener listener) {
      this.listener = listener;
    }

    private AsyncEvent tracked(AsyncEvent event) {
      return new AsyncEvent(
          track(event.getAsyncContext()),
          event.getSuppliedRequest(),
          event.getSuppliedResponse(),
          event.getThrowable());
    }

    @Override
    public void onComplete(AsyncEvent event) throws IOException {
      listener.onComplete(tracked(event));
    }

    @Override
    public void onTimeout(AsyncEvent event) throws IOException {
      listener.onTimeout(tracked(event));
    }

    @Override
    public void onError(AsyncEvent event) throws IOException {
      listener.onError(tracked(event));
    }

    @Override
    public void onStartAsync(AsyncEvent event) throws IOException {
      listener.onStartAsync(tracked(event));
    }
  }
}
