package io.retryoutbox.retry;

import java.time.Duration;
import java.time.Instant;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link RetryAfter}.
 */
class RetryAfterTests {

	private static final Instant A_MINUTE_BEFORE_THE_RFC_EXAMPLE = Instant.parse("1994-11-06T08:48:37Z");

	private static final Instant NEW_YEAR_2026 = Instant.parse("2026-01-01T00:00:00Z");

	@ParameterizedTest
	@ValueSource(strings = { "120", " 120 ", "\t120", "000120" })
	void parsesDelaySeconds(String value) {
		assertThat(RetryAfter.parse(value, NEW_YEAR_2026)).contains(Duration.ofSeconds(120));
	}

	@Test
	void parsesZeroSeconds() {
		assertThat(RetryAfter.parse("0", NEW_YEAR_2026)).contains(Duration.ZERO);
	}

	@ParameterizedTest
	@ValueSource(strings = { "9223372036854775808", "99999999999999999999999999999999999999" })
	void parsesAHugeNumberOfSecondsWithoutOverflowing(String value) {
		assertThat(RetryAfter.parse(value, NEW_YEAR_2026)).contains(Duration.ofSeconds(Long.MAX_VALUE));
	}

	@Test
	void parsesAnImfFixdate() {
		assertThat(RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT", A_MINUTE_BEFORE_THE_RFC_EXAMPLE))
			.contains(Duration.ofMinutes(1));
	}

	@Test
	void parsesAnImfFixdateWithASingleDigitDay() {
		assertThat(RetryAfter.parse("Sun, 6 Nov 1994 08:49:37 GMT", A_MINUTE_BEFORE_THE_RFC_EXAMPLE))
			.contains(Duration.ofMinutes(1));
	}

	@Test
	void parsesAnObsoleteRfc850Date() {
		assertThat(RetryAfter.parse("Sunday, 06-Nov-94 08:49:37 GMT", A_MINUTE_BEFORE_THE_RFC_EXAMPLE))
			.contains(Duration.ofMinutes(1));
	}

	@Test
	void parsesAnAsctimeDate() {
		assertThat(RetryAfter.parse("Sun Nov  6 08:49:37 1994", A_MINUTE_BEFORE_THE_RFC_EXAMPLE))
			.contains(Duration.ofMinutes(1));
	}

	@Test
	void parsesAnAsctimeDateWithATwoDigitDay() {
		assertThat(RetryAfter.parse("Wed Nov 16 08:49:37 1994", A_MINUTE_BEFORE_THE_RFC_EXAMPLE))
			.contains(Duration.ofDays(10).plusMinutes(1));
	}

	@Test
	void readsATwoDigitYearUpTo50YearsAheadAsThisCentury() {
		assertThat(RetryAfter.parse("Wednesday, 01-Jan-76 00:00:00 GMT", NEW_YEAR_2026))
			.contains(Duration.between(NEW_YEAR_2026, Instant.parse("2076-01-01T00:00:00Z")));
	}

	@Test
	void readsATwoDigitYearMoreThan50YearsAheadAsThePastCentury() {
		assertThat(RetryAfter.parse("Saturday, 01-Jan-77 00:00:00 GMT", NEW_YEAR_2026)).contains(Duration.ZERO);
	}

	@ParameterizedTest
	@ValueSource(
			strings = { "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994" })
	void parsesADateInThePastAsZero(String value) {
		assertThat(RetryAfter.parse(value, NEW_YEAR_2026)).contains(Duration.ZERO);
	}

	@ParameterizedTest
	@NullAndEmptySource
	@ValueSource(strings = { " ", "-3", "+5", "1.5", "1e3", "0x10", "120junk", "120 seconds", "1 20",
			"\u0661\u0662\u0660", "soon", "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT",
			"Sun, 06 Nov 1994 08:49:37 PST", "Sun, 06 Nov 1994 08:49:37 +0000", "Mon, 06 Nov 1994 08:49:37 GMT",
			"06 Nov 1994 08:49:37 GMT", "sun, 06 nov 1994 08:49:37 gmt", "Sunday, 06-Nov-1994 08:49:37 GMT",
			"Sun Nov  6 08:49:37 1994 GMT", "Thu, 29 Feb 2001 08:49:37 GMT" })
	void rejectsAnInvalidValue(String value) {
		assertThat(RetryAfter.parse(value, NEW_YEAR_2026)).isEmpty();
	}

}
