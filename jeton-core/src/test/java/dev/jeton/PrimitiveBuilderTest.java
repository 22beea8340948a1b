package dev.jeton;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.Executor;
import org.junit.jupiter.api.Test;

/**
 * The options every primitive's builder shares: each setter returns the primitive's own builder
 * (chaining goes on to its own options), checks its argument at once, and the name reaches the
 * built primitive.
 */
class PrimitiveBuilderTest {
  private static final Executor DIRECT = Runnable::run;

  @Test
  void sharedSetters_chainIntoEachBuildersOwnOptions() {
    // Compiles only if name() and completionExecutor() return each primitive's own builder.
    Semaphore semaphore =
        Semaphore.builder().name("s").completionExecutor(DIRECT).limit(1).statistics(true).build();
    KeyedSemaphore<String> keyed =
        KeyedSemaphore.builder()
            .name("k")
            .completionExecutor(DIRECT)
            .globalLimit(2)
            .<String>limitPerKey(key -> 1)
            .name("k2")
            .build();
    Mutex mutex = Mutex.builder().name("m").completionExecutor(DIRECT).build();
    ReadWriteLock lock = ReadWriteLock.builder().name("l").completionExecutor(DIRECT).build();
    Barrier barrier = Barrier.builder().name("b").completionExecutor(DIRECT).parties(2).build();

    assertTrue(semaphore.toString().contains("name=s,"), semaphore.toString());
    assertTrue(keyed.toString().contains("name=k2,"), keyed.toString());
    assertTrue(mutex.toString().contains("name=m,"), mutex.toString());
    assertTrue(lock.toString().contains("name=l,"), lock.toString());
    assertTrue(barrier.toString().contains("name=b,"), barrier.toString());
  }

  @Test
  void sharedSetters_checkTheirArgumentsAtOnce() {
    for (PrimitiveBuilder<?> builder :
        new PrimitiveBuilder<?>[] {
          Semaphore.builder(),
          KeyedSemaphore.builder(),
          Mutex.builder(),
          ReadWriteLock.builder(),
          Barrier.builder()
        }) {
      var blank = assertThrows(IllegalArgumentException.class, () -> builder.name(" "));
      assertEquals("name must not be blank", blank.getMessage());
      assertThrows(NullPointerException.class, () -> builder.completionExecutor(null));
    }
  }
}
