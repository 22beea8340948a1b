package dev.jeton.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.jeton.Semaphore;
import org.junit.jupiter.api.Test;

class HeldPermitsTest {
  /**
   * Lincheck's ThreadIdGen gives 0 to the init part and threads + 1 to the post part. A permit
   * taken in the post part used to throw after it was acquired, so it was never given back: with a
   * semaphore shared between scenarios (HostSemaphore names reused) it leaked into the next.
   */
  @Test
  void keepsAndReleasesThePermitsOfTheInitAndPostParts() {
    Semaphore semaphore = Semaphore.create(3);
    HeldPermits held = new HeldPermits(2);

    assertTrue(held.keep(0, semaphore.tryAcquire(1))); // init part
    assertTrue(held.keep(3, semaphore.tryAcquire(2))); // post part
    assertEquals(2, held.releaseOne(3));
    assertTrue(held.keep(3, semaphore.tryAcquire(1)));
    held.releaseAll();

    assertEquals(3, semaphore.available());
  }
}
