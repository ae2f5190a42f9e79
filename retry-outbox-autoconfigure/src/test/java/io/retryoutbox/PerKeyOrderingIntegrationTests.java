package io.retryoutbox;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import io.retryoutbox.message.MessageFilter;
import io.retryoutbox.message.OutboxRepair;
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
 * Messages of one ordering key are delivered one at a time in enqueue order; a retried
 * head stays the head; a dead head skips or parks its key.
 */
class PerKeyOrderingIntegrationTests {

	private static final MockResponse OK = new MockResponse.Builder().code(200).build();

	private static final MockResponse UNAVAILABLE = new MockResponse.Builder().code(503).build();

	private static final MockResponse BAD_REQUEST = new MockResponse.Builder().code(400).build();

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private final String jdbcUrl = TestDatabase.createDatabase();

	private ApplicationContextRunner runner() {
		return OutboxContexts.runner(this.jdbcUrl)
			.withPropertyValues("retry-outbox.destinations.api.base-url=" + this.destination.server().url("/"),
					"retry-outbox.retry.delay=300ms", "retry-outbox.retry.jitter=0");
	}

	private PathDispatcher dispatcher() {
		return this.destination.dispatcher();
	}

	/**
	 * The paths of the requests received so far, in order.
	 */
	private List<String> received() {
		return dispatcher().paths();
	}

	private static UUID send(AssertableApplicationContext context, String path, String key) {
		return OutboxContexts.transactions(context)
			.execute((status) -> context.getBean(Outbox.class)
				.send(OutboxRequest.post("api", path).orderingKey(key).build()));
	}

	private static long heldKeys(AssertableApplicationContext context) {
		return OutboxContexts.jdbc(context)
			.sql("SELECT count(DISTINCT ordering_key) FROM retry_outbox_message WHERE holds_key")
			.query(Long.class)
			.single();
	}

	private static String status(AssertableApplicationContext context, UUID id) {
		return (String) OutboxContexts.row(context, id).get("status");
	}

	@Test
	void keepsARetriedHeadAtTheHeadWhileUnkeyedMessagesProceed() {
		dispatcher().answer("/k/1", UNAVAILABLE, UNAVAILABLE, OK);
		runner().run((context) -> {
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
			assertThat(received().stream().filter((path) -> path.startsWith("/k/"))).containsExactly("/k/1", "/k/1",
					"/k/1", "/k/2", "/k/3");
			// The key is released by the relay's next pass, after the delivery was
			// written.
			await().atMost(Duration.ofSeconds(20)).until(() -> heldKeys(context) == 0);
		});
	}

	@Test
	void letsTheNextMessageGoWhenTheHeadIsDeadAndOnDeadIsSkip() {
		dispatcher().answer("/k/1", BAD_REQUEST);
		runner().run((context) -> {
			UUID first = send(context, "/k/1", "k");
			UUID second = send(context, "/k/2", "k");
			await().atMost(Duration.ofSeconds(20)).until(() -> "DELIVERED".equals(status(context, second)));
			assertThat(status(context, first)).isEqualTo("DEAD");
			assertThat(received()).containsExactly("/k/1", "/k/2");
		});
	}

	@Test
	void parksTheKeyWhenTheHeadIsDeadAndOnDeadIsBlockUntilTheHeadIsReplayed() {
		dispatcher().answer("/k/1", BAD_REQUEST);
		runner().withPropertyValues("retry-outbox.destinations.api.ordering.on-dead=block").run((context) -> {
			UUID first = send(context, "/k/1", "k");
			UUID second = send(context, "/k/2", "k");
			UUID other = send(context, "/other/1", "other");
			await().atMost(Duration.ofSeconds(20)).until(() -> "DEAD".equals(status(context, first)));
			await().atMost(Duration.ofSeconds(20)).until(() -> "DELIVERED".equals(status(context, other)));
			assertThat(status(context, second)).isEqualTo("PENDING");
			assertThat(received()).doesNotContain("/k/2");
			dispatcher().answer("/k/1", OK);
			assertThat(context.getBean(OutboxRepair.class).replay(first, "test")).isTrue();
			await().atMost(Duration.ofSeconds(20)).until(() -> "DELIVERED".equals(status(context, second)));
			assertThat(status(context, first)).isEqualTo("DELIVERED");
			assertThat(received().stream().filter((path) -> path.startsWith("/k/"))).containsExactly("/k/1", "/k/1",
					"/k/2");
		});
	}

	@Test
	void releasesAParkedKeyWhenItsDeadHeadIsDiscarded() {
		dispatcher().answer("/k/1", BAD_REQUEST);
		runner().withPropertyValues("retry-outbox.ordering.on-dead=block").run((context) -> {
			UUID first = send(context, "/k/1", "k");
			UUID second = send(context, "/k/2", "k");
			await().atMost(Duration.ofSeconds(20)).until(() -> "DEAD".equals(status(context, first)));
			assertThat(status(context, second)).isEqualTo("PENDING");
			assertThat(context.getBean(OutboxRepair.class).discard(first)).isTrue();
			await().atMost(Duration.ofSeconds(20)).until(() -> "DELIVERED".equals(status(context, second)));
			assertThat(received()).containsExactly("/k/1", "/k/2");
		});
	}

	@Test
	void replaysASkippedDeadMessageAsTheNextOfItsKey() {
		dispatcher().answer("/k/1", BAD_REQUEST);
		dispatcher().answer("/k/2", UNAVAILABLE);
		runner().withPropertyValues("retry-outbox.retry.delay=200ms").run((context) -> {
			UUID first = send(context, "/k/1", "k");
			UUID second = send(context, "/k/2", "k");
			UUID third = send(context, "/k/3", "k");
			await().atMost(Duration.ofSeconds(20)).until(() -> received().contains("/k/2"));
			assertThat(status(context, first)).isEqualTo("DEAD");
			dispatcher().answer("/k/1", OK);
			assertThat(context.getBean(OutboxRepair.class).replay(first, "test")).isTrue();
			dispatcher().answer("/k/2", OK);
			await().atMost(Duration.ofSeconds(20)).until(() -> "DELIVERED".equals(status(context, third)));
			List<String> keyed = received().stream().filter((path) -> !path.equals("/k/2")).toList();
			assertThat(keyed).containsExactly("/k/1", "/k/1", "/k/3");
			assertThat(status(context, first)).isEqualTo("DELIVERED");
			assertThat(status(context, second)).isEqualTo("DELIVERED");
		});
	}

	@Test
	void bulkReplayPutsSkippedDeadMessagesBackInTheirKeysOrder() {
		dispatcher().answer("/k/1", BAD_REQUEST);
		dispatcher().answer("/k/2", BAD_REQUEST);
		runner().run((context) -> {
			UUID first = send(context, "/k/1", "k");
			UUID second = send(context, "/k/2", "k");
			UUID third = send(context, "/k/3", "k");
			await().atMost(Duration.ofSeconds(20)).until(() -> "DELIVERED".equals(status(context, third)));
			assertThat(status(context, first)).isEqualTo("DEAD");
			assertThat(status(context, second)).isEqualTo("DEAD");
			dispatcher().answer("/k/1", OK);
			dispatcher().answer("/k/2", OK);
			long before = received().size();
			OutboxRepair.BulkResult result = context.getBean(OutboxRepair.class)
				.replay(new MessageFilter(null, null, "k", null, null, null), 100, "test");
			assertThat(result.count()).isEqualTo(2);
			await().atMost(Duration.ofSeconds(20)).until(() -> "DELIVERED".equals(status(context, second)));
			assertThat(status(context, first)).isEqualTo("DELIVERED");
			assertThat(received().stream().skip(before)).containsExactly("/k/1", "/k/2");
			// The key is released by the relay's next pass, after the delivery was
			// written.
			await().atMost(Duration.ofSeconds(20)).until(() -> heldKeys(context) == 0);
		});
	}

	@Test
	void enqueuesAKeyedMessageWhileAnotherOpenTransactionHoldsAMessageOfTheSameKey() throws Exception {
		runner().run((context) -> {
			CountDownLatch sent = new CountDownLatch(1);
			CountDownLatch commit = new CountDownLatch(1);
			CompletableFuture<UUID> open = CompletableFuture
				.supplyAsync(() -> OutboxContexts.transactions(context).execute((status) -> {
					UUID id = context.getBean(Outbox.class)
						.send(OutboxRequest.post("api", "/k/1").orderingKey("k").build());
					sent.countDown();
					await().atMost(Duration.ofSeconds(20)).until(() -> commit.getCount() == 0);
					return id;
				}));
			assertThat(sent.await(20, TimeUnit.SECONDS)).isTrue();
			// Would block until the open transaction ends if the enqueue locked anything
			// of
			// its key.
			UUID second = CompletableFuture.supplyAsync(() -> send(context, "/k/2", "k")).get(10, TimeUnit.SECONDS);
			commit.countDown();
			UUID first = open.get(20, TimeUnit.SECONDS);
			await().atMost(Duration.ofSeconds(20))
				.until(() -> "DELIVERED".equals(status(context, first)) && "DELIVERED".equals(status(context, second)));
			assertThat(received()).containsExactlyInAnyOrder("/k/1", "/k/2");
			await().atMost(Duration.ofSeconds(20)).until(() -> heldKeys(context) == 0);
		});
	}

	@Test
	void keepsEachWritersOrderWhenWritersShareKeysWhileTheRelayRuns() throws Exception {
		int writers = 4;
		int perWriter = 40;
		runner().run((context) -> {
			ExecutorService executor = Executors.newFixedThreadPool(writers);
			try {
				List<Future<?>> running = new ArrayList<>();
				for (int writer = 0; writer < writers; writer++) {
					int w = writer;
					running.add(executor.submit(() -> {
						for (int i = 0; i < perWriter; i++) {
							send(context, "/w" + w + "/" + i, "k" + (i % 2));
						}
					}));
				}
				for (Future<?> future : running) {
					future.get(60, TimeUnit.SECONDS);
				}
			}
			finally {
				executor.shutdownNow();
			}
			await().atMost(Duration.ofSeconds(60)).until(() -> received().size() == writers * perWriter);
			for (int writer = 0; writer < writers; writer++) {
				for (int key = 0; key < 2; key++) {
					String prefix = "/w" + writer + "/";
					int k = key;
					List<String> expected = IntStream.range(0, perWriter)
						.filter((i) -> i % 2 == k)
						.mapToObj((i) -> prefix + i)
						.toList();
					assertThat(received().stream().filter(expected::contains)).containsExactlyElementsOf(expected);
				}
			}
			assertThat(received()).doesNotHaveDuplicates();
			await().atMost(Duration.ofSeconds(20)).until(() -> heldKeys(context) == 0);
		});
	}

}
