/**
 * JDBC storage of outbox messages on PostgreSQL.
 */
@NullMarked
package io.retryoutbox.jdbc;

import org.jspecify.annotations.NullMarked;
