package io.retryoutbox.retry;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeoutException;
import java.util.random.RandomGenerator;
import java.util.stream.Stream;

import io.netty.handler.timeout.ReadTimeoutException;
import io.retryoutbox.DeliveryAttempt;
import io.retryoutbox.DeliveryOutcome;
import io.retryoutbox.RetryDecision;
import io.retryoutbox.RetryDecision.DeadReason;
import io.retryoutbox.RetryDecision.DelayReason;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.web.reactive.function.client.WebClientRequestException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link DefaultRetryPolicy}.
 */
class DefaultRetryPolicyTests {

	private static final Instant NOW = Instant.parse("2026-03-01T12:00:00Z");

	private static final double ALMOST_ONE = 0.999_999_9;

	private static final RetrySettings NO_JITTER = withJitter(0.0);

	@ParameterizedTest
	@ValueSource(ints = { 200, 201, 202, 204, 299 })
	void deliversA2xx(int status) {
		assertThat(decide(NO_JITTER, 1, response(status))).isEqualTo(new RetryDecision.Delivered());
	}

	@ParameterizedTest
	@ValueSource(ints = { 300, 301, 302, 304, 307, 308 })
	void givesUpOnA3xxBecauseRedirectsAreNotFollowed(int status) {
		assertThat(decide(NO_JITTER, 1, response(status)))
			.isEqualTo(new RetryDecision.Dead(DeadReason.TERMINAL_STATUS, "HTTP " + status, null));
	}

	@ParameterizedTest
	@ValueSource(ints = { 408, 425, 429, 500, 502, 503, 504 })
	void retriesATransientStatus(int status) {
		assertThat(decide(NO_JITTER, 1, response(status)))
			.isEqualTo(new RetryDecision.Retry(NOW.plusSeconds(1), DelayReason.BACKOFF, null));
	}

	@ParameterizedTest
	@ValueSource(ints = { 400, 401, 403, 404, 410, 422, 501, 505, 418, 451, 100, 101, 199, 0, 600, 999 })
	void givesUpOnEveryOtherStatus(int status) {
		assertThat(decide(NO_JITTER, 1, response(status)))
			.isEqualTo(new RetryDecision.Dead(DeadReason.TERMINAL_STATUS, "HTTP " + status, null));
	}

	@Test
	void retriesA409ThatIsResourceLocked() {
		assertThat(decide(NO_JITTER, 1, response(409, "{\"error\":{\"code\":\"RESOURCE_LOCKED\"}}")))
			.isEqualTo(new RetryDecision.Retry(NOW.plusSeconds(1), DelayReason.BACKOFF, "RESOURCE_LOCKED"));
	}

	@Test
	void givesUpOnA409ThatIsAConflict() {
		assertThat(decide(NO_JITTER, 1, response(409, "{\"error\":{\"code\":\"CONFLICT\"}}")))
			.isEqualTo(new RetryDecision.Dead(DeadReason.TERMINAL_STATUS, "HTTP 409 CONFLICT", "CONFLICT"));
	}

	@Test
	void givesUpOnA409ProblemDetailWithAConflictCodeMember() {
		String problem = "{\"type\":\"about:blank\",\"title\":\"Conflict\",\"status\":409,\"code\":\"CONFLICT\"}";
		assertThat(decide(NO_JITTER, 1, response(409, problem)))
			.isEqualTo(new RetryDecision.Dead(DeadReason.TERMINAL_STATUS, "HTTP 409 CONFLICT", "CONFLICT"));
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "<html><body>Conflict</body></html>", "{}", "null", "[\"CONFLICT\"]",
			"{\"error\":{\"message\":\"CONFLICT\"}}", "{\"error\":{\"code\":409}}", "{\"code\":true}",
			"{\"error\":{\"code\":\"  \"}}", "{\"error\":{\"code\":null}}", "{\"error\":{\"code\":\"CONFL",
			"{\"error\":\"CONFLICT\"}" })
	void retriesA409WithoutAnErrorCode(String body) {
		assertThat(decide(NO_JITTER, 1, response(409, body)))
			.isEqualTo(new RetryDecision.Retry(NOW.plusSeconds(1), DelayReason.BACKOFF, null));
	}

	@Test
	void retriesA409WithAnUnknownErrorCode() {
		assertThat(decide(NO_JITTER, 1, response(409, "{\"error\":{\"code\":\"SOMETHING_ELSE\"}}")))
			.isEqualTo(new RetryDecision.Retry(NOW.plusSeconds(1), DelayReason.BACKOFF, "SOMETHING_ELSE"));
	}

	@Test
	void readsTheNextPointerWhenTheFirstHoldsNoText() {
		assertThat(decide(NO_JITTER, 1, response(409, "{\"error\":{\"code\":42},\"code\":\"CONFLICT\"}")))
			.isEqualTo(new RetryDecision.Dead(DeadReason.TERMINAL_STATUS, "HTTP 409 CONFLICT", "CONFLICT"));
	}

	@Test
	void prefersTheFirstPointerThatHoldsText() {
		String body = "{\"error\":{\"code\":\"RESOURCE_LOCKED\"},\"code\":\"CONFLICT\"}";
		assertThat(decide(NO_JITTER, 1, response(409, body))).isInstanceOf(RetryDecision.Retry.class);
	}

	@ParameterizedTest
	@ValueSource(strings = { "CONFLICT_X", "NOT_CONFLICT", "conflict", " CONFLICT", "CONFLICT " })
	void doesNotTakeACodeThatMerelyContainsConflictAsAConflict(String code) {
		String body = "{\"error\":{\"code\":\"" + code + "\"}}";
		assertThat(decide(NO_JITTER, 1, response(409, body)))
			.isEqualTo(new RetryDecision.Retry(NOW.plusSeconds(1), DelayReason.BACKOFF, code));
	}

	@ParameterizedTest
	@ValueSource(strings = { "RESOURCE_LOCKED_SOON", "RESOURCE", "resource_locked" })
	void doesNotTakeACodeThatMerelyResemblesResourceLockedAsTransient(String code) {
		RetrySettings settings = withConflictCodes(RetrySettings.DEFAULTS.errorCodePointers(),
				Set.of("RESOURCE_LOCKED"), Set.of("CONFLICT"), false);
		assertThat(decide(settings, 1, response(409, "{\"error\":{\"code\":\"" + code + "\"}}")))
			.isEqualTo(new RetryDecision.Dead(DeadReason.TERMINAL_STATUS, "HTTP 409 " + code, code));
	}

	@Test
	void givesUpOnA409WithoutAnErrorCodeWhenConfiguredTo() {
		RetrySettings settings = withConflictCodes(RetrySettings.DEFAULTS.errorCodePointers(),
				Set.of("RESOURCE_LOCKED"), Set.of("CONFLICT"), false);
		assertThat(decide(settings, 1, response(409, "{}")))
			.isEqualTo(new RetryDecision.Dead(DeadReason.TERMINAL_STATUS, "HTTP 409", null));
		assertThat(decide(settings, 1, response(409, "{\"error\":{\"code\":\"RESOURCE_LOCKED\"}}")))
			.isInstanceOf(RetryDecision.Retry.class);
	}

	@Test
	void usesConfiguredPointersAndErrorCodes() {
		RetrySettings settings = withConflictCodes(List.of("/errors/0/reason"), Set.of("BUSY"), Set.of("DUPLICATE"),
				true);
		assertThat(decide(settings, 1, response(409, "{\"errors\":[{\"reason\":\"BUSY\"}]}")))
			.isEqualTo(new RetryDecision.Retry(NOW.plusSeconds(1), DelayReason.BACKOFF, "BUSY"));
		assertThat(decide(settings, 1, response(409, "{\"errors\":[{\"reason\":\"DUPLICATE\"}]}")))
			.isEqualTo(new RetryDecision.Dead(DeadReason.TERMINAL_STATUS, "HTTP 409 DUPLICATE", "DUPLICATE"));
		assertThat(decide(settings, 1, response(409, "{\"error\":{\"code\":\"CONFLICT\"}}")))
			.isEqualTo(new RetryDecision.Retry(NOW.plusSeconds(1), DelayReason.BACKOFF, null));
	}

	@Test
	void classifiesOtherStatusesByStatusAloneButRecordsTheirErrorCode() {
		assertThat(decide(NO_JITTER, 1, response(503, "{\"error\":{\"code\":\"CONFLICT\"}}")))
			.isEqualTo(new RetryDecision.Retry(NOW.plusSeconds(1), DelayReason.BACKOFF, "CONFLICT"));
		assertThat(decide(NO_JITTER, 1, response(400, "{\"code\":\"RESOURCE_LOCKED\"}"))).isEqualTo(
				new RetryDecision.Dead(DeadReason.TERMINAL_STATUS, "HTTP 400 RESOURCE_LOCKED", "RESOURCE_LOCKED"));
	}

	@ParameterizedTest
	@MethodSource("failures")
	void retriesAFailureToGetAResponse(Throwable failure) {
		assertThat(decide(NO_JITTER, 1, new DeliveryOutcome.Failure(failure)))
			.isEqualTo(new RetryDecision.Retry(NOW.plusSeconds(1), DelayReason.BACKOFF, null));
	}

	static Stream<Throwable> failures() {
		return Stream.of(new ConnectException("Connection refused"), new UnknownHostException("outbox.invalid"),
				new TimeoutException(), ReadTimeoutException.INSTANCE, new IOException("Connection reset by peer"),
				new IllegalStateException("unexpected"), clientFailure(new ConnectException("Connection refused")));
	}

	@ParameterizedTest
	@CsvSource({ "1, 1", "2, 2", "3, 4", "4, 8", "5, 16" })
	void rampsExponentially(int attempt, long seconds) {
		assertThat(decide(NO_JITTER, attempt, response(503)))
			.isEqualTo(new RetryDecision.Retry(NOW.plusSeconds(seconds), DelayReason.BACKOFF, null));
	}

	@ParameterizedTest
	@ValueSource(ints = { 11, 15, 19 })
	void capsTheRampAtMaxDelay(int attempt) {
		assertThat(waitOf(decide(NO_JITTER, attempt, response(503)))).isEqualTo(Duration.ofMinutes(10));
	}

	@ParameterizedTest
	@ValueSource(ints = { 1, 2, 30, Integer.MAX_VALUE - 1 })
	void neverOverflowsTheNextAttemptTimeWithTheLargestSettingsItAccepts(int attempt) {
		Duration longest = Duration.ofDays(36500);
		RetrySettings d = RetrySettings.DEFAULTS;
		RetrySettings largest = new RetrySettings(Duration.ofSeconds(1), 100.0, longest, longest, 10.0,
				Integer.MAX_VALUE, longest, d.errorCodePointers(), d.transientErrorCodes(), d.terminalErrorCodes(),
				true);
		for (double draw : new double[] { 0.0, ALMOST_ONE }) {
			for (DeliveryOutcome outcome : List.of(response(503),
					response(503, "Retry-After", "99999999999999999999"))) {
				RetryDecision decision = decide(largest, draw, attempt, outcome);
				if (decision instanceof RetryDecision.Retry retry) {
					assertThat(retry.nextAttemptAt()).isBefore(NOW.plus(longest));
				}
				else {
					assertThat(decision).isInstanceOfSatisfying(RetryDecision.Dead.class,
							(dead) -> assertThat(dead.reason()).isEqualTo(DeadReason.DEADLINE_EXCEEDED));
				}
			}
		}
	}

	@Test
	void capsTheRampEvenWhenItOverflows() {
		RetrySettings settings = withBudget(Integer.MAX_VALUE, Duration.ofDays(1000));
		assertThat(waitOf(decide(settings, Integer.MAX_VALUE - 1, response(503)))).isEqualTo(Duration.ofMinutes(10));
	}

	@Test
	void waitsOutALongerRetryAfter() {
		assertThat(decide(NO_JITTER, 3, response(503, "Retry-After", "30")))
			.isEqualTo(new RetryDecision.Retry(NOW.plusSeconds(30), DelayReason.RETRY_AFTER, null));
	}

	@ParameterizedTest
	@ValueSource(strings = { "2", "4", "0" })
	void keepsTheRampWhenRetryAfterIsNotLonger(String retryAfter) {
		assertThat(decide(NO_JITTER, 3, response(503, "Retry-After", retryAfter)))
			.isEqualTo(new RetryDecision.Retry(NOW.plusSeconds(4), DelayReason.BACKOFF, null));
	}

	@ParameterizedTest
	@ValueSource(strings = { "999999", "99999999999999999999999999" })
	void capsRetryAfterAtRetryAfterMax(String retryAfter) {
		assertThat(decide(NO_JITTER, 1, response(429, "Retry-After", retryAfter)))
			.isEqualTo(new RetryDecision.Retry(NOW.plus(Duration.ofMinutes(10)), DelayReason.RETRY_AFTER, null));
	}

	@Test
	void waitsOutAnHttpDateRetryAfter() {
		String date = DateTimeFormatter.RFC_1123_DATE_TIME.format(NOW.plusSeconds(45).atOffset(ZoneOffset.UTC));
		assertThat(decide(NO_JITTER, 1, response(503, "Retry-After", date)))
			.isEqualTo(new RetryDecision.Retry(NOW.plusSeconds(45), DelayReason.RETRY_AFTER, null));
	}

	@ParameterizedTest
	@ValueSource(strings = { "soon", "-3", "1.5", "120junk", "", "Sun, 32 Nov 1994 08:49:37 GMT" })
	void ignoresAnInvalidRetryAfter(String retryAfter) {
		assertThat(decide(NO_JITTER, 1, response(503, "Retry-After", retryAfter)))
			.isEqualTo(new RetryDecision.Retry(NOW.plusSeconds(1), DelayReason.BACKOFF, null));
	}

	@Test
	void readsRetryAfterWhateverTheCaseOfItsName() {
		DeliveryOutcome outcome = response(409, "retry-after", "30", "{\"error\":{\"code\":\"RESOURCE_LOCKED\"}}");
		assertThat(decide(NO_JITTER, 1, outcome))
			.isEqualTo(new RetryDecision.Retry(NOW.plusSeconds(30), DelayReason.RETRY_AFTER, "RESOURCE_LOCKED"));
	}

	@Test
	void ignoresRetryAfterOnATerminalStatus() {
		assertThat(decide(NO_JITTER, 1, response(400, "Retry-After", "30")))
			.isEqualTo(new RetryDecision.Dead(DeadReason.TERMINAL_STATUS, "HTTP 400", null));
	}

	@Test
	void addsNothingWhenTheRandomDrawIsZero() {
		assertThat(waitOf(decide(RetrySettings.DEFAULTS, 0.0, 3, response(503)))).isEqualTo(Duration.ofSeconds(4));
	}

	@Test
	void onlyEverAddsJitter() {
		assertThat(waitOf(decide(RetrySettings.DEFAULTS, ALMOST_ONE, 3, response(503))))
			.isGreaterThan(Duration.ofSeconds(4))
			.isLessThan(Duration.ofSeconds(6));
	}

	@ParameterizedTest
	@ValueSource(doubles = { 0.0, 0.5, ALMOST_ONE })
	void neverUndercutsRetryAfterWithJitter(double draw) {
		assertThat(waitOf(decide(RetrySettings.DEFAULTS, draw, 3, response(503, "Retry-After", "30"))))
			.isGreaterThanOrEqualTo(Duration.ofSeconds(30))
			.isLessThan(Duration.ofSeconds(45));
	}

	@Test
	void addsJitterAboveTheMaxDelayCap() {
		assertThat(waitOf(decide(RetrySettings.DEFAULTS, ALMOST_ONE, 15, response(503))))
			.isGreaterThan(Duration.ofMinutes(10))
			.isLessThan(Duration.ofMinutes(15));
	}

	@Test
	void waitsThirtySevenAndAHalfSecondsInTheDocumentedExample() {
		assertThat(decide(RetrySettings.DEFAULTS, 0.5, 3, response(503, "Retry-After", "30")))
			.isEqualTo(new RetryDecision.Retry(NOW.plusMillis(37_500), DelayReason.RETRY_AFTER, null));
	}

	@Test
	void retriesUntilTheLastAttempt() {
		assertThat(decide(NO_JITTER, 19, response(503))).isInstanceOf(RetryDecision.Retry.class);
	}

	@Test
	void givesUpWhenAttemptsAreExhausted() {
		assertThat(decide(NO_JITTER, 20, response(503)))
			.isEqualTo(new RetryDecision.Dead(DeadReason.ATTEMPTS_EXHAUSTED, "20 attempts made; last: HTTP 503", null));
	}

	@Test
	void keepsTheErrorCodeWhenAttemptsAreExhausted() {
		assertThat(decide(NO_JITTER, 20, response(409, "{\"error\":{\"code\":\"RESOURCE_LOCKED\"}}")))
			.isEqualTo(new RetryDecision.Dead(DeadReason.ATTEMPTS_EXHAUSTED,
					"20 attempts made; last: HTTP 409 RESOURCE_LOCKED", "RESOURCE_LOCKED"));
	}

	@Test
	void namesTheMostSpecificCauseOfTheLastFailure() {
		Throwable failure = clientFailure(new ConnectException("Connection refused"));
		assertThat(decide(NO_JITTER, 20, new DeliveryOutcome.Failure(failure))).isEqualTo(new RetryDecision.Dead(
				DeadReason.ATTEMPTS_EXHAUSTED, "20 attempts made; last: ConnectException: Connection refused", null));
	}

	@Test
	void namesAFailureWithoutAMessageByItsType() {
		DeliveryOutcome outcome = new DeliveryOutcome.Failure(ReadTimeoutException.INSTANCE);
		assertThat(decide(NO_JITTER, 20, outcome)).isEqualTo(new RetryDecision.Dead(DeadReason.ATTEMPTS_EXHAUSTED,
				"20 attempts made; last: ReadTimeoutException", null));
	}

	@Test
	void retriesWhenTheNextAttemptIsExactlyAtTheDeadline() {
		RetrySettings settings = withBudget(20, Duration.ofHours(1));
		DeliveryAttempt attempt = new DeliveryAttempt(UUID.randomUUID(), "orders", 1, NOW.minusSeconds(3599));
		assertThat(policy(settings, 0.0).decide(attempt, response(503)))
			.isEqualTo(new RetryDecision.Retry(NOW.plusSeconds(1), DelayReason.BACKOFF, null));
	}

	@Test
	void givesUpWhenTheNextAttemptWouldBePastTheDeadline() {
		RetrySettings settings = withBudget(20, Duration.ofHours(1));
		DeliveryAttempt attempt = new DeliveryAttempt(UUID.randomUUID(), "orders", 1, NOW.minusSeconds(3600));
		assertThat(policy(settings, 0.0).decide(attempt, response(503))).isEqualTo(new RetryDecision.Dead(
				DeadReason.DEADLINE_EXCEEDED, "next attempt would be past the PT1H deadline; last: HTTP 503", null));
	}

	@Test
	void doesNotCountTheTimeItsDestinationWasPausedAgainstTheDeadline() {
		RetrySettings settings = withBudget(20, Duration.ofHours(1));
		DeliveryAttempt pausedForSixHours = new DeliveryAttempt(UUID.randomUUID(), "orders", 1,
				NOW.minus(Duration.ofHours(6)).minusSeconds(3599), Duration.ofHours(6));
		DeliveryAttempt pausedForLess = new DeliveryAttempt(UUID.randomUUID(), "orders", 1,
				NOW.minus(Duration.ofHours(6)).minusSeconds(3599), Duration.ofHours(6).minusSeconds(1));
		assertThat(policy(settings, 0.0).decide(pausedForSixHours, response(503)))
			.isEqualTo(new RetryDecision.Retry(NOW.plusSeconds(1), DelayReason.BACKOFF, null));
		assertThat(policy(settings, 0.0).decide(pausedForLess, response(503))).isInstanceOfSatisfying(
				RetryDecision.Dead.class, (dead) -> assertThat(dead.reason()).isEqualTo(DeadReason.DEADLINE_EXCEEDED));
	}

	@Test
	void retriesARetryAfterPastTheDeadlineWhileTheDestinationIsPausedForIt() {
		RetrySettings settings = withBudget(20, Duration.ofMinutes(5));
		DeliveryAttempt attempt = new DeliveryAttempt(UUID.randomUUID(), "orders", 1, NOW.minusSeconds(60),
				Duration.ofSeconds(300));
		assertThat(policy(settings, 0.0).decide(attempt, response(503, "Retry-After", "300")))
			.isEqualTo(new RetryDecision.Retry(NOW.plusSeconds(300), DelayReason.RETRY_AFTER, null));
	}

	@Test
	void givesUpWhenRetryAfterReachesPastTheDeadline() {
		RetrySettings settings = withBudget(20, Duration.ofMinutes(5));
		assertThat(decide(settings, 1, response(503, "Retry-After", "300"))).isInstanceOfSatisfying(
				RetryDecision.Dead.class, (dead) -> assertThat(dead.reason()).isEqualTo(DeadReason.DEADLINE_EXCEEDED));
	}

	@Test
	void keepsDetailsShortAndOnOneLine() {
		String code = "LOCKED\\n" + "X".repeat(1000);
		RetryDecision fromResponse = decide(NO_JITTER, 1, response(400, "{\"code\":\"" + code + "\"}"));
		RetryDecision fromFailure = decide(NO_JITTER, 20,
				new DeliveryOutcome.Failure(new IOException("reset\r\n" + "y".repeat(1000))));
		assertThat(List.of(fromResponse, fromFailure)).allSatisfy((decision) -> {
			String detail = ((RetryDecision.Dead) decision).detail();
			assertThat(detail).hasSizeLessThanOrEqualTo(200).doesNotContain("\n", "\r");
		});
	}

	@Test
	void appliesTheSettingsOfTheDestination() {
		RetrySettings slow = new RetrySettings(Duration.ofSeconds(5), 2.0, Duration.ofMinutes(10),
				Duration.ofMinutes(10), 0.0, 20, Duration.ofHours(24), List.of("/code"), Set.of(), Set.of(), true);
		DefaultRetryPolicy policy = new DefaultRetryPolicy(NO_JITTER, Map.of("slow", slow), JsonMapper.shared(),
				Clock.fixed(NOW, ZoneOffset.UTC), fixedRandom(0.0));
		DeliveryAttempt toSlow = new DeliveryAttempt(UUID.randomUUID(), "slow", 1, NOW);
		DeliveryAttempt toOther = new DeliveryAttempt(UUID.randomUUID(), "orders", 1, NOW);
		assertThat(policy.decide(toSlow, response(503)))
			.isEqualTo(new RetryDecision.Retry(NOW.plusSeconds(5), DelayReason.BACKOFF, null));
		assertThat(policy.decide(toOther, response(503)))
			.isEqualTo(new RetryDecision.Retry(NOW.plusSeconds(1), DelayReason.BACKOFF, null));
	}

	@Test
	void retriesWithJitterWhenBuiltFromSettingsAlone() {
		DefaultRetryPolicy policy = new DefaultRetryPolicy(RetrySettings.DEFAULTS);
		Instant before = Instant.now();
		RetryDecision decision = policy.decide(new DeliveryAttempt(UUID.randomUUID(), "orders", 1, before),
				response(503));
		Instant after = Instant.now();
		assertThat(decision).isInstanceOfSatisfying(RetryDecision.Retry.class,
				(retry) -> assertThat(retry.nextAttemptAt()).isBetween(before.plusSeconds(1), after.plusMillis(1500)));
	}

	private static RetryDecision decide(RetrySettings settings, int attempt, DeliveryOutcome outcome) {
		return decide(settings, 0.0, attempt, outcome);
	}

	private static RetryDecision decide(RetrySettings settings, double draw, int attempt, DeliveryOutcome outcome) {
		DeliveryAttempt deliveryAttempt = new DeliveryAttempt(UUID.randomUUID(), "orders", attempt,
				NOW.minusSeconds(60));
		return policy(settings, draw).decide(deliveryAttempt, outcome);
	}

	private static DefaultRetryPolicy policy(RetrySettings settings, double draw) {
		return new DefaultRetryPolicy(settings, Map.of(), JsonMapper.shared(), Clock.fixed(NOW, ZoneOffset.UTC),
				fixedRandom(draw));
	}

	private static Duration waitOf(RetryDecision decision) {
		assertThat(decision).isInstanceOf(RetryDecision.Retry.class);
		return Duration.between(NOW, ((RetryDecision.Retry) decision).nextAttemptAt());
	}

	private static DeliveryOutcome.Response response(int status) {
		return response(status, "");
	}

	private static DeliveryOutcome.Response response(int status, String body) {
		return new DeliveryOutcome.Response(status, new HttpHeaders(), body.getBytes(StandardCharsets.UTF_8));
	}

	private static DeliveryOutcome.Response response(int status, String header, String value) {
		return response(status, header, value, "");
	}

	private static DeliveryOutcome.Response response(int status, String header, String value, String body) {
		HttpHeaders headers = new HttpHeaders();
		headers.add(header, value);
		return new DeliveryOutcome.Response(status, headers, body.getBytes(StandardCharsets.UTF_8));
	}

	private static WebClientRequestException clientFailure(Throwable cause) {
		return new WebClientRequestException(cause, HttpMethod.POST,
				URI.create("https://user:secret@outbox.invalid/hook?token=secret"), new HttpHeaders());
	}

	private static RandomGenerator fixedRandom(double draw) {
		return new RandomGenerator() {

			@Override
			public long nextLong() {
				throw new UnsupportedOperationException("only nextDouble() is fixed");
			}

			@Override
			public double nextDouble() {
				return draw;
			}

		};
	}

	private static RetrySettings withJitter(double jitter) {
		RetrySettings d = RetrySettings.DEFAULTS;
		return new RetrySettings(d.delay(), d.multiplier(), d.maxDelay(), d.retryAfterMax(), jitter, d.maxAttempts(),
				d.timeout(), d.errorCodePointers(), d.transientErrorCodes(), d.terminalErrorCodes(),
				d.retryConflictWithoutCode());
	}

	private static RetrySettings withBudget(int maxAttempts, Duration timeout) {
		RetrySettings d = NO_JITTER;
		return new RetrySettings(d.delay(), d.multiplier(), d.maxDelay(), d.retryAfterMax(), d.jitter(), maxAttempts,
				timeout, d.errorCodePointers(), d.transientErrorCodes(), d.terminalErrorCodes(),
				d.retryConflictWithoutCode());
	}

	private static RetrySettings withConflictCodes(List<String> pointers, Set<String> transientCodes,
			Set<String> terminalCodes, boolean retryConflictWithoutCode) {
		RetrySettings d = NO_JITTER;
		return new RetrySettings(d.delay(), d.multiplier(), d.maxDelay(), d.retryAfterMax(), d.jitter(),
				d.maxAttempts(), d.timeout(), pointers, transientCodes, terminalCodes, retryConflictWithoutCode);
	}

}
