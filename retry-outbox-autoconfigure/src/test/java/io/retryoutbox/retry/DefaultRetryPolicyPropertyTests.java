package io.retryoutbox.retry;

import java.net.ConnectException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.random.RandomGenerator;

import io.retryoutbox.DeliveryAttempt;
import io.retryoutbox.DeliveryOutcome;
import io.retryoutbox.RetryDecision;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.http.HttpHeaders;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Properties of the default policy and its backoff over every accepted setting: the
 * decision is one of the three; a retry is never in the past, never before a valid
 * {@code Retry-After} (within its cap), never after the capped ramp (or capped
 * {@code Retry-After}) plus its jitter; nothing overflows.
 */
class DefaultRetryPolicyPropertyTests {

	private static final Instant NOW = Instant.parse("2026-12-01T12:00:00Z");

	private static final long MAX_DAYS = 36500;

	@Property(tries = 2000)
	void aRetryIsNeverEarlierThanNowOrARetryAfterNorLaterThanItsCapPlusJitter(
			@ForAll("settings") RetrySettings settings, @ForAll @IntRange(min = 1, max = 1_000_000) int attempt,
			@ForAll("outcomes") DeliveryOutcome outcome, @ForAll long seed,
			@ForAll @LongRange(min = 0, max = MAX_DAYS * 86_400) long ageSeconds) {
		RandomGenerator random = new java.util.SplittableRandom(seed);
		DefaultRetryPolicy policy = new DefaultRetryPolicy(settings, Map.of(), JsonMapper.shared(),
				Clock.fixed(NOW, ZoneOffset.UTC), random);
		Instant createdAt = NOW.minusSeconds(ageSeconds);
		RetryDecision decision = policy.decide(new DeliveryAttempt(UUID.randomUUID(), "api", attempt, createdAt),
				outcome);
		assertThat(decision).isInstanceOfAny(RetryDecision.Delivered.class, RetryDecision.Retry.class,
				RetryDecision.Dead.class);
		if (decision instanceof RetryDecision.Retry retry) {
			Instant next = retry.nextAttemptAt();
			assertThat(next).isAfterOrEqualTo(NOW);
			Duration wait = Duration.between(NOW, next);
			Duration retryAfter = retryAfter(outcome);
			Duration floor = (retryAfter != null) ? min(retryAfter, settings.retryAfterMax()) : Duration.ZERO;
			assertThat(wait).isGreaterThanOrEqualTo(floor);
			Duration base = max(settings.maxDelay(), floor);
			long ceilingMillis = (long) Math.ceil(base.toMillis() * (1 + settings.jitter())) + 1;
			assertThat(wait.toMillis()).isLessThanOrEqualTo(ceilingMillis);
			assertThat(Duration.between(createdAt, next)).isLessThanOrEqualTo(settings.timeout());
		}
	}

	@Provide
	Arbitrary<RetrySettings> settings() {
		Arbitrary<Duration> durations = Arbitraries.oneOf(
				Arbitraries.longs().between(0, 10_000).map(Duration::ofMillis),
				Arbitraries.longs().between(0, MAX_DAYS).map(Duration::ofDays));
		Arbitrary<Duration> timeouts = Arbitraries.oneOf(Arbitraries.longs().between(1, 10_000).map(Duration::ofMillis),
				Arbitraries.longs().between(1, MAX_DAYS).map(Duration::ofDays));
		return Combinators
			.combine(durations, Arbitraries.doubles().between(1.0, 100.0), durations, durations,
					Arbitraries.doubles().between(0.0, 10.0), Arbitraries.integers().between(1, 1_000_000), timeouts)
			.as((delay, multiplier, maxDelay, retryAfterMax, jitter, maxAttempts, timeout) -> new RetrySettings(delay,
					multiplier, maxDelay, retryAfterMax, jitter, maxAttempts, timeout, List.of("/error/code"),
					Set.of("RESOURCE_LOCKED"), Set.of("CONFLICT"), true));
	}

	@Provide
	Arbitrary<DeliveryOutcome> outcomes() {
		Arbitrary<Integer> statuses = Arbitraries.of(200, 204, 400, 404, 408, 409, 425, 429, 500, 502, 503, 504);
		Arbitrary<String> retryAfters = Arbitraries.oneOf(Arbitraries.just(null),
				Arbitraries.longs().between(0, Long.MAX_VALUE).map(String::valueOf),
				Arbitraries.longs()
					.between(-1_000_000, MAX_DAYS * 86_400)
					.map((seconds) -> DateTimeFormatter.RFC_1123_DATE_TIME
						.format(NOW.plusSeconds(seconds).atOffset(ZoneOffset.UTC))),
				Arbitraries.of("soon", "-5", "1.5", ""));
		Arbitrary<DeliveryOutcome> responses = Combinators.combine(statuses, retryAfters).as((status, retryAfter) -> {
			HttpHeaders headers = new HttpHeaders();
			if (retryAfter != null) {
				headers.set(HttpHeaders.RETRY_AFTER, retryAfter);
			}
			return new DeliveryOutcome.Response(status, headers, new byte[0]);
		});
		return Arbitraries.oneOf(responses,
				Arbitraries.just(new DeliveryOutcome.Failure(new ConnectException("Connection refused"))));
	}

	private static Duration retryAfter(DeliveryOutcome outcome) {
		if (outcome instanceof DeliveryOutcome.Response response) {
			return RetryAfter.parse(response.headers().getFirst(HttpHeaders.RETRY_AFTER), NOW).orElse(null);
		}
		return null;
	}

	private static Duration min(Duration a, Duration b) {
		return (a.compareTo(b) <= 0) ? a : b;
	}

	private static Duration max(Duration a, Duration b) {
		return (a.compareTo(b) >= 0) ? a : b;
	}

}
