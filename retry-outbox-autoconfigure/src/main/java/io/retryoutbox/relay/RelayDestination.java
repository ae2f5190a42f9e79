package io.retryoutbox.relay;

import java.net.URI;
import java.time.Duration;
import java.util.Map;

import org.springframework.util.Assert;

/**
 * Where and how the relay sends the messages of one destination.
 *
 * @param baseUrl the base URL that message paths are appended to
 * @param timeout the deadline of one attempt
 * @param headers headers added to every request
 * @param onDead what a dead message does to the later messages of its ordering key
 * @param flow how many requests the destination may have in flight and start per second
 */
public record RelayDestination(URI baseUrl, Duration timeout, Map<String, String> headers, OnDead onDead, Flow flow) {

	public RelayDestination {
		Assert.notNull(baseUrl, "baseUrl must not be null");
		Assert.isTrue(baseUrl.isAbsolute() && baseUrl.getHost() != null,
				() -> "base-url must be an absolute http(s) URL, was '" + baseUrl + "'");
		Assert.isTrue((!timeout.isNegative() && !timeout.isZero()), () -> "timeout must be positive, was " + timeout);
		headers = Map.copyOf(headers);
		Assert.notNull(onDead, "onDead must not be null");
		Assert.notNull(flow, "flow must not be null");
	}

	URI resolve(String path) {
		String base = this.baseUrl.toString();
		return URI.create(base.endsWith("/") ? base.substring(0, base.length() - 1) + path : base + path);
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
