package io.retryoutbox.relay;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.StringJoiner;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import org.springframework.http.HttpHeaders;

/**
 * Signs requests as the <a href="https://www.standardwebhooks.com/">Standard Webhooks</a>
 * specification says: {@code webhook-id}, {@code webhook-timestamp} and
 * {@code webhook-signature}, one {@code v1} HMAC-SHA256 signature of
 * {@code {id}.{timestamp}.{body}} per secret, in the order of the secrets. The keys are
 * held only here, and neither {@link #toString()} nor any error shows them.
 */
public final class WebhookSigner {

	/**
	 * The header that carries the message id, the same on every attempt and replay.
	 */
	public static final String ID_HEADER = "webhook-id";

	/**
	 * The header that carries the attempt's time in Unix seconds.
	 */
	public static final String TIMESTAMP_HEADER = "webhook-timestamp";

	/**
	 * The header that carries the space-separated signatures.
	 */
	public static final String SIGNATURE_HEADER = "webhook-signature";

	/**
	 * The headers the signer sets, which nothing else may set on a signed request.
	 */
	public static final List<String> HEADERS = List.of(ID_HEADER, TIMESTAMP_HEADER, SIGNATURE_HEADER);

	/**
	 * A signer without secrets, which signs nothing.
	 */
	public static final WebhookSigner NONE = new WebhookSigner(List.of());

	private static final String SECRET_PREFIX = "whsec_";

	// The specification's bounds on a symmetric secret: 24 bytes (192 bits) to 64 bytes
	// (512 bits).
	private static final int MIN_KEY_BYTES = 24;

	private static final int MAX_KEY_BYTES = 64;

	private static final String ALGORITHM = "HmacSHA256";

	private final List<SecretKeySpec> keys;

	private WebhookSigner(List<SecretKeySpec> keys) {
		this.keys = List.copyOf(keys);
	}

	/**
	 * Creates a signer from secrets in the specification's form, {@code whsec_} followed
	 * by the base64 of the key.
	 * @param secrets the secrets, none for a signer that signs nothing
	 * @return the signer
	 * @throws InvalidSigningSecretException if a secret is not of that form, naming its
	 * index but not its value
	 */
	public static WebhookSigner of(List<String> secrets) {
		List<SecretKeySpec> keys = new ArrayList<>();
		for (int index = 0; index < secrets.size(); index++) {
			keys.add(new SecretKeySpec(decode(index, secrets.get(index)), ALGORITHM));
		}
		return new WebhookSigner(keys);
	}

	private static byte[] decode(int index, String secret) {
		if (!secret.startsWith(SECRET_PREFIX)) {
			throw new InvalidSigningSecretException(index, "must start with '" + SECRET_PREFIX + "'");
		}
		byte[] key;
		try {
			key = Base64.getDecoder().decode(secret.substring(SECRET_PREFIX.length()));
		}
		catch (IllegalArgumentException ex) {
			// The decoder's message quotes the offending character, a part of the secret.
			throw new InvalidSigningSecretException(index,
					"must be '" + SECRET_PREFIX + "' followed by base64 (A-Z, a-z, 0-9, + and /, = padding)");
		}
		if (key.length < MIN_KEY_BYTES || key.length > MAX_KEY_BYTES) {
			throw new InvalidSigningSecretException(index, "must hold a key of " + MIN_KEY_BYTES + " to "
					+ MAX_KEY_BYTES + " bytes after '" + SECRET_PREFIX + "', had " + key.length);
		}
		return key;
	}

	/**
	 * Whether there are secrets to sign with.
	 * @return whether requests are signed
	 */
	public boolean isSigning() {
		return !this.keys.isEmpty();
	}

	/**
	 * The value of {@code webhook-signature}: {@code v1,} and the base64 HMAC-SHA256 of
	 * {@code {id}.{timestamp}.{body}} per secret, space-separated, in the order of the
	 * secrets.
	 * @param id the message id
	 * @param timestamp the attempt's time in Unix seconds
	 * @param body the body exactly as sent, empty for none
	 * @return the signatures, empty if there are no secrets
	 */
	public String signature(String id, long timestamp, byte[] body) {
		byte[] prefix = (id + "." + timestamp + ".").getBytes(StandardCharsets.UTF_8);
		StringJoiner signatures = new StringJoiner(" ");
		for (SecretKeySpec key : this.keys) {
			signatures.add("v1," + Base64.getEncoder().encodeToString(hmac(key, prefix, body)));
		}
		return signatures.toString();
	}

	/**
	 * Sets the three headers, replacing any of them already set in any case; does nothing
	 * without secrets.
	 * @param headers the request's headers
	 * @param id the message id
	 * @param timestamp the attempt's time in Unix seconds
	 * @param body the body exactly as sent, empty for none
	 */
	void sign(HttpHeaders headers, String id, long timestamp, byte[] body) {
		if (!isSigning()) {
			return;
		}
		headers.set(ID_HEADER, id);
		headers.set(TIMESTAMP_HEADER, Long.toString(timestamp));
		headers.set(SIGNATURE_HEADER, signature(id, timestamp, body));
	}

	private static byte[] hmac(SecretKeySpec key, byte[] prefix, byte[] body) {
		try {
			Mac mac = Mac.getInstance(ALGORITHM);
			mac.init(key);
			mac.update(prefix);
			return mac.doFinal(body);
		}
		catch (GeneralSecurityException ex) {
			// Every Java platform must provide HmacSHA256.
			throw new IllegalStateException("Could not compute " + ALGORITHM, ex);
		}
	}

	@Override
	public String toString() {
		return "WebhookSigner[" + this.keys.size() + " secrets]";
	}

}
