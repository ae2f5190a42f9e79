package io.retryoutbox;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.TestDatabase;
import mockwebserver3.MockResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The default classification, end to end: a real HTTP server answers, the relay records
 * what the policy decided on the row.
 */
class ClassificationOverHttpIntegrationTests {

	/**
	 * One database for the whole class: each test looks at its own row only.
	 */
	private static final String JDBC_URL = TestDatabase.createDatabase();

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private ApplicationContextRunner runner() {
		return OutboxContexts.runner(JDBC_URL)
			.withPropertyValues("retry-outbox.destinations.api.base-url=" + this.destination.server().url("/"),
					"retry-outbox.retry.delay=1h", "retry-outbox.require-transaction=false");
	}

	private Map<String, Object> rowAfterOneAttempt(MockResponse response, String... properties) {
		this.destination.dispatcher().answer("/x", response);
		Object[] row = new Object[1];
		runner().withPropertyValues(properties).run((context) -> {
			UUID id = context.getBean(Outbox.class).send(OutboxRequest.post("api", "/x").build());
			await().atMost(Duration.ofSeconds(20)).until(() -> {
				Map<String, Object> current = OutboxContexts.row(context, id);
				row[0] = current;
				return (Integer) current.get("attempts") == 1 && current.get("lease_owner") == null;
			});
		});
		@SuppressWarnings("unchecked")
		Map<String, Object> result = (Map<String, Object>) row[0];
		return result;
	}

	@Test
	void recordsASuccessOnceItsStatusArrivesHoweverSlowlyItsBodyFollows() {
		// Headers at once, then a body at one byte per 500 ms: ten seconds, ten times the
		// timeout. Waiting for it turned the success into a timeout and a second request.
		Map<String, Object> row = rowAfterOneAttempt(new MockResponse.Builder().code(200)
			.body("x".repeat(20))
			.throttleBody(1, 500, TimeUnit.MILLISECONDS)
			.build(), "retry-outbox.destinations.api.timeout=1s");
		assertThat(row).containsEntry("status", "DELIVERED").containsEntry("last_status_code", 200);
		assertThat(this.destination.dispatcher().requests()).hasSize(1);
	}

	@Test
	void classifiesAnErrorFromTheStartOfABodyThatTrickles() {
		// The envelope arrives at once, then the body trickles for far longer than the
		// timeout: classified from what arrived, not recorded as a timeout.
		Map<String, Object> row = rowAfterOneAttempt(new MockResponse.Builder().code(409)
			.addHeader("Content-Type", "application/json")
			.body("{\"error\":{\"code\":\"CONFLICT\"}}" + " ".repeat(400))
			.throttleBody(30, 500, TimeUnit.MILLISECONDS)
			.build(), "retry-outbox.destinations.api.timeout=2s");
		assertThat(row).containsEntry("status", "DEAD")
			.containsEntry("last_status_code", 409)
			.containsEntry("last_error_code", "CONFLICT");
	}

	@ParameterizedTest
	@ValueSource(ints = { 408, 425, 429, 500, 502, 503, 504 })
	void keepsTheRowForARetryOnATransientStatus(int status) {
		Map<String, Object> row = rowAfterOneAttempt(new MockResponse.Builder().code(status).build());
		assertThat(row).containsEntry("status", "PENDING")
			.containsEntry("attempts", 1)
			.containsEntry("last_status_code", status);
	}

	@ParameterizedTest
	@ValueSource(ints = { 301, 302, 303, 307, 308, 400, 401, 403, 404, 410, 422, 501, 505 })
	void deadLettersATerminalStatusWithoutFollowingRedirects(int status) {
		// A followed redirect would ask the server again and never see this status.
		Map<String, Object> row = rowAfterOneAttempt(new MockResponse.Builder().code(status)
			.addHeader("Location", this.destination.server().url("/elsewhere"))
			.build());
		assertThat(row).containsEntry("status", "DEAD")
			.containsEntry("dead_reason", "TERMINAL_STATUS")
			.containsEntry("last_status_code", status);
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', textBlock = """
			{"error":{"code":"RESOURCE_LOCKED"}} | PENDING | RESOURCE_LOCKED
			{"code":"RESOURCE_LOCKED"}           | PENDING | RESOURCE_LOCKED
			{"error":{"code":"CONFLICT"}}        | DEAD    | CONFLICT
			{"code":"CONFLICT"}                  | DEAD    | CONFLICT
			{"error":{"message":"busy"}}         | PENDING |
			<html>conflict</html>                | PENDING |
			""")
	void classifiesA409ByTheErrorCodeInItsBody(String body, String status, String errorCode) {
		Map<String, Object> row = rowAfterOneAttempt(new MockResponse.Builder().code(409).body(body).build());
		assertThat(row).containsEntry("status", status)
			.containsEntry("last_status_code", 409)
			.containsEntry("last_error_code", errorCode);
	}

	@Test
	void retriesA409WithAnEmptyBody() {
		Map<String, Object> row = rowAfterOneAttempt(new MockResponse.Builder().code(409).build());
		assertThat(row).containsEntry("status", "PENDING").containsEntry("last_status_code", 409);
	}

	@Test
	void keepsTheRowForARetryWhenTheHostNameDoesNotResolve() {
		runner().withPropertyValues("retry-outbox.destinations.nowhere.base-url=http://retry-outbox-test.invalid/")
			.run((context) -> {
				UUID id = context.getBean(Outbox.class).send(OutboxRequest.post("nowhere", "/x").build());
				await().atMost(Duration.ofSeconds(30))
					.untilAsserted(() -> assertThat(OutboxContexts.row(context, id)).containsEntry("attempts", 1)
						.containsEntry("lease_owner", null));
				Map<String, Object> row = OutboxContexts.row(context, id);
				assertThat(row).containsEntry("status", "PENDING").containsEntry("last_status_code", null);
				assertThat((String) row.get("last_error")).contains("retry-outbox-test.invalid");
			});
	}

}
