package dev.jeton.contract;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A test method that runs a Lincheck check. Its length is set by its scenario and invocation
 * counts, not by the clock, so it gets a wider hang guard than the suite's default of 120 s.
 *
 * <p>Why: the same check runs about 1.5 times slower on JDK 25 than on 17, and slower again on a
 * loaded CI machine; a check that took 84 s here on JDK 17 timed out in CI on JDK 25. And a check
 * that finds a bug spends up to a minute more shrinking and printing the failing interleaving,
 * which the default guard would cut off, leaving a timeout where the report should be.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Test
@Timeout(value = 5, unit = TimeUnit.MINUTES)
public @interface LincheckRun {}
