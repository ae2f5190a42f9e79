package io.retryoutbox.test;

import java.time.Duration;
import java.util.function.Supplier;

import io.retryoutbox.OutboxClock;
import io.retryoutbox.relay.DestinationPause;
import io.retryoutbox.relay.OutboxRelay;

import org.springframework.util.Assert;

/**
 * Relays on the test's thread until nothing is due and nothing is in flight, by the
 * {@link OutboxClock}: a test enqueues, drains, moves the {@link TestOutboxClock} past a
 * retry's due time and drains again, without sleeping.
 * <p>
 * The relay must not run in the background, so that nothing is sent between the test's
 * steps: {@link AutoConfigureRetryOutbox} sees to that. Only committed messages are
 * drained, so a test that enqueues in its own transaction commits it first.
 * <p>
 * A destination paused by a {@code Retry-After} or its circuit sends nothing until its
 * pause is over; pauses are timed by the database's clock, so a drain ends those whose
 * end the outbox clock has passed, as time would.
 */
public final class OutboxDrainer {

	/**
	 * How long {@link #drain()} may take.
	 */
	public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);

	private final Supplier<OutboxRelay> relay;

	private final OutboxClock clock;

	/**
	 * Creates a drainer.
	 * @param relay the relay, not running
	 * @param clock the clock that the relay tells due messages by
	 */
	public OutboxDrainer(OutboxRelay relay, OutboxClock clock) {
		this(() -> relay, clock);
		Assert.notNull(relay, "'relay' must not be null");
	}

	OutboxDrainer(Supplier<OutboxRelay> relay, OutboxClock clock) {
		Assert.notNull(clock, "'clock' must not be null");
		this.relay = relay;
		this.clock = clock;
	}

	/**
	 * Relays until nothing is due, within {@link #DEFAULT_TIMEOUT}.
	 * @return the number of messages sent (claimed)
	 * @throws IllegalStateException if the relay runs in the background, or the outbox
	 * did not settle in time
	 */
	public int drain() {
		return drain(DEFAULT_TIMEOUT);
	}

	/**
	 * Relays until nothing is due.
	 * @param timeout how long it may take
	 * @return the number of messages sent (claimed)
	 * @throws IllegalStateException if the relay runs in the background, or the outbox
	 * did not settle in time
	 */
	public int drain(Duration timeout) {
		Assert.notNull(timeout, "'timeout' must not be null");
		Assert.isTrue(!timeout.isNegative() && !timeout.isZero(), () -> "'timeout' must be positive, was " + timeout);
		OutboxRelay relay = this.relay.get();
		long deadline = System.nanoTime() + timeout.toNanos();
		int claimed = relay.drain(timeout);
		// A pause that the clock passed, maybe one that began during this drain.
		while (endPassedPauses(relay)) {
			claimed += relay.drain(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
		}
		return claimed;
	}

	private boolean endPassedPauses(OutboxRelay relay) {
		boolean ended = false;
		for (String destination : relay.getDestinations()) {
			DestinationPause pause = relay.getDestinationPause(destination);
			if (pause != null && !pause.pausedUntil().isAfter(this.clock.instant())) {
				ended |= relay.resume(destination);
			}
		}
		return ended;
	}

}
