package io.retryoutbox;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

import io.retryoutbox.jdbc.JdbcOutboxAdmin;
import io.retryoutbox.jdbc.MessageFilter;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.TestDatabase;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Messages of one ordering key are delivered one at a time in enqueue order; a retried
 * head stays the head; a dead head skips or parks its key.
 */
class PerKeyOrderingIntegrationTests {

	private final Queue<String> received = new ConcurrentLinkedQueue<>();

	private final Map<String, AtomicInteger> failuresLeft = new ConcurrentHashMap<>();

	private final Map<String, Integer> statusByPath = new ConcurrentHashMap<>();

	private MockWebServer server;

	private ApplicationContextRunner runner;

	@BeforeEach
	void start() throws IOException {
		this.server = new MockWebServer();
		this.server.setDispatcher(new Dispatcher() {
			@Override
			public MockResponse dispatch(RecordedRequest request) {
				String path = request.getUrl().encodedPath();
				PerKeyOrderingIntegrationTests.this.received.add(path);
				AtomicInteger left = PerKeyOrderingIntegrationTests.this.failuresLeft.get(path);
				if (left != null && left.getAndDecrement() > 0) {
					return new MockResponse.Builder().code(503).build();
				}
				int status = PerKeyOrderingIntegrationTests.this.statusByPath.getOrDefault(path, 200);
				return new MockResponse.Builder().code(status).build();
			}
		});
		this.server.start();
		this.runner = OutboxContexts.runner(TestDatabase.createDatabase())
			.withPropertyValues("retry-outbox.destinations.api.base-url=" + this.server.url("/"),
					"retry-outbox.retry.delay=300ms", "retry-outbox.retry.jitter=0");
	}

	@AfterEach
	void stop() {
		this.server.close();
	}

	private static UUID send(AssertableApplicationContext context, String path, String key) {
		return OutboxContexts.transactions(context)
			.execute((status) -> context.getBean(Outbox.class)
				.send(OutboxRequest.post("api", path).orderingKey(key).build()));
	}

	private static long heldKeys(AssertableApplicationContext context) {
		return OutboxContexts.jdbc(context).sql("SELECT count(*) FROM retry_outbox_key").query(Long.class).single();
	}

	private static String status(AssertableApplicationContext context, UUID id) {
		return (String) OutboxContexts.row(context, id).get("status");
	}

	@Test
	void keepsARetriedHeadAtTheHeadWhileUnkeyedMessagesProceed() {
		this.failuresLeft.put("/k/1", new AtomicInteger(2));
		this.runner.run((context) -> {
			UUID first = send(context, "/k/1", "k");
			UUID second = send(context, "/k/2", "k");
			UUID third = send(context, "/k/3", "k");
			UUID unkeyed = send(context, "/free", null);
			await().atMost(Duration.ofSeconds(20)).until(() -> "DELIVERED".equals(status(context, unkeyed)));
			// One snapshot: the second may only have left PENDING once the first was
			// delivered.
			assertThat(OutboxContexts.jdbc(context)
				.sql("SELECT (SELECT status FROM retry_outbox_message WHERE id = ?) = 'PENDING' "
						+ "OR (SELECT status FROM retry_outbox_message WHERE id = ?) = 'DELIVERED'")
				.param(second)
				.param(first)
				.query(Boolean.class)
				.single()).isTrue();
			await().atMost(Duration.ofSeconds(20)).until(() -> "DELIVERED".equals(status(context, third)));
			assertThat(status(context, first)).isEqualTo("DELIVERED");
			assertThat(this.received.stream().filter((path) -> path.startsWith("/k/"))).containsExactly("/k/1", "/k/1",
					"/k/1", "/k/2", "/k/3");
			// The key is released by the relay's next pass, after the delivery was
			// written.
			await().atMost(Duration.ofSeconds(20)).until(() -> heldKeys(context) == 0);
		});
	}

	@Test
	void letsTheNextMessageGoWhenTheHeadIsDeadAndOnDeadIsSkip() {
		this.statusByPath.put("/k/1", 400);
		this.runner.run((context) -> {
			UUID first = send(context, "/k/1", "k");
			UUID second = send(context, "/k/2", "k");
			await().atMost(Duration.ofSeconds(20)).until(() -> "DELIVERED".equals(status(context, second)));
			assertThat(status(context, first)).isEqualTo("DEAD");
			assertThat(this.received).containsExactly("/k/1", "/k/2");
		});
	}

	@Test
	void parksTheKeyWhenTheHeadIsDeadAndOnDeadIsBlockUntilTheHeadIsReplayed() {
		this.statusByPath.put("/k/1", 400);
		this.runner.withPropertyValues("retry-outbox.destinations.api.ordering.on-dead=block").run((context) -> {
			UUID first = send(context, "/k/1", "k");
			UUID second = send(context, "/k/2", "k");
			UUID other = send(context, "/other/1", "other");
			await().atMost(Duration.ofSeconds(20)).until(() -> "DEAD".equals(status(context, first)));
			await().atMost(Duration.ofSeconds(20)).until(() -> "DELIVERED".equals(status(context, other)));
			assertThat(status(context, second)).isEqualTo("PENDING");
			assertThat(this.received).doesNotContain("/k/2");
			this.statusByPath.remove("/k/1");
			assertThat(context.getBean(JdbcOutboxAdmin.class).replay(first, "test")).isTrue();
			await().atMost(Duration.ofSeconds(20)).until(() -> "DELIVERED".equals(status(context, second)));
			assertThat(status(context, first)).isEqualTo("DELIVERED");
			assertThat(this.received.stream().filter((path) -> path.startsWith("/k/"))).containsExactly("/k/1", "/k/1",
					"/k/2");
		});
	}

	@Test
	void releasesAParkedKeyWhenItsDeadHeadIsDiscarded() {
		this.statusByPath.put("/k/1", 400);
		this.runner.withPropertyValues("retry-outbox.ordering.on-dead=block").run((context) -> {
			UUID first = send(context, "/k/1", "k");
			UUID second = send(context, "/k/2", "k");
			await().atMost(Duration.ofSeconds(20)).until(() -> "DEAD".equals(status(context, first)));
			assertThat(status(context, second)).isEqualTo("PENDING");
			assertThat(context.getBean(JdbcOutboxAdmin.class).discard(first)).isTrue();
			await().atMost(Duration.ofSeconds(20)).until(() -> "DELIVERED".equals(status(context, second)));
			assertThat(this.received).containsExactly("/k/1", "/k/2");
		});
	}

	@Test
	void replaysASkippedDeadMessageAsTheNextOfItsKey() {
		this.statusByPath.put("/k/1", 400);
		this.failuresLeft.put("/k/2", new AtomicInteger(1000));
		this.runner.withPropertyValues("retry-outbox.retry.delay=200ms").run((context) -> {
			UUID first = send(context, "/k/1", "k");
			UUID second = send(context, "/k/2", "k");
			UUID third = send(context, "/k/3", "k");
			await().atMost(Duration.ofSeconds(20)).until(() -> this.received.contains("/k/2"));
			assertThat(status(context, first)).isEqualTo("DEAD");
			this.statusByPath.remove("/k/1");
			assertThat(context.getBean(JdbcOutboxAdmin.class).replay(first, "test")).isTrue();
			this.failuresLeft.get("/k/2").set(0);
			await().atMost(Duration.ofSeconds(20)).until(() -> "DELIVERED".equals(status(context, third)));
			List<String> keyed = this.received.stream().filter((path) -> !path.equals("/k/2")).toList();
			assertThat(keyed).containsExactly("/k/1", "/k/1", "/k/3");
			assertThat(status(context, first)).isEqualTo("DELIVERED");
			assertThat(status(context, second)).isEqualTo("DELIVERED");
		});
	}

	@Test
	void bulkReplayPutsSkippedDeadMessagesBackInTheirKeysOrder() {
		this.statusByPath.put("/k/1", 400);
		this.statusByPath.put("/k/2", 400);
		this.runner.run((context) -> {
			UUID first = send(context, "/k/1", "k");
			UUID second = send(context, "/k/2", "k");
			UUID third = send(context, "/k/3", "k");
			await().atMost(Duration.ofSeconds(20)).until(() -> "DELIVERED".equals(status(context, third)));
			assertThat(status(context, first)).isEqualTo("DEAD");
			assertThat(status(context, second)).isEqualTo("DEAD");
			this.statusByPath.clear();
			this.received.clear();
			JdbcOutboxAdmin.BulkResult result = context.getBean(JdbcOutboxAdmin.class)
				.replay(new MessageFilter(null, null, "k", null, null, null), 100, "test");
			assertThat(result.count()).isEqualTo(2);
			await().atMost(Duration.ofSeconds(20)).until(() -> "DELIVERED".equals(status(context, second)));
			assertThat(status(context, first)).isEqualTo("DELIVERED");
			assertThat(this.received).containsExactly("/k/1", "/k/2");
			// The key is released by the relay's next pass, after the delivery was
			// written.
			await().atMost(Duration.ofSeconds(20)).until(() -> heldKeys(context) == 0);
		});
	}

}
