package dev.jeton;

/**
 * A held lock of a {@link FifoMutex}: the mutex and the state its grant made, which is all
 * unlocking needs (decision 42). Only final fields, so the JIT can keep it out of the heap.
 */
final class LocalMutexGuard implements Guard {
  private final FifoMutex mutex;
  final long word;

  LocalMutexGuard(FifoMutex mutex, long word) {
    this.mutex = mutex;
    this.word = word;
  }

  @Override
  public void unlock() {
    mutex.unlock(word);
  }

  @Override
  public String toString() {
    return "Guard[" + mutex.describe() + (mutex.holds(word) ? "]" : ", unlocked]");
  }
}
