/**
 * Not API: the engine under every waiting primitive of Jeton, as {@code AbstractQueuedSynchronizer}
 * is under {@code java.util.concurrent}'s. Exported only to Jeton's own modules.
 *
 * <p>The engine knows none of its clients: what it needs of them (a select's claim on a node, a
 * scope's tracking of a request) are interfaces it owns, which they implement. Everything that
 * makes a request wait in memory, runs queued work in order, or fires after a delay goes through
 * this package.
 */
@NullMarked
package dev.jeton.internal.engine;

import org.jspecify.annotations.NullMarked;
