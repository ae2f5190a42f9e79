package io.retryoutbox;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import javax.sql.DataSource;

import io.retryoutbox.jdbc.JdbcOutboxComponents;
import io.retryoutbox.relay.OutboxRelay;
import io.retryoutbox.relay.OutboxStore;
import io.retryoutbox.testsupport.CountedStore;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.TestDatabase;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.MediaType;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * Direct dispatch: a message enqueued while the local relay has a free slot is inserted
 * leased to it and sent once its transaction commits, without a claim. A message that was
 * claimed has {@code last_attempt_at} set by the claim's transaction, later than the
 * enqueuing transaction's {@code created_at}; one inserted leased has both from the
 * enqueuing transaction.
 */
class DirectDispatchIntegrationTests {

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private final String jdbcUrl = TestDatabase.createDatabase();

	private ApplicationContextRunner runner() {
		return OutboxContexts.runner(this.jdbcUrl)
			.withPropertyValues("retry-outbox.relay.direct-dispatch=true",
					"retry-outbox.destinations.api.base-url=" + this.destination.server().url("/"),
					"retry-outbox.destinations.api.timeout=30s", "retry-outbox.retry.delay=50ms",
					"retry-outbox.retry.jitter=0");
	}

	private static UUID send(ApplicationContext context, String path, @Nullable String orderingKey) {
		return OutboxContexts.transactions(context)
			.execute((status) -> context.getBean(Outbox.class)
				.send(OutboxRequest.post("api", path)
					.body("x", MediaType.TEXT_PLAIN)
					.orderingKey(orderingKey)
					.build()));
	}

	private static void awaitDelivered(ApplicationContext context, UUID... ids) {
		await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
			for (UUID id : ids) {
				assertThat(OutboxContexts.row(context, id)).containsEntry("status", "DELIVERED");
			}
		});
	}

	private static boolean insertedLeased(ApplicationContext context, UUID id) {
		Map<String, Object> row = OutboxContexts.row(context, id);
		return row.get("last_attempt_at").equals(row.get("created_at"));
	}

	private List<String> receivedPaths(int count) throws InterruptedException {
		List<String> paths = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			RecordedRequest request = this.destination.server().takeRequest(20, TimeUnit.SECONDS);
			assertThat(request).isNotNull();
			paths.add(request.getUrl().encodedPath());
		}
		return paths;
	}

	@Test
	void sendsAMessageCommittedWhileTheRelayHasAFreeSlotWithoutClaimingIt() throws Exception {
		this.destination.dispatcher().enqueue(new MockResponse.Builder().code(200).build());
		runner().run((context) -> {
			awaitRunning(context);
			UUID id = send(context, "/one", "k");
			awaitDelivered(context, id);
			assertThat(insertedLeased(context, id)).isTrue();
			assertThat(OutboxContexts.row(context, id)).containsEntry("attempts", 1).containsEntry("lease_owner", null);
			assertThat(receivedPaths(1)).containsExactly("/one");
		});
	}

	@Test
	void sendsAHandedOverMessageAtCommitWithoutWaitingForTheMinRoundInterval() throws Exception {
		this.destination.dispatcher().enqueue(new MockResponse.Builder().code(200).build());
		runner().withPropertyValues("retry-outbox.relay.poll-interval=1h", "retry-outbox.relay.min-round-interval=30m")
			.run((context) -> {
				awaitRunning(context);
				UUID id = send(context, "/one", "k");
				assertThat(receivedPaths(1)).containsExactly("/one");
				assertThat(insertedLeased(context, id)).isTrue();
			});
	}

	@Test
	void sendsAMessageAtCommitByDefault() throws Exception {
		this.destination.dispatcher().enqueue(new MockResponse.Builder().code(200).build());
		OutboxContexts.runner(this.jdbcUrl)
			.withPropertyValues("retry-outbox.destinations.api.base-url=" + this.destination.server().url("/"),
					"retry-outbox.destinations.api.timeout=30s")
			.run((context) -> {
				awaitRunning(context);
				UUID id = send(context, "/one", "k");
				awaitDelivered(context, id);
				assertThat(insertedLeased(context, id)).isTrue();
			});
	}

	@Test
	void claimsEveryMessageWhenSwitchedOff() throws Exception {
		this.destination.dispatcher().enqueue(new MockResponse.Builder().code(200).build());
		runner().withPropertyValues("retry-outbox.relay.direct-dispatch=false").run((context) -> {
			awaitRunning(context);
			UUID id = send(context, "/one", "k");
			awaitDelivered(context, id);
			assertThat(insertedLeased(context, id)).isFalse();
			assertThat(OutboxContexts.row(context, id)).containsEntry("attempts", 1);
		});
	}

	@Test
	void anEnqueueWhoseKeyAnotherTransactionHoldsInsertsItPendingWithoutWaitingAndItIsSentOnceFree() throws Exception {
		this.destination.dispatcher().enqueue(new MockResponse.Builder().code(200).build());
		runner().run((context) -> {
			awaitRunning(context);
			// As another transaction that direct-dispatched a message of the key and has
			// not ended holds it.
			try (Connection holder = context.getBean(DataSource.class).getConnection()) {
				holder.setAutoCommit(false);
				try (PreparedStatement lock = holder.prepareStatement(
						"SELECT pg_advisory_xact_lock(hashtext('retry_outbox_message'), hashtext('k'))")) {
					lock.executeQuery().close();
				}
				UUID id = assertTimeoutPreemptively(Duration.ofSeconds(10), () -> send(context, "/one", "k"));
				assertThat(OutboxContexts.row(context, id)).containsEntry("status", "PENDING")
					.containsEntry("new_arrival", true)
					.containsEntry("attempts", 0);
				holder.rollback();
				awaitDelivered(context, id);
				assertThat(receivedPaths(1)).containsExactly("/one");
			}
		});
	}

	@Test
	void givesTheSlotBackWhenTheEnqueuingTransactionRollsBack() throws Exception {
		this.destination.dispatcher().enqueue(new MockResponse.Builder().code(200).build());
		runner().withPropertyValues("retry-outbox.relay.concurrency=1").run((context) -> {
			awaitRunning(context);
			for (int i = 0; i < 3; i++) {
				OutboxContexts.transactions(context).executeWithoutResult((status) -> {
					context.getBean(Outbox.class).send(OutboxRequest.post("api", "/rolled-back").build());
					status.setRollbackOnly();
				});
			}
			UUID id = send(context, "/committed", "k");
			awaitDelivered(context, id);
			assertThat(insertedLeased(context, id)).isTrue();
			assertThat(receivedPaths(1)).containsExactly("/committed");
			assertThat(OutboxContexts.count(context)).isEqualTo(1);
		});
	}

	@Test
	void insertsLeasedOnlyTheHeadOfAKeyAndKeepsTheKeysOrder() throws Exception {
		this.destination.dispatcher().enqueue(new MockResponse.Builder().code(200).build());
		runner().run((context) -> {
			awaitRunning(context);
			List<UUID> ids = OutboxContexts.transactions(context).execute((status) -> {
				Outbox outbox = context.getBean(Outbox.class);
				List<UUID> sent = new ArrayList<>();
				for (String path : List.of("/first", "/second", "/third")) {
					sent.add(outbox.send(OutboxRequest.post("api", path).orderingKey("order-1").build()));
				}
				return sent;
			});
			awaitDelivered(context, ids.toArray(UUID[]::new));
			assertThat(receivedPaths(3)).containsExactly("/first", "/second", "/third");
			assertThat(insertedLeased(context, ids.get(0))).isTrue();
			assertThat(insertedLeased(context, ids.get(1))).isFalse();
			assertThat(insertedLeased(context, ids.get(2))).isFalse();
		});
	}

	@Test
	void aMessageInsertedLeasedThatItsRelayNeverSendsIsTakenOverOnceItsLeaseExpires() throws Exception {
		this.destination.dispatcher().enqueue(new MockResponse.Builder().code(200).build());
		ApplicationContextRunner first = runner().withPropertyValues("retry-outbox.relay.lease-timeout=1s");
		ApplicationContextRunner second = runner().withPropertyValues("retry-outbox.relay.direct-dispatch=false");
		first.run((leasing) -> {
			awaitRunning(leasing);
			OutboxRelay relay = leasing.getBean(OutboxRelay.class);
			// Reserved and inserted leased, then the relay stops (on a thread of its own,
			// as at shutdown, outside this transaction) before the commit hands the
			// message over, as if the instance went away in between.
			UUID id = OutboxContexts.transactions(leasing).execute((status) -> {
				UUID sent = leasing.getBean(Outbox.class).send(OutboxRequest.post("api", "/orphan").build());
				CompletableFuture.runAsync(relay::stop).join();
				return sent;
			});
			assertThat(OutboxContexts.row(leasing, id)).containsEntry("status", "IN_FLIGHT")
				.containsEntry("lease_owner", relay.getOwner());
			second.run((other) -> {
				awaitDelivered(other, id);
				assertThat(OutboxContexts.row(other, id).get("lease_owner")).isNull();
			});
			assertThat(receivedPaths(1)).containsExactly("/orphan");
			assertThat(this.destination.server().getRequestCount()).isEqualTo(1);
		});
	}

	/**
	 * The relay's poll thread is held in a round that writes an outcome and claims
	 * nothing, as by a slow database: a message handed over meanwhile does not wait for
	 * that round to end.
	 */
	@Test
	void sendsAHandedOverMessageWhileTheRelaysRoundIsHeldUp() throws Exception {
		this.destination.dispatcher().enqueue(new MockResponse.Builder().code(200).build());
		this.destination.dispatcher().enqueue(new MockResponse.Builder().code(200).build());
		runner().withPropertyValues("retry-outbox.relay.poll-interval=1h")
			.withUserConfiguration(HeldRounds.class)
			.run((context) -> {
				awaitRunning(context);
				HeldRounds rounds = context.getBean(HeldRounds.class);
				rounds.which = (args) -> args[1] instanceof List<?> outcomes && !outcomes.isEmpty()
						&& args[4] instanceof Map<?, ?> limits && limits.isEmpty();
				UUID zero = send(context, "/zero", null);
				assertThat(rounds.holding.await(20, TimeUnit.SECONDS)).isTrue();
				try {
					UUID one = send(context, "/one", null);
					assertThat(receivedPaths(2)).containsExactly("/zero", "/one");
					assertThat(insertedLeased(context, zero)).isTrue();
					assertThat(insertedLeased(context, one)).isTrue();
				}
				finally {
					rounds.release.countDown();
				}
			});
	}

	/**
	 * The relay's first poll works out its claim's limits, the destination's one permit,
	 * and is held before it claims: a message enqueued meanwhile gets that permit
	 * reserved, since the limits were worked out before, and is inserted leased. Handed
	 * over at its commit while the claim may still take the permit, it leaves the permit
	 * to the claim and goes once the claimed message is answered, so that the destination
	 * never has two requests in flight.
	 */
	@Test
	void aHandedOverMessageLeavesThePermitToAClaimThatWorkedOutItsLimitsBeforeTheReservation() throws Exception {
		this.destination.dispatcher().enqueue(new MockResponse.Builder().code(200).build());
		this.destination.dispatcher().enqueue(new MockResponse.Builder().code(200).build());
		runner()
			.withPropertyValues("retry-outbox.destinations.api.flow.adaptive=false",
					"retry-outbox.destinations.api.flow.max-concurrency=1", "retry-outbox.relay.auto-startup=false")
			.withUserConfiguration(HeldRounds.class)
			.run((context) -> {
				HeldRounds rounds = context.getBean(HeldRounds.class);
				rounds.which = (args) -> args[4] instanceof Map<?, ?> limits && limits.containsKey("api");
				UUID first = send(context, "/first", "a");
				context.getBean(OutboxRelay.class).start();
				assertThat(rounds.holding.await(20, TimeUnit.SECONDS)).isTrue();
				UUID second;
				try {
					second = send(context, "/second", "b");
				}
				finally {
					rounds.release.countDown();
				}
				awaitDelivered(context, first, second);
				assertThat(insertedLeased(context, second)).isTrue();
				assertThat(receivedPaths(2)).containsExactly("/first", "/second");
			});
	}

	private static void awaitRunning(AssertableApplicationContext context) {
		assertThat(context).hasNotFailed();
		await().atMost(Duration.ofSeconds(10))
			.until(() -> context.getBean(OutboxRelay.class).getState() == OutboxRelay.State.RUNNING);
	}

	/**
	 * Holds the relay's rounds, once asked to, until released.
	 */
	@Configuration(proxyBeanMethods = false)
	static class HeldRounds {

		// Which rounds to hold, by their arguments: the first that matches.
		volatile Predicate<Object[]> which = (args) -> false;

		final CountDownLatch holding = new CountDownLatch(1);

		final CountDownLatch release = new CountDownLatch(1);

		@Bean
		OutboxStore heldOutboxStore(JdbcOutboxComponents jdbc) {
			return CountedStore.calling(jdbc.store(), "round", this::holdIfAsked);
		}

		private void holdIfAsked(Object[] args) {
			if (this.holding.getCount() == 0 || !this.which.test(args)) {
				return;
			}
			this.holding.countDown();
			try {
				this.release.await(30, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

	}

}
