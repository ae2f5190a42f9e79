package io.retryoutbox.jdbc;

import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import javax.sql.DataSource;

import io.retryoutbox.RetryDecision;
import io.retryoutbox.message.Outcome;
import io.retryoutbox.support.SecretValues;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.SqlParameterValue;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The one owner of per-key order: every statement that changes a message's hold on its
 * ordering key ({@code is_head}, {@code holds_key}, {@code releasing}) or a key's count
 * of unfinished messages ({@code retry_outbox_key.unfinished}) is here.
 * <p>
 * The rules: a keyed message takes its key at enqueue (or replay) and counts as
 * unfinished; only a key's head may be claimed; a finished head is marked
 * {@code releasing}, and a release then drops its hold, counts it finished and promotes
 * the key's oldest waiting message; a dead message under {@code on-dead=block} keeps its
 * hold and parks the key until it is replayed or discarded; nothing deletes a message
 * that holds its key. Every path that finishes or removes a message (an outcome, an
 * invalid row, a discard) goes through the same mark, release and promote steps.
 */
final class OrderingKeys {

	/**
	 * The condition under which a finished message may be deleted without touching its
	 * key: it holds none (unkeyed, or released).
	 */
	static final String HOLDS_NO_KEY = "NOT holds_key";

	private static final String INSERT = """
			INSERT INTO {message} (id, destination, method, path, headers, body, content_type, ordering_key,
				idempotency_key, trace_parent, trace_state)
			VALUES (?::uuid, ?, ?, ?, ?::jsonb, ?::bytea, ?, ?, ?, ?, ?)
			""";

	// The upsert holds the key's row lock until the enqueuing transaction ends, which is
	// what orders it against a relay promoting the key's next head.
	private static final String INSERT_KEYED = """
			WITH k AS (
				INSERT INTO {key} AS k (ordering_key, unfinished) VALUES (?, 1)
				ON CONFLICT (ordering_key) DO UPDATE SET unfinished = k.unfinished + 1
				RETURNING k.unfinished)
			INSERT INTO {message} (id, destination, method, path, headers, body, content_type, ordering_key,
				idempotency_key, trace_parent, trace_state, is_head, holds_key)
			SELECT ?::uuid, ?, ?, ?, ?::jsonb, ?::bytea, ?, ?, ?, ?, ?, k.unfinished = 1, true FROM k
			""";

	// Direct dispatch: inserted as claimed by the enqueuing instance's relay, its first
	// attempt counted. The lease runs from the insert (clock_timestamp(), not the
	// transaction's start), so a long business transaction cannot commit it expired.
	private static final String INSERT_LEASED = """
			INSERT INTO {message} (id, destination, method, path, headers, body, content_type, ordering_key,
				idempotency_key, trace_parent, trace_state, status, attempts, last_attempt_at, lease_owner, lease_until)
			VALUES (?::uuid, ?, ?, ?, ?::jsonb, ?::bytea, ?, ?, ?, ?, ?, {IN_FLIGHT}, 1, now(), ?,
				clock_timestamp() + ? * interval '1 millisecond')
			RETURNING created_at
			""";

	// The same for a keyed message: leased only if it heads its key, else it waits
	// pending as INSERT_KEYED leaves it.
	private static final String INSERT_KEYED_LEASED = """
			WITH k AS (
				INSERT INTO {key} AS k (ordering_key, unfinished) VALUES (?, 1)
				ON CONFLICT (ordering_key) DO UPDATE SET unfinished = k.unfinished + 1
				RETURNING k.unfinished)
			INSERT INTO {message} (id, destination, method, path, headers, body, content_type, ordering_key,
				idempotency_key, trace_parent, trace_state, is_head, holds_key, status, attempts, last_attempt_at,
				lease_owner, lease_until)
			SELECT ?::uuid, ?, ?, ?, ?::jsonb, ?::bytea, ?, ?, ?, ?, ?, k.unfinished = 1, true,
				CASE WHEN k.unfinished = 1 THEN {IN_FLIGHT} ELSE {PENDING} END,
				CASE WHEN k.unfinished = 1 THEN 1 ELSE 0 END,
				CASE WHEN k.unfinished = 1 THEN now() END,
				CASE WHEN k.unfinished = 1 THEN ?::text END,
				CASE WHEN k.unfinished = 1 THEN clock_timestamp() + ? * interval '1 millisecond' END
			FROM k
			RETURNING CASE WHEN status = {IN_FLIGHT} THEN created_at END
			""";

	/**
	 * The new state of each row and, in the same statement, its attempt log row (unless
	 * the log is off, the last parameter). A finished head that gives its key up is
	 * marked releasing; the release itself happens in {@link #releaseKeys()}.
	 */
	private static final String FINISH = """
			WITH updated AS (
				UPDATE {message} m
				SET status = v.status,
					next_attempt_at = COALESCE(v.next_attempt_at::timestamptz, m.next_attempt_at),
					last_status_code = v.status_code::integer, last_error_code = v.error_code,
					last_error = left(v.error, 2000), dead_reason = v.dead_reason,
					delivered_at = CASE WHEN v.status = {DELIVERED} THEN now() END,
					lease_owner = NULL, lease_until = NULL,
					releasing = m.holds_key AND v.releases_key::boolean
				FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[],
						?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[])
					AS v(id, status, outcome, next_attempt_at, status_code, error_code, error, dead_reason,
						releases_key, started_at, duration_ms, delay_ms, delay_reason, response_snippet)
				WHERE m.id = v.id::uuid AND m.status = {IN_FLIGHT} AND m.lease_owner = ?
				RETURNING m.id, m.attempts, m.last_attempt_at, v.outcome, v.status_code, v.error_code, v.error,
					v.started_at, v.duration_ms, v.delay_ms, v.delay_reason, v.response_snippet
			), logged AS (
				INSERT INTO {attempt} (message_id, attempt, started_at, duration_ms, outcome, status_code, error_code,
					error, response_snippet, delay_ms, delay_reason)
				SELECT u.id, u.attempts, COALESCE(u.started_at::timestamptz, u.last_attempt_at, now()),
					u.duration_ms::bigint, u.outcome, u.status_code::integer, u.error_code, left(u.error, 2000),
					u.response_snippet, u.delay_ms::bigint, u.delay_reason
				FROM updated u
				WHERE ?
			)
			SELECT count(*) FROM updated
			""";

	// SKIP LOCKED: a key locked by an enqueuing transaction is left for a later pass,
	// so a relay never waits on an application transaction and cannot deadlock with one.
	private static final String LOCK_RELEASABLE_KEYS = """
			SELECT k.ordering_key FROM {key} k
			WHERE k.ordering_key IN (SELECT ordering_key FROM {message} WHERE releasing)
			ORDER BY k.ordering_key
			LIMIT 1000
			FOR UPDATE OF k SKIP LOCKED
			""";

	// An operator's discard waits for the keys instead: its rows are deleted right
	// after, so their release cannot be left for a later pass.
	private static final String LOCK_KEYS = """
			SELECT ordering_key FROM {key} WHERE ordering_key = ANY (?::text[]) ORDER BY ordering_key FOR UPDATE
			""";

	private static final String RELEASE = """
			WITH released AS (
				UPDATE {message} SET releasing = false, holds_key = false
				WHERE releasing AND ordering_key = ANY (?::text[])
				RETURNING ordering_key)
			UPDATE {key} k SET unfinished = k.unfinished - r.n
			FROM (SELECT ordering_key, count(*) AS n FROM released GROUP BY ordering_key) r
			WHERE k.ordering_key = r.ordering_key
			""";

	// A statement of its own, so that its snapshot, taken after the keys were
	// locked, sees every enqueue that committed before.
	private static final String PROMOTE = """
			WITH promoted AS (
				UPDATE {message} m SET is_head = true
				WHERE m.id IN (
					SELECT (SELECT x.id FROM {message} x
							WHERE x.ordering_key = k.ordering_key AND x.status = {PENDING} AND NOT x.is_head
							ORDER BY x.seq LIMIT 1)
					FROM {key} k
					WHERE k.ordering_key = ANY (?::text[]) AND k.unfinished > 0
						AND NOT EXISTS (SELECT 1 FROM {message} h
							WHERE h.ordering_key = k.ordering_key AND h.is_head AND h.holds_key))
				RETURNING m.id
			), forgotten AS (
				DELETE FROM {key} WHERE ordering_key = ANY (?::text[]) AND unfinished <= 0
			)
			SELECT count(*) FROM promoted
			""";

	/**
	 * A replayed message keeps its ordering key's order: one that had released its key
	 * (it died with on-dead=skip) takes the key again and is the head only if nothing
	 * else of the key is unfinished; otherwise it waits and, being the oldest, goes next.
	 */
	private static final String REPLAY = """
			WITH target AS (
				SELECT m.id, m.attempts, m.ordering_key, m.holds_key, m.seq FROM {message} m
				WHERE m.status = {DEAD} %s
				ORDER BY m.seq
				LIMIT :limit
				FOR UPDATE SKIP LOCKED
			), retaking AS (
				SELECT ordering_key, count(*) AS n, min(seq) AS first_seq FROM target
				WHERE ordering_key IS NOT NULL AND NOT holds_key
				GROUP BY ordering_key
			), retaken AS (
				INSERT INTO {key} AS k (ordering_key, unfinished)
				SELECT ordering_key, n FROM retaking ORDER BY ordering_key
				ON CONFLICT (ordering_key) DO UPDATE SET unfinished = k.unfinished + EXCLUDED.unfinished
				RETURNING k.ordering_key, k.unfinished
			), replayed AS (
				UPDATE {message} m
				SET status = {PENDING}, attempts = 0, next_attempt_at = now(), created_at = now(),
					dead_reason = NULL, last_status_code = NULL, last_error_code = NULL, last_error = NULL,
					lease_owner = NULL, lease_until = NULL, delivered_at = NULL,
					holds_key = m.ordering_key IS NOT NULL, releasing = false,
					is_head = t.ordering_key IS NULL OR t.holds_key OR EXISTS (
						SELECT 1 FROM retaken k JOIN retaking r ON r.ordering_key = k.ordering_key
						WHERE k.ordering_key = t.ordering_key AND k.unfinished = r.n AND r.first_seq = t.seq)
				FROM target t
				WHERE m.id = t.id
				RETURNING m.id, t.attempts
			), logged AS (
				INSERT INTO {attempt} (message_id, attempt, started_at, outcome, actor)
				SELECT r.id, r.attempts, now(), {REPLAYED}, :actor FROM replayed r
				WHERE :log
			)
			SELECT count(*) FROM replayed
			""";

	/**
	 * The first step of a discard: the chosen dead messages that hold their key are
	 * marked releasing, as a finished head is, so that the release gives the key back.
	 */
	private static final String MARK_DISCARDED = """
			UPDATE {message} m SET releasing = m.holds_key
			WHERE m.id IN (
				SELECT id FROM {message} m
				WHERE m.status = {DEAD} %s
				ORDER BY m.seq
				LIMIT :limit
				FOR UPDATE SKIP LOCKED)
			RETURNING m.id, CASE WHEN m.holds_key THEN m.ordering_key END AS held_key
			""";

	private static final String DELETE = """
			DELETE FROM {message} WHERE id = ANY (?::uuid[])
			""";

	private final JdbcClient jdbc;

	private final TransactionTemplate transactions;

	private final OutboxTables tables;

	private final String insert;

	private final String insertKeyed;

	private final String insertLeased;

	private final String insertKeyedLeased;

	private final String finish;

	private final String lockReleasableKeys;

	private final String lockKeys;

	private final String release;

	private final String promote;

	private final String delete;

	OrderingKeys(DataSource dataSource, OutboxTables tables) {
		this.jdbc = JdbcClient.create(dataSource);
		this.transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
		this.tables = tables;
		this.insert = Sql.render(INSERT, tables);
		this.insertKeyed = Sql.render(INSERT_KEYED, tables);
		this.insertLeased = Sql.render(INSERT_LEASED, tables);
		this.insertKeyedLeased = Sql.render(INSERT_KEYED_LEASED, tables);
		this.finish = Sql.render(FINISH, tables);
		this.lockReleasableKeys = Sql.render(LOCK_RELEASABLE_KEYS, tables);
		this.lockKeys = Sql.render(LOCK_KEYS, tables);
		this.release = Sql.render(RELEASE, tables);
		this.promote = Sql.render(PROMOTE, tables);
		this.delete = Sql.render(DELETE, tables);
	}

	/**
	 * Inserts a message, due now, in the caller's transaction if there is one; a keyed
	 * one takes its key, and heads it if nothing else of the key is unfinished.
	 */
	void insert(NewMessage message) {
		List<Object> params = columns(message);
		if (message.orderingKey() == null) {
			this.jdbc.sql(this.insert).params(params).update();
			return;
		}
		this.jdbc.sql(this.insertKeyed).params(keyed(message, params)).update();
	}

	/**
	 * Inserts a message leased to {@code owner}, its first attempt counted, in the
	 * caller's transaction, if it may be sent at once: unkeyed, or heading its key. A
	 * keyed message that waits behind another is inserted pending instead, as
	 * {@link #insert} does.
	 * @return when the message was created if it was inserted leased, else {@code null}
	 */
	@Nullable Instant insertLeased(NewMessage message, String owner, Duration lease) {
		List<Object> params = new ArrayList<>(columns(message));
		params.add(owner);
		params.add(lease.toMillis());
		boolean keyed = message.orderingKey() != null;
		List<OffsetDateTime> created = this.jdbc.sql(keyed ? this.insertKeyedLeased : this.insertLeased)
			.params(keyed ? keyed(message, params) : params)
			.query((rs, row) -> rs.getObject(1, OffsetDateTime.class))
			.list();
		OffsetDateTime leased = created.get(0);
		return (leased != null) ? leased.toInstant() : null;
	}

	private static List<Object> columns(NewMessage message) {
		return List.of(message.id(), message.destination(), message.method(), message.path(), message.headersJson(),
				nullable(message.body()), nullable(message.contentType()), nullable(message.orderingKey()),
				message.idempotencyKey(), nullable(message.traceParent()), nullable(message.traceState()));
	}

	private static List<Object> keyed(NewMessage message, List<Object> params) {
		List<Object> keyed = new ArrayList<>(params.size() + 1);
		keyed.add(message.orderingKey());
		keyed.addAll(params);
		return keyed;
	}

	/**
	 * Writes the outcomes of a batch, and their attempt log rows, in one statement.
	 * @return the number of rows written; fewer when another relay took a lease over
	 */
	int finish(String owner, List<Outcome> outcomes, JdbcOutboxComponents.AttemptLog attemptLog) {
		int size = outcomes.size();
		String[][] columns = new String[14][size];
		for (int i = 0; i < size; i++) {
			Outcome outcome = outcomes.get(i);
			String[] row = FinishedRow.of(outcome, snippet(outcome, attemptLog));
			for (int column = 0; column < row.length; column++) {
				columns[column][i] = row[column];
			}
		}
		List<Object> params = new ArrayList<>(List.of((Object[]) columns));
		params.add(owner);
		params.add(attemptLog.enabled());
		return this.jdbc.sql(this.finish).params(params).query(Integer.class).single();
	}

	/**
	 * The stored snippet of an error body: never of a 2xx response, masked, and cut to
	 * the configured size.
	 */
	private static @Nullable String snippet(Outcome outcome, JdbcOutboxComponents.AttemptLog attemptLog) {
		Integer status = outcome.statusCode();
		byte[] body = outcome.errorBody();
		if (!attemptLog.enabled() || body == null || status == null || (status >= 200 && status < 300)) {
			return null;
		}
		return SecretValues.snippet(body, attemptLog.responseSnippetSize());
	}

	/**
	 * Releases the keys of messages marked releasing and promotes each key's next
	 * message, except keys that an enqueuing transaction holds right now; those are left
	 * for a later call.
	 * @return the number of keys released, and of messages that became their key's head
	 */
	Released releaseKeys() {
		Released released = this.transactions.execute((status) -> {
			List<String> keys = this.jdbc.sql(this.lockReleasableKeys).query(String.class).list();
			int promoted = keys.isEmpty() ? 0 : release(keys.toArray(String[]::new));
			return new Released(keys.size(), promoted);
		});
		return (released != null) ? released : new Released(0, 0);
	}

	/**
	 * Makes dead messages {@code PENDING} again, due now, with a fresh budget, retaking
	 * their keys.
	 * @param conditions more SQL conditions on {@code m}, each starting with {@code AND}
	 * @param params their named parameters
	 * @param limit the largest number of messages replayed
	 * @param actor who replays them
	 * @param log whether the replay is written to the attempt log
	 * @return the number of messages replayed
	 */
	int replay(String conditions, Map<String, Object> params, int limit, String actor, boolean log) {
		Map<String, Object> all = new LinkedHashMap<>(params);
		all.put("limit", limit);
		all.put("actor", actor);
		all.put("log", log);
		return this.jdbc.sql(Sql.render(REPLAY.formatted(conditions), this.tables))
			.params(all)
			.query(Integer.class)
			.single();
	}

	/**
	 * Deletes dead messages, and their attempt logs, releasing the keys they hold: mark,
	 * release and promote as for a finished head, then delete.
	 * @param conditions more SQL conditions on {@code m}, each starting with {@code AND}
	 * @param params their named parameters
	 * @param limit the largest number of messages deleted
	 * @return the number of messages deleted
	 */
	int discard(String conditions, Map<String, Object> params, int limit) {
		Map<String, Object> all = new LinkedHashMap<>(params);
		all.put("limit", limit);
		String mark = Sql.render(MARK_DISCARDED.formatted(conditions), this.tables);
		Integer discarded = this.transactions.execute((status) -> {
			List<UUID> ids = new ArrayList<>();
			Set<String> keys = new LinkedHashSet<>();
			this.jdbc.sql(mark).params(all).query((rs) -> {
				ids.add(rs.getObject("id", UUID.class));
				String key = rs.getString("held_key");
				if (key != null) {
					keys.add(key);
				}
			});
			if (!keys.isEmpty()) {
				String[] array = keys.toArray(String[]::new);
				this.jdbc.sql(this.lockKeys).param(array).query(String.class).list();
				release(array);
			}
			if (!ids.isEmpty()) {
				this.jdbc.sql(this.delete).param(ids.stream().map(UUID::toString).toArray(String[]::new)).update();
			}
			return ids.size();
		});
		return (discarded != null) ? discarded : 0;
	}

	/**
	 * The release proper, for keys locked in the current transaction: the releasing
	 * messages drop their hold and count as finished, then each key's next message is
	 * promoted unless the key still has a holding head, and keys with nothing unfinished
	 * are forgotten.
	 */
	private int release(String[] keys) {
		this.jdbc.sql(this.release).param(keys).update();
		return this.jdbc.sql(this.promote).params(keys, keys).query(Integer.class).single();
	}

	/**
	 * What a release did.
	 *
	 * @param keys the number of keys released
	 * @param promoted the number of messages that became their key's head, and may be
	 * claimed now
	 */
	record Released(int keys, int promoted) {

	}

	private static Object nullable(@Nullable Object value) {
		return (value != null) ? value : new SqlParameterValue(Types.NULL, null);
	}

	/**
	 * One outcome as the text columns of {@link #FINISH}.
	 */
	private static final class FinishedRow {

		static String[] of(Outcome outcome, @Nullable String snippet) {
			RetryDecision decision = outcome.decision();
			String deadReason = (decision instanceof RetryDecision.Dead dead) ? dead.reason().name() : null;
			RetryDecision.Retry retry = (decision instanceof RetryDecision.Retry r) ? r : null;
			return new String[] { outcome.id().toString(), outcome.status().name(), outcome.attemptOutcome().name(),
					(retry != null) ? retry.nextAttemptAt().toString() : null, text(outcome.statusCode()),
					outcome.errorCode(), outcome.error(), deadReason, Boolean.toString(outcome.releasesKey()),
					outcome.startedAt().toString(), Long.toString(outcome.duration().toMillis()),
					(outcome.delay() != null) ? Long.toString(outcome.delay().toMillis()) : null,
					(retry != null) ? retry.delayReason().name() : null, snippet };
		}

		private static @Nullable String text(@Nullable Object value) {
			return (value != null) ? value.toString() : null;
		}

	}

}
