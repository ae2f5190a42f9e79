package io.retryoutbox.jdbc;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;
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
			INSERT INTO %s (id, destination, method, path, headers, body, content_type, ordering_key, idempotency_key,
				trace_parent, trace_state)
			VALUES (?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?, ?, ?)
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

	/**
	 * The new state of each row and, in the same statement, its attempt log row (unless the
	 * log is off, the last parameter).
	 */
	private static final String COMPLETE = """
			WITH updated AS (
				UPDATE %1$s m
				SET status = v.status,
					next_attempt_at = COALESCE(v.next_attempt_at::timestamptz, m.next_attempt_at),
					last_status_code = v.status_code::integer, last_error_code = v.error_code,
					last_error = left(v.error, 2000), dead_reason = v.dead_reason,
					delivered_at = CASE WHEN v.status = 'DELIVERED' THEN now() END,
					lease_owner = NULL, lease_until = NULL
				FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[],
						?::text[], ?::text[], ?::text[], ?::text[], ?::text[])
					AS v(id, status, next_attempt_at, status_code, error_code, error, dead_reason,
						started_at, duration_ms, delay_ms, delay_reason, response_snippet)
				WHERE m.id = v.id::uuid AND m.status = 'IN_FLIGHT' AND m.lease_owner = ?
				RETURNING m.id, m.attempts, m.last_attempt_at, v.status, v.status_code, v.error_code, v.error,
					v.started_at, v.duration_ms, v.delay_ms, v.delay_reason, v.response_snippet
			), logged AS (
				INSERT INTO %2$s (message_id, attempt, started_at, duration_ms, outcome, status_code, error_code,
					error, response_snippet, delay_ms, delay_reason)
				SELECT u.id, u.attempts, COALESCE(u.started_at::timestamptz, u.last_attempt_at, now()),
					u.duration_ms::bigint, CASE u.status WHEN 'PENDING' THEN 'RETRY' ELSE u.status END,
					u.status_code::integer, u.error_code, left(u.error, 2000), u.response_snippet,
					u.delay_ms::bigint, u.delay_reason
				FROM updated u
				WHERE ?
			)
			SELECT count(*) FROM updated
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

	private final AttemptLog attemptLog;

	public JdbcOutboxStore(DataSource dataSource, OutboxTables tables, JsonMapper jsonMapper) {
		this(dataSource, tables, jsonMapper, AttemptLog.DEFAULTS);
	}

	/**
	 * Creates a store.
	 * @param dataSource the database
	 * @param tables the names of the outbox tables
	 * @param jsonMapper reads and writes headers
	 * @param attemptLog whether and how attempts are logged
	 */
	public JdbcOutboxStore(DataSource dataSource, OutboxTables tables, JsonMapper jsonMapper, AttemptLog attemptLog) {
		this.jdbc = JdbcClient.create(dataSource);
		this.jsonMapper = jsonMapper;
		this.attemptLog = attemptLog;
		this.insert = INSERT.formatted(tables.message());
		this.claim = CLAIM.formatted(tables.message());
		this.complete = COMPLETE.formatted(tables.message(), tables.attempt());
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
					message.body(), message.contentType(), message.orderingKey(), message.idempotencyKey(),
					message.traceParent(), message.traceState())
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
	 * Writes the outcomes of a batch, and their attempt log rows, in one statement. A row whose
	 * lease was taken over by another owner is left alone.
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
		String[] startedAts = new String[size];
		String[] durations = new String[size];
		String[] delays = new String[size];
		String[] delayReasons = new String[size];
		String[] snippets = new String[size];
		for (int i = 0; i < size; i++) {
			Completion completion = completions.get(i);
			ids[i] = completion.id().toString();
			statuses[i] = completion.status();
			nextAttempts[i] = (completion.nextAttemptAt() != null) ? completion.nextAttemptAt().toString() : null;
			statusCodes[i] = (completion.statusCode() != null) ? completion.statusCode().toString() : null;
			errorCodes[i] = completion.errorCode();
			errors[i] = completion.error();
			deadReasons[i] = completion.deadReason();
			startedAts[i] = (completion.startedAt() != null) ? completion.startedAt().toString() : null;
			durations[i] = (completion.duration() != null) ? Long.toString(completion.duration().toMillis()) : null;
			delays[i] = (completion.delay() != null) ? Long.toString(completion.delay().toMillis()) : null;
			delayReasons[i] = completion.delayReason();
			snippets[i] = snippet(completion);
		}
		return this.jdbc.sql(this.complete)
			.params(ids, statuses, nextAttempts, statusCodes, errorCodes, errors, deadReasons, startedAts, durations,
					delays, delayReasons, snippets, owner, this.attemptLog.enabled())
			.query(Integer.class)
			.single();
	}

	/**
	 * The stored snippet of an error body: never of a 2xx response, masked, and cut to the
	 * configured size.
	 */
	private @Nullable String snippet(Completion completion) {
		Integer status = completion.statusCode();
		byte[] body = completion.errorBody();
		if (!this.attemptLog.enabled() || body == null || status == null || (status >= 200 && status < 300)) {
			return null;
		}
		return SecretValues.snippet(body, this.attemptLog.responseSnippetSize());
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

	/**
	 * Whether and how attempts are logged in the attempt log table.
	 *
	 * @param enabled whether each attempt is logged
	 * @param responseSnippetSize the largest number of bytes kept of an error response body
	 */
	public record AttemptLog(boolean enabled, int responseSnippetSize) {

		/**
		 * Logging on, with 1KB response snippets.
		 */
		public static final AttemptLog DEFAULTS = new AttemptLog(true, 1024);

	}

}
