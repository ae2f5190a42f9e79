package io.retryoutbox.jdbc;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.core.SqlParameterValue;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

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
			VALUES (?::uuid, ?, ?, ?, ?::jsonb, ?::bytea, ?, ?, ?, ?, ?)
			""";

	// The upsert holds the key's row lock until the enqueuing transaction ends, which is
	// what orders it against a relay promoting the key's next head.
	private static final String INSERT_KEYED = """
			WITH k AS (
				INSERT INTO %2$s AS k (ordering_key, unfinished) VALUES (?, 1)
				ON CONFLICT (ordering_key) DO UPDATE SET unfinished = k.unfinished + 1
				RETURNING k.unfinished)
			INSERT INTO %1$s (id, destination, method, path, headers, body, content_type, ordering_key, idempotency_key,
				trace_parent, trace_state, is_head, holds_key)
			SELECT ?::uuid, ?, ?, ?, ?::jsonb, ?::bytea, ?, ?, ?, ?, ?, k.unfinished = 1, true FROM k
			""";

	static final String CLAIM = """
			UPDATE %1$s m
			SET status = 'IN_FLIGHT', lease_owner = ?, lease_until = now() + ? * interval '1 millisecond',
				attempts = m.attempts + 1, last_attempt_at = now()
			WHERE m.id IN (
				SELECT id FROM %1$s
				WHERE status = 'PENDING' AND is_head AND next_attempt_at <= now() AND destination = ANY (?::text[])
				ORDER BY next_attempt_at
				LIMIT ?
				FOR UPDATE SKIP LOCKED)
			RETURNING m.id, m.destination, m.method, m.path, m.headers::text AS headers, m.body, m.content_type,
				m.ordering_key, m.idempotency_key, m.attempts, m.created_at, m.trace_parent, m.trace_state
			""";

	/**
	 * The new state of each row and, in the same statement, its attempt log row (unless
	 * the log is off, the last parameter).
	 */
	private static final String COMPLETE = """
			WITH updated AS (
				UPDATE %1$s m
				SET status = v.status,
					next_attempt_at = COALESCE(v.next_attempt_at::timestamptz, m.next_attempt_at),
					last_status_code = v.status_code::integer, last_error_code = v.error_code,
					last_error = left(v.error, 2000), dead_reason = v.dead_reason,
					delivered_at = CASE WHEN v.status = 'DELIVERED' THEN now() END,
					lease_owner = NULL, lease_until = NULL,
					releasing = m.holds_key AND v.releases_key::boolean
				FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[],
						?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[])
					AS v(id, status, next_attempt_at, status_code, error_code, error, dead_reason, releases_key,
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

	// SKIP LOCKED: a key locked by an enqueuing transaction is left for a later pass,
	// so this never waits on an application transaction and cannot deadlock with one.
	private static final String LOCK_RELEASABLE_KEYS = """
			SELECT k.ordering_key FROM %2$s k
			WHERE k.ordering_key IN (SELECT ordering_key FROM %1$s WHERE releasing)
			ORDER BY k.ordering_key
			LIMIT 1000
			FOR UPDATE OF k SKIP LOCKED
			""";

	private static final String RELEASE_KEYS = """
			WITH released AS (
				UPDATE %1$s SET releasing = false, holds_key = false
				WHERE releasing AND ordering_key = ANY (?::text[])
				RETURNING ordering_key)
			UPDATE %2$s k SET unfinished = k.unfinished - r.n
			FROM (SELECT ordering_key, count(*) AS n FROM released GROUP BY ordering_key) r
			WHERE k.ordering_key = r.ordering_key
			""";

	// A statement of its own, so that its snapshot, taken after the keys were
	// locked, sees every enqueue that committed before.
	private static final String PROMOTE = """
			WITH promoted AS (
				UPDATE %1$s m SET is_head = true
				WHERE m.id IN (
					SELECT (SELECT x.id FROM %1$s x
							WHERE x.ordering_key = k.ordering_key AND x.status = 'PENDING' AND NOT x.is_head
							ORDER BY x.seq LIMIT 1)
					FROM %2$s k
					WHERE k.ordering_key = ANY (?::text[]) AND k.unfinished > 0
						AND NOT EXISTS (SELECT 1 FROM %1$s h
							WHERE h.ordering_key = k.ordering_key AND h.is_head AND h.holds_key))
				RETURNING m.id)
			DELETE FROM %2$s WHERE ordering_key = ANY (?::text[]) AND unfinished <= 0
			""";

	private static final String RECOVER_EXPIRED = """
			UPDATE %s SET status = 'PENDING', lease_owner = NULL, lease_until = NULL
			WHERE status = 'IN_FLIGHT' AND lease_until < now()
			""";

	private static final String EXTEND_LEASES = """
			UPDATE %s SET lease_until = now() + ? * interval '1 millisecond'
			WHERE status = 'IN_FLIGHT' AND lease_owner = ? AND id = ANY (?::uuid[])
			""";

	private static final String RELEASE = """
			UPDATE %s SET status = 'PENDING', lease_owner = NULL, lease_until = NULL, attempts = attempts - 1
			WHERE status = 'IN_FLIGHT' AND lease_owner = ?
			""";

	private final JdbcClient jdbc;

	private final JsonMapper jsonMapper;

	private final String insert;

	private final String insertKeyed;

	private final String lockReleasableKeys;

	private final String releaseKeys;

	private final String promote;

	private final TransactionTemplate transactions;

	private final String claim;

	private final String complete;

	private final String recoverExpired;

	private final String release;

	private final String extendLeases;

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
		this.transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
		this.attemptLog = attemptLog;
		this.insert = INSERT.formatted(tables.message());
		this.insertKeyed = INSERT_KEYED.formatted(tables.message(), tables.key());
		this.claim = CLAIM.formatted(tables.message());
		this.complete = COMPLETE.formatted(tables.message(), tables.attempt());
		this.lockReleasableKeys = LOCK_RELEASABLE_KEYS.formatted(tables.message(), tables.key());
		this.releaseKeys = RELEASE_KEYS.formatted(tables.message(), tables.key());
		this.promote = PROMOTE.formatted(tables.message(), tables.key());
		this.recoverExpired = RECOVER_EXPIRED.formatted(tables.message());
		this.release = RELEASE.formatted(tables.message());
		this.extendLeases = EXTEND_LEASES.formatted(tables.message());
	}

	/**
	 * Inserts a message, due now, in the caller's transaction if there is one.
	 * @param message the message
	 */
	public void insert(NewMessage message) {
		List<Object> params = List.of(message.id(), message.destination(), message.method(), message.path(),
				message.headersJson(), nullable(message.body()), nullable(message.contentType()),
				nullable(message.orderingKey()), message.idempotencyKey(), nullable(message.traceParent()),
				nullable(message.traceState()));
		if (message.orderingKey() == null) {
			this.jdbc.sql(this.insert).params(params).update();
			return;
		}
		List<Object> keyed = new ArrayList<>(params.size() + 1);
		keyed.add(message.orderingKey());
		keyed.addAll(params);
		this.jdbc.sql(this.insertKeyed).params(keyed).update();
	}

	/**
	 * Claims up to {@code limit} due messages for {@code owner}, leasing them for
	 * {@code lease}, and counts the attempt. Messages for other destinations are left
	 * alone: an instance that does not know a destination (it was removed from its
	 * configuration, or a newer version added it) must not spend their attempts.
	 * @param owner the relay instance
	 * @param destinations the destinations the relay can send to
	 * @param limit the largest number of messages to claim
	 * @param lease how long the claim holds
	 * @return the claimed messages, each readable or not
	 */
	public List<Claim> claim(String owner, String[] destinations, int limit, Duration lease) {
		return this.jdbc.sql(this.claim)
			.params(owner, lease.toMillis(), destinations, limit)
			.query(this::claimed)
			.list();
	}

	/**
	 * Writes the outcomes of a batch, and their attempt log rows, in one statement. A row
	 * whose lease was taken over by another owner is left alone.
	 * @param owner the relay instance that holds the leases
	 * @param completions the outcomes
	 * @return the number of rows written; fewer than completed when another relay took a
	 * lease over
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
		String[] releasesKey = new String[size];
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
			releasesKey[i] = Boolean.toString(completion.releasesKey());
			startedAts[i] = (completion.startedAt() != null) ? completion.startedAt().toString() : null;
			durations[i] = (completion.duration() != null) ? Long.toString(completion.duration().toMillis()) : null;
			delays[i] = (completion.delay() != null) ? Long.toString(completion.delay().toMillis()) : null;
			delayReasons[i] = completion.delayReason();
			snippets[i] = snippet(completion);
		}
		return this.jdbc.sql(this.complete)
			.params(ids, statuses, nextAttempts, statusCodes, errorCodes, errors, deadReasons, releasesKey, startedAts,
					durations, delays, delayReasons, snippets, owner, this.attemptLog.enabled())
			.query(Integer.class)
			.single();
	}

	/**
	 * The stored snippet of an error body: never of a 2xx response, masked, and cut to
	 * the configured size.
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
	 * Lets the next message of every ordering key whose head finished go, except keys
	 * that an enqueuing transaction holds right now; those are left for a later call.
	 * @return the number of keys released
	 */
	public int releaseKeys() {
		Integer released = this.transactions.execute((status) -> {
			List<String> keys = this.jdbc.sql(this.lockReleasableKeys).query(String.class).list();
			if (keys.isEmpty()) {
				return 0;
			}
			String[] array = keys.toArray(String[]::new);
			this.jdbc.sql(this.releaseKeys).param(array).update();
			promoteNextHeads(array);
			return keys.size();
		});
		return (released != null) ? released : 0;
	}

	/**
	 * Lets the next message of each of these keys go, unless the key still has a head,
	 * and forgets keys with nothing unfinished. Call it in the transaction that locked
	 * the keys.
	 * @param keys the ordering keys that were released
	 */
	public void promoteNextHeads(String[] keys) {
		this.jdbc.sql(this.promote).params(keys, keys).update();
	}

	private static Object nullable(@Nullable Object value) {
		return (value != null) ? value : new SqlParameterValue(Types.NULL, null);
	}

	/**
	 * Makes messages whose lease expired claimable again, e.g. after their relay died.
	 * @return the number of messages recovered
	 */
	public int recoverExpiredLeases() {
		return this.jdbc.sql(this.recoverExpired).update();
	}

	/**
	 * Extends the leases of messages that {@code owner} still holds, so that a slow but
	 * alive relay keeps what it is sending.
	 * @param owner the relay instance
	 * @param ids the messages it is still working on
	 * @param lease the new lease, from now
	 * @return the number of leases extended
	 */
	public int extendLeases(String owner, List<UUID> ids, Duration lease) {
		String[] array = ids.stream().map(UUID::toString).toArray(String[]::new);
		return this.jdbc.sql(this.extendLeases).params(lease.toMillis(), owner, array).update();
	}

	/**
	 * Gives back every message leased to {@code owner} without counting the attempt, e.g.
	 * at shutdown.
	 * @param owner the relay instance
	 * @return the number of messages released
	 */
	public int release(String owner) {
		return this.jdbc.sql(this.release).param(owner).update();
	}

	/**
	 * Reads a claimed row without throwing for what it holds: the claim has committed, so
	 * a row that fails here must come back as a value the relay can finish on its own, or
	 * it would fail its whole batch until the leases expire, and again after.
	 */
	private Claim claimed(ResultSet rs, int row) throws SQLException {
		UUID id = rs.getObject("id", UUID.class);
		String destination = rs.getString("destination");
		String orderingKey = rs.getString("ordering_key");
		int attempt = rs.getInt("attempts");
		Map<String, List<String>> headers;
		try {
			headers = this.jsonMapper.readValue(rs.getString("headers"), HEADERS);
			if (headers == null || headers.values().stream().anyMatch((values) -> values == null)) {
				throw new IllegalArgumentException("null where a header's values are expected");
			}
		}
		catch (RuntimeException ex) {
			return new UnreadableMessage(id, destination, orderingKey, attempt,
					"Stored headers are not a JSON object of string lists: " + ex.getMessage());
		}
		return new ClaimedMessage(id, destination, rs.getString("method"), rs.getString("path"), headers,
				rs.getBytes("body"), rs.getString("content_type"), orderingKey, rs.getString("idempotency_key"),
				attempt, rs.getObject("created_at", OffsetDateTime.class).toInstant(), traceContext(rs));
	}

	private static Map<String, String> traceContext(ResultSet rs) throws SQLException {
		String parent = rs.getString("trace_parent");
		if (parent == null) {
			return Map.of();
		}
		String state = rs.getString("trace_state");
		return (state != null) ? Map.of(EnqueueObserver.TRACEPARENT, parent, EnqueueObserver.TRACESTATE, state)
				: Map.of(EnqueueObserver.TRACEPARENT, parent);
	}

	/**
	 * Whether and how attempts are logged in the attempt log table.
	 *
	 * @param enabled whether each attempt is logged
	 * @param responseSnippetSize the largest number of bytes kept of an error response
	 * body
	 */
	public record AttemptLog(boolean enabled, int responseSnippetSize) {

		/**
		 * Logging on, with 1KB response snippets.
		 */
		public static final AttemptLog DEFAULTS = new AttemptLog(true, 1024);

	}

}
