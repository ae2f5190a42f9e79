package io.retryoutbox.jdbc;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Collection;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;

import javax.sql.DataSource;

import io.retryoutbox.message.AttemptOutcome;
import io.retryoutbox.message.DestinationCounts;
import io.retryoutbox.message.MessageFilter;
import io.retryoutbox.message.MessageStatus;
import io.retryoutbox.message.OutboxReadModel;
import io.retryoutbox.message.OutboxStats;
import io.retryoutbox.message.StoredAttempt;
import io.retryoutbox.message.StoredMessage;
import io.retryoutbox.support.SecretValues;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * The operator's {@link OutboxReadModel} on PostgreSQL. Its statements are rendered once;
 * a listing only adds its filter's conditions.
 */
final class JdbcOutboxReadModel implements OutboxReadModel {

	private static final TypeReference<Map<String, List<String>>> HEADERS = new TypeReference<>() {
	};

	/**
	 * The ordering keys parked by a dead message: with on-dead=block a dead head keeps
	 * holding its key, so the key's later messages wait until it is replayed or
	 * discarded.
	 */
	private static final String PARKED_KEYS = """
			SELECT DISTINCT ordering_key FROM {message}
			WHERE is_head AND holds_key AND NOT releasing AND status = {DEAD}
			""";

	/**
	 * Every figure comes from a partial index (unfinished, lease, dead, due), never from
	 * the delivered rows, so health and the gauges cost the same however many of those
	 * retention keeps ({@code StatsQueryPlanTests}). Lag counts only claimable messages
	 * (heads and unkeyed ones, of destinations this instance knows and that are not
	 * paused): a message waiting behind its key's head, or for its paused destination, is
	 * not due, whatever its own due time says, so a destination that is down for hours
	 * does not turn health down.
	 */
	static final String STATS = """
			SELECT
				(SELECT count(*) FROM {message} WHERE status = {PENDING}) AS pending,
				(SELECT count(*) FROM {message} WHERE status = {IN_FLIGHT}) AS in_flight,
				(SELECT count(*) FROM {message} WHERE status = {DEAD}) AS dead,
				(SELECT extract(epoch FROM now() - min(created_at)) FROM {message}
					WHERE status IN ({PENDING}, {IN_FLIGHT})) AS oldest_pending_seconds,
				(SELECT extract(epoch FROM now() - min(h.next_attempt_at))
					FROM unnest(CAST(:destinations AS text[])) AS d(destination)
					CROSS JOIN LATERAL (SELECT next_attempt_at FROM {message}
						WHERE status = {PENDING} AND is_head AND destination = d.destination
							AND next_attempt_at <= now()
						ORDER BY next_attempt_at LIMIT 1) h
					WHERE NOT EXISTS (SELECT 1 FROM {pause} p
						WHERE p.destination = d.destination AND p.ended_at IS NULL)) AS lag_seconds,
				(SELECT count(*) FROM (%s) k) AS parked_keys,
				(SELECT count(*) FROM {message}
					WHERE status = {PENDING} AND destination <> ALL (:destinations)) AS unknown_destination
			""".formatted(PARKED_KEYS);

	/**
	 * Like the statistics, reads partial indexes alone, never the delivered rows
	 * ({@code StatsQueryPlanTests}): the pending rows from the unfinished index, which
	 * includes their status and destination, and the dead ones, which are few, through
	 * theirs. One branch per status, so that each is planned against its own index.
	 */
	static final String PENDING_AND_DEAD = """
			SELECT destination, count(*) FILTER (WHERE status = {PENDING}) AS pending,
				count(*) FILTER (WHERE status = {DEAD}) AS dead
			FROM (SELECT destination, status FROM {message} WHERE status = {PENDING}
				UNION ALL
				SELECT destination, status FROM {message} WHERE status = {DEAD}) m
			GROUP BY destination
			""";

	/**
	 * Reads every retained row, delivered ones too: only the endpoint's summary asks for
	 * it, on an operator's request, never health or the gauges.
	 */
	private static final String COUNTS = """
			SELECT destination, status, count(*) AS count FROM {message} GROUP BY destination, status
			""";

	private static final String MESSAGE_COLUMNS = """
			m.id, m.destination, m.method, m.path, m.headers::text AS headers, m.content_type,
			COALESCE(octet_length(m.body), 0) AS body_size, m.ordering_key, m.idempotency_key, m.status, m.attempts,
			m.created_at, m.next_attempt_at, m.last_attempt_at, m.last_status_code, m.last_error_code, m.last_error,
			m.dead_reason, m.delivered_at, m.trace_parent
			""";

	private static final String MESSAGE = "SELECT " + MESSAGE_COLUMNS + " FROM {message} m WHERE m.id = ?";

	private static final String MESSAGES = "SELECT " + MESSAGE_COLUMNS + " FROM {message} m WHERE TRUE %s"
			+ " ORDER BY m.created_at DESC, m.id DESC LIMIT :limit";

	private static final String BEFORE = """
			AND (m.created_at, m.id) < (SELECT b.created_at, b.id FROM {message} b WHERE b.id = :before)
			""";

	private static final String BODY = "SELECT body FROM {message} WHERE id = ? AND body IS NOT NULL";

	private static final String ATTEMPTS = """
			SELECT attempt, started_at, duration_ms, outcome, status_code, error_code, error, response_snippet,
				delay_ms, delay_reason, actor
			FROM {attempt} WHERE message_id = ? ORDER BY id
			""";

	private final JdbcClient jdbc;

	private final JsonMapper jsonMapper;

	private final String[] destinations;

	private final String stats;

	private final String counts;

	private final String pendingAndDead;

	private final String parkedKeys;

	private final String message;

	private final String messages;

	private final String before;

	private final String attempts;

	private final String body;

	JdbcOutboxReadModel(DataSource dataSource, OutboxTables tables, JsonMapper jsonMapper,
			Collection<String> destinations) {
		this.jdbc = JdbcClient.create(dataSource);
		this.jsonMapper = jsonMapper;
		this.destinations = destinations.toArray(String[]::new);
		this.stats = Sql.render(STATS, tables);
		this.counts = Sql.render(COUNTS, tables);
		this.pendingAndDead = Sql.render(PENDING_AND_DEAD, tables);
		this.parkedKeys = Sql.render("SELECT * FROM (" + PARKED_KEYS + ") k ORDER BY 1 LIMIT ?", tables);
		this.message = Sql.render(MESSAGE, tables);
		this.messages = Sql.render(MESSAGES, tables);
		this.before = Sql.render(BEFORE, tables);
		this.attempts = Sql.render(ATTEMPTS, tables);
		this.body = Sql.render(BODY, tables);
	}

	@Override
	public OutboxStats stats() {
		return this.jdbc.sql(this.stats)
			.param("destinations", this.destinations)
			.query((rs, row) -> new OutboxStats(rs.getLong("pending"), rs.getLong("in_flight"), rs.getLong("dead"),
					seconds(rs, "oldest_pending_seconds"), orZero(seconds(rs, "lag_seconds")),
					rs.getLong("parked_keys"), rs.getLong("unknown_destination")))
			.single();
	}

	@Override
	public Map<String, Map<MessageStatus, Long>> countsByDestination() {
		Map<String, Map<MessageStatus, Long>> counts = new TreeMap<>();
		this.jdbc.sql(this.counts).query((rs) -> {
			counts.computeIfAbsent(rs.getString("destination"), (name) -> new EnumMap<>(MessageStatus.class))
				.put(MessageStatus.valueOf(rs.getString("status")), rs.getLong("count"));
		});
		return counts;
	}

	@Override
	public Map<String, DestinationCounts> pendingAndDeadByDestination() {
		Map<String, DestinationCounts> counts = new TreeMap<>();
		for (String destination : this.destinations) {
			counts.put(destination, DestinationCounts.NONE);
		}
		this.jdbc.sql(this.pendingAndDead).query((rs) -> {
			counts.put(rs.getString("destination"), new DestinationCounts(rs.getLong("pending"), rs.getLong("dead")));
		});
		return counts;
	}

	@Override
	public List<String> parkedKeys(int limit) {
		return this.jdbc.sql(this.parkedKeys).param(limit).query(String.class).list();
	}

	@Override
	public List<StoredMessage> messages(MessageFilter filter, @Nullable UUID before, int limit) {
		Map<String, Object> params = new LinkedHashMap<>();
		String conditions = MessageConditions.of(filter, params);
		if (before != null) {
			conditions += " " + this.before;
			params.put("before", before);
		}
		params.put("limit", limit);
		return this.jdbc.sql(this.messages.formatted(conditions)).params(params).query(this::toMessage).list();
	}

	@Override
	public Optional<StoredMessage> message(UUID id) {
		return this.jdbc.sql(this.message).param(id).query(this::toMessage).optional();
	}

	@Override
	public Optional<byte[]> body(UUID id) {
		return this.jdbc.sql(this.body).param(id).query(byte[].class).optional();
	}

	@Override
	public List<StoredAttempt> attempts(UUID id) {
		return this.jdbc.sql(this.attempts).param(id).query(JdbcOutboxReadModel::toAttempt).list();
	}

	private StoredMessage toMessage(ResultSet rs, int row) throws SQLException {
		return new StoredMessage(rs.getObject("id", UUID.class), rs.getString("destination"), rs.getString("method"),
				rs.getString("path"), headers(rs.getString("headers")), rs.getString("content_type"),
				rs.getLong("body_size"), rs.getString("ordering_key"), rs.getString("idempotency_key"),
				MessageStatus.valueOf(rs.getString("status")), rs.getInt("attempts"), instant(rs, "created_at"),
				instant(rs, "next_attempt_at"), instant(rs, "last_attempt_at"),
				rs.getObject("last_status_code", Integer.class), rs.getString("last_error_code"),
				rs.getString("last_error"), rs.getString("dead_reason"), instant(rs, "delivered_at"),
				rs.getString("trace_parent"));
	}

	/**
	 * Shows an operator what is stored even when it cannot be sent: unreadable headers
	 * come back as one pseudo-header holding the raw text.
	 */
	private Map<String, List<String>> headers(String json) {
		try {
			return this.jsonMapper.readValue(json, HEADERS);
		}
		catch (RuntimeException ex) {
			return Map.of("(unreadable)", List.of(SecretValues.mask(json)));
		}
	}

	private static StoredAttempt toAttempt(ResultSet rs, int row) throws SQLException {
		return new StoredAttempt(rs.getInt("attempt"), instant(rs, "started_at"),
				rs.getObject("duration_ms", Long.class), AttemptOutcome.valueOf(rs.getString("outcome")),
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

}
