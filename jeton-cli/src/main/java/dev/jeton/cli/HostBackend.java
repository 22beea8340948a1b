package dev.jeton.cli;

import dev.jeton.Permit;
import dev.jeton.RateLimiter;
import dev.jeton.Semaphore;
import dev.jeton.host.Holder;
import dev.jeton.host.HostRateLimiter;
import dev.jeton.host.HostSemaphore;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/** Semaphores and rate limiters of this machine, in a directory of lock files. */
final class HostBackend implements Backend {
  private final @Nullable Path directory; // null: the default one, created on first use

  HostBackend(@Nullable Path directory) {
    this.directory = directory;
  }

  private Path directory() {
    Path dir = directory;
    return dir != null ? dir : HostSemaphore.defaultDirectory();
  }

  @Override
  public Semaphore open(String name, @Nullable Integer limit, int limitIfNew, String command)
      throws IOException {
    HostSemaphore.Builder builder = HostSemaphore.builder(name).command(command);
    Path dir = directory;
    if (dir != null) {
      builder.directory(dir); // only a directory given with --dir must exist already
    }
    if (limitIfNew > 0) {
      builder.limitIfNew(limitIfNew);
    }
    if (limit != null) {
      builder.limit(limit);
    }
    return builder.open();
  }

  @Override
  public List<String> names() throws IOException {
    return HostSemaphore.list(directory());
  }

  @Override
  public View status(Semaphore semaphore) throws IOException {
    HostSemaphore.Status s = ((HostSemaphore) semaphore).status();
    return new View(s.name(), s.limit(), s.held(), entries(s.holders()), entries(s.waiters()));
  }

  private static List<Entry> entries(List<Holder> holders) {
    return holders.stream()
        .map(
            h ->
                new Entry(
                    h.pid(),
                    h.permits(),
                    h.user(),
                    h.host(),
                    h.since(),
                    h.command(),
                    null,
                    null,
                    null))
        .toList();
  }

  @Override
  public String where() {
    return "in " + directory();
  }

  @Override
  public Map<String, String> environment(Semaphore semaphore, Permit permit) {
    return Map.of("JETON_DIR", ((HostSemaphore) semaphore).directory().toString());
  }

  @Override
  public void release(Permit permit) {
    permit.release();
  }

  @Override
  public void holdWhileRuns(Semaphore semaphore, Permit permit, ProcessHandle leader)
      throws IOException {
    ((HostSemaphore) semaphore).holdWhileSessionRuns(permit, leader);
  }

  @Override
  public java.time.Duration stopGrace() {
    return java.time.Duration.ofSeconds(10); // the permit stays held meanwhile
  }

  @Override
  public boolean renews() {
    return false; // the kernel and the permits' records hold it, whatever this process does
  }

  @Override
  public void whenLost(Permit permit, Consumer<String> onLost) {
    // A file lock is held until this process exits: it cannot be lost while the command runs.
  }

  @Override
  public RateLimiter openRate(String name, Rates.@Nullable Rate rate, int burst, String command)
      throws IOException {
    HostRateLimiter.Builder builder = HostRateLimiter.builder(name).command(command);
    Path dir = directory;
    if (dir != null) {
      builder.directory(dir);
    }
    if (rate != null) {
      builder.rate(rate.permits(), rate.period());
    }
    if (burst > 0) {
      builder.burst(burst);
    }
    return builder.open();
  }

  @Override
  public Map<String, String> environment(RateLimiter limiter) {
    return Map.of("JETON_DIR", ((HostRateLimiter) limiter).directory().toString());
  }

  @Override
  public List<String> rateNames() throws IOException {
    return HostRateLimiter.list(directory());
  }

  @Override
  public RateView rateStatus(RateLimiter limiter) throws IOException {
    HostRateLimiter.Status s = ((HostRateLimiter) limiter).status();
    return new RateView(
        s.name(),
        new Rates.Rate(s.permits(), s.period()),
        s.burst(),
        s.nextFree(),
        entries(s.waiters()));
  }

  @Override
  public void close() {}
}
