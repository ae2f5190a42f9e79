package io.retryoutbox.relay;

import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import io.retryoutbox.support.SecretValues;

import org.springframework.util.Assert;
import org.springframework.web.util.UriComponentsBuilder;

/**
 * Where and how the relay sends the messages of one destination.
 *
 * @param baseUrl the base URL that message paths are appended to
 * @param timeout the deadline of one attempt
 * @param headers headers added to every request
 * @param onDead what a dead message does to the later messages of its ordering key
 * @param flow how many requests the destination may have in flight and start per second
 * @param signer signs every request, or {@link WebhookSigner#NONE}
 */
public record RelayDestination(URI baseUrl, Duration timeout, Map<String, String> headers, OnDead onDead, Flow flow,
		WebhookSigner signer) {

	public RelayDestination {
		Assert.notNull(baseUrl, "baseUrl must not be null");
		Assert.isTrue(baseUrl.isAbsolute() && baseUrl.getHost() != null,
				() -> "base-url must be an absolute http(s) URL, was '" + baseUrl + "'");
		Assert.isTrue((!timeout.isNegative() && !timeout.isZero()), () -> "timeout must be positive, was " + timeout);
		headers = Map.copyOf(headers);
		Assert.notNull(onDead, "onDead must not be null");
		Assert.notNull(flow, "flow must not be null");
		Assert.notNull(signer, "signer must not be null");
		if (signer.isSigning()) {
			for (String name : headers.keySet()) {
				Assert.isTrue(WebhookSigner.HEADERS.stream().noneMatch(name::equalsIgnoreCase), () -> "headers." + name
						+ " must not be set with signing.secrets: the relay sets it to sign each request");
			}
		}
	}

	/**
	 * Creates a destination whose requests are not signed.
	 * @param baseUrl the base URL that message paths are appended to
	 * @param timeout the deadline of one attempt
	 * @param headers headers added to every request
	 * @param onDead what a dead message does to the later messages of its ordering key
	 * @param flow how many requests the destination may have in flight and start per
	 * second
	 */
	public RelayDestination(URI baseUrl, Duration timeout, Map<String, String> headers, OnDead onDead, Flow flow) {
		this(baseUrl, timeout, headers, onDead, flow, WebhookSigner.NONE);
	}

	// Configured header values can be credentials; the signer shows no keys.
	@Override
	public String toString() {
		Map<String, String> shown = new LinkedHashMap<>();
		this.headers
			.forEach((name, value) -> shown.put(name, SecretValues.isSecretName(name) ? SecretValues.MASK : value));
		return "RelayDestination[baseUrl=" + this.baseUrl + ", timeout=" + this.timeout + ", headers=" + shown
				+ ", onDead=" + this.onDead + ", flow=" + this.flow + ", signer=" + this.signer + "]";
	}

	/**
	 * The URI of a stored path (already percent-encoded, possibly with a query) under the
	 * base URL. The path always starts with {@code /} right after the base URL's
	 * authority and path, so no path can change its scheme, host or port; a base URL with
	 * a query or fragment is merged by {@link UriComponentsBuilder}. Plain concatenation
	 * otherwise: the builder cost about a twelfth of the relay's poll thread in the
	 * bench's profile.
	 */
	URI resolve(String path) {
		String relative = path.startsWith("/") ? path : "/" + path;
		if (this.baseUrl.getRawQuery() == null && this.baseUrl.getRawFragment() == null) {
			String base = this.baseUrl.toString();
			return URI.create((base.endsWith("/") ? base.substring(0, base.length() - 1) : base) + relative);
		}
		int queryStart = relative.indexOf('?');
		String pathPart = (queryStart >= 0) ? relative.substring(0, queryStart) : relative;
		String query = (queryStart >= 0) ? relative.substring(queryStart + 1) : null;
		return UriComponentsBuilder.fromUri(this.baseUrl).path(pathPart).query(query).build(true).toUri();
	}

	/**
	 * How many requests a destination may have in flight and start per second, and when
	 * it is paused.
	 *
	 * @param adaptive whether the limit adapts to the destination's latency and overload
	 * answers, up to {@code maxConcurrency}; if not, it is {@code maxConcurrency}
	 * @param maxConcurrency the cap on the limit
	 * @param maxRate the largest number of requests started per second,
	 * {@link Double#POSITIVE_INFINITY} for no limit; any one-second window holds at most
	 * its whole part, and below one, requests are at least {@code 1 / maxRate} seconds
	 * apart
	 * @param pauseOnRetryAfter whether a 429 or 503 with {@code Retry-After} pauses the
	 * whole destination until then
	 * @param maxPause the longest such a pause lasts, whatever the header says, and the
	 * longest interval between two probes of an open circuit
	 * @param circuitFailureThreshold the number of consecutive transient failures that
	 * pauses the destination and probes it at a growing interval, {@code 0} for never
	 */
	public record Flow(boolean adaptive, int maxConcurrency, double maxRate, boolean pauseOnRetryAfter,
			Duration maxPause, int circuitFailureThreshold) {

		/**
		 * The defaults: adaptive up to 256, no rate limit, pausing on {@code Retry-After}
		 * for at most 10 minutes, and after 10 consecutive transient failures.
		 */
		public static final Flow DEFAULTS = new Flow(true, 256, Double.POSITIVE_INFINITY, true, Duration.ofMinutes(10),
				10);

		public Flow {
			Assert.isTrue(maxConcurrency > 0, () -> "flow.max-concurrency must be positive, was " + maxConcurrency);
			Assert.isTrue(maxRate > 0 && (maxRate <= DestinationRate.MAX_RATE || Double.isInfinite(maxRate)),
					() -> "flow.max-rate must be positive and at most " + (long) DestinationRate.MAX_RATE + ", was "
							+ maxRate);
			Assert.isTrue(!maxPause.isNegative(), () -> "the longest pause must not be negative, was " + maxPause);
			Assert.isTrue(circuitFailureThreshold >= 0,
					() -> "flow.circuit.failure-threshold must not be negative, was " + circuitFailureThreshold);
		}

	}

}
