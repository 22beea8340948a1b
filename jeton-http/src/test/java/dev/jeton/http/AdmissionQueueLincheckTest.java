package dev.jeton.http;

import dev.jeton.contract.LincheckRun;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;

/** {@link AdmissionQueueLincheckScenario} over an in-process semaphore, called directly. */
public class AdmissionQueueLincheckTest extends AdmissionQueueLincheckScenario {
  public AdmissionQueueLincheckTest() {
    super(false);
  }

  @LincheckRun
  void modelCheck() {
    new ModelCheckingOptions()
        .iterations(25)
        .invocationsPerIteration(40)
        .threads(3)
        .actorsPerThread(2)
        .check(AdmissionQueueLincheckTest.class);
  }
}
