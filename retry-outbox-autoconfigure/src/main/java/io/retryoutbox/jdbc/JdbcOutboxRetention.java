package io.retryoutbox.jdbc;

import java.time.Duration;

import javax.sql.DataSource;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.util.Assert;

/**
 * Deletes finished messages, and with them their attempt logs, once they are older than
 * their retention: {@code DELIVERED} ones by delivery time, {@code DEAD} ones by enqueue
 * time. It deletes in chunks, each its own short statement that skips locked rows, and
 * never touches a {@code PENDING} or {@code IN_FLIGHT} message.
 */
public final class JdbcOutboxRetention {

	// The status is a literal, not a parameter, so that the planner can match the
	// partial index on that status's column. A dead message that still holds its
	// ordering key parks the key (on-dead=block): deleting it would leave the key's
	// next messages waiting for ever with nothing to replay or discard, so it stays
	// until an operator replays or discards it.
	private static final String DELETE_FINISHED = """
			DELETE FROM %1$s WHERE id IN (
				SELECT id FROM %1$s
				WHERE status = '%2$s' AND NOT holds_key AND %3$s < now() - ? * interval '1 millisecond'
				ORDER BY %3$s
				LIMIT ?
				FOR UPDATE SKIP LOCKED)
			""";

	private final JdbcClient jdbc;

	private final String deleteDelivered;

	private final String deleteDead;

	private final int chunkSize;

	/**
	 * Creates a retention.
	 * @param dataSource the database
	 * @param tables the names of the outbox tables
	 * @param chunkSize the largest number of messages one statement deletes
	 */
	public JdbcOutboxRetention(DataSource dataSource, OutboxTables tables, int chunkSize) {
		Assert.isTrue(chunkSize > 0, () -> "chunk size must be positive, was " + chunkSize);
		this.jdbc = JdbcClient.create(dataSource);
		this.deleteDelivered = DELETE_FINISHED.formatted(tables.message(), "DELIVERED", "delivered_at");
		this.deleteDead = DELETE_FINISHED.formatted(tables.message(), "DEAD", "created_at");
		this.chunkSize = chunkSize;
	}

	/**
	 * Deletes the messages delivered longer ago than {@code age}.
	 * @param age how long delivered messages are kept
	 * @return the number of messages deleted
	 */
	public long deleteDelivered(Duration age) {
		return deleteInChunks(this.deleteDelivered, age);
	}

	/**
	 * Deletes the dead messages enqueued longer ago than {@code age}.
	 * @param age how long dead messages are kept
	 * @return the number of messages deleted
	 */
	public long deleteDead(Duration age) {
		return deleteInChunks(this.deleteDead, age);
	}

	private long deleteInChunks(String sql, Duration age) {
		long total = 0;
		while (!Thread.currentThread().isInterrupted()) {
			int deleted = this.jdbc.sql(sql).params(age.toMillis(), this.chunkSize).update();
			total += deleted;
			if (deleted < this.chunkSize) {
				break;
			}
		}
		return total;
	}

}
