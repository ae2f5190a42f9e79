package io.retryoutbox.jdbc;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.retryoutbox.Outbox;
import io.retryoutbox.OutboxRequest;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.TestDatabase;
import mockwebserver3.MockResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The attempt log, written by the relay on a real PostgreSQL for attempts against a real
 * HTTP server.
 */
class AttemptLogIntegrationTests {

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private final String jdbcUrl = TestDatabase.createDatabase();

	private ApplicationContextRunner runner() {
		return OutboxContexts.runner(this.jdbcUrl)
			.withPropertyValues(
					"retry-outbox.destinations.payments.base-url=http://localhost:"
							+ this.destination.server().getPort() + "/api",
					"retry-outbox.destinations.payments.timeout=10s", "retry-outbox.retry.delay=50ms",
					"retry-outbox.retry.jitter=0");
	}

	private static UUID send(AssertableApplicationContext context, String path) {
		return OutboxContexts.transactions(context)
			.execute((status) -> context.getBean(Outbox.class)
				.send(OutboxRequest.post("payments", path).header("Authorization", "Bearer s3cr3t").build()));
	}

	private static void awaitStatus(AssertableApplicationContext context, UUID id, String status) {
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(() -> assertThat(OutboxContexts.row(context, id)).containsEntry("status", status));
	}

	private static List<Map<String, Object>> attempts(AssertableApplicationContext context, UUID id) {
		return OutboxContexts.jdbc(context)
			.sql("SELECT * FROM retry_outbox_attempt WHERE message_id = ? ORDER BY id")
			.param(id)
			.query()
			.listOfRows();
	}

	@Test
	void logsEveryAttemptWithItsOutcomeStatusDelayAndErrorCode() {
		this.destination.dispatcher()
			.enqueue(new MockResponse.Builder().code(503).addHeader("Retry-After", "1").build());
		this.destination.dispatcher().enqueue(new MockResponse.Builder().code(500).body("oops").build());
		this.destination.dispatcher()
			.enqueue(new MockResponse.Builder().code(409)
				.addHeader("Content-Type", "application/json")
				.body("{\"error\":{\"code\":\"CONFLICT\"}}")
				.build());
		runner().run((context) -> {
			UUID id = send(context, "/charges");
			awaitStatus(context, id, "DEAD");
			List<Map<String, Object>> attempts = attempts(context, id);
			assertThat(attempts).extracting((row) -> row.get("attempt")).containsExactly(1, 2, 3);
			assertThat(attempts).extracting((row) -> row.get("outcome")).containsExactly("RETRY", "RETRY", "DEAD");
			assertThat(attempts).extracting((row) -> row.get("status_code")).containsExactly(503, 500, 409);
			assertThat(attempts).extracting((row) -> row.get("delay_reason"))
				.containsExactly("RETRY_AFTER", "BACKOFF", null);
			assertThat((Long) attempts.get(0).get("delay_ms")).isBetween(500L, 1000L);
			assertThat((Long) attempts.get(1).get("delay_ms")).isBetween(1L, 100L);
			assertThat(attempts.get(2)).containsEntry("error_code", "CONFLICT")
				.containsEntry("response_snippet", "{\"error\":{\"code\":\"CONFLICT\"}}");
			assertThat(attempts.get(1)).containsEntry("response_snippet", "oops").containsEntry("error", "HTTP 500");
			assertThat(attempts).allSatisfy((row) -> {
				assertThat(row.get("started_at")).isNotNull();
				assertThat((Long) row.get("duration_ms")).isNotNegative();
			});
		});
	}

	@Test
	void neverKeepsTheBodyOfASuccessfulResponse() {
		this.destination.dispatcher()
			.enqueue(new MockResponse.Builder().code(200).body("{\"token\":\"t0ps3cret\"}").build());
		runner().run((context) -> {
			UUID id = send(context, "/charges");
			awaitStatus(context, id, "DELIVERED");
			assertThat(attempts(context, id)).singleElement().satisfies((row) -> {
				assertThat(row).containsEntry("outcome", "DELIVERED").containsEntry("status_code", 200);
				assertThat(row.get("response_snippet")).isNull();
				assertThat(row.get("delay_ms")).isNull();
			});
		});
	}

	@Test
	void masksSecretsInTheErrorBodyAndCutsItToTheConfiguredSize() {
		String body = "{\"message\":\"denied\",\"access_token\":\"t0ps3cret\",\"hint\":\"Bearer abc.def\","
				+ "\"padding\":\"" + "x".repeat(200) + "\"}";
		this.destination.dispatcher().enqueue(new MockResponse.Builder().code(400).body(body).build());
		runner().withPropertyValues("retry-outbox.attempt-log.response-snippet-size=100B").run((context) -> {
			UUID id = send(context, "/charges");
			awaitStatus(context, id, "DEAD");
			String snippet = (String) attempts(context, id).get(0).get("response_snippet");
			assertThat(snippet)
				.startsWith("{\"message\":\"denied\",\"access_token\":\"******\",\"hint\":\"Bearer ******\"")
				.hasSize(100)
				.doesNotContain("t0ps3cret")
				.doesNotContain("abc.def");
		});
	}

	@Test
	void writesNoAttemptLogWhenItIsOff() {
		this.destination.dispatcher().enqueue(new MockResponse.Builder().code(500).build());
		this.destination.dispatcher().enqueue(new MockResponse.Builder().code(200).build());
		runner().withPropertyValues("retry-outbox.attempt-log.enabled=false").run((context) -> {
			UUID id = send(context, "/charges");
			awaitStatus(context, id, "DELIVERED");
			assertThat(OutboxContexts.row(context, id)).containsEntry("attempts", 2);
			assertThat(attempts(context, id)).isEmpty();
		});
	}

}
