package dev.jeton;

import dev.jeton.contract.SemaphoreContract;
import org.junit.jupiter.api.Nested;

/**
 * A key of a {@link KeyedSemaphore} is a {@link Semaphore}: the shared contract, without and with a
 * global limit (large enough not to change the answers, so every request passes through the global
 * stage and is granted there at once).
 */
class KeyedSemaphoreContractTest extends SemaphoreContract {

  @Override
  protected Semaphore newSemaphore(int limit) {
    return KeyedSemaphore.create(limit).forKey("k");
  }

  @Nested
  class WithAGlobalLimit extends SemaphoreContract {
    @Override
    protected Semaphore newSemaphore(int limit) {
      return KeyedSemaphore.builder().limitPerKey(limit).globalLimit(1_000).build().forKey("k");
    }
  }
}
