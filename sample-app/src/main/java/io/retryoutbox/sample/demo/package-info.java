/**
 * A load generator for demonstrations.
 */
@NullMarked
package io.retryoutbox.sample.demo;

import org.jspecify.annotations.NullMarked;
