package io.retryoutbox;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.retryoutbox.relay.OutboxRelay;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.PathDispatcher;
import io.retryoutbox.testsupport.TestDatabase;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * End to end: enqueue in a transaction, deliver through the relay to a real HTTP server,
 * on a real PostgreSQL.
 */
class OutboxDeliveryIntegrationTests {

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private final String jdbcUrl = TestDatabase.createDatabase();

	private ApplicationContextRunner runner() {
		return OutboxContexts.runner(this.jdbcUrl)
			.withPropertyValues(
					"retry-outbox.destinations.payments.base-url=http://localhost:" + server().getPort() + "/api",
					"retry-outbox.destinations.payments.timeout=2s", "retry-outbox.retry.delay=50ms",
					"retry-outbox.retry.jitter=0");
	}

	private MockWebServer server() {
		return this.destination.server();
	}

	private PathDispatcher dispatcher() {
		return this.destination.dispatcher();
	}

	private static UUID sendInTransaction(AssertableApplicationContext context, OutboxRequest request) {
		return OutboxContexts.transactions(context).execute((status) -> context.getBean(Outbox.class).send(request));
	}

	private static OutboxRequest charge(String orderId) {
		return OutboxRequest.post("payments", "/charges?source=test")
			.jsonBody(new Charge(orderId, 42))
			.header("X-Tenant", "acme")
			.orderingKey(orderId)
			.build();
	}

	private static void awaitStatus(AssertableApplicationContext context, UUID id, String status) {
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(() -> assertThat(OutboxContexts.row(context, id)).containsEntry("status", status));
	}

	@Test
	void deliversACommittedRequestWithItsMethodPathBodyHeadersAndIdempotencyKey() {
		dispatcher().enqueue(new MockResponse.Builder().code(201).build());
		runner().run((context) -> {
			UUID id = sendInTransaction(context, charge("order-1"));
			RecordedRequest request = server().takeRequest(20, TimeUnit.SECONDS);
			assertThat(request).isNotNull();
			assertThat(request.getMethod()).isEqualTo("POST");
			assertThat(request.getTarget()).isEqualTo("/api/charges?source=test");
			assertThat(request.getBody().string(StandardCharsets.UTF_8))
				.isEqualTo("{\"orderId\":\"order-1\",\"amount\":42}");
			assertThat(request.getHeaders().get("Content-Type")).isEqualTo(MediaType.APPLICATION_JSON_VALUE);
			assertThat(request.getHeaders().get("X-Tenant")).isEqualTo("acme");
			assertThat(request.getHeaders().get("Idempotency-Key")).isEqualTo(id.toString());
			awaitStatus(context, id, "DELIVERED");
			Map<String, Object> row = OutboxContexts.row(context, id);
			assertThat(row).containsEntry("attempts", 1).containsEntry("last_status_code", 201);
			assertThat(row.get("delivered_at")).isNotNull();
			assertThat(row.get("lease_owner")).isNull();
		});
	}

	@Test
	void sendsTheIdempotencyKeyInTheConfiguredHeader() {
		dispatcher().enqueue(new MockResponse.Builder().code(200).build());
		runner().withPropertyValues("retry-outbox.idempotency-key-header=X-Request-Key").run((context) -> {
			UUID id = sendInTransaction(context, OutboxRequest.post("payments", "/charges").build());
			RecordedRequest request = server().takeRequest(20, TimeUnit.SECONDS);
			assertThat(request).isNotNull();
			assertThat(request.getHeaders().values("X-Request-Key")).containsExactly(id.toString());
			assertThat(request.getHeaders().get("Idempotency-Key")).isNull();
			awaitStatus(context, id, "DELIVERED");
		});
	}

	@Test
	void takesACallerSuppliedKeyFromTheConfiguredHeaderAndSendsItOnce() {
		dispatcher().enqueue(new MockResponse.Builder().code(200).build());
		runner().withPropertyValues("retry-outbox.idempotency-key-header=X-Request-Key").run((context) -> {
			UUID id = sendInTransaction(context,
					OutboxRequest.post("payments", "/charges").header("x-request-key", "order-42-charge").build());
			RecordedRequest request = server().takeRequest(20, TimeUnit.SECONDS);
			assertThat(request).isNotNull();
			assertThat(request.getHeaders().values("X-Request-Key")).containsExactly("order-42-charge");
			assertThat(request.getHeaders().get("Idempotency-Key")).isNull();
			awaitStatus(context, id, "DELIVERED");
			assertThat(OutboxContexts.row(context, id)).containsEntry("idempotency_key", "order-42-charge");
		});
	}

	@Test
	void neverHasMoreRequestsInFlightThanTheConfiguredConcurrency() {
		dispatcher().hold();
		runner()
			.withPropertyValues("retry-outbox.relay.concurrency=2", "retry-outbox.destinations.payments.timeout=60s",
					"retry-outbox.relay.shutdown-timeout=1s")
			.run((context) -> {
				List<UUID> ids = OutboxContexts.transactions(context).execute((status) -> {
					List<UUID> sent = new ArrayList<>();
					for (int i = 0; i < 6; i++) {
						sent.add(context.getBean(Outbox.class)
							.send(OutboxRequest.post("payments", "/held/" + i).build()));
					}
					return sent;
				});
				await().atMost(Duration.ofSeconds(20)).until(() -> dispatcher().requests().size() >= 2);
				// Both slots are taken while the server holds the two requests.
				await().during(Duration.ofMillis(500))
					.atMost(Duration.ofSeconds(5))
					.until(() -> dispatcher().requests().size() == 2);
				dispatcher().release();
				ids.forEach((id) -> awaitStatus(context, id, "DELIVERED"));
				assertThat(dispatcher().requests()).hasSize(6);
			});
	}

	@Test
	void aRelayWebClientCustomizerAddsACredentialToEveryAttemptWithoutStoringIt() {
		dispatcher().enqueue(new MockResponse.Builder().code(503).build());
		dispatcher().enqueue(new MockResponse.Builder().code(200).build());
		AtomicInteger tokens = new AtomicInteger();
		RelayWebClientCustomizer credentials = (builder) -> builder.filter((request, next) -> next.exchange(
				ClientRequest.from(request).header("Authorization", "Bearer t" + tokens.incrementAndGet()).build()));
		runner().withBean(RelayWebClientCustomizer.class, () -> credentials).run((context) -> {
			UUID id = sendInTransaction(context, charge("order-credential"));
			awaitStatus(context, id, "DELIVERED");
			assertThat(server().takeRequest(1, TimeUnit.SECONDS).getHeaders().get("Authorization"))
				.isEqualTo("Bearer t1");
			assertThat(server().takeRequest(1, TimeUnit.SECONDS).getHeaders().get("Authorization"))
				.isEqualTo("Bearer t2");
			assertThat(String.valueOf(OutboxContexts.row(context, id).get("headers"))).doesNotContain("Bearer");
			assertThat(tokens).hasValue(2);
			dispatcher().enqueue(new MockResponse.Builder().code(200).build());
			context.getBean(WebClient.Builder.class)
				.build()
				.get()
				.uri(server().url("/application").uri())
				.retrieve()
				.toBodilessEntity()
				.block(Duration.ofSeconds(10));
			RecordedRequest application = server().takeRequest(1, TimeUnit.SECONDS);
			assertThat(application.getTarget()).isEqualTo("/application");
			assertThat(application.getHeaders().get("Authorization")).isNull();
		});
	}

	@Test
	void sendsNothingWhenTheTransactionRollsBack() {
		runner().run((context) -> {
			long before = OutboxContexts.count(context);
			OutboxContexts.transactions(context).executeWithoutResult((status) -> {
				context.getBean(Outbox.class).send(charge("order-rolled-back"));
				status.setRollbackOnly();
			});
			assertThat(OutboxContexts.count(context)).isEqualTo(before);
			// A committed marker proves the relay ran after the rolled-back one would
			// have.
			UUID marker = sendInTransaction(context, OutboxRequest.get("payments", "/marker").build());
			dispatcher().enqueue(new MockResponse.Builder().code(200).build());
			awaitStatus(context, marker, "DELIVERED");
			assertThat(server().getRequestCount()).isEqualTo(1);
			assertThat(server().takeRequest().getTarget()).isEqualTo("/api/marker");
		});
	}

	@Test
	void retriesATransientStatusWithTheSameIdempotencyKeyUntilDelivered() {
		dispatcher().enqueue(new MockResponse.Builder().code(503).addHeader("Retry-After", "0").build());
		dispatcher().enqueue(new MockResponse.Builder().code(500).build());
		dispatcher().enqueue(new MockResponse.Builder().code(200).build());
		runner().run((context) -> {
			UUID id = sendInTransaction(context, charge("order-2"));
			awaitStatus(context, id, "DELIVERED");
			List<String> keys = new ArrayList<>();
			List<String> bodies = new ArrayList<>();
			for (int i = 0; i < 3; i++) {
				RecordedRequest request = server().takeRequest(5, TimeUnit.SECONDS);
				keys.add(request.getHeaders().get("Idempotency-Key"));
				bodies.add(request.getBody().string(StandardCharsets.UTF_8));
			}
			assertThat(keys).containsOnly(id.toString()).hasSize(3);
			assertThat(bodies).containsOnly("{\"orderId\":\"order-2\",\"amount\":42}");
			assertThat(OutboxContexts.row(context, id)).containsEntry("attempts", 3);
		});
	}

	@Test
	void keepsTheRowWhileTheServerIsDownAndDeliversItWhenTheServerComesBack() {
		this.destination.stop();
		runner().run((context) -> {
			UUID id = sendInTransaction(context, charge("order-3"));
			await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
				Map<String, Object> row = OutboxContexts.row(context, id);
				assertThat(row).containsEntry("status", "PENDING");
				assertThat((Integer) row.get("attempts")).isGreaterThanOrEqualTo(2);
				assertThat((String) row.get("last_error")).contains("Connect");
			});
			this.destination.start();
			awaitStatus(context, id, "DELIVERED");
			assertThat(server().takeRequest().getHeaders().get("Idempotency-Key")).isEqualTo(id.toString());
		});
	}

	@Test
	void deadLettersABadRequestAndDoesNotHoldUpTheNextRow() {
		dispatcher().enqueue(new MockResponse.Builder().code(400).body("{\"error\":{\"code\":\"INVALID\"}}").build());
		dispatcher().enqueue(new MockResponse.Builder().code(200).build());
		runner().run((context) -> {
			UUID poison = sendInTransaction(context, OutboxRequest.post("payments", "/first").build());
			awaitStatus(context, poison, "DEAD");
			UUID next = sendInTransaction(context, OutboxRequest.post("payments", "/second").build());
			awaitStatus(context, next, "DELIVERED");
			Map<String, Object> dead = OutboxContexts.row(context, poison);
			assertThat(dead).containsEntry("dead_reason", "TERMINAL_STATUS")
				.containsEntry("last_status_code", 400)
				.containsEntry("attempts", 1);
			assertThat(server().getRequestCount()).isEqualTo(2);
		});
	}

	@Test
	void retriesAConnectionThatDiesMidRequestAndTheClientDoesNotRetryByItself() {
		dispatcher()
			.enqueue(new MockResponse.Builder().onRequestBody(SocketEffect.ShutdownConnection.INSTANCE).build());
		runner().withPropertyValues("retry-outbox.retry.delay=1h").run((context) -> {
			UUID id = sendInTransaction(context, charge("order-4"));
			await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
				Map<String, Object> row = OutboxContexts.row(context, id);
				assertThat(row).containsEntry("status", "PENDING").containsEntry("attempts", 1);
				assertThat(row.get("last_error")).isNotNull();
			});
			// The server counts a request after reading it, and the shutdown happens
			// while it reads.
			await().atMost(Duration.ofSeconds(10)).until(() -> server().getRequestCount() >= 1);
			assertThat(server().getRequestCount()).isEqualTo(1);
		});
	}

	@Test
	void retriesAnAttemptThatExceedsTheDestinationTimeout() {
		dispatcher().enqueue(new MockResponse.Builder().code(200).headersDelay(5, TimeUnit.SECONDS).build());
		dispatcher().enqueue(new MockResponse.Builder().code(200).build());
		runner().withPropertyValues("retry-outbox.destinations.payments.timeout=2s").run((context) -> {
			UUID id = sendInTransaction(context, charge("order-5"));
			awaitStatus(context, id, "DELIVERED");
			assertThat(OutboxContexts.row(context, id)).containsEntry("attempts", 2);
		});
	}

	@Test
	void aSlowRequestDoesNotHoldUpTheOtherMessages() {
		dispatcher().enqueue(new MockResponse.Builder().code(200).headersDelay(8, TimeUnit.SECONDS).build());
		dispatcher().enqueue(new MockResponse.Builder().code(200).build());
		runner().withPropertyValues("retry-outbox.destinations.payments.timeout=20s").run((context) -> {
			UUID slow = sendInTransaction(context, charge("order-slow"));
			assertThat(server().takeRequest(10, TimeUnit.SECONDS)).isNotNull();
			UUID fast = sendInTransaction(context, charge("order-fast"));
			awaitStatus(context, fast, "DELIVERED");
			assertThat(OutboxContexts.row(context, slow)).containsEntry("status", "IN_FLIGHT");
			awaitStatus(context, slow, "DELIVERED");
		});
	}

	@Test
	void wakesTheRelayRightAfterCommitInsteadOfWaitingForThePoll() {
		dispatcher().enqueue(new MockResponse.Builder().code(200).build());
		runner().withPropertyValues("retry-outbox.relay.poll-interval=1h", "retry-outbox.relay.notify=false")
			.run((context) -> {
				// Once the first poll ran, the next is an hour away and no notification
				// comes: only the after-commit wake-up can deliver this.
				await().atMost(Duration.ofSeconds(10))
					.until(() -> context.getBean(OutboxRelay.class).getState() == OutboxRelay.State.RUNNING);
				UUID id = sendInTransaction(context, charge("order-6"));
				await().atMost(Duration.ofSeconds(10))
					.untilAsserted(
							() -> assertThat(OutboxContexts.row(context, id)).containsEntry("status", "DELIVERED"));
			});
	}

	@Test
	void startsTheRoundAnEnqueueBringsNoSoonerThanTheMinRoundIntervalAfterTheLastRound() {
		dispatcher().enqueue(new MockResponse.Builder().code(200).build());
		runner()
			// Claimed by a round: direct dispatch would send it at commit.
			.withPropertyValues("retry-outbox.relay.poll-interval=1h", "retry-outbox.relay.min-round-interval=6s",
					"retry-outbox.relay.notify=false", "retry-outbox.relay.direct-dispatch=false")
			.run((context) -> {
				// The first poll ran at start; the enqueue's wake-up comes well within
				// six seconds of it, so its round waits for the rest of them.
				await().atMost(Duration.ofSeconds(10))
					.until(() -> context.getBean(OutboxRelay.class).getState() == OutboxRelay.State.RUNNING);
				UUID id = sendInTransaction(context, charge("order-8"));
				await().during(Duration.ofSeconds(2))
					.atMost(Duration.ofSeconds(3))
					.untilAsserted(() -> assertThat(OutboxContexts.row(context, id)).containsEntry("status", "PENDING")
						.containsEntry("attempts", 0));
				awaitStatus(context, id, "DELIVERED");
				assertThat(server().getRequestCount()).isOne();
			});
	}

	@Test
	void keepsAMessageWhoseRoundIsStillWaitingWhenTheRelayStopsAndSendsItOnTheNextStart() {
		dispatcher().enqueue(new MockResponse.Builder().code(200).build());
		runner()
			// Claimed by a round: direct dispatch would send it at commit.
			.withPropertyValues("retry-outbox.relay.poll-interval=2h", "retry-outbox.relay.min-round-interval=1h",
					"retry-outbox.relay.notify=false", "retry-outbox.relay.direct-dispatch=false")
			.run((context) -> {
				OutboxRelay relay = context.getBean(OutboxRelay.class);
				await().atMost(Duration.ofSeconds(10)).until(() -> relay.getState() == OutboxRelay.State.RUNNING);
				UUID id = sendInTransaction(context, charge("order-9"));
				relay.stop();
				assertThat(relay.isRunning()).isFalse();
				assertThat(OutboxContexts.row(context, id)).containsEntry("status", "PENDING")
					.containsEntry("attempts", 0);
				assertThat(server().getRequestCount()).isZero();
				relay.start();
				// Sent by the first poll after the start; its outcome waits for the
				// next round, an hour away.
				RecordedRequest request = server().takeRequest(20, TimeUnit.SECONDS);
				assertThat(request).isNotNull();
				assertThat(request.getHeaders().get("Idempotency-Key")).isEqualTo(id.toString());
			});
	}

	@Test
	void keepsTheIdempotencyKeyAcrossARestart() throws InterruptedException {
		dispatcher().enqueue(new MockResponse.Builder().code(503).build());
		dispatcher().enqueue(new MockResponse.Builder().code(200).build());
		UUID[] id = new UUID[1];
		runner().withPropertyValues("retry-outbox.retry.delay=1h").run((context) -> {
			id[0] = sendInTransaction(context, charge("order-7"));
			await().atMost(Duration.ofSeconds(20))
				.untilAsserted(() -> assertThat(OutboxContexts.row(context, id[0])).containsEntry("status", "PENDING")
					.containsEntry("attempts", 1)
					.containsEntry("last_status_code", 503));
		});
		runner().run((context) -> {
			OutboxContexts.jdbc(context)
				.sql("UPDATE retry_outbox_message SET next_attempt_at = now() WHERE id = ?")
				.param(id[0])
				.update();
			awaitStatus(context, id[0], "DELIVERED");
			assertThat(OutboxContexts.row(context, id[0])).containsEntry("attempts", 2);
		});
		assertThat(server().takeRequest().getHeaders().get("Idempotency-Key")).isEqualTo(id[0].toString());
		assertThat(server().takeRequest().getHeaders().get("Idempotency-Key")).isEqualTo(id[0].toString());
	}

	record Charge(String orderId, int amount) {

	}

}
