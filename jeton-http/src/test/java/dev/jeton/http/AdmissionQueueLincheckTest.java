package dev.jeton.http;

import dev.jeton.contract.LincheckRun;

/** {@link AdmissionQueueLincheckScenario} over an in-process semaphore, called directly. */
public class AdmissionQueueLincheckTest extends AdmissionQueueLincheckScenario {
  public AdmissionQueueLincheckTest() {
    super(false);
  }

  @LincheckRun
  void modelCheck() {
    modelCheck(AdmissionQueueLincheckTest.class);
  }
}
