/** The {@code jeton} command. */
@NullMarked
package dev.jeton.cli;

import org.jspecify.annotations.NullMarked;
