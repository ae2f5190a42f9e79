package io.retryoutbox;

import java.time.Duration;
import java.util.UUID;

import io.retryoutbox.actuate.OutboxEndpoint;
import io.retryoutbox.actuate.OutboxHealthIndicator;
import io.retryoutbox.actuate.autoconfigure.OutboxEndpointAutoConfiguration;
import io.retryoutbox.actuate.autoconfigure.OutboxHealthContributorAutoConfiguration;
import io.retryoutbox.message.OutboxReadModel;
import io.retryoutbox.retry.DefaultRetryPolicy;
import io.retryoutbox.retry.RetrySettings;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.TestDatabase;
import mockwebserver3.MockResponse;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * One message that cannot be read, decided or sent by this instance neither stalls the
 * others nor loops for ever.
 */
class RelayFaultIsolationIntegrationTests {

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private final String jdbcUrl = TestDatabase.createDatabase();

	@BeforeEach
	void answerByPath() {
		this.destination.dispatcher()
			.answer("/api/ok", new MockResponse.Builder().code(200).build())
			.answer("/api/@evil.example/ok", new MockResponse.Builder().code(200).build())
			.answer("/api/broken", new MockResponse.Builder().code(500).build());
	}

	private ApplicationContextRunner runner() {
		return OutboxContexts.runner(this.jdbcUrl)
			.withPropertyValues("retry-outbox.destinations.api.base-url=" + this.destination.server().url("/api"),
					"retry-outbox.relay.poll-interval=100ms");
	}

	/**
	 * Inserts a message as a hand edit or a bad migration could leave it.
	 */
	private static UUID insert(AssertableApplicationContext context, String destination, String method,
			String headers) {
		UUID id = UUID.randomUUID();
		OutboxContexts.jdbc(context).sql("""
				INSERT INTO retry_outbox_message (id, destination, method, path, headers, idempotency_key)
				VALUES (?, ?, ?, '/ok', ?::jsonb, ?)
				""").params(id, destination, method, headers, id.toString()).update();
		return id;
	}

	/**
	 * Inserts a message with a path and headers as a hand edit could leave them.
	 */
	private static UUID insertEdited(AssertableApplicationContext context, String path, String headers) {
		UUID id = UUID.randomUUID();
		OutboxContexts.jdbc(context).sql("""
				INSERT INTO retry_outbox_message (id, destination, method, path, headers, idempotency_key)
				VALUES (?, 'api', 'POST', ?, ?::jsonb, ?)
				""").params(id, path, headers, id.toString()).update();
		return id;
	}

	@Test
	void neverSendsAnEditedRowWhosePathClimbsOutOfTheBasePathOrWhoseHeadersBelongToTheConnection() {
		this.runner().withPropertyValues("retry-outbox.relay.start-delay=1s").run((context) -> {
			UUID dots = insertEdited(context, "/../admin", "{}");
			UUID encoded = insertEdited(context, "/a/%2e%2e/b", "{}");
			UUID host = insertEdited(context, "/ok", "{\"Host\": [\"evil.example\"]}");
			UUID ok = insertEdited(context, "/ok", "{}");
			await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> assertThat(OutboxContexts.row(context, ok)).containsEntry("status", "DELIVERED"));
			for (UUID invalid : new UUID[] { dots, encoded, host }) {
				await().atMost(Duration.ofSeconds(10))
					.untilAsserted(
							() -> assertThat(OutboxContexts.row(context, invalid)).containsEntry("status", "DEAD")
								.containsEntry("dead_reason", "INVALID_REQUEST"));
			}
			assertThat(this.destination.dispatcher().requests()).hasSize(1);
		});
	}

	@Test
	void sendsAnEditedPathUnderTheBaseUrlsHostWhateverItStartsWith() {
		this.runner().withPropertyValues("retry-outbox.relay.start-delay=1s").run((context) -> {
			UUID id = insertEdited(context, "@evil.example/ok", "{}");
			await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> assertThat(OutboxContexts.row(context, id)).containsEntry("status", "DELIVERED"));
			assertThat(this.destination.dispatcher().requests()).singleElement()
				.satisfies((request) -> assertThat(request.getUrl().encodedPath()).isEqualTo("/api/@evil.example/ok"));
		});
	}

	@Test
	void sendsTheConfiguredHeaderWhenAnEditedRowCarriesItsOwn() {
		this.runner()
			.withPropertyValues("retry-outbox.relay.start-delay=1s",
					"retry-outbox.destinations.api.headers.Authorization=Bearer configured")
			.run((context) -> {
				UUID id = insertEdited(context, "/ok", "{\"authorization\": [\"Bearer caller\"]}");
				await().atMost(Duration.ofSeconds(10))
					.untilAsserted(
							() -> assertThat(OutboxContexts.row(context, id)).containsEntry("status", "DELIVERED"));
				assertThat(this.destination.dispatcher().requests()).singleElement()
					.satisfies((request) -> assertThat(request.getHeaders().values("Authorization"))
						.containsExactly("Bearer configured"));
			});
	}

	@Test
	void sendsTheRestOfABatchAtOnceAndMakesEachRowThatCannotBeReadOrSentDeadAsAnInvalidRequest() {
		this.runner().withPropertyValues("retry-outbox.relay.start-delay=1s").run((context) -> {
			UUID first = insert(context, "api", "POST", "{}");
			UUID notAnObject = insert(context, "api", "POST", "[1, 2]");
			UUID notStrings = insert(context, "api", "POST", "{\"X-Trace\": {\"nested\": true}}");
			UUID badMethod = insert(context, "api", "GE T", "{}");
			UUID badHeaderName = insert(context, "api", "POST", "{\"Bad Header\": [\"x\"]}");
			UUID last = insert(context, "api", "PUT", "{\"X-Ok\": [\"yes\"]}");
			await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
				assertThat(OutboxContexts.row(context, first)).containsEntry("status", "DELIVERED");
				assertThat(OutboxContexts.row(context, last)).containsEntry("status", "DELIVERED");
			});
			for (UUID invalid : new UUID[] { notAnObject, notStrings, badMethod, badHeaderName }) {
				await().atMost(Duration.ofSeconds(10))
					.untilAsserted(
							() -> assertThat(OutboxContexts.row(context, invalid)).containsEntry("status", "DEAD")
								.containsEntry("dead_reason", "INVALID_REQUEST")
								.containsEntry("attempts", 1));
			}
			assertThat((String) OutboxContexts.row(context, notAnObject).get("last_error")).contains("headers");
			assertThat((String) OutboxContexts.row(context, badMethod).get("last_error")).contains("GE T");
			assertThat((String) OutboxContexts.row(context, badHeaderName).get("last_error")).contains("Bad Header");
			assertThat(this.destination.dispatcher().requests()).hasSize(2);
			assertThat(OutboxContexts.jdbc(context)
				.sql("SELECT outcome FROM retry_outbox_attempt WHERE message_id = ?")
				.param(badMethod)
				.query(String.class)
				.list()).containsExactly("DEAD");
		});
	}

	@Test
	void treatsARetryPolicyThatThrowsAsATransientFailureOnTheDefaultRampUntilTheAttemptsRunOut() {
		this.runner()
			.withUserConfiguration(ThrowingPolicyConfiguration.class)
			.withPropertyValues("retry-outbox.retry.delay=10ms", "retry-outbox.retry.max-attempts=3")
			.run((context) -> {
				UUID broken = OutboxContexts.transactions(context)
					.execute((status) -> context.getBean(Outbox.class)
						.send(OutboxRequest.post("api", "/broken").build()));
				UUID ok = OutboxContexts.transactions(context)
					.execute((status) -> context.getBean(Outbox.class).send(OutboxRequest.post("api", "/ok").build()));
				await().atMost(Duration.ofSeconds(10))
					.untilAsserted(() -> assertThat(OutboxContexts.row(context, broken)).containsEntry("status", "DEAD")
						.containsEntry("dead_reason", "ATTEMPTS_EXHAUSTED")
						.containsEntry("attempts", 3));
				assertThat(OutboxContexts.row(context, ok)).containsEntry("status", "DELIVERED");
				assertThat((String) OutboxContexts.row(context, broken).get("last_error"))
					.contains("policy refuses 500");
				assertThat(this.destination.dispatcher().requests())
					.filteredOn((request) -> request.getTarget().endsWith("/broken"))
					.hasSize(3);
			});
	}

	@Test
	void leavesMessagesForADestinationItDoesNotKnowUnclaimedAndReportsThemWithoutGoingDown() {
		this.runner()
			.withConfiguration(AutoConfigurations.of(OutboxHealthContributorAutoConfiguration.class,
					EndpointAutoConfiguration.class, OutboxEndpointAutoConfiguration.class))
			.withPropertyValues("management.endpoints.web.exposure.include=outbox", "retry-outbox.health.max-lag=1s")
			.run((context) -> {
				UUID retired = insert(context, "retired", "POST", "{}");
				UUID newer = insert(context, "added-later", "POST", "{}");
				OutboxContexts.jdbc(context)
					.sql("UPDATE retry_outbox_message SET next_attempt_at = now() - interval '1 hour'")
					.update();
				UUID before = insert(context, "api", "POST", "{}");
				await().atMost(Duration.ofSeconds(10))
					.untilAsserted(
							() -> assertThat(OutboxContexts.row(context, before)).containsEntry("status", "DELIVERED"));
				// Several polls later.
				UUID after = OutboxContexts.transactions(context)
					.execute((status) -> context.getBean(Outbox.class).send(OutboxRequest.post("api", "/ok").build()));
				await().atMost(Duration.ofSeconds(10))
					.untilAsserted(
							() -> assertThat(OutboxContexts.row(context, after)).containsEntry("status", "DELIVERED"));
				for (UUID unknown : new UUID[] { retired, newer }) {
					assertThat(OutboxContexts.row(context, unknown)).containsEntry("status", "PENDING")
						.containsEntry("attempts", 0);
				}
				assertThat(context.getBean(OutboxReadModel.class).stats().unknownDestination()).isEqualTo(2);
				Health health = context.getBean("retryOutboxHealthIndicator", OutboxHealthIndicator.class).health(true);
				assertThat(health.getStatus()).isEqualTo(Status.UP);
				assertThat(health.getDetails()).containsEntry("unknownDestination", 2L)
					.containsEntry("lag", "PT0S")
					.containsKey("warning");
				assertThat(context.getBean(OutboxEndpoint.class).summary().unknownDestination()).isEqualTo(2);
			});
	}

	@Configuration(proxyBeanMethods = false)
	static class ThrowingPolicyConfiguration {

		@Bean
		RetryPolicy throwingPolicy() {
			RetryPolicy delegate = new DefaultRetryPolicy(RetrySettings.DEFAULTS);
			return (attempt, outcome) -> {
				if (outcome instanceof DeliveryOutcome.Response response && response.statusCode() == 500) {
					throw new IllegalStateException("policy refuses 500");
				}
				return delegate.decide(attempt, outcome);
			};
		}

	}

}
