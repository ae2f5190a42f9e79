package io.retryoutbox.relay;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.http.HttpHeaders;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for {@link WebhookSigner}, against the Standard Webhooks specification's
 * published test vector and values computed apart from this code.
 */
class WebhookSignerTests {

	private static final String SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

	private static final String ID = "msg_p5jXN8AQM9LWM0D4loKWxJek";

	private static final long TIMESTAMP = 1614265330;

	private static final byte[] PAYLOAD = "{\"test\": 2432232314}".getBytes(StandardCharsets.UTF_8);

	// The key bytes 1 to 32; its signatures below were computed with Python's hmac
	// module.
	private static final String OTHER_SECRET = "whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=";

	@Test
	void reproducesTheSpecificationsPublishedTestVector() {
		assertThat(WebhookSigner.of(List.of(SECRET)).signature(ID, TIMESTAMP, PAYLOAD))
			.isEqualTo("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
	}

	@Test
	void signsWithEverySecretSpaceSeparatedInTheOrderOfTheSecrets() {
		assertThat(WebhookSigner.of(List.of(SECRET, OTHER_SECRET)).signature(ID, TIMESTAMP, PAYLOAD)).isEqualTo(
				"v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE= v1,frM35V2Z51bxs4v81I6TpLnscXkhXtKLP/7WPYVyj3A=");
		assertThat(WebhookSigner.of(List.of(OTHER_SECRET, SECRET)).signature(ID, TIMESTAMP, PAYLOAD)).isEqualTo(
				"v1,frM35V2Z51bxs4v81I6TpLnscXkhXtKLP/7WPYVyj3A= v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
	}

	@Test
	void signsAnEmptyBodyAsAnEmptyPayload() {
		assertThat(WebhookSigner.of(List.of(SECRET, OTHER_SECRET)).signature(ID, TIMESTAMP, new byte[0])).isEqualTo(
				"v1,v48jdbgvh29KJz2Qc+ghw8G6vG3nAKnujWBg8oM/62A= v1,DFzYOpJKxbf4l8vL3qbxOHQtXdZf9metwVjiVoMqeQQ=");
	}

	@Test
	void setsTheThreeHeadersOverAnyAlreadySetInAnyCase() {
		HttpHeaders headers = new HttpHeaders();
		headers.add("Webhook-Id", "forged");
		headers.add("WEBHOOK-TIMESTAMP", "1");
		headers.add("Webhook-Signature", "v1,forged");
		WebhookSigner.of(List.of(SECRET)).sign(headers, ID, TIMESTAMP, PAYLOAD);
		assertThat(headers.get("webhook-id")).containsExactly(ID);
		assertThat(headers.get("webhook-timestamp")).containsExactly("1614265330");
		assertThat(headers.get("webhook-signature")).containsExactly("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
		assertThat(headers.headerNames()).hasSize(3);
	}

	@Test
	void signsNothingWithoutSecrets() {
		HttpHeaders headers = new HttpHeaders();
		WebhookSigner.of(List.of()).sign(headers, ID, TIMESTAMP, PAYLOAD);
		assertThat(headers.isEmpty()).isTrue();
		assertThat(WebhookSigner.NONE.isSigning()).isFalse();
	}

	@Test
	void showsNoSecretInItsStringOrInTheDestinations() {
		WebhookSigner signer = WebhookSigner.of(List.of(SECRET, OTHER_SECRET));
		assertThat(signer).hasToString("WebhookSigner[2 secrets]");
		RelayDestination destination = new RelayDestination(URI.create("http://localhost:9"), Duration.ofSeconds(1),
				Map.of("Authorization", "Bearer configured"), OnDead.SKIP, RelayDestination.Flow.DEFAULTS, signer);
		assertThat(destination.toString()).doesNotContain("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
			.doesNotContain("AQIDBAUGBwgJ")
			.doesNotContain("Bearer configured")
			.contains("signer=WebhookSigner[2 secrets]");
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|',
			value = { "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw | must start with 'whsec_'",
					"WHSEC_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw | must start with 'whsec_'",
					"whsec_MfKQ9r8G-KYqrTwjUPD8ILPZIo2LaLaSw | must be 'whsec_' followed by base64",
					"whsec_MfKQ9r8GKYqr TwjUPD8ILPZIo2LaLaSw | must be 'whsec_' followed by base64",
					"whsec_ | must hold a key of 24 to 64 bytes after 'whsec_', had 0",
					"whsec_c2hvcnQ= | must hold a key of 24 to 64 bytes after 'whsec_', had 5" })
	void refusesASecretNamingItsIndexAndTheProblemButNotTheSecret(String secret, String reason) {
		assertThatExceptionOfType(InvalidSigningSecretException.class)
			.isThrownBy(() -> WebhookSigner.of(List.of(SECRET, secret)))
			.satisfies((ex) -> {
				assertThat(ex.getIndex()).isEqualTo(1);
				assertThat(ex.getReason()).startsWith(reason);
				assertThat(ex.getMessage()).startsWith("Signing secret [1] " + reason);
				String key = secret.substring(secret.indexOf('_') + 1);
				if (!key.isEmpty()) {
					assertThat(ex.getMessage()).doesNotContain(key.substring(0, 8));
				}
			});
	}

	@Test
	void refusesAKeyLongerThanTheSpecificationAllows() {
		String longKey = "whsec_" + Base64.getEncoder().encodeToString(new byte[65]);
		assertThatExceptionOfType(InvalidSigningSecretException.class)
			.isThrownBy(() -> WebhookSigner.of(List.of(longKey)))
			.withMessage("Signing secret [0] must hold a key of 24 to 64 bytes after 'whsec_', had 65");
	}

}
