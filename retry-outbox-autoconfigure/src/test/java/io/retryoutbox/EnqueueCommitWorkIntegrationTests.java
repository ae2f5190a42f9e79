package io.retryoutbox;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import io.retryoutbox.relay.OutboxRelay;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What an enqueue leaves for its transaction's commit, on a real PostgreSQL: the work of
 * all of a transaction's messages in one synchronization, and none where nothing is to be
 * done once it commits.
 */
class EnqueueCommitWorkIntegrationTests {

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private final String jdbcUrl = TestDatabase.createDatabase();

	private ApplicationContextRunner runner() {
		return OutboxContexts.runner(this.jdbcUrl)
			.withPropertyValues("retry-outbox.destinations.payments.base-url=" + this.destination.server().url("/api"));
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

	private static List<TransactionSynchronization> sendInTransaction(ApplicationContext context, AtomicInteger sent,
			String key) {
		return OutboxContexts.transactions(context).execute((status) -> {
			context.getBean(Outbox.class).send(OutboxRequest.post("payments", "/alone").orderingKey(key).build());
			sent.incrementAndGet();
			return TransactionSynchronizationManager.getSynchronizations();
		});
	}

	private static void awaitDelivered(ApplicationContext context, UUID id) {
		await().atMost(Duration.ofSeconds(10))
			.until(() -> "DELIVERED".equals(OutboxContexts.row(context, id).get("status")));
	}

}
