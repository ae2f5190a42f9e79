package io.retryoutbox.retry;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.random.RandomGenerator;

import io.retryoutbox.DeliveryAttempt;
import io.retryoutbox.DeliveryOutcome;
import io.retryoutbox.RetryDecision;
import io.retryoutbox.RetryDecision.DeadReason;
import io.retryoutbox.RetryPolicy;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.NestedExceptionUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.util.Assert;

/**
 * The default {@link RetryPolicy}: 2xx is delivered; a {@link TransientStatus} (408, 425,
 * 429, 500, 502, 503, 504) and every failure to get a response are retried on an
 * exponential ramp with jitter, floored by {@code Retry-After}; a 409 is classified by
 * the error code in its body; any other status is final. A retry that would exceed the
 * attempt budget or the deadline is final too; the deadline counts from enqueue, without
 * the time the destination was paused ({@link DeliveryAttempt#pausedFor()}).
 */
public final class DefaultRetryPolicy implements RetryPolicy {

	private static final int CONFLICT = 409;

	private static final int MAX_DETAIL_LENGTH = 200;

	private final RetrySettings defaults;

	private final Map<String, RetrySettings> perDestination;

	private final ErrorCodeReader errorCodes;

	private final Clock clock;

	private final RandomGenerator random;

	/**
	 * Creates a policy with the same settings for every destination, the shared
	 * {@link JsonMapper}, the UTC system clock and a thread-safe random source.
	 * @param defaults the settings
	 */
	public DefaultRetryPolicy(RetrySettings defaults) {
		this(defaults, Map.of(), JsonMapper.shared(), Clock.systemUTC(), () -> ThreadLocalRandom.current().nextLong());
	}

	/**
	 * Creates a policy.
	 * @param defaults the settings of a destination not in {@code perDestination}
	 * @param perDestination the settings by destination name
	 * @param jsonMapper the mapper that reads error bodies
	 * @param clock the clock that retries are scheduled from
	 * @param random the source of jitter, safe for concurrent use if the policy is shared
	 */
	public DefaultRetryPolicy(RetrySettings defaults, Map<String, RetrySettings> perDestination, JsonMapper jsonMapper,
			Clock clock, RandomGenerator random) {
		Assert.notNull(defaults, "'defaults' must not be null");
		Assert.notNull(perDestination, "'perDestination' must not be null");
		Assert.notNull(jsonMapper, "'jsonMapper' must not be null");
		Assert.notNull(clock, "'clock' must not be null");
		Assert.notNull(random, "'random' must not be null");
		this.defaults = defaults;
		this.perDestination = Map.copyOf(perDestination);
		this.errorCodes = new ErrorCodeReader(jsonMapper);
		this.clock = clock;
		this.random = random;
	}

	@Override
	public RetryDecision decide(DeliveryAttempt attempt, DeliveryOutcome outcome) {
		RetrySettings settings = this.perDestination.getOrDefault(attempt.destination(), this.defaults);
		Instant now = this.clock.instant();
		if (outcome instanceof DeliveryOutcome.Response response) {
			return decide(attempt, response, settings, now);
		}
		Throwable cause = ((DeliveryOutcome.Failure) outcome).cause();
		return retry(attempt, settings, now, null, describe(cause), null);
	}

	private RetryDecision decide(DeliveryAttempt attempt, DeliveryOutcome.Response response, RetrySettings settings,
			Instant now) {
		int status = response.statusCode();
		if (status >= 200 && status < 300) {
			return new RetryDecision.Delivered();
		}
		String errorCode = this.errorCodes.read(response.body(), settings.errorCodePointers());
		String description = describe(status, errorCode);
		if (!isTransient(status, errorCode, settings)) {
			return new RetryDecision.Dead(DeadReason.TERMINAL_STATUS, description, errorCode);
		}
		Duration retryAfter = RetryAfter.parse(response.headers().getFirst(HttpHeaders.RETRY_AFTER), now).orElse(null);
		return retry(attempt, settings, now, retryAfter, description, errorCode);
	}

	private RetryDecision retry(DeliveryAttempt attempt, RetrySettings settings, Instant now,
			@Nullable Duration retryAfter, String last, @Nullable String errorCode) {
		if (attempt.attempt() >= settings.maxAttempts()) {
			String detail = attempt.attempt() + " attempts made; last: " + last;
			return new RetryDecision.Dead(DeadReason.ATTEMPTS_EXHAUSTED, shorten(detail), errorCode);
		}
		Backoff.Wait wait = Backoff.compute(settings, attempt.attempt(), retryAfter, this.random);
		Instant nextAttemptAt = now.plus(wait.duration());
		// The time its destination was paused does not count: a downstream that was down
		// for hours must not turn the messages that waited for it into dead letters.
		if (attempt.unpausedAge(nextAttemptAt).compareTo(settings.timeout()) > 0) {
			String detail = "next attempt would be past the " + settings.timeout() + " deadline; last: " + last;
			return new RetryDecision.Dead(DeadReason.DEADLINE_EXCEEDED, shorten(detail), errorCode);
		}
		return new RetryDecision.Retry(nextAttemptAt, wait.reason(), errorCode);
	}

	private static boolean isTransient(int status, @Nullable String errorCode, RetrySettings settings) {
		if (status != CONFLICT) {
			return TransientStatus.isTransient(status);
		}
		if (errorCode != null && settings.transientErrorCodes().contains(errorCode)) {
			return true;
		}
		if (errorCode != null && settings.terminalErrorCodes().contains(errorCode)) {
			return false;
		}
		return settings.retryConflictWithoutCode();
	}

	private static String describe(int status, @Nullable String errorCode) {
		return shorten("HTTP " + status + ((errorCode != null) ? " " + errorCode : ""));
	}

	/**
	 * Describes a failure by its most specific cause, which names what went wrong
	 * ({@code ConnectException: Connection refused}) rather than the client's wrapper,
	 * whose message may carry the request URI.
	 */
	private static String describe(Throwable failure) {
		Throwable cause = NestedExceptionUtils.getMostSpecificCause(failure);
		String name = cause.getClass().getSimpleName().isEmpty() ? cause.getClass().getName()
				: cause.getClass().getSimpleName();
		return (cause.getMessage() != null) ? name + ": " + cause.getMessage() : name;
	}

	/**
	 * Keeps a detail on one short line: it embeds text from the remote side, which may be
	 * long or carry line breaks into logs.
	 */
	private static String shorten(String detail) {
		String line = detail.replaceAll("\\p{Cntrl}", " ");
		return (line.length() <= MAX_DETAIL_LENGTH) ? line : line.substring(0, MAX_DETAIL_LENGTH - 3) + "...";
	}

}
