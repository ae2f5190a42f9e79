package io.retryoutbox;

import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import io.retryoutbox.ChaosDownstream.Action;
import io.retryoutbox.ChaosDownstream.Arrival;
import io.retryoutbox.ChaosDownstream.KeyRecord;
import io.retryoutbox.ChaosDownstream.Plan;
import io.retryoutbox.ChaosDownstream.Processing;
import io.retryoutbox.autoconfigure.RetryOutboxAutoConfiguration;
import io.retryoutbox.relay.OutboxRelay;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.RelayProcess;
import io.retryoutbox.testsupport.RestartablePostgres;
import io.retryoutbox.testsupport.TestDatabase;
import org.awaitility.core.ConditionTimeoutException;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.webclient.autoconfigure.WebClientAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.MediaType;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/**
 * The chaos soak: three relays on one database deliver a steady stream of messages to a
 * {@link ChaosDownstream} that answers every transient and terminal class and breaks
 * connections in every way, while the relays' database connections are terminated, the
 * database restarts, one instance is stopped and started and one (in a JVM of its own) is
 * killed without a clean stop. At the end every message not refused for good was
 * processed by the downstream, after dedupe by {@code Idempotency-Key}, exactly once;
 * each key's messages in enqueue order; each refusal is {@code DEAD} with its reason;
 * nothing is left {@code IN_FLIGHT}; no attempt came before a {@code Retry-After} it was
 * given.
 * <p>
 * One round of faults by default (well under a minute); {@code -Dchaos.duration=5m} runs
 * rounds for that long. The seed is printed; {@code -Dchaos.seed=...} replays the
 * downstream's answers and the messages of a run.
 */
class ChaosSoakIntegrationTests {

	private static final Duration ATTEMPT_TIMEOUT = Duration.ofSeconds(2);

	// The downstream's clock and the relays' (which schedule retries and write
	// next_attempt_at, compared with PostgreSQL's now()) are the same machine's.
	private static final long CLOCK_TOLERANCE_MILLIS = 50;

	private static final int KEYS = 40;

	// Messages enqueued between two faults.
	private static final int STEP = 40;

	private static final Duration ENQUEUE_INTERVAL = Duration.ofMillis(50);

	private final long seed = Long.getLong("chaos.seed", new SecureRandom().nextLong());

	private final Duration duration = DurationStyle.detectAndParse(System.getProperty("chaos.duration", "0s"));

	private final Plan plan = new Plan(this.seed);

	private final Faults faults = new Faults();

	@TempDir
	private Path dataDirectory;

	private @Nullable RestartablePostgres database;

	private @Nullable ChaosDownstream downstream;

	private @Nullable Process killable;

	private @Nullable ConfigurableApplicationContext enqueuing;

	private @Nullable ConfigurableApplicationContext stoppable;

	private @Nullable Enqueuer enqueuer;

	@AfterEach
	void stopEverything() throws InterruptedException {
		if (this.enqueuer != null) {
			this.enqueuer.close();
		}
		if (this.killable != null) {
			this.killable.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
		}
		closeInstances();
		if (this.database != null) {
			this.database.close();
		}
		if (this.downstream != null) {
			this.downstream.close();
		}
	}

	@Test
	void deliversEveryMessageOnceAfterDedupeInKeyOrderDespiteNetworkDatabaseAndRelayFaults() throws Exception {
		// It restarts its database, so it runs on an embedded server of its own whatever
		// the tests run on: a second run, on the external server, would repeat the first.
		assumeFalse(TestDatabase.isExternal(), "runs on an embedded server of its own, in the embedded run only");
		System.out.printf("Chaos soak: seed %d (replay with -Dchaos.seed=%d), duration %s%n", this.seed, this.seed,
				this.duration.isZero() ? "one round" : this.duration);
		long started = System.nanoTime();
		try {
			this.downstream = new ChaosDownstream(this.plan, ATTEMPT_TIMEOUT.plusMillis(500));
			this.database = RestartablePostgres.start(this.dataDirectory);
			// Its JVM takes longest to start, so it starts first.
			this.killable = RelayProcess.start(properties());
			this.faults.relayJvms++;
			this.enqueuing = startInstance();
			this.stoppable = startInstance();
			this.enqueuer = new Enqueuer(this.enqueuing, this.seed);
			int rounds = 0;
			do {
				round();
				rounds++;
			}
			while (System.nanoTime() - started < this.duration.toNanos());
			this.enqueuer.close();
			await().atMost(Duration.ofMinutes(3))
				.pollInterval(Duration.ofMillis(500))
				.ignoreExceptions()
				.until(() -> count("status IN ('PENDING', 'IN_FLIGHT')") == 0);
			closeInstances();
			Counts counts = verify();
			report(rounds, Duration.ofNanos(System.nanoTime() - started), counts);
		}
		catch (AssertionError | ConditionTimeoutException ex) {
			throw new AssertionError("Chaos soak failed with seed " + this.seed + " (replay with -Dchaos.seed="
					+ this.seed + "): " + ex.getMessage(), ex);
		}
	}

	/**
	 * One round of faults, each after {@link #STEP} more messages were enqueued; the kill
	 * comes last, so that the relay in its own JVM has the most time to start.
	 */
	private void round() throws Exception {
		Enqueuer enqueuer = this.enqueuer;
		enqueuer.awaitMore(STEP);
		terminateBackends();
		enqueuer.awaitMore(STEP);
		this.stoppable.close();
		this.faults.stops++;
		enqueuer.awaitMore(STEP);
		this.stoppable = startInstance();
		enqueuer.awaitMore(STEP);
		restartDatabase();
		enqueuer.awaitMore(STEP);
		terminateBackends();
		killWhileItHoldsALease();
		enqueuer.awaitMore(STEP);
	}

	private String[] properties() {
		String baseUrl = this.downstream.baseUrl();
		return new String[] { "spring.datasource.url=" + this.database.jdbcUrl(),
				"spring.datasource.hikari.maximum-pool-size=4", "spring.datasource.hikari.connection-timeout=1000",
				"spring.main.banner-mode=off", "spring.main.web-application-type=none",
				// Reactor Netty warns of every connection the downstream breaks.
				"logging.level.reactor.netty=error", "retry-outbox.relay.poll-interval=100ms",
				// Longer than an attempt plus the longest Retry-After, so that a message
				// taken over from a dead relay is never sent before a Retry-After that
				// relay was given.
				"retry-outbox.relay.lease-timeout=6s",
				// Its invalid rows are edited inside their enqueuing transaction, which
				// only a relay that reads what it sends sees: direct dispatch sends a
				// message as it was enqueued.
				"retry-outbox.relay.direct-dispatch=false",
				// Longer than an attempt: a clean stop lets every request finish.
				"retry-outbox.relay.shutdown-timeout=5s", "retry-outbox.retry.delay=100ms",
				"retry-outbox.retry.max-delay=1s", "retry-outbox.retry.retry-after-max=3s",
				"retry-outbox.retry.max-attempts=30", "retry-outbox.destinations.orders.base-url=" + baseUrl,
				"retry-outbox.destinations.orders.timeout=" + ATTEMPT_TIMEOUT.toMillis() + "ms",
				// Orders flow past the Retry-After of others; notices pause on it, on
				// every instance.
				"retry-outbox.destinations.orders.flow.pause-on-retry-after=false",
				"retry-outbox.destinations.notices.base-url=" + baseUrl,
				"retry-outbox.destinations.notices.timeout=" + ATTEMPT_TIMEOUT.toMillis() + "ms" };
	}

	private ConfigurableApplicationContext startInstance() {
		return new SpringApplicationBuilder(Instance.class).web(WebApplicationType.NONE).properties(properties()).run();
	}

	private void closeInstances() {
		if (this.stoppable != null) {
			this.stoppable.close();
		}
		if (this.enqueuing != null) {
			this.enqueuing.close();
		}
	}

	private JdbcClient jdbc() {
		return JdbcClient.create(new DriverManagerDataSource(this.database.jdbcUrl()));
	}

	private long count(String condition) {
		return jdbc().sql("SELECT count(*) FROM retry_outbox_message WHERE " + condition).query(Long.class).single();
	}

	private void terminateBackends() {
		List<Boolean> terminated = jdbc()
			.sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
					+ "WHERE datname = current_database() AND pid <> pg_backend_pid()")
			.query(Boolean.class)
			.list();
		assertThat(terminated).as("backends terminated").contains(true);
		this.faults.terminations++;
		this.faults.terminatedBackends += terminated.stream().filter(Boolean::booleanValue).count();
	}

	/**
	 * Kills the relay in its own JVM without a clean stop while it holds leases, so that
	 * its messages are taken over by the others once their leases expire. One that is not
	 * running (killed in an earlier round, or failed to start because a fault hit its
	 * startup, as Boot fails fast) is started again first.
	 */
	private void killWhileItHoldsALease() throws Exception {
		// A JVM starting on a busy machine can take a while.
		await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(20)).ignoreExceptions().until(() -> {
			if (this.killable == null || !this.killable.isAlive()) {
				this.killable = RelayProcess.start(properties());
				this.faults.relayJvms++;
				return false;
			}
			return jdbc()
				.sql("SELECT count(*) FROM retry_outbox_message WHERE status = 'IN_FLIGHT' AND lease_owner LIKE ?")
				.param(this.killable.pid() + "@%")
				.query(Long.class)
				.single() > 0;
		});
		this.killable.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
		this.killable = null;
		this.faults.kills++;
	}

	private void restartDatabase() {
		this.database.stop();
		OutboxRelay relay = this.enqueuing.getBean(OutboxRelay.class);
		await().atMost(Duration.ofSeconds(30)).until(() -> relay.getLastPollError() != null);
		this.database.startAgain();
		this.faults.restarts++;
	}

	private Counts verify() {
		List<Row> rows = jdbc()
			.sql("SELECT id, idempotency_key, path, ordering_key, status, dead_reason, last_status_code, "
					+ "last_error_code, attempts FROM retry_outbox_message")
			.query((rs, n) -> new Row(rs.getObject("id", UUID.class), rs.getString("idempotency_key"),
					rs.getString("path"), rs.getString("ordering_key"), rs.getString("status"),
					rs.getString("dead_reason"), (Integer) rs.getObject("last_status_code"),
					rs.getString("last_error_code"), rs.getInt("attempts")))
			.list();
		Map<String, Row> byKey = rows.stream().collect(Collectors.toMap(Row::idempotencyKey, (row) -> row));
		Map<String, KeyRecord> records = this.downstream.records();
		assertThat(rows.stream().map(Row::id).toList()).as("messages whose enqueue committed")
			.containsAll(this.enqueuer.acknowledged());
		assertThat(rows).as("messages left PENDING or IN_FLIGHT")
			.filteredOn((row) -> !row.status().equals("DELIVERED") && !row.status().equals("DEAD"))
			.isEmpty();
		assertThat(this.downstream.requestsWithoutKey()).as("requests without an idempotency key").isZero();
		List<String> wrong = new ArrayList<>();
		for (Row row : rows) {
			String problem = problem(row, records.get(row.idempotencyKey()));
			if (problem != null) {
				wrong.add(row.path() + " (" + row.id() + "): " + problem);
			}
		}
		assertThat(wrong).as("messages whose end is not what the downstream's plan makes it").isEmpty();
		records.forEach((key, record) -> {
			Row row = byKey.get(key);
			assertThat(row).as("the message of idempotency key %s", key).isNotNull();
			assertThat(record.paths()).as("paths sent with idempotency key %s", key).containsExactly(row.path());
		});
		assertKeyOrder(byKey);
		Set<String> received = receivedRetryAfters();
		List<String> early = earlyAttempts(records, received);
		assertThat(early)
			.as("attempts earlier than a Retry-After they were given (tolerance %d ms)", CLOCK_TOLERANCE_MILLIS)
			.isEmpty();
		Map<Action, Integer> answers = this.downstream.answers();
		assertThat(answers).as("answers of each class").allSatisfy((action, count) -> assertThat(count).isPositive());
		return new Counts(rows, records, answers, received.size());
	}

	/**
	 * The {@code Retry-After} answers that a relay received and recorded, as
	 * {@code <idempotency key>#<answer index>}: their bodies are in the attempt log. An
	 * answer written but not received (the relay's timeout came first on a busy machine)
	 * or whose outcome a killed relay never recorded set no floor; the latter's message
	 * waits out its lease, longer than an attempt and the longest Retry-After together.
	 */
	private Set<String> receivedRetryAfters() {
		Pattern answer = Pattern.compile("\"answer\":(\\d+)");
		return jdbc().sql("SELECT m.idempotency_key, a.response_snippet FROM retry_outbox_attempt a "
				+ "JOIN retry_outbox_message m ON m.id = a.message_id WHERE a.response_snippet LIKE '%\"answer\":%'")
			.query((rs, n) -> {
				Matcher matcher = answer.matcher(rs.getString(2));
				assertThat(matcher.find()).as("answer index in %s", rs.getString(2)).isTrue();
				return rs.getString(1) + "#" + matcher.group(1);
			})
			.set();
	}

	/**
	 * What is wrong with how a message ended, given what the downstream did with it.
	 */
	private @Nullable String problem(Row row, @Nullable KeyRecord record) {
		long sequence = Plan.sequence(row.path());
		SoakMessage message = SoakMessage.of(this.seed, sequence);
		int processed = (record != null) ? record.processed() : 0;
		if (message.invalid()) {
			if (!row.is("DEAD", "INVALID_REQUEST") || record != null) {
				return "an invalid row must be DEAD with INVALID_REQUEST and never sent, was " + row.describe()
						+ ((record != null) ? ", sent" : "");
			}
			return null;
		}
		Action refusal = this.plan.refusal(sequence);
		if (refusal != null) {
			int status = (refusal == Action.BAD_REQUEST) ? 400 : 409;
			String errorCode = (refusal == Action.BAD_REQUEST) ? "INVALID_AMOUNT" : "CONFLICT";
			if (!row.is("DEAD", "TERMINAL_STATUS") || row.lastStatusCode() == null || row.lastStatusCode() != status
					|| !errorCode.equals(row.lastErrorCode()) || processed > 0) {
				return "refused with " + status + " " + errorCode + ", must be DEAD with TERMINAL_STATUS, was "
						+ row.describe() + ", processed " + processed + " times";
			}
			return null;
		}
		if (!row.status().equals("DELIVERED") || processed == 0) {
			return "must be DELIVERED and processed, was " + row.describe() + ", processed " + processed + " times";
		}
		return null;
	}

	/**
	 * Each ordering key's messages were first processed in the order they were enqueued.
	 */
	private void assertKeyOrder(Map<String, Row> byKey) {
		Map<String, List<Long>> firstProcessings = new TreeMap<>();
		for (Processing processing : this.downstream.processings()) {
			Row row = byKey.get(processing.key());
			if (processing.first() && row != null && row.orderingKey() != null) {
				firstProcessings.computeIfAbsent(row.orderingKey(), (key) -> new ArrayList<>())
					.add(Plan.sequence(processing.path()));
			}
		}
		assertThat(firstProcessings).as("ordering keys processed").isNotEmpty();
		firstProcessings.forEach((key, sequences) -> assertThat(sequences)
			.as("sequence numbers of key %s in the order they were first processed", key)
			.isSorted()
			.doesNotHaveDuplicates());
	}

	/**
	 * The attempts that arrived before the floor of a {@code Retry-After} given to an
	 * earlier attempt of their message.
	 */
	private static List<String> earlyAttempts(Map<String, KeyRecord> records, Set<String> received) {
		List<String> early = new ArrayList<>();
		records.forEach((key, record) -> {
			List<Arrival> arrivals = new ArrayList<>(record.arrivals());
			arrivals.sort(Comparator.comparingLong(Arrival::at));
			for (int i = 0; i < arrivals.size(); i++) {
				Arrival given = arrivals.get(i);
				boolean floored = given.floor() > 0 && received.contains(key + "#" + given.index());
				for (int j = i + 1; floored && j < arrivals.size(); j++) {
					Arrival later = arrivals.get(j);
					if (later.at() < given.floor() - CLOCK_TOLERANCE_MILLIS) {
						early.add(key + ": attempt " + later.index() + " arrived " + (given.floor() - later.at())
								+ " ms before the Retry-After of attempt " + given.index() + " (" + given.action()
								+ ")");
					}
				}
			}
		});
		return early;
	}

	private void report(int rounds, Duration took, Counts counts) {
		List<Row> rows = counts.rows();
		Map<String, Long> destinations = rows.stream()
			.collect(Collectors.groupingBy((row) -> row.path().split("/")[1], TreeMap::new, Collectors.counting()));
		long keyed = rows.stream().filter((row) -> row.orderingKey() != null).count();
		Map<String, Long> dead = rows.stream()
			.filter((row) -> row.status().equals("DEAD"))
			.collect(Collectors.groupingBy(Row::deadReason, TreeMap::new, Collectors.counting()));
		long delivered = rows.stream().filter((row) -> row.status().equals("DELIVERED")).count();
		int arrivals = counts.records().values().stream().mapToInt((record) -> record.arrivals().size()).sum();
		long processedMessages = counts.records().values().stream().filter((record) -> record.processed() > 0).count();
		long processedTwice = counts.records().values().stream().filter((record) -> record.processed() > 1).count();
		int processings = counts.records().values().stream().mapToInt(KeyRecord::processed).sum();
		long retryAfters = counts.records()
			.values()
			.stream()
			.flatMap((record) -> record.arrivals().stream())
			.filter((arrival) -> arrival.floor() > 0)
			.count();
		int attempts = rows.stream().mapToInt(Row::attempts).sum();
		int mostAttempts = rows.stream().mapToInt(Row::attempts).max().orElse(0);
		System.out.printf(
				"""
						Chaos soak passed: seed %d (replay with -Dchaos.seed=%d), %d round(s) of faults, %d s
						  messages: %d %s, %d of them keyed on %d keys; enqueues that failed under the faults: %d
						  end: %d delivered, %d dead %s, none PENDING or IN_FLIGHT
						  downstream: %d attempts, answered %s
						  processed: %d messages, exactly the delivered ones; %d of them more than once, %d duplicates before dedupe by Idempotency-Key
						  Retry-After: %d given, %d of them received and recorded by a relay, no later attempt of their message before those (tolerance %d ms)
						  relays: %d attempts counted, at most %d for one message
						  faults: relay backends terminated %d times (%d connections), database restarted %d, instance stopped and started %d, instance killed (kill -9) %d, of %d relay JVMs started (the others failed to start under the faults)
						""",
				this.seed, this.seed, rounds, took.toSeconds(), rows.size(), destinations, keyed, KEYS,
				this.enqueuer.failed(), delivered, dead.values().stream().mapToLong(Long::longValue).sum(), dead,
				arrivals, counts.answers(), processedMessages, processedTwice, processings - processedMessages,
				retryAfters, counts.retryAftersReceived(), CLOCK_TOLERANCE_MILLIS, attempts, mostAttempts,
				this.faults.terminations, this.faults.terminatedBackends, this.faults.restarts, this.faults.stops,
				this.faults.kills, this.faults.relayJvms);
	}

	/**
	 * A message of the soak, decided by the seed and its sequence number.
	 *
	 * @param sequence its sequence number, the last segment of its path
	 * @param destination {@code orders} or {@code notices}
	 * @param orderingKey its ordering key, if any
	 * @param invalid whether its row is edited, before it commits, into one the relay
	 * must refuse to send
	 */
	record SoakMessage(long sequence, String destination, @Nullable String orderingKey, boolean invalid) {

		static SoakMessage of(long seed, long sequence) {
			SplittableRandom random = new SplittableRandom(seed * 31 + sequence);
			boolean invalid = sequence % 50 == 49;
			if (random.nextInt(100) < 20) {
				return new SoakMessage(sequence, "notices", null, invalid);
			}
			String key = (random.nextInt(100) < 75) ? "k" + random.nextInt(KEYS) : null;
			return new SoakMessage(sequence, "orders", key, invalid);
		}

		String path() {
			return "/" + this.destination + "/" + ((this.orderingKey != null) ? this.orderingKey : "-") + "/"
					+ this.sequence;
		}

		/**
		 * The path its row is edited to: a dot segment, which enqueue refuses.
		 */
		String invalidPath() {
			return "/" + this.destination + "/../" + this.sequence;
		}

		OutboxRequest request() {
			return OutboxRequest.post(this.destination, path())
				.body("{\"sequence\":" + this.sequence + "}", MediaType.APPLICATION_JSON)
				.orderingKey(this.orderingKey)
				.build();
		}

	}

	/**
	 * Enqueues one message every {@link #ENQUEUE_INTERVAL}, in a transaction of its own,
	 * until closed; an enqueue that fails under the faults is not tried again.
	 */
	private static final class Enqueuer implements AutoCloseable {

		private final ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor();

		private final Outbox outbox;

		private final TransactionTemplate transactions;

		private final JdbcClient jdbc;

		private final long seed;

		private final AtomicLong next = new AtomicLong();

		private final Set<UUID> acknowledged = ConcurrentHashMap.newKeySet();

		private final AtomicInteger failed = new AtomicInteger();

		Enqueuer(ConfigurableApplicationContext context, long seed) {
			this.outbox = context.getBean(Outbox.class);
			this.transactions = OutboxContexts.transactions(context);
			this.jdbc = OutboxContexts.jdbc(context);
			this.seed = seed;
			this.executor.scheduleWithFixedDelay(this::enqueue, 0, ENQUEUE_INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
		}

		private void enqueue() {
			SoakMessage message = SoakMessage.of(this.seed, this.next.get());
			try {
				UUID id = this.transactions.execute((status) -> {
					UUID sent = this.outbox.send(message.request());
					if (message.invalid()) {
						this.jdbc.sql("UPDATE retry_outbox_message SET path = ? WHERE id = ?")
							.params(message.invalidPath(), sent)
							.update();
					}
					return sent;
				});
				this.acknowledged.add(id);
			}
			catch (RuntimeException ex) {
				this.failed.incrementAndGet();
			}
			finally {
				this.next.incrementAndGet();
			}
		}

		void awaitMore(int count) {
			long target = this.next.get() + count;
			await().atMost(Duration.ofMinutes(2)).until(() -> this.next.get() >= target);
		}

		Set<UUID> acknowledged() {
			return Set.copyOf(this.acknowledged);
		}

		int failed() {
			return this.failed.get();
		}

		@Override
		public void close() throws InterruptedException {
			this.executor.shutdown();
			assertThat(this.executor.awaitTermination(30, TimeUnit.SECONDS)).as("enqueuer stopped").isTrue();
		}

	}

	/**
	 * An instance in this JVM: the outbox and what it builds on, and nothing else, so
	 * that it starts quickly.
	 */
	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
			JacksonAutoConfiguration.class, WebClientAutoConfiguration.class, RetryOutboxAutoConfiguration.class })
	static class Instance {

	}

	private static final class Faults {

		private int terminations;

		private long terminatedBackends;

		private int restarts;

		private int stops;

		private int kills;

		private int relayJvms;

	}

	record Row(UUID id, String idempotencyKey, String path, @Nullable String orderingKey, String status,
			@Nullable String deadReason, @Nullable Integer lastStatusCode, @Nullable String lastErrorCode,
			int attempts) {

		boolean is(String status, String deadReason) {
			return this.status.equals(status) && deadReason.equals(this.deadReason);
		}

		String describe() {
			return this.status + ((this.deadReason != null) ? " " + this.deadReason : "") + " (last status "
					+ this.lastStatusCode + ", error code " + this.lastErrorCode + ", " + this.attempts + " attempts)";
		}

	}

	record Counts(List<Row> rows, Map<String, KeyRecord> records, Map<Action, Integer> answers,
			int retryAftersReceived) {

	}

}
