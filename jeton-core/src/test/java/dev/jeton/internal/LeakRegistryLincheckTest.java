package dev.jeton.internal;

import dev.jeton.contract.LincheckRun;
import java.util.ArrayDeque;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;

/**
 * The leak registry, model-checked: threads add records and forget them by their codes in one
 * stripe whose array starts at one slot, so that adding doubles it while others forget, and a count
 * of the records held (not forgotten) is linearizable against a sequential count.
 *
 * <p>Each thread forgets only its own records, as a grant is released by whoever holds it; the
 * concurrency checked is the registry's own: the stripe's lock, doubling, and lock-free removal.
 */
public class LeakRegistryLincheckTest {
  private static final int THREADS = 3;

  @LincheckRun
  void addAndForget_linearizable_againstACount() {
    new ModelCheckingOptions()
        .iterations(10)
        .invocationsPerIteration(300)
        .threads(THREADS)
        .actorsPerThread(3)
        .sequentialSpecification(Model.class)
        .check(Registry.class);
  }

  /** The registry under test, with each Lincheck thread's held grants and their codes. */
  public static class Registry {
    private final LeakRegistry registry = new LeakRegistry(1, 1, false);

    @SuppressWarnings("unchecked")
    private final ArrayDeque<Object[]>[] held = new ArrayDeque[THREADS + 2];

    public Registry() {
      for (int i = 0; i < held.length; i++) {
        held[i] = new ArrayDeque<>();
      }
    }

    @Operation
    public boolean add(@Param(gen = ThreadIdGen.class) int thread) {
      Object grant = new Object();
      int code = registry.add(LeakRegistryStressTest.recordOf(registry, grant));
      held[thread].add(new Object[] {grant, code});
      return code != 0;
    }

    @Operation
    public boolean forget(@Param(gen = ThreadIdGen.class) int thread) {
      Object[] oldest = held[thread].poll();
      if (oldest == null) {
        return false;
      }
      int code = (Integer) oldest[1];
      LeakRecord found = LeakRegistryStressTest.inSlot(registry, code);
      if (found == null || !found.refersTo(oldest[0])) {
        throw new AssertionError("the record of code " + code + " is not in its slot: " + found);
      }
      registry.forget(code, oldest[0]);
      return true;
    }

    /** At rest, the registry holds exactly the records not forgotten, each in its code's slot. */
    @Validate
    public void holdsExactlyTheRecordsNotForgotten() {
      int notForgotten = 0;
      for (ArrayDeque<Object[]> deque : held) {
        for (Object[] left : deque) {
          LeakRecord found = LeakRegistryStressTest.inSlot(registry, (Integer) left[1]);
          if (found == null || !found.refersTo(left[0])) {
            throw new AssertionError("a record held is not in its slot");
          }
          notForgotten++;
        }
      }
      if (registry.watchedNow() != notForgotten) {
        throw new AssertionError(registry.watchedNow() + " held, " + notForgotten + " expected");
      }
    }
  }

  /** The sequential model: how many records each thread holds. */
  public static class Model {
    private final int[] held = new int[THREADS + 2];

    @Operation
    public boolean add(@Param(gen = ThreadIdGen.class) int thread) {
      held[thread]++;
      return true;
    }

    @Operation
    public boolean forget(@Param(gen = ThreadIdGen.class) int thread) {
      if (held[thread] == 0) {
        return false;
      }
      held[thread]--;
      return true;
    }
  }
}
