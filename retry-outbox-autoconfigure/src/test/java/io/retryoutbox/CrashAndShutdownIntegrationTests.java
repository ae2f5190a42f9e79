package io.retryoutbox;

import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.retryoutbox.notify.PostgresWakeupListener;
import io.retryoutbox.relay.DestinationState;
import io.retryoutbox.relay.OutboxRelay;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.OutboxRows;
import io.retryoutbox.testsupport.RelayProcess;
import io.retryoutbox.testsupport.TestDatabase;
import mockwebserver3.MockResponse;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Nothing is lost when a relay dies mid-batch, when the database drops every connection,
 * or when the application stops while requests are in flight.
 */
class CrashAndShutdownIntegrationTests {

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private final String jdbcUrl = TestDatabase.createDatabase();

	@BeforeEach
	void holdTheAnswers() {
		this.destination.dispatcher().hold();
	}

	private int requests() {
		return this.destination.dispatcher().requests().size();
	}

	private Map<String, Set<String>> keysByPath() {
		return this.destination.dispatcher()
			.requests()
			.stream()
			.collect(Collectors.groupingBy((request) -> request.getUrl().encodedPath(),
					Collectors.mapping((request) -> request.getHeaders().get("Idempotency-Key"), Collectors.toSet())));
	}

	private ApplicationContextRunner runner() {
		return OutboxContexts.runner(this.jdbcUrl)
			.withPropertyValues("retry-outbox.destinations.api.base-url=" + this.destination.server().url("/"),
					"retry-outbox.relay.lease-timeout=2s", "retry-outbox.require-transaction=false");
	}

	private JdbcClient jdbc() {
		return JdbcClient.create(new DriverManagerDataSource(this.jdbcUrl));
	}

	private long countWhere(String condition) {
		return jdbc().sql("SELECT count(*) FROM retry_outbox_message WHERE " + condition).query(Long.class).single();
	}

	@Test
	void anotherInstanceDeliversTheMessagesOfARelayKilledMidBatchAfterTheirLeaseExpired() throws Exception {
		runner().withPropertyValues("retry-outbox.relay.enabled=false").run((context) -> {
			for (int i = 0; i < 10; i++) {
				context.getBean(Outbox.class).send(OutboxRequest.post("api", "/m/" + i).build());
			}
		});
		Process doomed = RelayProcess.start("spring.datasource.url=" + this.jdbcUrl,
				"retry-outbox.destinations.api.base-url=" + this.destination.server().url("/"),
				"retry-outbox.relay.lease-timeout=5s");
		try {
			// A JVM starting on a busy machine can take a while.
			await().atMost(Duration.ofSeconds(180)).until(() -> requests() >= 10);
			assertThat(requests()).isEqualTo(10);
			assertThat(countWhere("status = 'IN_FLIGHT'")).isEqualTo(10);
		}
		finally {
			doomed.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
		}
		this.destination.dispatcher().release();
		runner().run((context) -> {
			await().atMost(Duration.ofSeconds(60)).until(() -> countWhere("status = 'DELIVERED'") == 10);
			assertThat(requests()).isEqualTo(20);
			assertThat(keysByPath()).hasSize(10);
			keysByPath().values().forEach((keys) -> assertThat(keys).hasSize(1));
			assertThat(countWhere("attempts = 2")).isEqualTo(10);
		});
	}

	@Test
	void aSlowButAliveRelayKeepsItsLeaseWhileItsRequestIsInFlight() {
		runner().run((context) -> {
			UUID id = context.getBean(Outbox.class).send(OutboxRequest.post("api", "/slow").build());
			await().atMost(Duration.ofSeconds(10)).until(() -> requests() == 1);
			Instant firstLease = leaseUntil(id);
			await().atMost(Duration.ofSeconds(10)).until(() -> leaseUntil(id).isAfter(firstLease.plusSeconds(1)));
			assertThat(countWhere("status = 'IN_FLIGHT'")).isOne();
			this.destination.dispatcher().release();
			await().atMost(Duration.ofSeconds(10)).until(() -> countWhere("status = 'DELIVERED'") == 1);
			assertThat(requests()).isOne();
		});
	}

	private Instant leaseUntil(UUID id) {
		return jdbc().sql("SELECT lease_until FROM retry_outbox_message WHERE id = ?")
			.param(id)
			.query(Timestamp.class)
			.single()
			.toInstant();
	}

	@Test
	void recoversWhenTheDatabaseTerminatesEveryConnectionMidRun() {
		this.destination.dispatcher().release();
		runner().withPropertyValues("retry-outbox.relay.poll-interval=100ms").run((context) -> {
			Outbox outbox = context.getBean(Outbox.class);
			for (int i = 0; i < 200; i++) {
				outbox.send(OutboxRequest.post("api", "/before/" + i).orderingKey("key-" + (i % 5)).build());
			}
			await().atMost(Duration.ofSeconds(30)).until(() -> requests() > 20);
			PostgresWakeupListener listener = context.getBean(PostgresWakeupListener.class);
			await().atMost(Duration.ofSeconds(10))
				.until(() -> listener.isListening() && listeningBackends().size() == 1);
			List<Integer> listeningBefore = listeningBackends();
			List<Boolean> terminated = jdbc()
				.sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
						+ "WHERE datname = current_database() AND pid <> pg_backend_pid()")
				.query(Boolean.class)
				.list();
			assertThat(terminated).contains(true);
			// Listening again, on a new connection: the old one was terminated.
			await().atMost(Duration.ofSeconds(30)).until(() -> {
				List<Integer> listening = listeningBackends();
				return listener.isListening() && !listening.isEmpty()
						&& Collections.disjoint(listening, listeningBefore);
			});
			for (int i = 0; i < 50; i++) {
				OutboxContexts.sendDespiteBrokenConnections(outbox, OutboxRequest.post("api", "/after/" + i).build());
			}
			OutboxContexts.awaitAllDelivered(jdbc(), 250);
			assertThat(countWhere("true")).isEqualTo(250);
		});
	}

	private List<Integer> listeningBackends() {
		return jdbc()
			.sql("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'")
			.query(Integer.class)
			.list();
	}

	@Test
	void releasesInFlightMessagesWithoutCountingTheAttemptWhenStoppedGracefully() {
		runner().withPropertyValues("retry-outbox.relay.shutdown-timeout=200ms").run((context) -> {
			sendThreeAndAwaitTheirRequests(context, "/stop/");
			assertThat(countWhere("status = 'IN_FLIGHT' AND attempts = 1")).isEqualTo(3);
		});
		assertThat(countWhere("status = 'PENDING' AND attempts = 0 AND lease_owner IS NULL")).isEqualTo(3);
	}

	@Test
	void aDestinationProbingWhenTheShutdownTimeoutRunsOutProbesAgainOnceTheRelayStartsAgain() {
		this.destination.dispatcher().release();
		this.destination.dispatcher()
			.enqueue(new MockResponse.Builder().code(503).setHeader("Retry-After", "1").build())
			.enqueue(new MockResponse.Builder().code(200).headersDelay(30, TimeUnit.SECONDS).build());
		runner()
			.withPropertyValues("retry-outbox.relay.shutdown-timeout=500ms", "retry-outbox.destinations.api.timeout=1m")
			.run((context) -> {
				UUID id = context.getBean(Outbox.class).send(OutboxRequest.post("api", "/probed").build());
				OutboxRelay relay = context.getBean(OutboxRelay.class);
				// The 503 paused the destination; the probe that follows the pause is
				// unanswered.
				await().atMost(Duration.ofSeconds(20)).until(() -> requests() == 2);
				assertThat(relay.getDestinationState("api")).isEqualTo(DestinationState.PROBING);
				relay.stop();
				relay.start();
				await().atMost(Duration.ofSeconds(20))
					.until(() -> "DELIVERED".equals(OutboxContexts.row(context, id).get("status")));
				assertThat(requests()).isEqualTo(3);
				assertThat(relay.getDestinationState("api")).isEqualTo(DestinationState.OPEN);
			});
	}

	@Test
	void keepsTheLeaseOfAMessageWhoseOutcomeCouldNotBeWrittenWhenStopped() {
		this.destination.dispatcher().release();
		this.destination.dispatcher()
			.enqueue(new MockResponse.Builder().code(503).setHeader("Retry-After", "3600").build());
		runner().withPropertyValues("retry-outbox.relay.lease-timeout=1m").run((context) -> {
			// Writing any outcome fails (its attempt-log row is refused); releasing a
			// lease does not.
			jdbc().sql("""
					CREATE FUNCTION refuse_attempt() RETURNS trigger LANGUAGE plpgsql AS
					$$ BEGIN RAISE EXCEPTION 'attempt log refused by the test'; END $$
					""").update();
			jdbc().sql("""
					CREATE TRIGGER refuse_attempt BEFORE INSERT ON retry_outbox_attempt
					FOR EACH ROW EXECUTE FUNCTION refuse_attempt()
					""").update();
			context.getBean(Outbox.class).send(OutboxRequest.post("api", "/refused-outcome").build());
			OutboxRelay relay = context.getBean(OutboxRelay.class);
			await().atMost(Duration.ofSeconds(10)).until(() -> requests() == 1 && relay.getLastPollError() != null);
		});
		// The 503 asked for an hour: given back, due now, the message would go out again
		// at once, its attempt not counted. Leased, it waits for its lease to expire.
		assertThat(countWhere("status = 'IN_FLIGHT' AND attempts = 1")).isOne();
		assertThat(requests()).isOne();
	}

	@Test
	void letsInFlightRequestsFinishWithinTheShutdownTimeoutWhenStoppedGracefully() {
		runner().withPropertyValues("retry-outbox.relay.shutdown-timeout=20s").run((context) -> {
			sendThreeAndAwaitTheirRequests(context, "/finish/");
			OutboxRelay relay = context.getBean(OutboxRelay.class);
			CompletableFuture<Void> stopping = CompletableFuture.runAsync(relay::stop);
			await().atMost(Duration.ofSeconds(10)).until(() -> !relay.isRunning());
			assertThat(stopping).isNotDone();
			this.destination.dispatcher().release();
			stopping.get(20, TimeUnit.SECONDS);
			assertThat(countWhere("status = 'DELIVERED' AND attempts = 1")).isEqualTo(3);
			assertThat(requests()).isEqualTo(3);
		});
	}

	private void sendThreeAndAwaitTheirRequests(ApplicationContext context, String pathPrefix) {
		for (int i = 0; i < 3; i++) {
			context.getBean(Outbox.class).send(OutboxRequest.post("api", pathPrefix + i).build());
		}
		await().atMost(Duration.ofSeconds(10)).until(() -> requests() == 3);
	}

	@Test
	void stopsAtOnceWhileMessagesWaitForTheirRetry() {
		this.destination.dispatcher().release();
		runner().run((context) -> {
			OutboxRows.insert(context, "PENDING", null, Duration.ofHours(-1));
			OutboxRelay relay = context.getBean(OutboxRelay.class);
			long started = System.nanoTime();
			relay.stop();
			// Well below the 30s shutdown timeout, which a sleeping retry would use up.
			assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(10));
			assertThat(countWhere("status = 'PENDING' AND attempts = 0")).isOne();
			assertThat(requests()).isZero();
		});
	}

}
