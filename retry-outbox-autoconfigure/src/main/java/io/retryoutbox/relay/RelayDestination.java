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
 */
public record RelayDestination(URI baseUrl, Duration timeout, Map<String, String> headers, OnDead onDead) {

	public RelayDestination {
		Assert.notNull(baseUrl, "baseUrl must not be null");
		Assert.isTrue(baseUrl.isAbsolute() && baseUrl.getHost() != null,
				() -> "base-url must be an absolute http(s) URL, was '" + baseUrl + "'");
		Assert.isTrue((!timeout.isNegative() && !timeout.isZero()), () -> "timeout must be positive, was " + timeout);
		headers = Map.copyOf(headers);
		Assert.notNull(onDead, "onDead must not be null");
	}

	URI resolve(String path) {
		String base = this.baseUrl.toString();
		return URI.create(base.endsWith("/") ? base.substring(0, base.length() - 1) + path : base + path);
	}

}
