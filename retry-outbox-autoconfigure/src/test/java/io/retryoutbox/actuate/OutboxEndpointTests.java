package io.retryoutbox.actuate;

import java.security.Principal;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.retryoutbox.Outbox;
import io.retryoutbox.OutboxRequest;
import io.retryoutbox.actuate.OutboxEndpoint.MessageDescriptor;
import io.retryoutbox.actuate.OutboxEndpoint.MessagePage;
import io.retryoutbox.actuate.OutboxEndpoint.OperationResult;
import io.retryoutbox.actuate.OutboxEndpoint.OutboxSummary;
import io.retryoutbox.actuate.autoconfigure.OutboxEndpointAutoConfiguration;
import io.retryoutbox.message.AttemptOutcome;
import io.retryoutbox.message.MessageStatus;
import io.retryoutbox.message.StoredAttempt;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.OutboxRows;
import io.retryoutbox.testsupport.TestDatabase;
import mockwebserver3.MockResponse;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The {@link OutboxEndpoint} on a real PostgreSQL, with messages driven into each state
 * by a real HTTP server.
 */
class OutboxEndpointTests {

	private static final SecurityContext ALICE = securityContext("alice", "OPS");

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private final String jdbcUrl = TestDatabase.createDatabase();

	@BeforeEach
	void answerByPath() {
		this.destination.dispatcher()
			.answer("/api/bad",
					new MockResponse.Builder().code(400)
						.body("{\"error\":{\"code\":\"INVALID\"},\"api_key\":\"k3y\"}")
						.build())
			.answer("/api/busy", new MockResponse.Builder().code(503).build())
			.answer("/api/slow", new MockResponse.Builder().code(200).headersDelay(30, TimeUnit.SECONDS).build());
	}

	private ApplicationContextRunner runner() {
		return OutboxContexts.runner(this.jdbcUrl)
			.withConfiguration(
					AutoConfigurations.of(EndpointAutoConfiguration.class, OutboxEndpointAutoConfiguration.class))
			.withPropertyValues("management.endpoints.web.exposure.include=outbox",
					"retry-outbox.destinations.payments.base-url=http://localhost:"
							+ this.destination.server().getPort() + "/api",
					"retry-outbox.destinations.payments.timeout=60s",
					"retry-outbox.destinations.audit.base-url=" + "http://localhost:"
							+ this.destination.server().getPort() + "/api",
					"retry-outbox.retry.delay=1h", "retry-outbox.relay.shutdown-timeout=0s");
	}

	private static UUID send(AssertableApplicationContext context, String destination, String path,
			String orderingKey) {
		return OutboxContexts.transactions(context)
			.execute((status) -> context.getBean(Outbox.class)
				.send(OutboxRequest.post(destination, path)
					.header("Authorization", "Bearer s3cr3t")
					.header("X-Api-Key", "k3y")
					.header("X-Tenant", "acme")
					.orderingKey(orderingKey)
					.build()));
	}

	private static void awaitStatus(AssertableApplicationContext context, UUID id, String status) {
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(() -> assertThat(OutboxContexts.row(context, id)).containsEntry("status", status));
	}

	private static OutboxEndpoint endpoint(AssertableApplicationContext context) {
		return context.getBean(OutboxEndpoint.class);
	}

	@Test
	void summarizesCountsPerStatusAndDestinationTheOldestPendingAgeAndParkedKeys() {
		runner().withPropertyValues("retry-outbox.ordering.on-dead=block").run((context) -> {
			UUID delivered = send(context, "payments", "/ok", "k1");
			UUID dead = send(context, "payments", "/bad", "k2");
			UUID pending = send(context, "audit", "/busy", "k3");
			awaitStatus(context, delivered, "DELIVERED");
			awaitStatus(context, dead, "DEAD");
			await()
				.untilAsserted(() -> assertThat(OutboxContexts.row(context, pending)).containsEntry("status", "PENDING")
					.containsEntry("attempts", 1));
			UUID inFlight = send(context, "audit", "/slow", "k4");
			awaitStatus(context, inFlight, "IN_FLIGHT");
			// A later message with the dead one's key is parked behind it.
			OutboxRows.insert(context, "PENDING", "k2", Duration.ofHours(-1));
			OutboxSummary summary = endpoint(context).summary();
			assertThat(summary.statuses()).containsEntry(MessageStatus.DELIVERED, 1L)
				.containsEntry(MessageStatus.DEAD, 1L)
				.containsEntry(MessageStatus.PENDING, 2L)
				.containsEntry(MessageStatus.IN_FLIGHT, 1L);
			assertThat(summary.destinations()).containsOnlyKeys("payments", "audit");
			assertThat(summary.destinations().get("payments")).containsEntry(MessageStatus.DELIVERED, 1L)
				.containsEntry(MessageStatus.DEAD, 1L)
				.containsEntry(MessageStatus.PENDING, 1L);
			assertThat(summary.destinations().get("audit")).containsEntry(MessageStatus.PENDING, 1L)
				.containsEntry(MessageStatus.IN_FLIGHT, 1L);
			assertThat(summary.oldestPendingAgeSeconds()).isPositive();
			assertThat(summary.lagSeconds()).isZero();
			assertThat(summary.parkedKeys()).isEqualTo(1);
			assertThat(summary.parkedKeySample()).containsExactly("k2");
		});
	}

	@Test
	void listsDeadMessagesNewestFirstByDefaultAndFiltersByStatusDestinationKeyAndTime() {
		runner().run((context) -> {
			UUID first = send(context, "payments", "/bad", "a");
			awaitStatus(context, first, "DEAD");
			UUID second = send(context, "audit", "/bad", "b");
			awaitStatus(context, second, "DEAD");
			UUID delivered = send(context, "payments", "/ok", "a");
			awaitStatus(context, delivered, "DELIVERED");
			OutboxEndpoint endpoint = endpoint(context);
			assertThat(ids(endpoint.messages("messages", null, null, null, null, null, null, null, ALICE)))
				.containsExactly(second, first);
			assertThat(ids(endpoint.messages("messages", "delivered", null, null, null, null, null, null, ALICE)))
				.containsExactly(delivered);
			assertThat(ids(endpoint.messages("messages", null, "payments", null, null, null, null, null, ALICE)))
				.containsExactly(first);
			assertThat(ids(endpoint.messages("messages", null, null, "b", null, null, null, null, ALICE)))
				.containsExactly(second);
			OffsetDateTime future = OffsetDateTime.now(ZoneOffset.UTC).plusMinutes(1);
			assertThat(ids(endpoint.messages("messages", null, null, null, future, null, null, null, ALICE))).isEmpty();
			assertThat(ids(endpoint.messages("messages", null, null, null, null, future, null, null, ALICE)))
				.containsExactly(second, first);
			MessagePage page = endpoint.messages("messages", null, null, null, null, null, null, 1, ALICE);
			assertThat(ids(page)).containsExactly(second);
			assertThat(page.next()).isEqualTo(second);
			assertThat(ids(endpoint.messages("messages", null, null, null, null, null, page.next(), 1, ALICE)))
				.containsExactly(first);
			assertThat(endpoint.messages("other", null, null, null, null, null, null, null, ALICE)).isNull();
		});
	}

	@Test
	void showsOneMessageWithItsAttemptLog() {
		this.destination.dispatcher()
			.answer("/api/flaky", new MockResponse.Builder().code(400).body("{\"code\":\"NOPE\"}").build());
		runner().run((context) -> {
			UUID id = send(context, "payments", "/flaky", "k");
			awaitStatus(context, id, "DEAD");
			MessageDescriptor message = endpoint(context).message("messages", id, ALICE);
			assertThat(message.id()).isEqualTo(id);
			assertThat(message.idempotencyKey()).isEqualTo(id.toString());
			assertThat(message.status()).isEqualTo(MessageStatus.DEAD);
			assertThat(message.deadReason()).isEqualTo("TERMINAL_STATUS");
			assertThat(message.lastStatusCode()).isEqualTo(400);
			assertThat(message.attemptLog()).singleElement().satisfies((attempt) -> {
				assertThat(attempt.attempt()).isEqualTo(1);
				assertThat(attempt.outcome()).isEqualTo(AttemptOutcome.DEAD);
				assertThat(attempt.statusCode()).isEqualTo(400);
				assertThat(attempt.responseSnippet()).isEqualTo("{\"code\":\"NOPE\"}");
			});
			assertThat(endpoint(context).message("messages", UUID.randomUUID(), ALICE)).isNull();
		});
	}

	@Test
	void masksSecretHeaderValuesUnlessShowValuesSaysOtherwise() {
		runner().run((context) -> {
			UUID id = send(context, "payments", "/bad", "k");
			awaitStatus(context, id, "DEAD");
			Map<String, List<String>> headers = endpoint(context).message("messages", id, ALICE).headers();
			assertThat(headers).containsEntry("Authorization", List.of("******"))
				.containsEntry("X-Api-Key", List.of("******"))
				.containsEntry("X-Tenant", List.of("acme"));
			assertThat(endpoint(context).message("messages", id, ALICE).attemptLog().get(0).responseSnippet())
				.contains("\"api_key\":\"******\"")
				.doesNotContain("k3y");
		});
		runner().withPropertyValues("management.endpoint.outbox.show-values=always").run((context) -> {
			UUID id = send(context, "payments", "/bad", "k");
			awaitStatus(context, id, "DEAD");
			assertThat(endpoint(context).message("messages", id, SecurityContext.NONE).headers())
				.containsEntry("Authorization", List.of("Bearer s3cr3t"))
				.containsEntry("X-Api-Key", List.of("k3y"));
		});
		runner()
			.withPropertyValues("management.endpoint.outbox.show-values=when-authorized",
					"management.endpoint.outbox.roles=OPS")
			.run((context) -> {
				UUID id = send(context, "payments", "/bad", "k");
				awaitStatus(context, id, "DEAD");
				OutboxEndpoint endpoint = endpoint(context);
				assertThat(endpoint.message("messages", id, ALICE).headers()).containsEntry("Authorization",
						List.of("Bearer s3cr3t"));
				assertThat(endpoint.message("messages", id, securityContext("bob", "DEV")).headers())
					.containsEntry("Authorization", List.of("******"));
				assertThat(endpoint.messages("messages", null, null, null, null, null, null, null, SecurityContext.NONE)
					.messages()
					.get(0)
					.headers()).containsEntry("Authorization", List.of("******"));
			});
	}

	@Test
	void replaysADeadMessageWithAFreshBudgetTheSameIdAndIdempotencyKeyAndRecordsWho() {
		runner().run((context) -> {
			UUID id = send(context, "payments", "/bad", "k");
			awaitStatus(context, id, "DEAD");
			this.destination.dispatcher().answer("/api/bad", new MockResponse.Builder().code(201).build());
			OperationResult result = endpoint(context).operate("replay", id, null, null, null, null, null, ALICE);
			assertThat(result).isEqualTo(new OperationResult("replay", 1, true));
			awaitStatus(context, id, "DELIVERED");
			assertThat(OutboxContexts.row(context, id)).containsEntry("attempts", 1).containsEntry("dead_reason", null);
			List<String> keys = this.destination.dispatcher()
				.requests()
				.stream()
				.map((request) -> request.getHeaders().get("Idempotency-Key"))
				.toList();
			assertThat(keys).containsExactly(id.toString(), id.toString());
			List<StoredAttempt> log = endpoint(context).message("messages", id, ALICE).attemptLog();
			assertThat(log).extracting(StoredAttempt::outcome)
				.containsExactly(AttemptOutcome.DEAD, AttemptOutcome.REPLAYED, AttemptOutcome.DELIVERED);
			assertThat(log.get(1).actor()).isEqualTo("alice");
			assertThat(log.get(1).attempt()).isEqualTo(1);
			assertThat(log.get(2).attempt()).isEqualTo(1);
		});
	}

	@Test
	void recordsAnAnonymousReplayAsAnonymous() {
		runner().withPropertyValues("retry-outbox.relay.enabled=false").run((context) -> {
			UUID id = OutboxRows.insert(context, "DEAD", null, Duration.ZERO);
			endpoint(context).operate("replay", id, null, null, null, null, null, SecurityContext.NONE);
			assertThat(endpoint(context).message("messages", id, ALICE).attemptLog()).singleElement()
				.satisfies((attempt) -> assertThat(attempt.actor()).isEqualTo("anonymous"));
		});
	}

	@Test
	void replaysEveryDeadMessageMatchingAFilterInChunksUpToTheLimit() {
		runner().withPropertyValues("retry-outbox.relay.enabled=false").run((context) -> {
			OutboxRows.insertDead(context, "payments", 2500, "ATTEMPTS_EXHAUSTED", Duration.ofHours(2));
			OutboxRows.insertDead(context, "payments", 10, "TERMINAL_STATUS", Duration.ofHours(2));
			OutboxRows.insertDead(context, "audit", 10, "ATTEMPTS_EXHAUSTED", Duration.ofHours(2));
			OutboxRows.insertDead(context, "payments", 10, "ATTEMPTS_EXHAUSTED", Duration.ofMinutes(1));
			OffsetDateTime anHourAgo = OffsetDateTime.now(ZoneOffset.UTC).minusHours(1);
			OutboxEndpoint endpoint = endpoint(context);
			assertThat(endpoint.operate("replay", null, "payments", "ATTEMPTS_EXHAUSTED", null, anHourAgo, 2100, ALICE))
				.isEqualTo(new OperationResult("replay", 2100, false));
			assertThat(endpoint.operate("replay", null, "payments", "ATTEMPTS_EXHAUSTED", null, anHourAgo, null, ALICE))
				.isEqualTo(new OperationResult("replay", 400, true));
			assertThat(endpoint.summary().statuses()).containsEntry(MessageStatus.PENDING, 2500L)
				.containsEntry(MessageStatus.DEAD, 30L);
			assertThat(OutboxContexts.jdbc(context)
				.sql("SELECT count(*) FROM retry_outbox_attempt WHERE outcome = 'REPLAYED' AND actor = 'alice'")
				.query(Long.class)
				.single()).isEqualTo(2500);
			assertThat(OutboxContexts.jdbc(context)
				.sql("SELECT count(*) FROM retry_outbox_message WHERE status = 'PENDING' AND attempts = 0")
				.query(Long.class)
				.single()).isEqualTo(2500);
		});
	}

	@Test
	void discardsOneDeadMessageOrEveryOneMatchingAFilterWithTheirAttemptLogs() {
		runner().run((context) -> {
			UUID id = send(context, "payments", "/bad", "k");
			awaitStatus(context, id, "DEAD");
			OutboxRows.insertDead(context, "audit", 30, "TERMINAL_STATUS", Duration.ofHours(1));
			OutboxEndpoint endpoint = endpoint(context);
			assertThat(endpoint.operate("discard", id, null, null, null, null, null, ALICE))
				.isEqualTo(new OperationResult("discard", 1, true));
			assertThat(endpoint.message("messages", id, ALICE)).isNull();
			assertThat(OutboxContexts.jdbc(context)
				.sql("SELECT count(*) FROM retry_outbox_attempt WHERE message_id = ?")
				.param(id)
				.query(Long.class)
				.single()).isZero();
			assertThat(endpoint.operate("discard", null, "audit", null, null, null, 20, ALICE))
				.isEqualTo(new OperationResult("discard", 20, false));
			assertThat(endpoint.operate("discard", null, "audit", null, null, null, null, ALICE))
				.isEqualTo(new OperationResult("discard", 10, true));
			assertThat(OutboxContexts.count(context)).isZero();
		});
	}

	@Test
	void neitherReplaysNorDiscardsAMessageThatIsNotDead() {
		runner().run((context) -> {
			UUID id = send(context, "payments", "/ok", "k");
			awaitStatus(context, id, "DELIVERED");
			OutboxEndpoint endpoint = endpoint(context);
			assertThat(endpoint.operate("replay", id, null, null, null, null, null, ALICE).count()).isZero();
			assertThat(endpoint.operate("discard", id, null, null, null, null, null, ALICE).count()).isZero();
			assertThat(OutboxContexts.row(context, id)).containsEntry("status", "DELIVERED");
			assertThat(this.destination.dispatcher().requests()).hasSize(1);
		});
	}

	private static List<UUID> ids(MessagePage page) {
		return page.messages().stream().map(MessageDescriptor::id).toList();
	}

	private static SecurityContext securityContext(String name, String role) {
		return new SecurityContext() {

			@Override
			public Principal getPrincipal() {
				return () -> name;
			}

			@Override
			public boolean isUserInRole(String candidate) {
				return role.equals(candidate);
			}

		};
	}

}
