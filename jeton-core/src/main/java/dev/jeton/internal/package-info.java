/** Not API: helpers shared by Jeton's own modules, exported only to them. */
@NullMarked
package dev.jeton.internal;

import org.jspecify.annotations.NullMarked;
