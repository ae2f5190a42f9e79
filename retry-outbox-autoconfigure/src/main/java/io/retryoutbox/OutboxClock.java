package io.retryoutbox;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;

/**
 * The clock the outbox tells due times by: the default {@link RetryPolicy} schedules
 * retries from it and the relay claims the messages that are due by it. A bean of this
 * type replaces the system clock, e.g. a test's clock that it moves forward so that
 * retries become due without waiting.
 * <p>
 * It is a type of its own, not a {@link Clock}, so that an application's {@code Clock}
 * bean is never taken for it, and this one never for the application's.
 * <p>
 * A message is also due once the database's clock reaches its due time: enqueues stamp
 * new messages with the database's {@code now()}, and they must not wait when this clock
 * lags the database's. So a clock set in the past holds nothing back; one ahead makes
 * retries due early. Leases and destination pauses stay on the database's clock, as every
 * instance must agree on them.
 */
@FunctionalInterface
public interface OutboxClock {

	/**
	 * The current instant.
	 * @return the instant
	 */
	Instant instant();

	/**
	 * The system clock, in UTC.
	 * @return the clock
	 */
	static OutboxClock system() {
		return Instant::now;
	}

	/**
	 * This clock as a {@link Clock} in UTC, e.g. for {@code DefaultRetryPolicy}.
	 * @return a view of this clock
	 */
	default Clock asClock() {
		return new OutboxClockView(this, ZoneOffset.UTC);
	}

}
