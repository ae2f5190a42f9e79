package io.retryoutbox.testsupport;

import java.time.Duration;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

import org.springframework.context.ApplicationContext;

/**
 * Writes outbox rows directly, to set up states that would take the relay long to reach.
 */
public final class OutboxRows {

	private OutboxRows() {
	}

	/**
	 * Inserts dead messages in one statement.
	 * @param context the context
	 * @param destination their destination
	 * @param count how many
	 * @param deadReason why they are dead
	 * @param age how long ago they were enqueued
	 */
	public static void insertDead(ApplicationContext context, String destination, int count, String deadReason,
			Duration age) {
		OutboxContexts.jdbc(context).sql("""
				INSERT INTO retry_outbox_message (id, destination, method, path, idempotency_key, status, attempts,
					created_at, dead_reason, last_status_code, last_error)
				SELECT gen_random_uuid(), ?, 'POST', '/bulk/' || i, gen_random_uuid()::text, 'DEAD', 3,
					now() - ? * interval '1 millisecond', ?, 400, 'HTTP 400'
				FROM generate_series(1, ?) i
				""").params(destination, age.toMillis(), deadReason, count).update();
	}

	/**
	 * Inserts one message.
	 * @param context the context
	 * @param status its status
	 * @param orderingKey its ordering key, or {@code null}
	 * @param dueAgo how long ago it became due (negative: due in the future)
	 * @return its id
	 */
	public static UUID insert(ApplicationContext context, String status, @Nullable String orderingKey,
			Duration dueAgo) {
		UUID id = UUID.randomUUID();
		// A keyed row holds its key, as a live message or a dead one parking it
		// (on-dead=block), and is the key's head only if no earlier row holds it.
		OutboxContexts.jdbc(context)
			.sql("""
					INSERT INTO retry_outbox_message (id, destination, method, path, idempotency_key, status,
						ordering_key, next_attempt_at, created_at, dead_reason, holds_key, is_head)
					VALUES (?, 'payments', 'POST', '/direct', ?, ?, ?, now() - ? * interval '1 millisecond',
						now() - ? * interval '1 millisecond', CASE WHEN ? = 'DEAD' THEN 'TERMINAL_STATUS' END,
						?::text IS NOT NULL, ?::text IS NULL OR NOT EXISTS (
							SELECT 1 FROM retry_outbox_message x WHERE x.ordering_key = ? AND x.holds_key))
					""")
			.params(id, id.toString(), status, orderingKey, dueAgo.toMillis(), Math.max(dueAgo.toMillis(), 0), status,
					orderingKey, orderingKey, orderingKey)
			.update();
		return id;
	}

}
