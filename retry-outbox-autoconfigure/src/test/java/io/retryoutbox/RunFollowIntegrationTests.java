package io.retryoutbox;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.retryoutbox.relay.OutboxRelay;
import io.retryoutbox.relay.OutboxStore;
import io.retryoutbox.testsupport.CountedStore;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A message that this instance enqueues right behind the last message of a run of its
 * relay goes on that run from its commit: the insert tells which message of its key it
 * arrived behind, and the run takes it without reading again what arrived behind its
 * head. Where the insert cannot tell, or the run does not end with that message, the
 * relay reads what arrived, as before. Each relay here has a round interval of an hour
 * and keeps a run's key for an hour after its last answer, so that only its start's poll
 * claims: whatever else is sent went on the run.
 */
class RunFollowIntegrationTests {

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private final String jdbcUrl = TestDatabase.createDatabase();

	private ApplicationContextRunner runner() {
		return OutboxContexts.runner(this.jdbcUrl)
			.withPropertyValues("retry-outbox.relay.poll-interval=2h", "retry-outbox.relay.min-round-interval=1h",
					"retry-outbox.relay.run-linger=1h", "retry-outbox.relay.auto-startup=false",
					"retry-outbox.relay.notify=false", "retry-outbox.retry.delay=1h",
					"retry-outbox.destinations.api.base-url=" + this.destination.server().url("/"))
			.withBean(Reads.class);
	}

	private static OutboxRequest request(String path) {
		return OutboxRequest.post("api", path).orderingKey("order-1").build();
	}

	private static UUID send(ApplicationContext context, String path) {
		return OutboxContexts.send(context, request(path));
	}

	@Test
	void messagesEnqueuedBehindARunsLastMessageGoOnThatRunWithoutARead() throws Exception {
		runner().run((context) -> {
			List<UUID> ids = new ArrayList<>();
			ids.add(send(context, "/first"));
			OutboxRelay relay = context.getBean(OutboxRelay.class);
			relay.start();
			assertThat(this.destination.nextPath()).isEqualTo("/first");
			for (String path : List.of("/second", "/third")) {
				ids.add(send(context, path));
				assertThat(this.destination.nextPath()).isEqualTo(path);
			}
			relay.stop();
			assertThat(context.getBean(Reads.class).count()).isZero();
			for (UUID id : ids) {
				assertThat(OutboxContexts.row(context, id)).containsEntry("status", "DELIVERED")
					.containsEntry("attempts", 1)
					.containsEntry("lease_owner", null);
			}
		});
	}

	@Test
	void aMessageEnqueuedWhileItsRunsRequestTakesTheDestinationsWholeLimitGoesOnTheRun() throws Exception {
		runner()
			.withPropertyValues("retry-outbox.destinations.api.flow.adaptive=false",
					"retry-outbox.destinations.api.flow.max-concurrency=1")
			.run((context) -> {
				UUID first = send(context, "/first");
				OutboxRelay relay = context.getBean(OutboxRelay.class);
				this.destination.dispatcher().hold();
				relay.start();
				assertThat(this.destination.nextPath()).isEqualTo("/first");
				assertThat(relay.getInFlight("api")).isEqualTo(1);
				UUID second = send(context, "/second");
				this.destination.dispatcher().release();
				// In the place of the run's one request: nothing more in flight.
				assertThat(this.destination.nextPath()).isEqualTo("/second");
				relay.stop();
				assertThat(context.getBean(Reads.class).count()).isZero();
				for (UUID id : List.of(first, second)) {
					assertThat(OutboxContexts.row(context, id)).containsEntry("status", "DELIVERED")
						.containsEntry("attempts", 1);
				}
			});
	}

	@Test
	void aMessageEnqueuedInARepeatableReadTransactionIsReadBehindTheRunAndGoesOnIt() throws Exception {
		runner().run((context) -> {
			send(context, "/first");
			OutboxRelay relay = context.getBean(OutboxRelay.class);
			relay.start();
			assertThat(this.destination.nextPath()).isEqualTo("/first");
			TransactionTemplate repeatableRead = OutboxContexts.transactions(context);
			repeatableRead.setIsolationLevel(TransactionDefinition.ISOLATION_REPEATABLE_READ);
			UUID second = repeatableRead.execute((status) -> context.getBean(Outbox.class).send(request("/second")));
			assertThat(this.destination.nextPath()).isEqualTo("/second");
			relay.stop();
			assertThat(context.getBean(Reads.class).count()).isPositive();
			assertThat(OutboxContexts.row(context, second)).containsEntry("status", "DELIVERED")
				.containsEntry("attempts", 1);
		});
	}

	@Test
	void aMessageEnqueuedBehindOneTheRunDoesNotHoldIsReadWithThatOneSoNeitherIsSkipped() throws Exception {
		runner().run((context) -> {
			send(context, "/first");
			OutboxRelay relay = context.getBean(OutboxRelay.class);
			relay.start();
			assertThat(this.destination.nextPath()).isEqualTo("/first");
			// As another instance without a relay enqueues it: an arrival that no run of
			// this instance hears of.
			UUID elsewhere = UUID.randomUUID();
			OutboxContexts.jdbc(context).sql("""
					INSERT INTO retry_outbox_message (id, destination, method, path, headers, ordering_key,
						idempotency_key, is_head, holds_key, new_arrival)
					VALUES (?, 'api', 'POST', '/second', '{}'::jsonb, 'order-1', ?, false, true, true)
					""").params(elsewhere, elsewhere.toString()).update();
			UUID third = send(context, "/third");
			assertThat(this.destination.nextPath()).isEqualTo("/second");
			assertThat(this.destination.nextPath()).isEqualTo("/third");
			relay.stop();
			assertThat(context.getBean(Reads.class).count()).isPositive();
			for (UUID id : List.of(elsewhere, third)) {
				assertThat(OutboxContexts.row(context, id)).containsEntry("status", "DELIVERED")
					.containsEntry("attempts", 1);
			}
		});
	}

	@Test
	void aMessageEnqueuedAfterOneTheRunSkippedGoesAfterThatOneThoughItArrivesBehindTheRunsLast() throws Exception {
		// The run lets its key go a second after its last answer, so that what it does
		// not take goes by a claim then.
		runner()
			.withPropertyValues("retry-outbox.relay.run-linger=1s", "retry-outbox.relay.min-round-interval=0",
					"retry-outbox.relay.poll-interval=100ms")
			.run((context) -> {
				send(context, "/first");
				OutboxRelay relay = context.getBean(OutboxRelay.class);
				relay.start();
				assertThat(this.destination.nextPath()).isEqualTo("/first");
				CountDownLatch inserted = new CountDownLatch(1);
				CountDownLatch commit = new CountDownLatch(1);
				// Inserted before the next message, committed after it was taken.
				CompletableFuture<UUID> skipped = CompletableFuture
					.supplyAsync(() -> OutboxContexts.transactions(context).execute((status) -> {
						UUID id = context.getBean(Outbox.class).send(request("/second"));
						inserted.countDown();
						await(commit);
						return id;
					}));
				assertThat(inserted.await(20, TimeUnit.SECONDS)).isTrue();
				send(context, "/third");
				assertThat(this.destination.nextPath()).isEqualTo("/third");
				commit.countDown();
				skipped.get(20, TimeUnit.SECONDS);
				// Behind the run's last message, but after one the run does not hold:
				// that one goes first.
				send(context, "/fourth");
				assertThat(this.destination.nextPath()).isEqualTo("/second");
				assertThat(this.destination.nextPath()).isEqualTo("/fourth");
			});
	}

	private static void await(CountDownLatch latch) {
		try {
			assertThat(latch.await(20, TimeUnit.SECONDS)).isTrue();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Counts the relay's reads of what arrived behind its runs, around the store the
	 * auto-configuration made.
	 */
	static final class Reads implements BeanPostProcessor {

		private final AtomicInteger count = new AtomicInteger();

		@Override
		public Object postProcessAfterInitialization(Object bean, String beanName) {
			if (!(bean instanceof OutboxStore store)) {
				return bean;
			}
			return CountedStore.counting(store, "runsBehind", this.count);
		}

		int count() {
			return this.count.get();
		}

	}

}
