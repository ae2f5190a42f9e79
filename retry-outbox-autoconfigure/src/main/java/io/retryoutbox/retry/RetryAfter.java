package io.retryoutbox.retry;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.ResolverStyle;
import java.time.temporal.ChronoField;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

/**
 * Parser of the {@code Retry-After} response header (RFC 9110, section 10.2.3): either
 * delay-seconds or an HTTP-date in any of its three forms.
 */
public final class RetryAfter {

	private static final DateTimeFormatter IMF_FIXDATE = strict("EEE, d MMM uuuu HH:mm:ss 'GMT'");

	private static final DateTimeFormatter ASCTIME = strict("EEE MMM ppd HH:mm:ss uuuu");

	private RetryAfter() {
	}

	/**
	 * Parses a {@code Retry-After} value into the delay it asks for.
	 * @param value the header value, if any
	 * @param now the current time, for HTTP-dates and two-digit years
	 * @return the delay, {@link Duration#ZERO} for a date in the past, or empty if the
	 * value is missing or malformed
	 */
	public static Optional<Duration> parse(@Nullable String value, Instant now) {
		if (value == null || value.isBlank()) {
			return Optional.empty();
		}
		String trimmed = value.trim();
		if (isDigits(trimmed)) {
			return Optional.of(Duration.ofSeconds(saturatedSeconds(trimmed)));
		}
		return parseDate(trimmed, now).map((date) -> date.isAfter(now) ? Duration.between(now, date) : Duration.ZERO);
	}

	private static boolean isDigits(String value) {
		return value.chars().allMatch((c) -> c >= '0' && c <= '9');
	}

	private static long saturatedSeconds(String digits) {
		try {
			return Long.parseLong(digits);
		}
		catch (NumberFormatException ex) {
			return Long.MAX_VALUE;
		}
	}

	private static Optional<Instant> parseDate(String value, Instant now) {
		for (DateTimeFormatter formatter : List.of(IMF_FIXDATE, rfc850(now), ASCTIME)) {
			try {
				return Optional.of(formatter.parse(value, Instant::from));
			}
			catch (DateTimeException ex) {
				// try the next form
			}
		}
		return Optional.empty();
	}

	/**
	 * The obsolete RFC 850 form, whose two-digit year is read as at most 50 years ahead
	 * of {@code now}, as RFC 9110 requires.
	 */
	private static DateTimeFormatter rfc850(Instant now) {
		int baseYear = now.atOffset(ZoneOffset.UTC).getYear() - 49;
		return new DateTimeFormatterBuilder().appendPattern("EEEE, d-MMM-")
			.appendValueReduced(ChronoField.YEAR, 2, 2, baseYear)
			.appendPattern(" HH:mm:ss 'GMT'")
			.toFormatter(Locale.US)
			.withResolverStyle(ResolverStyle.STRICT)
			.withZone(ZoneOffset.UTC);
	}

	private static DateTimeFormatter strict(String pattern) {
		return DateTimeFormatter.ofPattern(pattern, Locale.US)
			.withResolverStyle(ResolverStyle.STRICT)
			.withZone(ZoneOffset.UTC);
	}

}
