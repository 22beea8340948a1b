package dev.jeton;

/**
 * What a grant of a {@link FifoSemaphore} is, for each primitive built on that engine: the
 * semaphore's {@link Permit}s, the locks' {@link Guard}s. The public methods cast what it makes.
 */
interface Grants {
  /** A semaphore's grants: {@link Permit}s. */
  Grants PERMITS =
      new Grants() {
        @Override
        public Object grant(FifoSemaphore from, int permits) {
          return new LocalPermit(from, permits);
        }

        @Override
        public String kind() {
          return "semaphore";
        }

        @Override
        public String request(int permits) {
          return permits + " permits";
        }
      };

  /** The grant of {@code permits}, which gives them back to {@code from} once. */
  Object grant(FifoSemaphore from, int permits);

  /** What the primitive is called in messages: "semaphore". */
  String kind();

  /** What a request for {@code permits} is called in messages: "3 permits". */
  String request(int permits);
}
