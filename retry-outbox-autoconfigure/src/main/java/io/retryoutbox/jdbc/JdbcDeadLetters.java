package io.retryoutbox.jdbc;

import java.util.UUID;

import javax.sql.DataSource;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Replays and discards dead messages while keeping the per-key ordering bookkeeping right: a
 * replayed message re-enters its key's queue in enqueue order, and discarding a message that
 * parks its key lets the key's next message go.
 */
public final class JdbcDeadLetters {

	// A message that had released its key takes it again; it is the head only if nothing of
	// its key is unfinished, else it waits its turn (it has the lowest seq, so it goes next).
	private static final String REPLAY = """
			WITH r AS (
				SELECT id, ordering_key, holds_key FROM %1$s WHERE id = ? AND status = 'DEAD' FOR UPDATE),
			k AS (
				INSERT INTO %2$s AS k (ordering_key, unfinished)
				SELECT ordering_key, 1 FROM r WHERE ordering_key IS NOT NULL AND NOT holds_key
				ON CONFLICT (ordering_key) DO UPDATE SET unfinished = k.unfinished + 1
				RETURNING k.unfinished)
			UPDATE %1$s m
			SET status = 'PENDING', attempts = 0, next_attempt_at = now(), dead_reason = NULL,
				holds_key = m.ordering_key IS NOT NULL, releasing = false,
				is_head = r.ordering_key IS NULL OR r.holds_key OR (SELECT unfinished FROM k) = 1
			FROM r WHERE m.id = r.id
			""";

	private static final String DISCARD = """
			WITH d AS (
				DELETE FROM %1$s WHERE id = ? AND status = 'DEAD' RETURNING ordering_key, holds_key),
			k AS (
				UPDATE %2$s k SET unfinished = k.unfinished - 1
				FROM d WHERE d.holds_key AND k.ordering_key = d.ordering_key
				RETURNING k.ordering_key)
			SELECT (SELECT count(*) FROM d) AS deleted, (SELECT ordering_key FROM k) AS released_key
			""";

	private static final String PROMOTE = """
			UPDATE %1$s m SET is_head = true
			WHERE m.id = (SELECT x.id FROM %1$s x
				WHERE x.ordering_key = ? AND x.status = 'PENDING' AND NOT x.is_head ORDER BY x.seq LIMIT 1)
			AND NOT EXISTS (SELECT 1 FROM %1$s h WHERE h.ordering_key = ? AND h.is_head AND h.holds_key)
			""";

	private static final String FORGET_KEY = """
			DELETE FROM %s WHERE ordering_key = ? AND unfinished <= 0
			""";

	private final JdbcClient jdbc;

	private final TransactionTemplate transactions;

	private final String replay;

	private final String discard;

	private final String promote;

	private final String forgetKey;

	public JdbcDeadLetters(DataSource dataSource, OutboxTables tables) {
		this.jdbc = JdbcClient.create(dataSource);
		this.transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
		this.replay = REPLAY.formatted(tables.message(), tables.key());
		this.discard = DISCARD.formatted(tables.message(), tables.key());
		this.promote = PROMOTE.formatted(tables.message());
		this.forgetKey = FORGET_KEY.formatted(tables.key());
	}

	/**
	 * Makes a dead message pending again with a fresh attempt count, keeping its id and
	 * idempotency key.
	 * @param id the message id
	 * @return whether a dead message with that id was replayed
	 */
	public boolean replay(UUID id) {
		return this.jdbc.sql(this.replay).param(id).update() > 0;
	}

	/**
	 * Deletes a dead message; if it parked its ordering key, the key's next message may go.
	 * @param id the message id
	 * @return whether a dead message with that id was deleted
	 */
	public boolean discard(UUID id) {
		Boolean deleted = this.transactions.execute((status) -> {
			var result = this.jdbc.sql(this.discard).param(id).query().singleRow();
			String releasedKey = (String) result.get("released_key");
			if (releasedKey != null) {
				this.jdbc.sql(this.promote).params(releasedKey, releasedKey).update();
				this.jdbc.sql(this.forgetKey).param(releasedKey).update();
			}
			return ((Number) result.get("deleted")).longValue() > 0;
		});
		return Boolean.TRUE.equals(deleted);
	}

}
