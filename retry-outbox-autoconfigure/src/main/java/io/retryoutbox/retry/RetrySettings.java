package io.retryoutbox.retry;

import java.time.Duration;
import java.util.List;
import java.util.Set;

import org.springframework.util.Assert;

/**
 * The tuning of {@link DefaultRetryPolicy} for one destination.
 *
 * @param delay the delay before the second attempt, the start of the backoff ramp
 * @param multiplier the factor the ramp grows by per attempt
 * @param maxDelay the cap on the ramp
 * @param retryAfterMax the cap on a {@code Retry-After} header's delay
 * @param jitter the largest share of the wait that is added on top of it at random
 * @param maxAttempts the number of attempts after which a transient failure is final
 * @param timeout the total delivery deadline, counted from enqueue
 * @param errorCodePointers JSON pointers into an error body where the error code is
 * looked for, in order
 * @param transientErrorCodes the 409 error codes that are retried
 * @param terminalErrorCodes the 409 error codes that are final
 * @param retryConflictWithoutCode whether a 409 without a known error code is retried
 */
public record RetrySettings(Duration delay, double multiplier, Duration maxDelay, Duration retryAfterMax, double jitter,
		int maxAttempts, Duration timeout, List<String> errorCodePointers, Set<String> transientErrorCodes,
		Set<String> terminalErrorCodes, boolean retryConflictWithoutCode) {

	/**
	 * The defaults: 1s ramp start, x2, capped at 10m; Retry-After capped at 10m; +50%
	 * jitter; 20 attempts within 24h; 409 codes read from {@code /error/code} then
	 * {@code /code}, {@code RESOURCE_LOCKED} retried, {@code CONFLICT} final, no code
	 * retried.
	 */
	public static final RetrySettings DEFAULTS = new RetrySettings(Duration.ofSeconds(1), 2.0, Duration.ofMinutes(10),
			Duration.ofMinutes(10), 0.5, 20, Duration.ofHours(24), List.of("/error/code", "/code"),
			Set.of("RESOURCE_LOCKED"), Set.of("CONFLICT"), true);

	public RetrySettings {
		Assert.isTrue(!delay.isNegative(), () -> "retry delay must not be negative, was " + delay);
		Assert.isTrue(multiplier >= 1.0, () -> "retry multiplier must be at least 1.0, was " + multiplier);
		Assert.isTrue(!maxDelay.isNegative(), () -> "retry max-delay must not be negative, was " + maxDelay);
		Assert.isTrue(!retryAfterMax.isNegative(),
				() -> "retry retry-after-max must not be negative, was " + retryAfterMax);
		Assert.isTrue(jitter >= 0.0, () -> "retry jitter must not be negative, was " + jitter);
		Assert.isTrue(maxAttempts >= 1, () -> "retry max-attempts must be at least 1, was " + maxAttempts);
		Assert.isTrue(!timeout.isNegative() && !timeout.isZero(),
				() -> "retry timeout must be positive, was " + timeout);
		errorCodePointers = List.copyOf(errorCodePointers);
		transientErrorCodes = Set.copyOf(transientErrorCodes);
		terminalErrorCodes = Set.copyOf(terminalErrorCodes);
	}

}
