package io.retryoutbox.direct;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.retryoutbox.retry.DefaultRetryPolicy;
import io.retryoutbox.retry.RetrySettings;

/**
 * The direct retries of these tests: one destination, "payments", with short backoffs,
 * three attempts and the default policy's error-code rules.
 */
final class PaymentsRetries {

	private static final RetrySettings SETTINGS = new RetrySettings(Duration.ofMillis(20), 2.0, Duration.ofSeconds(1),
			Duration.ofMinutes(10), 0.5, 3, Duration.ofHours(1), List.of("/error/code", "/code"),
			Set.of("RESOURCE_LOCKED"), Set.of("CONFLICT"), true);

	private PaymentsRetries() {
	}

	static DirectRetries create() {
		return new DirectRetries(new DefaultRetryPolicy(SETTINGS), Map.of("payments", Duration.ofSeconds(5)),
				"Idempotency-Key", 4096, Clock.systemUTC());
	}

}
