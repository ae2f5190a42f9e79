package io.retryoutbox;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.UUID;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import io.retryoutbox.actuate.OutboxEndpoint;
import io.retryoutbox.actuate.autoconfigure.OutboxEndpointAutoConfiguration;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.TestDatabase;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Standard Webhooks signing end to end: a real HTTP server receives every attempt, and a
 * receiver written here from the specification, not from the relay's signer, verifies
 * each one.
 */
class WebhookSigningIntegrationTests {

	private static final String CURRENT_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

	private static final String PREVIOUS_SECRET = "whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=";

	private static final List<String> SECRETS = List.of(CURRENT_SECRET, PREVIOUS_SECRET);

	// The specification's tolerance for a timestamp, as a receiver checks it.
	private static final long TOLERANCE_SECONDS = 5 * 60;

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private final String jdbcUrl = TestDatabase.createDatabase();

	private ApplicationContextRunner runner() {
		return OutboxContexts.runner(this.jdbcUrl)
			.withConfiguration(
					AutoConfigurations.of(EndpointAutoConfiguration.class, OutboxEndpointAutoConfiguration.class))
			.withPropertyValues("management.endpoints.web.exposure.include=outbox",
					"management.endpoint.outbox.show-values=always",
					"retry-outbox.destinations.hooks.base-url=" + this.destination.server().url("/hooks"),
					"retry-outbox.destinations.hooks.signing.secrets[0]=" + CURRENT_SECRET,
					"retry-outbox.destinations.hooks.signing.secrets[1]=" + PREVIOUS_SECRET,
					// More than a second apart, so that each attempt has its own
					// timestamp.
					"retry-outbox.retry.delay=1100ms", "retry-outbox.retry.multiplier=1",
					"retry-outbox.retry.jitter=0");
	}

	private static UUID send(AssertableApplicationContext context, OutboxRequest request) {
		return OutboxContexts.transactions(context).execute((status) -> context.getBean(Outbox.class).send(request));
	}

	private static OutboxRequest event() {
		return OutboxRequest.post("hooks", "/events").jsonBody(new Event("invoice.paid", "in_1")).build();
	}

	private static void awaitStatus(AssertableApplicationContext context, UUID id, String status) {
		await().atMost(Duration.ofSeconds(30))
			.untilAsserted(() -> assertThat(OutboxContexts.row(context, id)).containsEntry("status", status));
	}

	@Test
	void everyAttemptOfARetriedMessageCarriesItsIdAFreshTimestampAndASignaturePerSecret() {
		this.destination.dispatcher()
			.answer("/hooks/events", new MockResponse.Builder().code(503).build(),
					new MockResponse.Builder().code(503).build(), new MockResponse.Builder().code(200).build());
		long start = Instant.now().getEpochSecond();
		runner().run((context) -> {
			UUID id = send(context, event());
			awaitStatus(context, id, "DELIVERED");
			long end = Instant.now().getEpochSecond();
			List<RecordedRequest> requests = this.destination.dispatcher().requests();
			assertThat(requests).hasSize(3);
			List<Long> timestamps = new ArrayList<>();
			for (RecordedRequest request : requests) {
				assertThat(request.getHeaders().values("webhook-id")).containsExactly(id.toString());
				assertThat(request.getBody().string(StandardCharsets.UTF_8))
					.isEqualTo("{\"type\":\"invoice.paid\",\"invoice\":\"in_1\"}");
				timestamps.add(Receiver.verify(request, SECRETS));
			}
			assertThat(timestamps).isSorted().doesNotHaveDuplicates().allSatisfy((timestamp) -> {
				assertThat(timestamp).isBetween(start, end);
			});
		});
	}

	@Test
	void aReceiverWithOnlyOneOfTheSecretsAcceptsEveryRequest() {
		runner().run((context) -> {
			UUID id = send(context, event());
			awaitStatus(context, id, "DELIVERED");
			RecordedRequest request = this.destination.dispatcher().requests().get(0);
			assertThat(Receiver.accepts(request, CURRENT_SECRET)).isTrue();
			assertThat(Receiver.accepts(request, PREVIOUS_SECRET)).isTrue();
			assertThat(Receiver.accepts(request, "whsec_" + Base64.getEncoder().encodeToString(new byte[32])))
				.isFalse();
		});
	}

	@Test
	void aReplayedDeadMessageKeepsItsWebhookId() {
		this.destination.dispatcher()
			.answer("/hooks/events", new MockResponse.Builder().code(400).build(),
					new MockResponse.Builder().code(200).build());
		runner().run((context) -> {
			UUID id = send(context, event());
			awaitStatus(context, id, "DEAD");
			context.getBean(OutboxEndpoint.class)
				.operate("replay", id, null, null, null, null, null, SecurityContext.NONE);
			awaitStatus(context, id, "DELIVERED");
			List<RecordedRequest> requests = this.destination.dispatcher().requests();
			assertThat(requests).hasSize(2);
			for (RecordedRequest request : requests) {
				assertThat(request.getHeaders().values("webhook-id")).containsExactly(id.toString());
				Receiver.verify(request, SECRETS);
			}
		});
	}

	@Test
	void theWebhookIdIsTheMessageIdAlsoWhenTheCallerSetsTheIdempotencyKey() {
		runner().run((context) -> {
			UUID id = send(context,
					OutboxRequest.post("hooks", "/events")
						.header("Idempotency-Key", "invoice-in_1-paid")
						.jsonBody(new Event("invoice.paid", "in_1"))
						.build());
			awaitStatus(context, id, "DELIVERED");
			RecordedRequest request = this.destination.dispatcher().requests().get(0);
			assertThat(request.getHeaders().values("Idempotency-Key")).containsExactly("invoice-in_1-paid");
			assertThat(request.getHeaders().values("webhook-id")).containsExactly(id.toString());
			Receiver.verify(request, SECRETS);
		});
	}

	@Test
	void signsARequestWithoutABodyOverAnEmptyPayload() {
		runner().run((context) -> {
			UUID id = send(context, OutboxRequest.delete("hooks", "/events/in_1").build());
			awaitStatus(context, id, "DELIVERED");
			RecordedRequest request = this.destination.dispatcher().requests().get(0);
			assertThat(body(request)).isEmpty();
			Receiver.verify(request, SECRETS);
		});
	}

	@Test
	void aRowsOwnSignatureHeadersNeverReachTheReceiver() {
		UUID[] id = new UUID[1];
		runner().withPropertyValues("retry-outbox.relay.enabled=false").run((context) -> {
			id[0] = send(context, event());
			// Edited after enqueue, which refuses these headers.
			OutboxContexts.jdbc(context)
				.sql("UPDATE retry_outbox_message SET headers = ?::jsonb WHERE id = ?")
				.params("{\"Webhook-Id\":[\"forged\"],\"WEBHOOK-TIMESTAMP\":[\"1\"],"
						+ "\"webhook-signature\":[\"v1,forged\"]}", id[0])
				.update();
		});
		runner().run((context) -> {
			awaitStatus(context, id[0], "DELIVERED");
			RecordedRequest request = this.destination.dispatcher().requests().get(0);
			assertThat(request.getHeaders().values("webhook-id")).containsExactly(id[0].toString());
			assertThat(request.getHeaders().values("webhook-timestamp")).hasSize(1);
			assertThat(request.getHeaders().values("webhook-signature")).hasSize(1);
			Receiver.verify(request, SECRETS);
		});
	}

	@Test
	void theSecretsAreNeitherStoredNorShownByTheEndpoint() {
		this.destination.dispatcher()
			.answer("/hooks/events", new MockResponse.Builder().code(503).build(),
					new MockResponse.Builder().code(200).build());
		runner().run((context) -> {
			UUID id = send(context, event());
			awaitStatus(context, id, "DELIVERED");
			String signature = this.destination.dispatcher().requests().get(0).getHeaders().get("webhook-signature");
			assertThat(OutboxContexts.jdbc(context)
				.sql("SELECT m::text FROM retry_outbox_message m WHERE id = ?")
				.param(id)
				.query(String.class)
				.single()).doesNotContainIgnoringCase("webhook-").satisfies(this::containsNoSecret);
			assertThat(OutboxContexts.jdbc(context)
				.sql("SELECT coalesce(string_agg(a::text, ' '), '') FROM retry_outbox_attempt a WHERE message_id = ?")
				.param(id)
				.query(String.class)
				.single()).doesNotContain(signature).satisfies(this::containsNoSecret);
			OutboxEndpoint endpoint = context.getBean(OutboxEndpoint.class);
			JsonMapper json = context.getBean(JsonMapper.class);
			String shown = json.writeValueAsString(endpoint.summary())
					+ json.writeValueAsString(endpoint.message("messages", id, SecurityContext.NONE))
					+ json.writeValueAsString(endpoint.messages("messages", "DELIVERED", null, null, null, null, null,
							null, SecurityContext.NONE));
			assertThat(shown).contains(id.toString())
				.doesNotContainIgnoringCase("webhook-")
				.satisfies(this::containsNoSecret);
		});
	}

	private static byte[] body(RecordedRequest request) {
		return (request.getBody() != null) ? request.getBody().toByteArray() : new byte[0];
	}

	private void containsNoSecret(String text) {
		for (String secret : SECRETS) {
			assertThat(text).doesNotContain(secret.substring("whsec_".length()));
		}
	}

	record Event(String type, String invoice) {

	}

	/**
	 * A receiver as the Standard Webhooks specification describes it: the key is the
	 * base64 after {@code whsec_}, the signed content {@code {id}.{timestamp}.{body}}
	 * over the body bytes received, the signature header a space-separated list of
	 * {@code v1,<base64 HMAC-SHA256>}, compared in constant time.
	 */
	static final class Receiver {

		/**
		 * Asserts that the request carries one valid signature per secret, in their
		 * order, and a timestamp within the specification's tolerance.
		 * @return the timestamp
		 */
		static long verify(RecordedRequest request, List<String> secrets) {
			String[] signatures = request.getHeaders().get("webhook-signature").split(" ");
			assertThat(signatures).hasSize(secrets.size());
			for (int i = 0; i < secrets.size(); i++) {
				assertThat(MessageDigest.isEqual(signatures[i].getBytes(StandardCharsets.US_ASCII),
						expected(request, secrets.get(i)).getBytes(StandardCharsets.US_ASCII)))
					.as("signature %d of %s", i, request.getHeaders().get("webhook-signature"))
					.isTrue();
			}
			long timestamp = Long.parseLong(request.getHeaders().get("webhook-timestamp"));
			assertThat(Math.abs(Instant.now().getEpochSecond() - timestamp)).isLessThanOrEqualTo(TOLERANCE_SECONDS);
			return timestamp;
		}

		/**
		 * Whether any of the request's signatures is valid for the secret.
		 */
		static boolean accepts(RecordedRequest request, String secret) {
			byte[] expected = expected(request, secret).getBytes(StandardCharsets.US_ASCII);
			for (String signature : request.getHeaders().get("webhook-signature").split(" ")) {
				if (MessageDigest.isEqual(signature.getBytes(StandardCharsets.US_ASCII), expected)) {
					return true;
				}
			}
			return false;
		}

		private static String expected(RecordedRequest request, String secret) {
			byte[] key = Base64.getDecoder().decode(secret.substring("whsec_".length()));
			String prefix = request.getHeaders().get("webhook-id") + "." + request.getHeaders().get("webhook-timestamp")
					+ ".";
			try {
				Mac mac = Mac.getInstance("HmacSHA256");
				mac.init(new SecretKeySpec(key, "HmacSHA256"));
				mac.update(prefix.getBytes(StandardCharsets.UTF_8));
				return "v1," + Base64.getEncoder().encodeToString(mac.doFinal(body(request)));
			}
			catch (GeneralSecurityException ex) {
				throw new IllegalStateException(ex);
			}
		}

	}

}
