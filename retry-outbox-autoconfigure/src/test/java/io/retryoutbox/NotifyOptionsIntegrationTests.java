package io.retryoutbox;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import io.retryoutbox.notify.PostgresNotifier;
import io.retryoutbox.notify.PostgresWakeupListener;
import io.retryoutbox.relay.OutboxRelay;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.OutboxRows;
import io.retryoutbox.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The LISTEN/NOTIFY options of the relay: {@code retry-outbox.relay.notify} and
 * {@code retry-outbox.relay.notify-channel}, and the wake-ups an enqueue leaves for its
 * transaction's commit, on a real PostgreSQL.
 */
class NotifyOptionsIntegrationTests {

	private static final String CHANNEL = "custom_channel";

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private final String jdbcUrl = TestDatabase.createDatabase();

	private ApplicationContextRunner runner() {
		return OutboxContexts.runner(this.jdbcUrl)
			.withPropertyValues("retry-outbox.destinations.payments.base-url=" + this.destination.server().url("/api"));
	}

	@Test
	void withNotifyOffThereIsNoNotifierNorListenerAndTheRelayDeliversByPolling() {
		runner().withPropertyValues("retry-outbox.relay.notify=false").run((context) -> {
			assertThat(context).hasNotFailed()
				.hasSingleBean(OutboxRelay.class)
				.doesNotHaveBean(PostgresNotifier.class)
				.doesNotHaveBean(PostgresWakeupListener.class);
			// Written behind the outbox's back: no wake-up of any kind, only a poll
			// finds it.
			UUID id = OutboxRows.insert(context, "PENDING", null, Duration.ZERO);
			awaitDelivered(context, id);
			assertThat(this.destination.dispatcher().requests()).singleElement()
				.satisfies((request) -> assertThat(request.getTarget()).isEqualTo("/api/direct"));
		});
	}

	@Test
	void anEnqueueOnOneInstanceWakesTheRelayOfAnotherOnTheConfiguredChannel() throws SQLException {
		try (Connection listener = DriverManager.getConnection(this.jdbcUrl)) {
			listen(listener, CHANNEL);
			OutboxContexts.withInstances(List.of(
					runner().withPropertyValues("retry-outbox.relay.notify-channel=" + CHANNEL,
							"retry-outbox.relay.poll-interval=1h"),
					runner().withPropertyValues("retry-outbox.relay.notify-channel=" + CHANNEL,
							"retry-outbox.relay.enabled=false")),
					(instances) -> {
						ConfigurableApplicationContext relay = instances.get(0);
						ConfigurableApplicationContext enqueueOnly = instances.get(1);
						awaitIdleAndListening(relay);
						UUID id = OutboxContexts.transactions(enqueueOnly)
							.execute((status) -> enqueueOnly.getBean(Outbox.class)
								.send(OutboxRequest.post("payments", "/wake").build()));
						// The relay polls hourly and was not woken locally: only a
						// notification can deliver this, and the enqueuing instance sent
						// it on the configured channel.
						awaitDelivered(relay, id);
						awaitNotification(listener, CHANNEL);
					});
		}
	}

	@Test
	void aKeyedEnqueueOnAnInstanceWithoutARelayIsAdmittedByAnotherInstancesRelayWithoutWaitingForItsPoll() {
		OutboxContexts.withInstances(List.of(runner().withPropertyValues("retry-outbox.relay.poll-interval=1h"),
				runner().withPropertyValues("retry-outbox.relay.enabled=false")), (instances) -> {
					ConfigurableApplicationContext relay = instances.get(0);
					ConfigurableApplicationContext enqueueOnly = instances.get(1);
					awaitIdleAndListening(relay);
					// This instance's relay never heard of the key: only the scan that
					// another instance's notification brings finds that it has no head.
					UUID id = OutboxContexts.transactions(enqueueOnly)
						.execute((status) -> enqueueOnly.getBean(Outbox.class)
							.send(OutboxRequest.post("payments", "/keyed").orderingKey("order-1").build()));
					awaitDelivered(relay, id);
				});
	}

	@Test
	void theRelayListensOnTheConfiguredChannelOnly() throws SQLException {
		runner()
			.withPropertyValues("retry-outbox.relay.notify-channel=" + CHANNEL, "retry-outbox.relay.poll-interval=1h")
			.run((context) -> {
				awaitIdleAndListening(context);
				UUID id = OutboxRows.insert(context, "PENDING", null, Duration.ZERO);
				try (Connection connection = DriverManager.getConnection(this.jdbcUrl);
						Statement statement = connection.createStatement()) {
					statement.execute("NOTIFY retry_outbox");
					await().during(Duration.ofSeconds(1))
						.atMost(Duration.ofSeconds(2))
						.until(() -> "PENDING".equals(OutboxContexts.row(context, id).get("status")));
					statement.execute("NOTIFY " + CHANNEL);
					awaitDelivered(context, id);
				}
			});
	}

	@Test
	void anInstanceWithoutARelayLeavesNothingToItsCommitWhileNoOtherInstanceListens() {
		runner().withPropertyValues("retry-outbox.relay.enabled=false").run((context) -> {
			AtomicInteger sent = new AtomicInteger();
			// The first enqueue has the notifier look whether another instance's relay
			// listens; once it has found none, an enqueue adds nothing to the commit.
			await().atMost(Duration.ofSeconds(10))
				.until(() -> sendInTransaction(context, sent, "order-" + sent.get()), List::isEmpty);
			assertThat(OutboxContexts.jdbc(context)
				.sql("SELECT count(*) FROM retry_outbox_message WHERE status = 'PENDING' AND new_arrival")
				.query(Long.class)
				.single()).isEqualTo(sent.get());
		});
	}

	@Test
	void keyedMessagesLeaveOneSynchronizationForTheirKeysAndTheRelaysWakeUp() {
		runner().withPropertyValues("retry-outbox.relay.poll-interval=1h", "retry-outbox.relay.notify=false")
			.run((context) -> {
				await().atMost(Duration.ofSeconds(10))
					.until(() -> context.getBean(OutboxRelay.class).getState() == OutboxRelay.State.RUNNING);
				awaitDelivered(context,
						OutboxContexts.transactions(context)
							.execute((status) -> context.getBean(Outbox.class)
								.send(OutboxRequest.post("payments", "/first").orderingKey("order-1").build())));
				List<UUID> ids = OutboxContexts.transactions(context).execute((status) -> {
					Outbox outbox = context.getBean(Outbox.class);
					List<UUID> enqueued = List.of(
							outbox.send(OutboxRequest.post("payments", "/a").orderingKey("order-2").build()),
							outbox.send(OutboxRequest.post("payments", "/b").orderingKey("order-3").build()));
					assertThat(TransactionSynchronizationManager.getSynchronizations()).hasSize(1);
					return enqueued;
				});
				// The poll is an hour away: only the keys noted and the relay woken
				// after the commit deliver these.
				ids.forEach((id) -> awaitDelivered(context, id));
			});
	}

	private static List<TransactionSynchronization> sendInTransaction(ConfigurableApplicationContext context,
			AtomicInteger sent, String key) {
		return OutboxContexts.transactions(context).execute((status) -> {
			context.getBean(Outbox.class).send(OutboxRequest.post("payments", "/alone").orderingKey(key).build());
			sent.incrementAndGet();
			return TransactionSynchronizationManager.getSynchronizations();
		});
	}

	/**
	 * Waits until the relay listens and has nothing left of the polls it ran at start and
	 * when its listener connected: a probe that only a later wake-up can find is
	 * delivered, and a single thread runs the relay's polls in order.
	 */
	private void awaitIdleAndListening(ConfigurableApplicationContext relay) {
		await().atMost(Duration.ofSeconds(10)).until(() -> relay.getBean(PostgresWakeupListener.class).isListening());
		UUID probe = OutboxRows.insert(relay, "PENDING", null, Duration.ZERO);
		relay.getBean(OutboxRelay.class).wakeUp();
		awaitDelivered(relay, probe);
	}

	private static void awaitDelivered(ConfigurableApplicationContext context, UUID id) {
		await().atMost(Duration.ofSeconds(10))
			.until(() -> "DELIVERED".equals(OutboxContexts.row(context, id).get("status")));
	}

	private static void listen(Connection connection, String channel) throws SQLException {
		try (Statement statement = connection.createStatement()) {
			statement.execute("LISTEN " + channel);
		}
	}

	private static void awaitNotification(Connection connection, String channel) {
		List<String> channels = new ArrayList<>();
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
			PGNotification[] received = connection.unwrap(PGConnection.class).getNotifications(100);
			if (received != null) {
				Stream.of(received).map(PGNotification::getName).forEach(channels::add);
			}
			assertThat(channels).contains(channel);
		});
	}

}
