package io.retryoutbox.retry;

import java.time.Duration;
import java.util.random.RandomGenerator;

import io.retryoutbox.RetryDecision.DelayReason;
import org.jspecify.annotations.Nullable;

/**
 * The wait before a retry: the exponential ramp, floored by a {@code Retry-After} header,
 * then lengthened by jitter.
 * <p>
 * Jitter is only ever added, so a stated {@code Retry-After} is never undercut, and it is
 * added above the {@code maxDelay} cap on purpose: clamping the total would land every
 * late attempt on exactly the cap and re-synchronize the callers that most need
 * spreading.
 */
final class Backoff {

	private Backoff() {
	}

	static Wait compute(RetrySettings settings, int attempt, @Nullable Duration retryAfter, RandomGenerator random) {
		Duration ramp = ramp(settings, attempt);
		Duration floor = (retryAfter != null) ? min(retryAfter, settings.retryAfterMax()) : Duration.ZERO;
		boolean retryAfterLonger = floor.compareTo(ramp) > 0;
		Duration wait = retryAfterLonger ? floor : ramp;
		Duration jitter = Duration.ofMillis((long) (millis(wait) * settings.jitter() * random.nextDouble()));
		return new Wait(wait.plus(jitter), retryAfterLonger ? DelayReason.RETRY_AFTER : DelayReason.BACKOFF);
	}

	static Duration ramp(RetrySettings settings, int attempt) {
		if (settings.delay().isZero()) {
			return Duration.ZERO;
		}
		double millis = millis(settings.delay()) * Math.pow(settings.multiplier(), Math.max(0, attempt - 1));
		return (millis < millis(settings.maxDelay())) ? Duration.ofMillis((long) millis) : settings.maxDelay();
	}

	private static Duration min(Duration a, Duration b) {
		return (a.compareTo(b) <= 0) ? a : b;
	}

	private static double millis(Duration duration) {
		return duration.getSeconds() * 1000.0 + duration.getNano() / 1_000_000.0;
	}

	/**
	 * A computed wait.
	 *
	 * @param duration how long to wait, jitter included
	 * @param reason what set the wait
	 */
	record Wait(Duration duration, DelayReason reason) {

	}

}
