package io.retryoutbox;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.retryoutbox.message.OutboxRepair;
import io.retryoutbox.relay.OutboxRelay;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.PathDispatcher;
import io.retryoutbox.testsupport.TestDatabase;
import mockwebserver3.MockResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The messages waiting behind a key's head are claimed with it and sent one after
 * another, each once the one before was delivered; whatever ends a run early gives its
 * unsent rest back in the key's order, attempts untouched.
 */
class KeyRunIntegrationTests {

	private static final MockResponse OK = new MockResponse.Builder().code(200).build();

	private static final MockResponse UNAVAILABLE = new MockResponse.Builder().code(503).build();

	private static final MockResponse BAD_REQUEST = new MockResponse.Builder().code(400).build();

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private final String jdbcUrl = TestDatabase.createDatabase();

	private ApplicationContextRunner runner() {
		return OutboxContexts.runner(this.jdbcUrl)
			.withPropertyValues("retry-outbox.destinations.api.base-url=" + this.destination.server().url("/"),
					"retry-outbox.retry.delay=300ms", "retry-outbox.retry.jitter=0",
					"retry-outbox.relay.auto-startup=false", "retry-outbox.relay.run-size=16");
	}

	private PathDispatcher dispatcher() {
		return this.destination.dispatcher();
	}

	private List<String> received(String prefix) {
		return dispatcher().paths().stream().filter((path) -> path.startsWith(prefix)).toList();
	}

	/**
	 * Enqueues {@code count} messages of key {@code k}, paths /k/1 to /k/count, and
	 * starts the relay once all are committed, so that its first claim finds them all.
	 */
	private static List<UUID> enqueueThenStart(AssertableApplicationContext context, int count) {
		List<UUID> ids = new ArrayList<>();
		for (int i = 1; i <= count; i++) {
			int n = i;
			ids.add(OutboxContexts.transactions(context)
				.execute((status) -> context.getBean(Outbox.class)
					.send(OutboxRequest.post("api", "/k/" + n).orderingKey("k").build())));
		}
		context.getBean(OutboxRelay.class).start();
		return ids;
	}

	private static List<String> paths(int from, int to) {
		List<String> paths = new ArrayList<>();
		for (int i = from; i <= to; i++) {
			paths.add("/k/" + i);
		}
		return paths;
	}

	private static Object column(AssertableApplicationContext context, UUID id, String column) {
		return OutboxContexts.row(context, id).get(column);
	}

	/**
	 * How many claims took the messages: a claim stamps last_attempt_at with its
	 * transaction's time, one value for all it took.
	 */
	// A claim leases each run's head at the claim's time; the rest of the run is counted
	// when its attempt started.
	private static long claims(AssertableApplicationContext context) {
		return OutboxContexts.jdbc(context)
			.sql("SELECT count(DISTINCT last_attempt_at) FROM retry_outbox_message WHERE is_head")
			.query(Long.class)
			.single();
	}

	private static long heldKeys(AssertableApplicationContext context) {
		return OutboxContexts.jdbc(context)
			.sql("SELECT count(*) FROM retry_outbox_message WHERE holds_key")
			.query(Long.class)
			.single();
	}

	@Test
	void sendsTheMessagesWaitingBehindAHeadFromTheClaimThatTookTheHead() {
		runner().run((context) -> {
			List<UUID> ids = enqueueThenStart(context, 8);
			await().atMost(Duration.ofSeconds(20))
				.until(() -> "DELIVERED".equals(column(context, ids.get(7), "status")));
			assertThat(received("/k/")).containsExactlyElementsOf(paths(1, 8));
			assertThat(claims(context)).isOne();
			assertThat(ids).allSatisfy((id) -> {
				assertThat(column(context, id, "status")).isEqualTo("DELIVERED");
				assertThat(column(context, id, "attempts")).isEqualTo(1);
			});
			await().atMost(Duration.ofSeconds(20)).until(() -> heldKeys(context) == 0);
		});
	}

	@Test
	void startsARunsNextMessagesOnTheRelaysRunThreadNotOnTheEventLoopThatGotTheAnswerBeforeIt() {
		List<String> threads = new CopyOnWriteArrayList<>();
		RelayWebClientCustomizer recordThread = (builder) -> builder.filter((request, next) -> {
			threads.add(Thread.currentThread().getName());
			return next.exchange(request);
		});
		runner().withBean(RelayWebClientCustomizer.class, () -> recordThread).run((context) -> {
			List<UUID> ids = enqueueThenStart(context, 6);
			await().atMost(Duration.ofSeconds(20))
				.until(() -> "DELIVERED".equals(column(context, ids.get(5), "status")));
			assertThat(received("/k/")).containsExactlyElementsOf(paths(1, 6));
			assertThat(claims(context)).isOne();
			assertThat(threads).hasSize(6);
			assertThat(threads.get(0)).startsWith("retry-outbox-relay-");
			assertThat(threads.subList(1, 6))
				.allSatisfy((thread) -> assertThat(thread).startsWith("retry-outbox-run-"));
		});
	}

	@Test
	void aRunsNextMessageGoesWhileTheRelaysRoundWaitsForTheDatabase() throws Exception {
		CountDownLatch answerOther = new CountDownLatch(1);
		CountDownLatch answerFirst = new CountDownLatch(1);
		dispatcher().otherwise((request) -> {
			String path = request.getUrl().encodedPath();
			CountDownLatch latch = path.equals("/other") ? answerOther : path.equals("/k/1") ? answerFirst : null;
			if (latch != null) {
				await().atMost(Duration.ofSeconds(30)).until(() -> latch.await(1, TimeUnit.SECONDS));
			}
			return OK;
		});
		runner().run((context) -> {
			UUID other = OutboxContexts.transactions(context)
				.execute((status) -> context.getBean(Outbox.class).send(OutboxRequest.post("api", "/other").build()));
			List<UUID> ids = enqueueThenStart(context, 2);
			await().atMost(Duration.ofSeconds(20)).until(() -> dispatcher().paths().size() == 2);
			try (Connection locker = DriverManager.getConnection(this.jdbcUrl)) {
				locker.setAutoCommit(false);
				try (Statement statement = locker.createStatement()) {
					statement.execute("SELECT 1 FROM retry_outbox_message WHERE id = '" + other + "' FOR UPDATE");
				}
				// The round that writes the other message's outcome waits for the row.
				answerOther.countDown();
				await().atMost(Duration.ofSeconds(20)).until(() -> roundsWaitingForALock(context) > 0);
				answerFirst.countDown();
				await().atMost(Duration.ofSeconds(20)).until(() -> received("/k/").size() == 2);
				assertThat(roundsWaitingForALock(context)).isPositive();
				locker.rollback();
			}
			await().atMost(Duration.ofSeconds(20))
				.until(() -> "DELIVERED".equals(column(context, ids.get(1), "status")));
			assertThat(column(context, other, "status")).isEqualTo("DELIVERED");
			assertThat(received("/k/")).containsExactlyElementsOf(paths(1, 2));
		});
	}

	private static long roundsWaitingForALock(AssertableApplicationContext context) {
		return OutboxContexts.jdbc(context)
			.sql("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
			.query(Long.class)
			.single();
	}

	@Test
	void aRetriedMessageInARunBecomesItsKeysHeadAndTheRestWaitWithTheirAttemptsGivenBack() {
		dispatcher().answer("/k/3", UNAVAILABLE, OK);
		runner().run((context) -> {
			List<UUID> ids = enqueueThenStart(context, 5);
			await().atMost(Duration.ofSeconds(20))
				.until(() -> "DELIVERED".equals(column(context, ids.get(4), "status")));
			assertThat(received("/k/")).containsExactly("/k/1", "/k/2", "/k/3", "/k/3", "/k/4", "/k/5");
			assertThat(column(context, ids.get(2), "attempts")).isEqualTo(2);
			assertThat(column(context, ids.get(3), "attempts")).isEqualTo(1);
			assertThat(column(context, ids.get(4), "attempts")).isEqualTo(1);
			// Only attempts that were made are logged.
			assertThat(OutboxContexts.jdbc(context)
				.sql("SELECT count(*) FROM retry_outbox_attempt")
				.query(Long.class)
				.single()).isEqualTo(6);
			await().atMost(Duration.ofSeconds(20)).until(() -> heldKeys(context) == 0);
		});
	}

	@Test
	void aDeadMessageInARunLetsTheRestGoWhenOnDeadIsSkip() {
		dispatcher().answer("/k/2", BAD_REQUEST);
		runner().run((context) -> {
			List<UUID> ids = enqueueThenStart(context, 4);
			await().atMost(Duration.ofSeconds(20))
				.until(() -> "DELIVERED".equals(column(context, ids.get(3), "status")));
			assertThat(received("/k/")).containsExactlyElementsOf(paths(1, 4));
			assertThat(column(context, ids.get(1), "status")).isEqualTo("DEAD");
			assertThat(column(context, ids.get(2), "attempts")).isEqualTo(1);
			await().atMost(Duration.ofSeconds(20)).until(() -> heldKeys(context) == 0);
		});
	}

	@Test
	void aDeadMessageInARunParksItsKeyWhenOnDeadIsBlockUntilItIsReplayed() {
		dispatcher().answer("/k/2", BAD_REQUEST);
		runner().withPropertyValues("retry-outbox.destinations.api.ordering.on-dead=block").run((context) -> {
			List<UUID> ids = enqueueThenStart(context, 4);
			await().atMost(Duration.ofSeconds(20)).until(() -> "DEAD".equals(column(context, ids.get(1), "status")));
			assertThat(column(context, ids.get(1), "is_head")).isEqualTo(true);
			assertThat(column(context, ids.get(2), "status")).isEqualTo("PENDING");
			assertThat(column(context, ids.get(2), "is_head")).isEqualTo(false);
			assertThat(column(context, ids.get(2), "attempts")).isEqualTo(0);
			assertThat(received("/k/")).containsExactly("/k/1", "/k/2");
			dispatcher().answer("/k/2", OK);
			assertThat(context.getBean(OutboxRepair.class).replay(ids.get(1), "test")).isTrue();
			await().atMost(Duration.ofSeconds(20))
				.until(() -> "DELIVERED".equals(column(context, ids.get(3), "status")));
			assertThat(received("/k/")).containsExactly("/k/1", "/k/2", "/k/2", "/k/3", "/k/4");
		});
	}

	@Test
	void stoppingTheRelayDuringARunGivesItsUnsentMessagesBackInOrderForTheNextRelay() {
		dispatcher().hold();
		List<UUID> ids = new ArrayList<>();
		runner().withPropertyValues("retry-outbox.relay.shutdown-timeout=10s").run((context) -> {
			ids.addAll(enqueueThenStart(context, 6));
			await().atMost(Duration.ofSeconds(20)).until(() -> dispatcher().requests().size() == 1);
			OutboxRelay relay = context.getBean(OutboxRelay.class);
			Thread stopping = new Thread(relay::stop);
			stopping.start();
			await().atMost(Duration.ofSeconds(20)).until(() -> !relay.isRunning());
			// The answer to the head arrives while the relay stops: the run ends there.
			dispatcher().release();
			stopping.join(20_000);
			assertThat(stopping.isAlive()).isFalse();
			assertThat(column(context, ids.get(0), "status")).isEqualTo("DELIVERED");
			assertThat(ids.subList(1, 6)).allSatisfy((id) -> {
				assertThat(column(context, id, "status")).isEqualTo("PENDING");
				assertThat(column(context, id, "attempts")).isEqualTo(0);
				assertThat(column(context, id, "lease_owner")).isNull();
			});
			assertThat(received("/k/")).containsExactly("/k/1");
		});
		runner().withPropertyValues("retry-outbox.relay.auto-startup=true").run((context) -> {
			await().atMost(Duration.ofSeconds(20))
				.until(() -> "DELIVERED".equals(column(context, ids.get(5), "status")));
			assertThat(received("/k/")).containsExactlyElementsOf(paths(1, 6));
		});
	}

	@Test
	void stoppingTheRelayPastItsShutdownTimeoutRecordsWhatARunDeliveredAndGivesBackOnlyTheRest() {
		MockResponse slow = new MockResponse.Builder().code(200).headersDelay(30, TimeUnit.SECONDS).build();
		dispatcher().answer("/k/2", slow, OK);
		runner()
			.withPropertyValues("retry-outbox.relay.shutdown-timeout=500ms", "retry-outbox.relay.concurrency=1",
					"retry-outbox.destinations.api.timeout=1m")
			.run((context) -> {
				List<UUID> ids = enqueueThenStart(context, 3);
				await().atMost(Duration.ofSeconds(20)).until(() -> received("/k/").size() == 2);
				OutboxRelay relay = context.getBean(OutboxRelay.class);
				// The second message is still unanswered when the timeout runs out.
				relay.stop();
				assertThat(column(context, ids.get(0), "status")).isEqualTo("DELIVERED");
				assertThat(column(context, ids.get(0), "attempts")).isEqualTo(1);
				assertThat(ids.subList(1, 3)).allSatisfy((id) -> {
					assertThat(column(context, id, "status")).isEqualTo("PENDING");
					assertThat(column(context, id, "attempts")).isEqualTo(0);
					assertThat(column(context, id, "lease_owner")).isNull();
				});
				assertThat(relay.getInFlight("api")).isZero();
				// Its one slot back, the relay started again sends the rest in order.
				relay.start();
				await().atMost(Duration.ofSeconds(20))
					.until(() -> "DELIVERED".equals(column(context, ids.get(2), "status")));
				assertThat(received("/k/")).containsExactly("/k/1", "/k/2", "/k/2", "/k/3");
			});
	}

	@Test
	void byDefaultSendsUpToEightMessagesOfAKeyFromOneClaim() {
		OutboxContexts.runner(this.jdbcUrl)
			.withPropertyValues("retry-outbox.destinations.api.base-url=" + this.destination.server().url("/"),
					"retry-outbox.relay.auto-startup=false")
			.run((context) -> {
				List<UUID> ids = enqueueThenStart(context, 10);
				await().atMost(Duration.ofSeconds(20))
					.until(() -> "DELIVERED".equals(column(context, ids.get(9), "status")));
				assertThat(received("/k/")).containsExactlyElementsOf(paths(1, 10));
				assertThat(claims(context)).isEqualTo(2);
			});
	}

	@Test
	void sendsEachMessageOfAKeyFromAClaimOfItsOwnWithARunSizeOfOne() {
		OutboxContexts.runner(this.jdbcUrl)
			.withPropertyValues("retry-outbox.destinations.api.base-url=" + this.destination.server().url("/"),
					"retry-outbox.relay.auto-startup=false", "retry-outbox.relay.run-size=1")
			.run((context) -> {
				List<UUID> ids = enqueueThenStart(context, 4);
				await().atMost(Duration.ofSeconds(20))
					.until(() -> "DELIVERED".equals(column(context, ids.get(3), "status")));
				assertThat(received("/k/")).containsExactlyElementsOf(paths(1, 4));
				assertThat(claims(context)).isEqualTo(4);
			});
	}

}
