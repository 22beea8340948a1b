package dev.jeton.http;

import dev.jeton.contract.LincheckRun;

/**
 * {@link AdmissionQueueLincheckScenario} over a semaphore that may block (issue 29): each request
 * that finds no pump is asked for by a check of the queue's, whose permit goes to the best waiter
 * or whose empty answer starts the pump, racing with tickets closed, futures cancelled and waits
 * timed out.
 */
public class AdmissionQueueOverCallsLincheckTest extends AdmissionQueueLincheckScenario {
  public AdmissionQueueOverCallsLincheckTest() {
    super(true);
  }

  @LincheckRun
  void modelCheck() {
    modelCheck(AdmissionQueueOverCallsLincheckTest.class);
  }
}
