package io.retryoutbox.jdbc;

import java.sql.Array;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.util.Assert;

/**
 * Reads the outbox for operators and repairs it: statistics, listings, and the replay or
 * discard of dead messages. Bulk operations work in chunks of {@link #CHUNK_SIZE} rows,
 * each its own short statement that skips locked rows, so a large replay neither holds
 * long locks nor blocks the relay.
 */
public final class JdbcOutboxAdmin {

	/**
	 * The number of rows one statement of a bulk operation touches at most.
	 */
	public static final int CHUNK_SIZE = 1000;

	/**
	 * The statuses a message can have.
	 */
	public static final Set<String> STATUSES = Set.of("PENDING", "IN_FLIGHT", "DELIVERED", "DEAD");

	private static final TypeReference<Map<String, List<String>>> HEADERS = new TypeReference<>() {
	};

	/**
	 * The ordering keys parked by a dead message: with on-dead=block a dead head keeps
	 * holding its key, so the key's later messages wait until it is replayed or
	 * discarded.
	 */
	static final String PARKED_KEYS = """
			SELECT DISTINCT ordering_key FROM %1$s
			WHERE is_head AND holds_key AND NOT releasing AND status = 'DEAD'
			""";

	/**
	 * Every figure comes from a partial index (unfinished, lease, dead, due), never from
	 * the delivered rows, so health and the gauges cost the same however many of those
	 * retention keeps ({@code StatsQueryPlanTests}). Lag counts only claimable messages
	 * (heads and unkeyed ones): a message waiting behind its key's head is not due,
	 * whatever its own due time says.
	 */
	static final String STATS = """
			SELECT
				(SELECT count(*) FROM %1$s WHERE status = 'PENDING') AS pending,
				(SELECT count(*) FROM %1$s WHERE status = 'IN_FLIGHT') AS in_flight,
				(SELECT count(*) FROM %1$s WHERE status = 'DEAD') AS dead,
				(SELECT extract(epoch FROM now() - min(created_at)) FROM %1$s
					WHERE status IN ('PENDING', 'IN_FLIGHT')) AS oldest_pending_seconds,
				(SELECT extract(epoch FROM now() - min(next_attempt_at)) FROM %1$s
					WHERE status = 'PENDING' AND is_head AND next_attempt_at <= now()
						AND destination = ANY (:destinations)) AS lag_seconds,
				(SELECT count(*) FROM (%2$s) k) AS parked_keys,
				(SELECT count(*) FROM %1$s
					WHERE status = 'PENDING' AND destination <> ALL (:destinations)) AS unknown_destination
			""";

	/**
	 * Reads every retained row, delivered ones too: only the endpoint's summary asks for
	 * it, on an operator's request, never health or the gauges.
	 */
	private static final String COUNTS = """
			SELECT destination, status, count(*) AS count FROM %s GROUP BY destination, status
			""";

	private static final String MESSAGE_COLUMNS = """
			m.id, m.destination, m.method, m.path, m.headers::text AS headers, m.content_type,
			COALESCE(octet_length(m.body), 0) AS body_size, m.ordering_key, m.idempotency_key, m.status, m.attempts,
			m.created_at, m.next_attempt_at, m.last_attempt_at, m.last_status_code, m.last_error_code, m.last_error,
			m.dead_reason, m.delivered_at, m.trace_parent
			""";

	private static final String ATTEMPTS = """
			SELECT attempt, started_at, duration_ms, outcome, status_code, error_code, error, response_snippet,
				delay_ms, delay_reason, actor
			FROM %s WHERE message_id = ? ORDER BY id
			""";

	/**
	 * A replayed message keeps its ordering key's order: one that had released its key
	 * (it died with on-dead=skip) takes the key again and is the head only if nothing
	 * else of the key is unfinished; otherwise it waits and, being the oldest, goes next.
	 */
	private static final String REPLAY = """
			WITH target AS (
				SELECT m.id, m.attempts, m.ordering_key, m.holds_key, m.seq FROM %1$s m
				WHERE m.status = 'DEAD' %3$s
				ORDER BY m.seq
				LIMIT :limit
				FOR UPDATE SKIP LOCKED
			), retaking AS (
				SELECT ordering_key, count(*) AS n, min(seq) AS first_seq FROM target
				WHERE ordering_key IS NOT NULL AND NOT holds_key
				GROUP BY ordering_key
			), retaken AS (
				INSERT INTO %4$s AS k (ordering_key, unfinished)
				SELECT ordering_key, n FROM retaking ORDER BY ordering_key
				ON CONFLICT (ordering_key) DO UPDATE SET unfinished = k.unfinished + EXCLUDED.unfinished
				RETURNING k.ordering_key, k.unfinished
			), replayed AS (
				UPDATE %1$s m
				SET status = 'PENDING', attempts = 0, next_attempt_at = now(), created_at = now(),
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
				INSERT INTO %2$s (message_id, attempt, started_at, outcome, actor)
				SELECT r.id, r.attempts, now(), 'REPLAYED', :actor FROM replayed r
				WHERE :log
			)
			SELECT count(*) FROM replayed
			""";

	/**
	 * A discarded message that still held its ordering key (it parked the key with
	 * on-dead=block) gives the key back, so the key's next message may go.
	 */
	private static final String DISCARD = """
			WITH discarded AS (
				DELETE FROM %1$s WHERE id IN (
					SELECT id FROM %1$s m
					WHERE m.status = 'DEAD' %3$s
					ORDER BY m.seq
					LIMIT :limit
					FOR UPDATE SKIP LOCKED)
				RETURNING ordering_key, holds_key
			), released AS (
				UPDATE %2$s k SET unfinished = k.unfinished - d.n
				FROM (SELECT ordering_key, count(*) AS n FROM discarded
					WHERE holds_key AND ordering_key IS NOT NULL GROUP BY ordering_key) d
				WHERE k.ordering_key = d.ordering_key
				RETURNING k.ordering_key
			)
			SELECT (SELECT count(*) FROM discarded) AS discarded,
				(SELECT array_agg(ordering_key) FROM released) AS released_keys
			""";

	private final JdbcClient jdbc;

	private final OutboxTables tables;

	private final JsonMapper jsonMapper;

	private final boolean attemptLog;

	private final TransactionTemplate transactions;

	private final JdbcOutboxStore store;

	private final Duration timeBudget;

	private final String[] destinations;

	/**
	 * Creates an admin whose bulk operations stop after 20 seconds.
	 * @param dataSource the database
	 * @param tables the names of the outbox tables
	 * @param jsonMapper reads the stored headers
	 * @param store keeps the ordering keys' bookkeeping when a discard releases a key
	 * @param attemptLog whether replays are recorded in the attempt log
	 * @param destinations the destinations this instance configures
	 */
	public JdbcOutboxAdmin(DataSource dataSource, OutboxTables tables, JsonMapper jsonMapper, JdbcOutboxStore store,
			boolean attemptLog, Set<String> destinations) {
		this(dataSource, tables, jsonMapper, store, attemptLog, destinations, Duration.ofSeconds(20));
	}

	/**
	 * Creates an admin.
	 * @param dataSource the database
	 * @param tables the names of the outbox tables
	 * @param jsonMapper reads the stored headers
	 * @param store keeps the ordering keys' bookkeeping when a discard releases a key
	 * @param attemptLog whether replays are recorded in the attempt log
	 * @param timeBudget how long a bulk operation may run before it returns what it did
	 * so far, so that a request to replay many rows does not time out
	 * @param destinations the destinations this instance configures
	 */
	public JdbcOutboxAdmin(DataSource dataSource, OutboxTables tables, JsonMapper jsonMapper, JdbcOutboxStore store,
			boolean attemptLog, Set<String> destinations, Duration timeBudget) {
		this.jdbc = JdbcClient.create(dataSource);
		this.transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
		this.store = store;
		this.tables = tables;
		this.jsonMapper = jsonMapper;
		this.attemptLog = attemptLog;
		this.timeBudget = timeBudget;
		this.destinations = destinations.toArray(String[]::new);
	}

	/**
	 * Reads the figures that tell whether the outbox keeps up, in one query.
	 * @return the figures
	 */
	public OutboxStats stats() {
		String parked = PARKED_KEYS.formatted(this.tables.message());
		return this.jdbc.sql(STATS.formatted(this.tables.message(), parked))
			.param("destinations", this.destinations)
			.query((rs, row) -> new OutboxStats(rs.getLong("pending"), rs.getLong("in_flight"), rs.getLong("dead"),
					seconds(rs, "oldest_pending_seconds"), orZero(seconds(rs, "lag_seconds")),
					rs.getLong("parked_keys"), rs.getLong("unknown_destination")))
			.single();
	}

	/**
	 * Counts the messages of every destination by status.
	 * @return the counts by destination name, then by status
	 */
	public Map<String, Map<String, Long>> countsByDestination() {
		Map<String, Map<String, Long>> counts = new TreeMap<>();
		this.jdbc.sql(COUNTS.formatted(this.tables.message())).query((rs) -> {
			counts.computeIfAbsent(rs.getString("destination"), (name) -> new TreeMap<>())
				.put(rs.getString("status"), rs.getLong("count"));
		});
		return counts;
	}

	/**
	 * Lists the ordering keys held up by a dead message.
	 * @param limit the largest number of keys returned
	 * @return the keys, in order
	 */
	public List<String> parkedKeys(int limit) {
		return this.jdbc
			.sql("SELECT * FROM (" + PARKED_KEYS.formatted(this.tables.message()) + ") k ORDER BY 1 LIMIT ?")
			.param(limit)
			.query(String.class)
			.list();
	}

	/**
	 * Lists messages, newest first.
	 * @param filter which messages
	 * @param before the id of the last message of the previous page, or {@code null} for
	 * the first page
	 * @param limit the largest number of messages returned
	 * @return the messages
	 */
	public List<StoredMessage> messages(MessageFilter filter, @Nullable UUID before, int limit) {
		Map<String, Object> params = new LinkedHashMap<>();
		StringBuilder where = new StringBuilder("TRUE").append(conditions(filter, params));
		if (before != null) {
			where.append(" AND (m.created_at, m.id) < (SELECT b.created_at, b.id FROM ")
				.append(this.tables.message())
				.append(" b WHERE b.id = :before)");
			params.put("before", before);
		}
		params.put("limit", limit);
		String sql = "SELECT " + MESSAGE_COLUMNS + " FROM " + this.tables.message() + " m WHERE " + where
				+ " ORDER BY m.created_at DESC, m.id DESC LIMIT :limit";
		return this.jdbc.sql(sql).params(params).query(this::toMessage).list();
	}

	/**
	 * Reads one message.
	 * @param id the message id
	 * @return the message, or empty if there is none with that id
	 */
	public Optional<StoredMessage> message(UUID id) {
		return this.jdbc.sql("SELECT " + MESSAGE_COLUMNS + " FROM " + this.tables.message() + " m WHERE m.id = ?")
			.param(id)
			.query(this::toMessage)
			.optional();
	}

	/**
	 * Reads the attempt log of a message, oldest first.
	 * @param id the message id
	 * @return its attempts and replays
	 */
	public List<StoredAttempt> attempts(UUID id) {
		return this.jdbc.sql(ATTEMPTS.formatted(this.tables.attempt()))
			.param(id)
			.query(JdbcOutboxAdmin::toAttempt)
			.list();
	}

	/**
	 * Makes a dead message {@code PENDING} again, due now, with a fresh budget (no
	 * attempts made, the deadline counted from now) and the same id and idempotency key,
	 * and records the replay in the attempt log.
	 * @param id the message id
	 * @param actor who replays it
	 * @return whether the message was dead and is replayed
	 */
	public boolean replay(UUID id, String actor) {
		return replay(filterById(id), Map.of("id", id), 1, actor) == 1;
	}

	/**
	 * Replays the dead messages that match a filter, oldest first, in chunks.
	 * @param filter which dead messages; its status is ignored
	 * @param limit the largest number of messages replayed
	 * @param actor who replays them
	 * @return how many were replayed and whether all matching ones were
	 */
	public BulkResult replay(MessageFilter filter, int limit, String actor) {
		Map<String, Object> params = new LinkedHashMap<>();
		String conditions = conditions(withoutStatus(filter), params);
		return inChunks(limit, (chunk) -> replay(conditions, params, chunk, actor));
	}

	/**
	 * Deletes a dead message and its attempt log.
	 * @param id the message id
	 * @return whether the message was dead and is deleted
	 */
	public boolean discard(UUID id) {
		return discard(filterById(id), Map.of("id", id), 1) == 1;
	}

	/**
	 * Deletes the dead messages that match a filter, and their attempt logs, oldest
	 * first, in chunks.
	 * @param filter which dead messages; its status is ignored
	 * @param limit the largest number of messages deleted
	 * @return how many were deleted and whether all matching ones were
	 */
	public BulkResult discard(MessageFilter filter, int limit) {
		Map<String, Object> params = new LinkedHashMap<>();
		String conditions = conditions(withoutStatus(filter), params);
		return inChunks(limit, (chunk) -> discard(conditions, params, chunk));
	}

	private int replay(String conditions, Map<String, Object> params, int limit, String actor) {
		Map<String, Object> all = new LinkedHashMap<>(params);
		all.put("limit", limit);
		all.put("actor", actor);
		all.put("log", this.attemptLog);
		String sql = REPLAY.formatted(this.tables.message(), this.tables.attempt(), conditions, this.tables.key());
		return this.jdbc.sql(sql).params(all).query(Integer.class).single();
	}

	private int discard(String conditions, Map<String, Object> params, int limit) {
		Map<String, Object> all = new LinkedHashMap<>(params);
		all.put("limit", limit);
		String sql = DISCARD.formatted(this.tables.message(), this.tables.key(), conditions);
		Integer discarded = this.transactions.execute((status) -> {
			Map<String, Object> result = this.jdbc.sql(sql).params(all).query().singleRow();
			if (result.get("released_keys") instanceof Array keys) {
				try {
					this.store.promoteNextHeads((String[]) keys.getArray());
				}
				catch (SQLException ex) {
					throw new IllegalStateException("Could not read the released ordering keys", ex);
				}
			}
			return ((Number) result.get("discarded")).intValue();
		});
		return (discarded != null) ? discarded : 0;
	}

	private BulkResult inChunks(int limit, Chunk chunk) {
		Assert.isTrue(limit > 0, () -> "limit must be positive, was " + limit);
		long deadline = System.nanoTime() + this.timeBudget.toNanos();
		int done = 0;
		while (done < limit) {
			int size = Math.min(CHUNK_SIZE, limit - done);
			int count = chunk.apply(size);
			done += count;
			if (count < size) {
				return new BulkResult(done, true);
			}
			if (System.nanoTime() - deadline > 0) {
				break;
			}
		}
		return new BulkResult(done, false);
	}

	private static String filterById(UUID id) {
		return "AND m.id = :id";
	}

	private static MessageFilter withoutStatus(MessageFilter filter) {
		return new MessageFilter(null, filter.destination(), filter.orderingKey(), filter.deadReason(), filter.from(),
				filter.to());
	}

	private static String conditions(MessageFilter filter, Map<String, Object> params) {
		StringBuilder where = new StringBuilder();
		condition(where, params, "m.status = :status", "status", filter.status());
		condition(where, params, "m.destination = :destination", "destination", filter.destination());
		condition(where, params, "m.ordering_key = :orderingKey", "orderingKey", filter.orderingKey());
		condition(where, params, "m.dead_reason = :deadReason", "deadReason", filter.deadReason());
		condition(where, params, "m.created_at >= :from", "from", timestamp(filter.from()));
		condition(where, params, "m.created_at < :to", "to", timestamp(filter.to()));
		return where.toString();
	}

	private static void condition(StringBuilder where, Map<String, Object> params, String sql, String name,
			@Nullable Object value) {
		if (value != null) {
			where.append(" AND ").append(sql);
			params.put(name, value);
		}
	}

	private static @Nullable OffsetDateTime timestamp(@Nullable Instant instant) {
		return (instant != null) ? instant.atOffset(ZoneOffset.UTC) : null;
	}

	private StoredMessage toMessage(ResultSet rs, int row) throws SQLException {
		return new StoredMessage(rs.getObject("id", UUID.class), rs.getString("destination"), rs.getString("method"),
				rs.getString("path"), this.jsonMapper.readValue(rs.getString("headers"), HEADERS),
				rs.getString("content_type"), rs.getLong("body_size"), rs.getString("ordering_key"),
				rs.getString("idempotency_key"), rs.getString("status"), rs.getInt("attempts"),
				instant(rs, "created_at"), instant(rs, "next_attempt_at"), instant(rs, "last_attempt_at"),
				rs.getObject("last_status_code", Integer.class), rs.getString("last_error_code"),
				rs.getString("last_error"), rs.getString("dead_reason"), instant(rs, "delivered_at"),
				rs.getString("trace_parent"));
	}

	private static StoredAttempt toAttempt(ResultSet rs, int row) throws SQLException {
		return new StoredAttempt(rs.getInt("attempt"), instant(rs, "started_at"),
				rs.getObject("duration_ms", Long.class), rs.getString("outcome"),
				rs.getObject("status_code", Integer.class), rs.getString("error_code"), rs.getString("error"),
				rs.getString("response_snippet"), rs.getObject("delay_ms", Long.class), rs.getString("delay_reason"),
				rs.getString("actor"));
	}

	private static @Nullable Instant instant(ResultSet rs, String column) throws SQLException {
		OffsetDateTime value = rs.getObject(column, OffsetDateTime.class);
		return (value != null) ? value.toInstant() : null;
	}

	private static @Nullable Duration seconds(ResultSet rs, String column) throws SQLException {
		double seconds = rs.getDouble(column);
		return rs.wasNull() ? null : Duration.ofNanos((long) (seconds * 1_000_000_000L));
	}

	private static Duration orZero(@Nullable Duration duration) {
		return (duration != null) ? duration : Duration.ZERO;
	}

	/**
	 * The result of a bulk operation.
	 *
	 * @param count the number of messages replayed or discarded
	 * @param complete whether every matching message was; {@code false} when the limit or
	 * the time budget stopped the operation first
	 */
	public record BulkResult(int count, boolean complete) {

	}

	@FunctionalInterface
	private interface Chunk {

		int apply(int size);

	}

}
