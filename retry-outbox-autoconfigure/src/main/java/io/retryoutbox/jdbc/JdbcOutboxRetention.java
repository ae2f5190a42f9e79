package io.retryoutbox.jdbc;

import java.time.Duration;

import javax.sql.DataSource;

import io.retryoutbox.retention.OutboxRetention;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.util.Assert;

/**
 * The {@link OutboxRetention} on PostgreSQL: {@code DELIVERED} messages by delivery time,
 * {@code DEAD} ones by enqueue time, in chunks, each its own short statement that skips
 * locked rows.
 */
final class JdbcOutboxRetention implements OutboxRetention {

	// The status is a literal, not a parameter, so that the planner can match the
	// partial index on that status's column. A message that still holds its key is
	// never deleted: a dead one parks the key, and a delivered one awaits its release;
	// deleting either would leave the key's next messages waiting for ever. The attempt
	// rows go in the same statement (no foreign key deletes them, V8), looked up by the
	// array of deleted ids so that their index is the way to them.
	private static final String DELETE_FINISHED = """
			WITH deleted AS (
				DELETE FROM {message} WHERE id IN (
					SELECT id FROM {message}
					WHERE status = %1$s AND %2$s AND %3$s < now() - ? * interval '1 millisecond'
					ORDER BY %3$s
					LIMIT ?
					FOR UPDATE SKIP LOCKED)
				RETURNING id
			), logs AS (
				DELETE FROM {attempt} WHERE message_id = ANY (ARRAY(SELECT id FROM deleted))
			)
			SELECT count(*) FROM deleted
			""";

	private final JdbcClient jdbc;

	private final String deleteDelivered;

	private final String deleteDead;

	private final int chunkSize;

	JdbcOutboxRetention(DataSource dataSource, OutboxTables tables, int chunkSize) {
		Assert.isTrue(chunkSize > 0, () -> "chunk size must be positive, was " + chunkSize);
		this.jdbc = JdbcClient.create(dataSource);
		this.deleteDelivered = Sql
			.render(DELETE_FINISHED.formatted("{DELIVERED}", OrderingKeys.HOLDS_NO_KEY, "delivered_at"), tables);
		this.deleteDead = Sql.render(DELETE_FINISHED.formatted("{DEAD}", OrderingKeys.HOLDS_NO_KEY, "created_at"),
				tables);
		this.chunkSize = chunkSize;
	}

	@Override
	public long deleteDelivered(Duration age) {
		return deleteInChunks(this.deleteDelivered, age);
	}

	@Override
	public long deleteDead(Duration age) {
		return deleteInChunks(this.deleteDead, age);
	}

	private long deleteInChunks(String sql, Duration age) {
		long total = 0;
		while (!Thread.currentThread().isInterrupted()) {
			int deleted = this.jdbc.sql(sql).params(age.toMillis(), this.chunkSize).query(Integer.class).single();
			total += deleted;
			if (deleted < this.chunkSize) {
				break;
			}
		}
		return total;
	}

}
