package io.retryoutbox.test;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicReference;

import io.retryoutbox.OutboxClock;

import org.springframework.util.Assert;

/**
 * An {@link OutboxClock} that a test moves forward, so that retries become due without
 * waiting for them.
 * <p>
 * It runs with the system clock, ahead of it by what the test {@link #advance advanced}
 * it, rather than standing still: new messages are stamped with the database's clock, and
 * a clock that stood still would fall behind that clock, so that a retry scheduled from
 * it could already be due by the database's when the context had been up a while. Ahead
 * of the system clock, a retry is due only once the test moves this clock past it, unless
 * its delay is shorter than the test takes.
 */
public final class TestOutboxClock implements OutboxClock {

	private final AtomicReference<Duration> ahead = new AtomicReference<>(Duration.ZERO);

	@Override
	public Instant instant() {
		return Instant.now().plus(this.ahead.get());
	}

	/**
	 * Moves the clock forward.
	 * @param duration how far, not negative
	 * @return this clock
	 */
	public TestOutboxClock advance(Duration duration) {
		Assert.notNull(duration, "'duration' must not be null");
		Assert.isTrue(!duration.isNegative(), () -> "A test outbox clock only moves forward, not by " + duration);
		this.ahead.accumulateAndGet(duration, Duration::plus);
		return this;
	}

	/**
	 * Moves the clock forward to an instant, if it is not there yet.
	 * @param instant the instant, e.g. a message's next attempt
	 * @return this clock
	 */
	public TestOutboxClock advanceTo(Instant instant) {
		Assert.notNull(instant, "'instant' must not be null");
		Duration left = Duration.between(instant(), instant);
		return advance(left.isNegative() ? Duration.ZERO : left);
	}

	/**
	 * Sets the clock back to the system clock's time. Before each test method of a Spring
	 * test, {@link ResetOutboxClockTestExecutionListener} does it, so that what a test
	 * advanced does not make the next test's messages look old: a message's age counts
	 * from its enqueue, stamped by the database's clock, to a retry scheduled from this
	 * one, and a clock left days ahead would put new messages past their deadline.
	 */
	public void reset() {
		this.ahead.set(Duration.ZERO);
	}

	/**
	 * How far the clock runs ahead of the system clock.
	 * @return the sum of what it was advanced by
	 */
	public Duration ahead() {
		return this.ahead.get();
	}

}
