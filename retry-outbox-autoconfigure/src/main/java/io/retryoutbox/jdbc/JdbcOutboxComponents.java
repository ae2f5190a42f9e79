package io.retryoutbox.jdbc;

import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Supplier;

import javax.sql.DataSource;

import io.retryoutbox.Outbox;
import io.retryoutbox.OutboxClock;
import io.retryoutbox.message.ClaimedMessage;
import io.retryoutbox.message.EnqueueObserver;
import io.retryoutbox.message.OutboxReadModel;
import io.retryoutbox.message.OutboxRepair;
import io.retryoutbox.relay.DirectDispatch;
import io.retryoutbox.relay.OutboxStore;
import io.retryoutbox.relay.PauseStore;
import io.retryoutbox.retention.OutboxRetention;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.util.unit.DataSize;

/**
 * Makes the outbox's parts on one PostgreSQL database: the {@link Outbox} that enqueues,
 * the relay's {@link OutboxStore} and {@link PauseStore}, the operator's
 * {@link OutboxReadModel} and {@link OutboxRepair}, and the {@link OutboxRetention}. They
 * share one owner of per-key order, so the rules of a message's life are written once;
 * the JDBC classes themselves stay package-private.
 */
public final class JdbcOutboxComponents {

	/**
	 * The number of rows one statement of a bulk replay or discard touches at most.
	 */
	public static final int REPAIR_CHUNK_SIZE = 1000;

	private final DataSource dataSource;

	private final OutboxTables tables;

	private final JsonMapper jsonMapper;

	private final AttemptLog attemptLog;

	private final OrderingKeys keys;

	private final JdbcOutboxStore store;

	/**
	 * Creates the parts' common ground.
	 * @param dataSource the database
	 * @param tables the names of the outbox tables
	 * @param jsonMapper reads and writes headers and JSON bodies
	 * @param attemptLog whether and how attempts are logged
	 */
	public JdbcOutboxComponents(DataSource dataSource, OutboxTables tables, JsonMapper jsonMapper,
			AttemptLog attemptLog) {
		this(dataSource, tables, jsonMapper, attemptLog, OutboxClock.system());
	}

	/**
	 * Creates the parts' common ground, with the clock that messages are due by.
	 * @param dataSource the database
	 * @param tables the names of the outbox tables
	 * @param jsonMapper reads and writes headers and JSON bodies
	 * @param attemptLog whether and how attempts are logged
	 * @param clock the clock the relay's claims tell due messages by, with the database's
	 */
	public JdbcOutboxComponents(DataSource dataSource, OutboxTables tables, JsonMapper jsonMapper,
			AttemptLog attemptLog, OutboxClock clock) {
		this.dataSource = dataSource;
		this.tables = tables;
		this.jsonMapper = jsonMapper;
		this.attemptLog = attemptLog;
		this.keys = new OrderingKeys(dataSource, tables);
		this.store = new JdbcOutboxStore(dataSource, tables, jsonMapper, this.keys, attemptLog, clock);
	}

	/**
	 * The store the relay claims from and completes to.
	 * @return the store
	 */
	public OutboxStore store() {
		return this.store;
	}

	/**
	 * Where the relay instances share their destinations' pauses.
	 * @return the pause store
	 */
	public PauseStore pauses() {
		return new JdbcPauseStore(this.dataSource, this.tables);
	}

	/**
	 * An outbox that enqueues in the caller's transaction.
	 * @param settings what requests are accepted and how they are keyed
	 * @param wakeUp wakes the relays once a transaction that enqueued commits
	 * @param observer watches each enqueue, e.g. to store the trace context
	 * @return the outbox
	 */
	public Outbox outbox(EnqueueSettings settings, RelayWakeUp wakeUp, EnqueueObserver observer) {
		return new JdbcOutbox(this.keys, settings, this.jsonMapper, wakeUp, observer);
	}

	/**
	 * An outbox that enqueues in the caller's transaction and, where the relay has a free
	 * slot, inserts a message leased to it and hands it over after the commit.
	 * @param settings what requests are accepted and how they are keyed
	 * @param wakeUp wakes the relays once a transaction that enqueued a message pending
	 * commits
	 * @param observer watches each enqueue, e.g. to store the trace context
	 * @param directDispatch the relay that takes messages directly, or {@code null} while
	 * there is none
	 * @return the outbox
	 */
	public Outbox outbox(EnqueueSettings settings, RelayWakeUp wakeUp, EnqueueObserver observer,
			Supplier<@Nullable DirectDispatch> directDispatch) {
		return new JdbcOutbox(this.keys, settings, this.jsonMapper, wakeUp, observer, directDispatch, false);
	}

	/**
	 * The operator's read model.
	 * @param destinations the destinations this instance configures
	 * @return the read model
	 */
	public OutboxReadModel readModel(Collection<String> destinations) {
		return new JdbcOutboxReadModel(this.dataSource, this.tables, this.jsonMapper, destinations);
	}

	/**
	 * The operator's repair.
	 * @param timeBudget how long a bulk operation may run before it returns what it did
	 * so far, so that a request to replay many rows does not time out
	 * @return the repair
	 */
	public OutboxRepair repair(Duration timeBudget) {
		return new JdbcOutboxRepair(this.keys, this.attemptLog.enabled(), timeBudget);
	}

	/**
	 * The retention.
	 * @param chunkSize the largest number of messages one statement deletes
	 * @return the retention
	 */
	public OutboxRetention retention(int chunkSize) {
		return new JdbcOutboxRetention(this.dataSource, this.tables, chunkSize);
	}

	/**
	 * Wakes the relays, this instance's and other instances', once a transaction that
	 * enqueued commits.
	 */
	public interface RelayWakeUp {

		/**
		 * Whether a wake-up would reach a relay now. While it would not, an enqueue adds
		 * nothing to its transaction's commit for it.
		 * @return whether a wake-up is wanted
		 */
		boolean isWanted();

		/**
		 * Wakes the relays; returns at once.
		 */
		void wakeUp();

		/**
		 * Tells this instance's relay which ordering keys got messages in a transaction
		 * that committed, before it is woken; returns at once.
		 * @param keys the keys
		 */
		default void arrived(Collection<String> keys) {
		}

		/**
		 * Whether a run of this instance's relay holds the ordering key and may take a
		 * message enqueued behind it ({@link #follow}).
		 * @param key the ordering key
		 * @return whether such a run is under way
		 */
		default boolean hasRun(String key) {
			return false;
		}

		/**
		 * Offers a message inserted pending right behind {@code behind}, once its
		 * transaction committed, to this instance's relay's run of its key, which takes
		 * it if that run ends with {@code behind} and holds {@code ahead} messages behind
		 * its head; returns at once.
		 * @param message the message, as a claim would have read it
		 * @param behind the message of its key that it was inserted right behind
		 * @param ahead how many messages of its key were behind the key's head then
		 * @return whether a run took it; if not, the relay is told of its key by
		 * {@link #arrived}
		 */
		default boolean follow(ClaimedMessage message, UUID behind, int ahead) {
			return false;
		}

	}

	/**
	 * Whether and how attempts are logged in the attempt log table.
	 *
	 * @param enabled whether each attempt (and each replay) is logged
	 * @param responseSnippetSize the largest number of bytes kept of an error response
	 * body
	 */
	public record AttemptLog(boolean enabled, int responseSnippetSize) {

		/**
		 * Logging on, with 1KB response snippets.
		 */
		public static final AttemptLog DEFAULTS = new AttemptLog(true, 1024);

	}

	/**
	 * What requests the outbox accepts.
	 *
	 * @param destinations the configured destination names
	 * @param maxBodySize the largest body accepted
	 * @param idempotencyKeyHeader the name of the idempotency key header
	 * @param requireTransaction whether an active transaction is required
	 * @param configuredHeaders by destination, the names of the headers its configuration
	 * sets, which a message may not set too
	 * @param signedDestinations the destinations whose requests the relay signs, on which
	 * a message may not set the signature headers
	 */
	public record EnqueueSettings(Collection<String> destinations, DataSize maxBodySize, String idempotencyKeyHeader,
			boolean requireTransaction, Map<String, ? extends Collection<String>> configuredHeaders,
			Collection<String> signedDestinations) {

		/**
		 * Settings for destinations whose requests are not signed.
		 * @param destinations the configured destination names
		 * @param maxBodySize the largest body accepted
		 * @param idempotencyKeyHeader the name of the idempotency key header
		 * @param requireTransaction whether an active transaction is required
		 * @param configuredHeaders by destination, the names of the headers its
		 * configuration sets, which a message may not set too
		 */
		public EnqueueSettings(Collection<String> destinations, DataSize maxBodySize, String idempotencyKeyHeader,
				boolean requireTransaction, Map<String, ? extends Collection<String>> configuredHeaders) {
			this(destinations, maxBodySize, idempotencyKeyHeader, requireTransaction, configuredHeaders, Set.of());
		}

		/**
		 * Settings for destinations that configure no headers.
		 * @param destinations the configured destination names
		 * @param maxBodySize the largest body accepted
		 * @param idempotencyKeyHeader the name of the idempotency key header
		 * @param requireTransaction whether an active transaction is required
		 */
		public EnqueueSettings(Collection<String> destinations, DataSize maxBodySize, String idempotencyKeyHeader,
				boolean requireTransaction) {
			this(destinations, maxBodySize, idempotencyKeyHeader, requireTransaction, Map.of());
		}

	}

}
