package dev.jeton.cli;

import java.util.List;

/** The {@code jeton} command on this machine's semaphores, in a temporary directory. */
class JetonCommandTest extends AbstractJetonCommandTest {
  @Override
  List<String> backendArgs() {
    return List.of("--dir", directory.toString());
  }

  @Override
  List<String> quickRecoveryArgs() {
    return List.of(); // a file lock is freed the moment its holder dies
  }

  @Override
  Backend newProbe() {
    return new HostBackend(directory);
  }
}
