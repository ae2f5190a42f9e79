package io.retryoutbox;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import io.retryoutbox.notify.PostgresWakeupListener;
import io.retryoutbox.relay.OutboxRelay;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.TestDatabase;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Several relay instances on one database: every message delivered, per-key order kept,
 * no message handled by two instances at once, duplicates only with the same idempotency
 * key.
 */
class MultiInstanceIntegrationTests {

	private static final int KEYS = 50;

	private static final int PER_KEY = 100;

	private final Map<String, List<Integer>> receivedByKey = new ConcurrentHashMap<>();

	private final Set<String> inFlight = ConcurrentHashMap.newKeySet();

	private final Map<String, String> idempotencyKeyByPath = new ConcurrentHashMap<>();

	private final AtomicInteger concurrentDuplicates = new AtomicInteger();

	private final AtomicInteger keyMismatches = new AtomicInteger();

	private final AtomicInteger faults = new AtomicInteger();

	private final SplittableRandom random = new SplittableRandom(42);

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private final String jdbcUrl = TestDatabase.createDatabase();

	@BeforeEach
	void injectFaults() {
		this.destination.dispatcher().otherwise(new FaultyServer());
	}

	private ApplicationContextRunner runner() {
		return OutboxContexts.runner(this.jdbcUrl)
			.withPropertyValues("retry-outbox.destinations.api.base-url=" + this.destination.server().url("/"),
					"retry-outbox.retry.delay=10ms", "retry-outbox.retry.max-delay=100ms",
					"retry-outbox.retry.jitter=0.5", "retry-outbox.relay.batch-size=50",
					"retry-outbox.relay.poll-interval=200ms");
	}

	@Test
	void threeInstancesDeliverEveryMessageInPerKeyOrderDespiteTransientFaults() {
		OutboxContexts.withInstances(List.of(runner(), runner(), runner()), (instances) -> {
			for (int n = 0; n < PER_KEY; n++) {
				ConfigurableApplicationContext instance = instances.get(n % instances.size());
				int sequence = n;
				OutboxContexts.transactions(instance).executeWithoutResult((status) -> {
					for (int key = 0; key < KEYS; key++) {
						instance.getBean(Outbox.class)
							.send(OutboxRequest.post("api", "/k/" + key + "/" + sequence)
								.orderingKey("key-" + key)
								.build());
					}
				});
			}
			await().atMost(Duration.ofSeconds(180))
				.pollInterval(Duration.ofMillis(500))
				.until(() -> OutboxContexts.jdbc(instances.get(0))
					.sql("SELECT count(*) FROM retry_outbox_message WHERE status <> 'DELIVERED'")
					.query(Long.class)
					.single() == 0);
			assertThat(this.faults.get()).as("faults injected").isGreaterThan(100);
			assertThat(this.concurrentDuplicates.get()).as("messages handled concurrently twice").isZero();
			assertThat(this.keyMismatches.get()).as("retries with another idempotency key").isZero();
			assertThat(this.receivedByKey).hasSize(KEYS);
			this.receivedByKey.forEach((key, sequence) -> {
				assertThat(sequence).as("arrivals of %s", key).isSorted();
				assertThat(sequence.stream().distinct().toList()).as("distinct arrivals of %s", key).hasSize(PER_KEY);
			});
			assertThat(OutboxContexts.jdbc(instances.get(0))
				.sql("SELECT count(DISTINCT lease_owner) FROM retry_outbox_message")
				.query(Long.class)
				.single()).isZero();
			assertNoAttemptsOfOneMessageOverlapped(OutboxContexts.jdbc(instances.get(0)));
		});
	}

	/**
	 * The attempt log holds a row per claim (the relay's timing of the request), so two
	 * instances sending one message at once would show as two overlapping rows, or as a
	 * claim without a row if the later outcome was refused.
	 */
	private static void assertNoAttemptsOfOneMessageOverlapped(JdbcClient jdbc) {
		assertThat(count(jdbc, "SELECT count(*) FROM retry_outbox_attempt")).as("attempt log rows, one per claim")
			.isEqualTo(count(jdbc, "SELECT sum(attempts) FROM retry_outbox_message"))
			.isGreaterThan(KEYS * PER_KEY);
		assertThat(count(jdbc, "SELECT count(*) FROM retry_outbox_attempt WHERE duration_ms IS NULL")).isZero();
		assertThat(count(jdbc, """
				SELECT count(*) FROM retry_outbox_attempt a
				JOIN retry_outbox_attempt b ON b.message_id = a.message_id AND b.attempt = a.attempt AND b.id > a.id
				""")).as("attempt numbers used twice for one message").isZero();
		// duration_ms is cut to whole milliseconds: one more covers the whole request.
		assertThat(count(jdbc, """
				SELECT count(*) FROM retry_outbox_attempt a
				JOIN retry_outbox_attempt b ON b.message_id = a.message_id AND b.id > a.id
				WHERE a.started_at < b.started_at + (b.duration_ms + 1) * interval '1 millisecond'
					AND b.started_at < a.started_at + (a.duration_ms + 1) * interval '1 millisecond'
				""")).as("attempts of one message that overlapped in time").isZero();
	}

	private static long count(JdbcClient jdbc, String sql) {
		return jdbc.sql(sql).query(Long.class).single();
	}

	@Test
	void anEnqueueOnOneInstanceWakesTheRelayOfAnotherRightAfterCommit() {
		OutboxContexts.withInstances(List.of(runner().withPropertyValues("retry-outbox.relay.poll-interval=1h"),
				runner().withPropertyValues("retry-outbox.relay.enabled=false")), (instances) -> {
					ConfigurableApplicationContext relay = instances.get(0);
					ConfigurableApplicationContext enqueueOnly = instances.get(1);
					// Its first poll ran while the other instance started.
					await().atMost(Duration.ofSeconds(10))
						.until(() -> relay.getBean(PostgresWakeupListener.class).isListening()
								&& relay.getBean(OutboxRelay.class).getState() == OutboxRelay.State.RUNNING);
					assertThat(enqueueOnly.getBeansOfType(OutboxRelay.class)).isEmpty();
					var id = OutboxContexts.transactions(enqueueOnly)
						.execute((status) -> enqueueOnly.getBean(Outbox.class)
							.send(OutboxRequest.post("api", "/wake").build()));
					// The relay polls hourly and was not woken locally: only the
					// notification can deliver this.
					await().atMost(Duration.ofSeconds(10))
						.until(() -> "DELIVERED".equals(OutboxContexts.row(relay, id).get("status")));
				});
	}

	private final class FaultyServer implements Function<RecordedRequest, MockResponse> {

		@Override
		public MockResponse apply(RecordedRequest request) {
			String path = request.getUrl().encodedPath();
			String idempotencyKey = request.getHeaders().get("Idempotency-Key");
			String previous = MultiInstanceIntegrationTests.this.idempotencyKeyByPath.putIfAbsent(path, idempotencyKey);
			if (previous != null && !previous.equals(idempotencyKey)) {
				MultiInstanceIntegrationTests.this.keyMismatches.incrementAndGet();
			}
			if (!MultiInstanceIntegrationTests.this.inFlight.add(idempotencyKey)) {
				MultiInstanceIntegrationTests.this.concurrentDuplicates.incrementAndGet();
			}
			try {
				String[] parts = path.split("/");
				if (parts.length == 4) {
					MultiInstanceIntegrationTests.this.receivedByKey
						.computeIfAbsent(parts[2], (key) -> Collections.synchronizedList(new ArrayList<>()))
						.add(Integer.parseInt(parts[3]));
				}
				boolean fault;
				synchronized (MultiInstanceIntegrationTests.this.random) {
					fault = MultiInstanceIntegrationTests.this.random.nextInt(10) == 0;
				}
				if (fault) {
					MultiInstanceIntegrationTests.this.faults.incrementAndGet();
					return new MockResponse.Builder().code(503).build();
				}
				return new MockResponse.Builder().code(200).build();
			}
			finally {
				MultiInstanceIntegrationTests.this.inFlight.remove(idempotencyKey);
			}
		}

	}

}
