package io.retryoutbox;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import io.retryoutbox.relay.OutboxRelay;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.TestDatabase;
import mockwebserver3.MockResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A run of an ordering key takes the messages that this instance enqueues behind it while
 * it is sent, or before a round has written its outcomes: they go as soon as the message
 * before them is delivered, not once a round has released the key and claimed them. Each
 * test's relay has a round interval of an hour, so that only its start's poll claims:
 * whatever else is sent went through a run that took it.
 */
class ChainedRunsIntegrationTests {

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private final String jdbcUrl = TestDatabase.createDatabase();

	private ApplicationContextRunner runner() {
		return OutboxContexts.runner(this.jdbcUrl)
			.withPropertyValues("retry-outbox.relay.poll-interval=2h", "retry-outbox.relay.min-round-interval=1h",
					"retry-outbox.relay.auto-startup=false", "retry-outbox.relay.notify=false",
					"retry-outbox.retry.delay=1h", "retry-outbox.retry.jitter=0",
					"retry-outbox.destinations.api.base-url=" + this.destination.server().url("/"));
	}

	private static UUID send(ApplicationContext context, String path) {
		return OutboxContexts.send(context, OutboxRequest.post("api", path).orderingKey("order-1").build());
	}

	@Test
	void sendsAMessageEnqueuedBehindADeliveredHeadBeforeARoundWritesTheHeadsOutcome() throws Exception {
		runner().run((context) -> {
			UUID head = send(context, "/first");
			OutboxRelay relay = context.getBean(OutboxRelay.class);
			relay.start();
			assertThat(this.destination.nextPath()).isEqualTo("/first");
			UUID next = send(context, "/second");
			assertThat(this.destination.nextPath()).isEqualTo("/second");
			// Stopping writes the run's outcomes: both delivered, each attempted once.
			relay.stop();
			for (UUID id : List.of(head, next)) {
				assertThat(OutboxContexts.row(context, id)).containsEntry("status", "DELIVERED")
					.containsEntry("attempts", 1)
					.containsEntry("lease_owner", null);
			}
			assertThat(OutboxContexts.jdbc(context)
				.sql("SELECT count(*) FROM retry_outbox_attempt WHERE message_id = ?")
				.param(next)
				.query(Long.class)
				.single()).isOne();
		});
	}

	@Test
	void sendsMessagesEnqueuedWhileTheHeadIsUnansweredAfterItInOrder() throws Exception {
		runner().run((context) -> {
			send(context, "/first");
			this.destination.dispatcher().hold();
			context.getBean(OutboxRelay.class).start();
			List<String> paths = new ArrayList<>();
			paths.add(this.destination.nextPath());
			send(context, "/second");
			send(context, "/third");
			this.destination.dispatcher().release();
			paths.add(this.destination.nextPath());
			paths.add(this.destination.nextPath());
			assertThat(paths).containsExactly("/first", "/second", "/third");
		});
	}

	@Test
	void aRunTakesNoMoreThanTheRunSizeAndLeavesTheRestForARound() throws Exception {
		runner().withPropertyValues("retry-outbox.relay.run-size=3").run((context) -> {
			List<UUID> ids = new ArrayList<>();
			ids.add(send(context, "/1"));
			OutboxRelay relay = context.getBean(OutboxRelay.class);
			relay.start();
			assertThat(this.destination.nextPath()).isEqualTo("/1");
			for (String path : List.of("/2", "/3")) {
				ids.add(send(context, path));
				assertThat(this.destination.nextPath()).isEqualTo(path);
			}
			UUID fourth = send(context, "/4");
			relay.stop();
			assertThat(this.destination.server().getRequestCount()).isEqualTo(3);
			for (UUID id : ids) {
				assertThat(OutboxContexts.row(context, id)).containsEntry("status", "DELIVERED");
			}
			assertThat(OutboxContexts.row(context, fourth)).containsEntry("status", "PENDING")
				.containsEntry("attempts", 0);
		});
	}

	@Test
	void aMessageThatFailsInARunKeepsItsKeyAndWhatFollowsWaitsBehindIt() throws Exception {
		this.destination.dispatcher().answer("/second", new MockResponse.Builder().code(503).build());
		runner().run((context) -> {
			send(context, "/first");
			OutboxRelay relay = context.getBean(OutboxRelay.class);
			relay.start();
			assertThat(this.destination.nextPath()).isEqualTo("/first");
			UUID failing = send(context, "/second");
			assertThat(this.destination.nextPath()).isEqualTo("/second");
			UUID after = send(context, "/third");
			relay.stop();
			assertThat(this.destination.server().getRequestCount()).isEqualTo(2);
			assertThat(OutboxContexts.row(context, failing)).containsEntry("status", "PENDING")
				.containsEntry("attempts", 1)
				.containsEntry("is_head", true);
			assertThat(OutboxContexts.row(context, after)).containsEntry("status", "PENDING")
				.containsEntry("attempts", 0)
				.containsEntry("is_head", false);
		});
	}

}
