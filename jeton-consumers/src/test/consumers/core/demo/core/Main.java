package demo.core;

import dev.jeton.Permit;
import dev.jeton.Semaphore;

public final class Main {
  public static void main(String[] args) throws InterruptedException {
    Semaphore semaphore = Semaphore.create(2);
    try (Permit permit = semaphore.acquire(1)) {
      System.out.println("ok " + permit + " of " + semaphore);
    }
  }
}
