/**
 * The embedded PostgreSQL server the sample runs on when no database is configured.
 */
@NullMarked
package io.retryoutbox.sample.database;

import org.jspecify.annotations.NullMarked;
