package io.retryoutbox.jdbc;

import java.nio.charset.StandardCharsets;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;

import javax.sql.DataSource;

import io.retryoutbox.Outbox;
import io.retryoutbox.OutboxClock;
import io.retryoutbox.message.Claim;
import io.retryoutbox.message.ClaimedMessage;
import io.retryoutbox.message.EnqueueObserver;
import io.retryoutbox.message.Outcome;
import io.retryoutbox.message.UnreadableMessage;
import io.retryoutbox.relay.OutboxRelay;
import io.retryoutbox.relay.OutboxStore;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.util.Assert;
import org.springframework.util.unit.DataSize;

/**
 * The relay's {@link OutboxStore} on PostgreSQL: claims and leases here, outcomes and key
 * releases through {@link OrderingKeys}. Every call is one statement or one short
 * transaction, so a whole batch is claimed or completed in one round trip, and a
 * {@link #round round} does a poll's writes, key releases and claim under one commit.
 */
final class JdbcOutboxStore implements OutboxStore {

	private static final TypeReference<Map<String, List<String>>> HEADERS = new TypeReference<>() {
	};

	// Each destination's due heads, oldest first, up to what that destination may send
	// now, each read from its own part of the due-heads index. = ANY (ARRAY(...)), not
	// IN (...): the planner cannot see the LIMIT's value, guessed a tenth of the due rows
	// and hash-joined them with a scan of the whole table (2.6 s per claim beside 10^7
	// retained rows, against 2 ms by primary key). Due by the outbox clock (the last
	// parameter), which the policy schedules retries from, so that a test's clock makes
	// them due, or by the database's, which stamps new messages (see OutboxClock).
	static final String CLAIM = """
			UPDATE {message} m
			SET status = {IN_FLIGHT}, lease_owner = ?, lease_until = now() + ? * interval '1 millisecond',
				attempts = m.attempts + 1, last_attempt_at = now()
			WHERE m.id = ANY (ARRAY(
				SELECT c.id FROM unnest(?::text[], ?::int[]) AS d(destination, n)
				CROSS JOIN LATERAL (
					SELECT x.id FROM {message} x
					WHERE x.status = {PENDING} AND x.is_head AND x.destination = d.destination
						AND x.next_attempt_at <= greatest(?::timestamptz, now())
					ORDER BY x.next_attempt_at
					LIMIT d.n
					FOR UPDATE SKIP LOCKED) c))
			RETURNING m.id, m.destination, m.method, m.path, m.headers::text AS headers, m.body, m.content_type,
				m.ordering_key, m.idempotency_key, m.attempts, m.created_at, m.trace_parent, m.trace_state
			""";

	// Both skip rows another transaction has locked, e.g. a round writing their
	// outcomes: the keeper and the rounds lock the same rows in different orders, and
	// waiting would let them deadlock. A row skipped now is finished or comes again.
	private static final String RECOVER_EXPIRED = """
			UPDATE {message} SET status = {PENDING}, lease_owner = NULL, lease_until = NULL
			WHERE id IN (
				SELECT id FROM {message} WHERE status = {IN_FLIGHT} AND lease_until < now()
				FOR UPDATE SKIP LOCKED)
				AND status = {IN_FLIGHT} AND lease_until < now()
			""";

	private static final String EXTEND_LEASES = """
			UPDATE {message} SET lease_until = now() + ? * interval '1 millisecond'
			WHERE id IN (
				SELECT id FROM {message} WHERE status = {IN_FLIGHT} AND lease_owner = ? AND id = ANY (?::uuid[])
				FOR UPDATE SKIP LOCKED)
			""";

	private static final String RELEASE = """
			UPDATE {message} SET status = {PENDING}, lease_owner = NULL, lease_until = NULL, attempts = attempts - 1
			WHERE status = {IN_FLIGHT} AND lease_owner = ? AND id = ANY (?::uuid[])
			""";

	// Copies with the columns, defaults, constraints and indexes of the outbox's tables,
	// gone when the rehearsal's transaction ends; see #rehearse.
	private static final String COPY_TABLES = """
			CREATE TEMPORARY TABLE retry_outbox_rehearsal_message (LIKE {message} INCLUDING ALL) ON COMMIT DROP;
			CREATE TEMPORARY TABLE retry_outbox_rehearsal_attempt (LIKE {attempt} INCLUDING ALL) ON COMMIT DROP
			""";

	private static final OutboxTables REHEARSAL = new OutboxTables("pg_temp.retry_outbox_rehearsal_message",
			"pg_temp.retry_outbox_rehearsal_attempt", "pg_temp.retry_outbox_rehearsal_pause");

	private final DataSource dataSource;

	private final OutboxTables tables;

	private final JdbcClient jdbc;

	private final TransactionTemplate transactions;

	private final TransactionTemplate roundTransactions;

	private final JsonMapper jsonMapper;

	private final OrderingKeys keys;

	private final JdbcOutboxComponents.AttemptLog attemptLog;

	private final OutboxClock clock;

	private final String claim;

	private final String recoverExpired;

	private final String extendLeases;

	private final String release;

	JdbcOutboxStore(DataSource dataSource, OutboxTables tables, JsonMapper jsonMapper, OrderingKeys keys,
			JdbcOutboxComponents.AttemptLog attemptLog, OutboxClock clock) {
		this.dataSource = dataSource;
		this.tables = tables;
		this.jdbc = JdbcClient.create(dataSource);
		this.transactions = RelayTransactions.create(dataSource);
		this.roundTransactions = RelayTransactions.createCarried(dataSource);
		this.jsonMapper = jsonMapper;
		this.keys = keys;
		this.attemptLog = attemptLog;
		this.clock = clock;
		this.claim = Sql.render(CLAIM, tables);
		this.recoverExpired = Sql.render(RECOVER_EXPIRED, tables);
		this.extendLeases = Sql.render(EXTEND_LEASES, tables);
		this.release = Sql.render(RELEASE, tables);
	}

	@Override
	public List<Claim> claim(String owner, Map<String, Integer> limits, int runSize, Duration lease) {
		List<Claim> claimed = this.transactions
			.execute((status) -> withRuns(claimHeads(owner, limits, lease), runSize));
		Assert.state(claimed != null, "A claim returns what it claimed");
		return claimed;
	}

	private List<Claim> claimHeads(String owner, Map<String, Integer> limits, Duration lease) {
		String[] destinations = limits.keySet().toArray(String[]::new);
		Integer[] counts = limits.values().toArray(Integer[]::new);
		return this.jdbc.sql(this.claim)
			.params(owner, lease.toMillis(), destinations, counts, now())
			.query(this::claimed)
			.list();
	}

	private List<Claim> withRuns(List<Claim> heads, int runSize) {
		List<Claim> keyed = heads.stream().filter((head) -> head.orderingKey() != null).toList();
		if (runSize <= 1 || keyed.isEmpty()) {
			return heads;
		}
		List<Claim> runs = new ArrayList<>(heads);
		runs.addAll(this.keys.claimRuns(keyed, runSize, this::claimed));
		return runs;
	}

	@Override
	public List<Claim> runsBehind(List<? extends Claim> heads, int runSize) {
		if (heads.isEmpty() || runSize <= 1) {
			return List.of();
		}
		List<Claim> runs = this.roundTransactions
			.execute((status) -> this.keys.readRuns(heads, runSize, this::claimed, status.isNewTransaction()));
		return (runs != null) ? runs : List.of();
	}

	private OffsetDateTime now() {
		return OffsetDateTime.ofInstant(this.clock.instant(), ZoneOffset.UTC);
	}

	@Override
	public Round round(String owner, List<Outcome> outcomes, List<UUID> unsent, boolean releaseKeys,
			Map<String, Integer> limits, int runSize, boolean claimOnlyIfPromoted, Duration lease) {
		// A wake-up with every slot taken and nothing to write opens no transaction.
		if (outcomes.isEmpty() && unsent.isEmpty() && !releaseKeys && (limits.isEmpty() || claimOnlyIfPromoted)) {
			return new Round(0, 0, List.of());
		}
		// A round's statements carry the planner settings, but for the release of
		// unsent messages, which goes first.
		TransactionTemplate transactions = unsent.isEmpty() ? this.roundTransactions : this.transactions;
		Round round = transactions.execute((status) -> {
			// The keys first, in the outcomes' statement: a head whose key is locked
			// there gives it up in its outcome's write, and its successor is promoted
			// below, one row version fewer than a mark and a release.
			OrderingKeys.Finished finished = complete(owner, outcomes, unsent, releaseKeys);
			// The heads that waited go first; the promotion then leases new ones
			// within what is left of each destination's count; the rest of their
			// runs follow, all in one statement. The last statement of a round that
			// is a transaction of its own commits it, in the same round trip.
			boolean claim = !limits.isEmpty() && !claimOnlyIfPromoted;
			List<Claim> claimed = (claim || !finished.lockedKeys().isEmpty()) ? this.keys.claimAndPromote(
					finished.lockedKeys(), new OrderingKeys.Lease(limits, owner, lease, now(), this::claimed), claim,
					runSize, status.isNewTransaction()) : List.of();
			return new Round(finished.written(), finished.lockedKeys().size(), claimed);
		});
		Assert.state(round != null, "A round returns its result");
		return round;
	}

	@Override
	public int complete(String owner, List<Outcome> outcomes, List<UUID> unsent) {
		// In the relay's transaction even alone: its statements share their plans with
		// the rounds', and a plan made outside it, with scans on, would be kept.
		OrderingKeys.Finished finished = this.transactions
			.execute((status) -> complete(owner, outcomes, unsent, false));
		Assert.state(finished != null, "A completion returns its count");
		return finished.written();
	}

	/**
	 * Writes outcomes and gives back the unsent rest of their runs, in the caller's
	 * transaction if there is one: together, so that no finished head lets its key go
	 * while messages of its run are still out. Only a leased message, the head of a run
	 * cancelled before its answer, is written back: the rest of a run was read, not
	 * written, when its head was claimed (see {@link OrderingKeys#CLAIM_RUNS}). If
	 * {@code admit}, the same statement as the outcomes' locks and releases the keys to
	 * admit to, for the promotion.
	 */
	private OrderingKeys.Finished complete(String owner, List<Outcome> outcomes, List<UUID> unsent, boolean admit) {
		if (!unsent.isEmpty()) {
			release(owner, unsent);
		}
		return (outcomes.isEmpty() && !admit) ? OrderingKeys.Finished.NOTHING
				: this.keys.finish(owner, outcomes, this.attemptLog, admit);
	}

	@Override
	public int releaseKeys() {
		return this.keys.releaseKeys(this.attemptLog);
	}

	@Override
	public int recoverExpiredLeases() {
		// Also the keys whose arrivals no admission has seen, e.g. enqueued by an
		// instance without a relay: the next round admits them.
		this.keys.findHeadlessKeys();
		return this.jdbc.sql(this.recoverExpired).update();
	}

	@Override
	public int extendLeases(String owner, List<UUID> ids, Duration lease) {
		String[] array = ids.stream().map(UUID::toString).toArray(String[]::new);
		return this.jdbc.sql(this.extendLeases).params(lease.toMillis(), owner, array).update();
	}

	@Override
	public int release(String owner, List<UUID> ids) {
		return this.jdbc.sql(this.release)
			.params(owner, ids.stream().map(UUID::toString).toArray(String[]::new))
			.update();
	}

	/**
	 * Rehearses on temporary copies of the tables, so that the rehearsal locks no row and
	 * no key of the real ones (the advisory locks hash the table's name with the key),
	 * admits no message of the application's, and leaves nothing behind, not even a
	 * table. Until it ends, copying holds the weakest table lock on the originals, which
	 * only a statement that drops or rewrites them waits for.
	 */
	@Override
	public void rehearse(String destination, int keys, int perKey, Consumer<Rehearsal> rounds) {
		this.transactions.executeWithoutResult((status) -> {
			status.setRollbackOnly();
			this.jdbc.sql(Sql.render(COPY_TABLES, this.tables)).update();
			OrderingKeys rehearsalKeys = new OrderingKeys(this.dataSource, REHEARSAL);
			byte[] body = "{}".getBytes(StandardCharsets.UTF_8);
			for (int i = 0; i < perKey; i++) {
				for (int k = 0; k < keys; k++) {
					UUID id = TimeOrderedUuid.next();
					rehearsalKeys.insert(new NewMessage(id, destination, "POST", "/rehearsal", "{}", body,
							"application/json", "rehearsal-" + k, id.toString()));
				}
			}
			// Arrivals are noted once their transaction commits, which this one never
			// does.
			rehearsalKeys.findHeadlessKeys();
			JdbcOutboxStore store = new JdbcOutboxStore(this.dataSource, REHEARSAL, this.jsonMapper, rehearsalKeys,
					this.attemptLog, this.clock);
			JdbcOutboxComponents.EnqueueSettings settings = new JdbcOutboxComponents.EnqueueSettings(
					List.of(destination), DataSize.ofKilobytes(64), "Idempotency-Key", false);
			rounds.accept(new Rehearsal() {

				@Override
				public OutboxStore store() {
					return store;
				}

				@Override
				public Outbox outbox(OutboxRelay relay) {
					return new JdbcOutbox(rehearsalKeys, settings, JdbcOutboxStore.this.jsonMapper,
							new LocalRelay(relay), EnqueueObserver.NONE, () -> relay, true);
				}

			});
		});
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
		String headersJson = rs.getString("headers");
		try {
			// Most rows have no headers of their own: no parse for those.
			headers = "{}".equals(headersJson) ? Map.of() : this.jsonMapper.readValue(headersJson, HEADERS);
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

	/**
	 * Reaches the rehearsal's relay as the application's enqueues reach their instance's.
	 */
	private record LocalRelay(OutboxRelay relay) implements JdbcOutboxComponents.RelayWakeUp {

		@Override
		public boolean isWanted() {
			return true;
		}

		@Override
		public void wakeUp() {
			this.relay.wakeUp();
		}

		@Override
		public void arrived(Collection<String> keys) {
			this.relay.arrived(keys);
		}

		@Override
		public boolean hasRun(String key) {
			return this.relay.hasRun(key);
		}

		@Override
		public boolean follow(ClaimedMessage message, UUID behind, int ahead) {
			return this.relay.follow(message, behind, ahead);
		}

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

}
