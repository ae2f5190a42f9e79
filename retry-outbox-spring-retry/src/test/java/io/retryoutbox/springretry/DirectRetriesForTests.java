package io.retryoutbox.springretry;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.retryoutbox.direct.DirectRetries;
import io.retryoutbox.retry.DefaultRetryPolicy;
import io.retryoutbox.retry.RetrySettings;

/**
 * The direct retries of one destination, {@code payments}, with a short ramp and a budget
 * of three attempts, as the auto-configuration would build them from properties.
 */
final class DirectRetriesForTests {

	private static final RetrySettings SETTINGS = new RetrySettings(Duration.ofMillis(20), 2.0, Duration.ofSeconds(1),
			Duration.ofMinutes(10), 0.5, 3, Duration.ofHours(1), List.of("/error/code", "/code"),
			Set.of("RESOURCE_LOCKED"), Set.of("CONFLICT"), true);

	private DirectRetriesForTests() {
	}

	static DirectRetries payments() {
		return new DirectRetries(new DefaultRetryPolicy(SETTINGS), Map.of("payments", Duration.ofSeconds(5)),
				"Idempotency-Key", 4096, Clock.systemUTC());
	}

}
