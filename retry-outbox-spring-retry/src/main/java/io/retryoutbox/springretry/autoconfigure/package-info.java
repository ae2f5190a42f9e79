/**
 * Auto-configuration of the spring-retry adapter.
 */
@NullMarked
package io.retryoutbox.springretry.autoconfigure;

import org.jspecify.annotations.NullMarked;
