package io.retryoutbox;

import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;

import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.TestDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Every request that could never be delivered is refused at enqueue with a message naming
 * the problem, and nothing is written.
 */
class OutboxEnqueueValidationTests {

	private ApplicationContextRunner runner;

	@BeforeEach
	void createDatabase() {
		this.runner = OutboxContexts.runner(TestDatabase.createDatabase())
			.withPropertyValues("retry-outbox.destinations.payments.base-url=http://localhost:9/api",
					"retry-outbox.destinations.payments.headers.Authorization=Bearer configured",
					"retry-outbox.relay.enabled=false", "retry-outbox.max-body-size=1KB");
	}

	private void assertRefused(OutboxRequest request, String message) {
		this.runner.run((context) -> {
			assertThatIllegalArgumentException().isThrownBy(() -> sendInTransaction(context, request))
				.withMessageContaining(message);
			assertThat(OutboxContexts.count(context)).isZero();
		});
	}

	private static UUID sendInTransaction(AssertableApplicationContext context, OutboxRequest request) {
		return OutboxContexts.transactions(context).execute((status) -> context.getBean(Outbox.class).send(request));
	}

	@Test
	void refusesAnUnknownDestination() {
		assertRefused(OutboxRequest.post("billing", "/x").build(), "Unknown destination 'billing'");
	}

	@ParameterizedTest
	@ValueSource(strings = { "http://evil.example/charges", "https://evil.example", "//evil.example/charges",
			"mailto:someone@example.com", "ftp://files.example/x" })
	void refusesAnAbsoluteUrlAsPath(String path) {
		assertRefused(OutboxRequest.post("payments", path).build(), "Path '" + path + "'");
	}

	@ParameterizedTest
	@ValueSource(strings = { "/../admin", "/a/../b", "..", "/a/./b", "/a/%2e%2e/b", "/a/%2E%2e/b", "/a/.%2e/b",
			"/a/%2e./b", "/a/%2e/b", "/x/..?q=1" })
	void refusesADotSegmentRawOrPercentEncoded(String path) {
		assertRefused(OutboxRequest.post("payments", path).build(), "must not contain a dot segment");
	}

	@ParameterizedTest
	@ValueSource(strings = { "Authorization", "authorization", "AUTHORIZATION" })
	void refusesAHeaderTheDestinationConfiguresInAnyCase(String name) {
		assertRefused(OutboxRequest.post("payments", "/x").header(name, "Bearer caller").build(),
				"Header '" + name + "' is set by the configuration of destination 'payments'");
	}

	@ParameterizedTest
	@ValueSource(strings = { "Webhook-Signature", "webhook-id", "WEBHOOK-TIMESTAMP" })
	void refusesASignatureHeaderInAnyCaseOnADestinationThatSigns(String name) {
		this.runner = this.runner.withPropertyValues(
				"retry-outbox.destinations.payments.signing.secrets=whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
		assertRefused(OutboxRequest.post("payments", "/x").header(name, "v1,forged").build(),
				"Header '" + name + "' is set by the relay to sign the requests of destination 'payments' "
						+ "(retry-outbox.destinations.payments.signing.secrets)");
	}

	@Test
	void acceptsSignatureHeadersOnADestinationThatDoesNotSign() {
		this.runner.run((context) -> {
			sendInTransaction(context,
					OutboxRequest.post("payments", "/x")
						.header("webhook-id", "msg_1")
						.header("webhook-signature", "v1,signed-upstream")
						.build());
			assertThat(OutboxContexts.count(context)).isEqualTo(1);
		});
	}

	@ParameterizedTest
	@ValueSource(strings = { "Host", "host", "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive",
			"Upgrade", "TE", "Trailer", "Proxy-Authorization", "proxy-connection" })
	void refusesAHeaderThatBelongsToTheConnection(String name) {
		assertRefused(OutboxRequest.post("payments", "/x").header(name, "evil.example").build(),
				"Header '" + name + "' is set by the HTTP client");
	}

	@Test
	void acceptsDotsInsideASegment() {
		this.runner.run((context) -> {
			sendInTransaction(context, OutboxRequest.post("payments", "/files/report..v2.txt").build());
			sendInTransaction(context, OutboxRequest.post("payments", "/.well-known/x").build());
			assertThat(OutboxContexts.count(context)).isEqualTo(2);
		});
	}

	@Test
	void refusesAMethodThatIsNotAnHttpToken() {
		assertRefused(new OutboxRequest(HttpMethod.valueOf("GE T"), "payments", "/x", Map.of(), null, null),
				"Method 'GE T' is not a valid HTTP method");
	}

	@Test
	void refusesAPathThatIsNotAValidUri() {
		assertRefused(OutboxRequest.post("payments", "/charges/a b").build(), "is not a valid URI path");
	}

	@ParameterizedTest
	@ValueSource(strings = { "value\r\nX-Injected: 1", "value\nmore", "value\r" })
	void refusesAHeaderValueWithALineBreak(String value) {
		assertRefused(OutboxRequest.post("payments", "/x").header("X-Tenant", value).build(),
				"Value of header 'X-Tenant' contains CR or LF");
	}

	@ParameterizedTest
	@ValueSource(strings = { "X-Bad\r\nName", "X Bad", "X:Bad" })
	void refusesAnInvalidHeaderName(String name) {
		assertRefused(OutboxRequest.post("payments", "/x").header(name, "v").build(),
				"is not a valid HTTP header name");
	}

	@Test
	void refusesABodyOverTheSizeLimit() {
		assertRefused(
				OutboxRequest.post("payments", "/x").body(new byte[1025], MediaType.APPLICATION_OCTET_STREAM).build(),
				"Request body of 1025 bytes exceeds retry-outbox.max-body-size of 1024 bytes");
	}

	@Test
	void refusesAJsonBodyOverTheSizeLimit() {
		assertRefused(OutboxRequest.post("payments", "/x").jsonBody("x".repeat(2000)).build(),
				"exceeds retry-outbox.max-body-size");
	}

	@Test
	void acceptsABodyAtTheSizeLimit() {
		this.runner.run((context) -> {
			sendInTransaction(context,
					OutboxRequest.post("payments", "/x")
						.body(new byte[1024], MediaType.APPLICATION_OCTET_STREAM)
						.build());
			assertThat(OutboxContexts.count(context)).isOne();
		});
	}

	@Test
	void refusesToEnqueueOutsideATransaction() {
		this.runner.run((context) -> {
			assertThatIllegalStateException()
				.isThrownBy(() -> context.getBean(Outbox.class).send(OutboxRequest.post("payments", "/x").build()))
				.withMessageContaining("requires an active transaction")
				.withMessageContaining("retry-outbox.require-transaction=false");
			assertThat(OutboxContexts.count(context)).isZero();
		});
	}

	@Test
	void enqueuesInAutoCommitModeWhenTransactionsAreNotRequired() {
		this.runner.withPropertyValues("retry-outbox.require-transaction=false").run((context) -> {
			UUID id = context.getBean(Outbox.class).send(OutboxRequest.post("payments", "x").build());
			assertThat(OutboxContexts.row(context, id)).containsEntry("status", "PENDING").containsEntry("path", "/x");
		});
	}

	@Test
	void storesTheRequestWithATimeOrderedIdAsIdempotencyKey() {
		this.runner.run((context) -> {
			UUID first = sendInTransaction(context, OutboxRequest.put("payments", "/a").build());
			UUID second = sendInTransaction(context, OutboxRequest.delete("payments", "/b").build());
			assertThat(first.version()).isEqualTo(7);
			assertThat(second.compareTo(first)).isPositive();
			assertThat(OutboxContexts.row(context, first)).containsEntry("idempotency_key", first.toString())
				.containsEntry("method", "PUT");
		});
	}

	@Test
	void usesACallerSuppliedIdempotencyKey() {
		this.runner.run((context) -> {
			UUID id = sendInTransaction(context,
					OutboxRequest.patch("payments", "/a").header("idempotency-key", "order-42-charge").build());
			assertThat(OutboxContexts.row(context, id)).containsEntry("idempotency_key", "order-42-charge")
				.containsEntry("method", "PATCH");
		});
	}

	@Test
	void storesAStringBodyWithItsContentType() {
		Consumer<AssertableApplicationContext> check = (context) -> {
			UUID id = sendInTransaction(context,
					OutboxRequest.post("payments", "/a").body("<a/>", MediaType.APPLICATION_XML).build());
			assertThat(OutboxContexts.row(context, id)).containsEntry("content_type", "application/xml");
			assertThat((byte[]) OutboxContexts.row(context, id).get("body")).asString().isEqualTo("<a/>");
		};
		this.runner.run(check::accept);
	}

	@Test
	void serializesAJsonBodyWithTheApplicationsJsonMapper() {
		this.runner.withPropertyValues("spring.jackson.property-naming-strategy=SNAKE_CASE").run((context) -> {
			UUID id = sendInTransaction(context,
					OutboxRequest.post("payments", "/a").jsonBody(new Charge("order-7", 42)).build());
			assertThat((byte[]) OutboxContexts.row(context, id).get("body")).asString()
				.isEqualTo("{\"order_id\":\"order-7\",\"amount_in_cents\":42}");
			assertThat(OutboxContexts.row(context, id)).containsEntry("content_type", "application/json");
		});
	}

	record Charge(String orderId, int amountInCents) {
	}

}
