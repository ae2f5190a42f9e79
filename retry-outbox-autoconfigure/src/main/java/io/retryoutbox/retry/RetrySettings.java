package io.retryoutbox.retry;

import java.time.Duration;
import java.util.List;
import java.util.Set;

import tools.jackson.core.JsonPointer;

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
	 * The longest duration a setting accepts: 100 years. Far beyond any sane delivery
	 * deadline, and far enough inside the range of {@link java.time.Instant} and of
	 * PostgreSQL's {@code timestamptz} that no wait or deadline computed from the
	 * settings can overflow either, even with the largest jitter added.
	 */
	private static final Duration MAX_DURATION = Duration.ofDays(36500);

	private static final String DURATION_BOUNDS = "between 0s and 36500d";

	/**
	 * The largest multiplier accepted. The ramp is capped at {@code maxDelay} however
	 * fast it grows, so a larger one would not overflow; it would only be meaningless.
	 */
	private static final double MAX_MULTIPLIER = 100.0;

	/**
	 * The largest jitter accepted: a random wait of up to ten times the computed one
	 * added on top of it.
	 */
	private static final double MAX_JITTER = 10.0;

	/**
	 * The defaults: 1s ramp start, x2, capped at 10m; Retry-After capped at 10m; +50%
	 * jitter; 20 attempts within 24h; 409 codes read from {@code /error/code} then
	 * {@code /code}, {@code RESOURCE_LOCKED} retried, {@code CONFLICT} final, no code
	 * retried.
	 */
	public static final RetrySettings DEFAULTS = new RetrySettings(Duration.ofSeconds(1), 2.0, Duration.ofMinutes(10),
			Duration.ofMinutes(10), 0.5, 20, Duration.ofHours(24), List.of("/error/code", "/code"),
			Set.of("RESOURCE_LOCKED"), Set.of("CONFLICT"), true);

	/**
	 * Creates settings, refusing a value that is meaningless or would overflow the next
	 * attempt's time.
	 * @throws InvalidRetrySettingException if a value is refused
	 */
	public RetrySettings {
		check("delay", delay, isBounded(delay), DURATION_BOUNDS);
		check("multiplier", multiplier, multiplier >= 1.0 && multiplier <= MAX_MULTIPLIER,
				"between 1.0 and " + MAX_MULTIPLIER);
		check("max-delay", maxDelay, isBounded(maxDelay), DURATION_BOUNDS);
		check("retry-after-max", retryAfterMax, isBounded(retryAfterMax), DURATION_BOUNDS);
		check("jitter", jitter, jitter >= 0.0 && jitter <= MAX_JITTER, "between 0.0 and " + MAX_JITTER);
		check("max-attempts", maxAttempts, maxAttempts >= 1, "at least 1");
		check("timeout", timeout, !timeout.isZero() && isBounded(timeout), "longer than 0s and at most 36500d");
		check("error-code-pointers", errorCodePointers,
				errorCodePointers.stream().allMatch(RetrySettings::isJsonPointer), "JSON pointers such as /error/code");
		errorCodePointers = List.copyOf(errorCodePointers);
		transientErrorCodes = Set.copyOf(transientErrorCodes);
		terminalErrorCodes = Set.copyOf(terminalErrorCodes);
	}

	private static void check(String setting, Object value, boolean valid, String requirement) {
		if (!valid) {
			throw new InvalidRetrySettingException(setting, value, requirement);
		}
	}

	private static boolean isBounded(Duration duration) {
		return !duration.isNegative() && duration.compareTo(MAX_DURATION) <= 0;
	}

	private static boolean isJsonPointer(String pointer) {
		try {
			JsonPointer.compile(pointer);
			return true;
		}
		catch (IllegalArgumentException ex) {
			return false;
		}
	}

}
