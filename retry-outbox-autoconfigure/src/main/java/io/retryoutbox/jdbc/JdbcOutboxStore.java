package io.retryoutbox.jdbc;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import javax.sql.DataSource;

import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * Reads and writes outbox messages on PostgreSQL. Every method is one SQL statement, so a
 * whole batch is claimed or completed in one round trip.
 */
public final class JdbcOutboxStore {

	private static final TypeReference<Map<String, List<String>>> HEADERS = new TypeReference<>() {
	};

	private static final String INSERT = """
			INSERT INTO %s (id, destination, method, path, headers, body, content_type, ordering_key, idempotency_key)
			VALUES (?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?)
			""";

	private static final String CLAIM = """
			UPDATE %1$s m
			SET status = 'IN_FLIGHT', lease_owner = ?, lease_until = now() + ? * interval '1 millisecond',
				attempts = m.attempts + 1, last_attempt_at = now()
			WHERE m.id IN (
				SELECT id FROM %1$s
				WHERE status = 'PENDING' AND next_attempt_at <= now()
				ORDER BY next_attempt_at
				LIMIT ?
				FOR UPDATE SKIP LOCKED)
			RETURNING m.id, m.destination, m.method, m.path, m.headers::text AS headers, m.body, m.content_type,
				m.ordering_key, m.idempotency_key, m.attempts, m.created_at
			""";

	private static final String COMPLETE = """
			UPDATE %s m
			SET status = v.status,
				next_attempt_at = COALESCE(v.next_attempt_at::timestamptz, m.next_attempt_at),
				last_status_code = v.status_code::integer, last_error_code = v.error_code,
				last_error = left(v.error, 2000), dead_reason = v.dead_reason,
				delivered_at = CASE WHEN v.status = 'DELIVERED' THEN now() END,
				lease_owner = NULL, lease_until = NULL
			FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[])
				AS v(id, status, next_attempt_at, status_code, error_code, error, dead_reason)
			WHERE m.id = v.id::uuid AND m.status = 'IN_FLIGHT' AND m.lease_owner = ?
			""";

	private static final String RECOVER_EXPIRED = """
			UPDATE %s SET status = 'PENDING', lease_owner = NULL, lease_until = NULL
			WHERE status = 'IN_FLIGHT' AND lease_until < now()
			""";

	private static final String RELEASE = """
			UPDATE %s SET status = 'PENDING', lease_owner = NULL, lease_until = NULL, attempts = attempts - 1
			WHERE status = 'IN_FLIGHT' AND lease_owner = ?
			""";

	private final JdbcClient jdbc;

	private final JsonMapper jsonMapper;

	private final String insert;

	private final String claim;

	private final String complete;

	private final String recoverExpired;

	private final String release;

	public JdbcOutboxStore(DataSource dataSource, OutboxTables tables, JsonMapper jsonMapper) {
		this.jdbc = JdbcClient.create(dataSource);
		this.jsonMapper = jsonMapper;
		this.insert = INSERT.formatted(tables.message());
		this.claim = CLAIM.formatted(tables.message());
		this.complete = COMPLETE.formatted(tables.message());
		this.recoverExpired = RECOVER_EXPIRED.formatted(tables.message());
		this.release = RELEASE.formatted(tables.message());
	}

	/**
	 * Inserts a message, due now, in the caller's transaction if there is one.
	 * @param message the message
	 */
	public void insert(NewMessage message) {
		this.jdbc.sql(this.insert)
			.params(message.id(), message.destination(), message.method(), message.path(), message.headersJson(),
					message.body(), message.contentType(), message.orderingKey(), message.idempotencyKey())
			.update();
	}

	/**
	 * Claims up to {@code limit} due messages for {@code owner}, leasing them for
	 * {@code lease}, and counts the attempt.
	 * @param owner the relay instance
	 * @param limit the largest number of messages to claim
	 * @param lease how long the claim holds
	 * @return the claimed messages
	 */
	public List<ClaimedMessage> claim(String owner, int limit, Duration lease) {
		return this.jdbc.sql(this.claim).params(owner, lease.toMillis(), limit).query(this::claimed).list();
	}

	/**
	 * Writes the outcomes of a batch in one statement. A row whose lease was taken over by
	 * another owner is left alone.
	 * @param owner the relay instance that holds the leases
	 * @param completions the outcomes
	 * @return the number of rows written
	 */
	public int complete(String owner, List<Completion> completions) {
		if (completions.isEmpty()) {
			return 0;
		}
		int size = completions.size();
		String[] ids = new String[size];
		String[] statuses = new String[size];
		String[] nextAttempts = new String[size];
		String[] statusCodes = new String[size];
		String[] errorCodes = new String[size];
		String[] errors = new String[size];
		String[] deadReasons = new String[size];
		for (int i = 0; i < size; i++) {
			Completion completion = completions.get(i);
			ids[i] = completion.id().toString();
			statuses[i] = completion.status();
			nextAttempts[i] = (completion.nextAttemptAt() != null) ? completion.nextAttemptAt().toString() : null;
			statusCodes[i] = (completion.statusCode() != null) ? completion.statusCode().toString() : null;
			errorCodes[i] = completion.errorCode();
			errors[i] = completion.error();
			deadReasons[i] = completion.deadReason();
		}
		return this.jdbc.sql(this.complete)
			.params(ids, statuses, nextAttempts, statusCodes, errorCodes, errors, deadReasons, owner)
			.update();
	}

	/**
	 * Makes messages whose lease expired claimable again, e.g. after their relay died.
	 * @return the number of messages recovered
	 */
	public int recoverExpiredLeases() {
		return this.jdbc.sql(this.recoverExpired).update();
	}

	/**
	 * Gives back every message leased to {@code owner} without counting the attempt, e.g. at
	 * shutdown.
	 * @param owner the relay instance
	 * @return the number of messages released
	 */
	public int release(String owner) {
		return this.jdbc.sql(this.release).param(owner).update();
	}

	private ClaimedMessage claimed(ResultSet rs, int row) throws SQLException {
		return new ClaimedMessage(rs.getObject("id", UUID.class), rs.getString("destination"), rs.getString("method"),
				rs.getString("path"), this.jsonMapper.readValue(rs.getString("headers"), HEADERS),
				rs.getBytes("body"), rs.getString("content_type"), rs.getString("ordering_key"),
				rs.getString("idempotency_key"), rs.getInt("attempts"),
				rs.getObject("created_at", OffsetDateTime.class).toInstant());
	}

}
