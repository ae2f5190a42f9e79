package io.retryoutbox;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;

/**
 * An {@link OutboxClock} seen as a {@link Clock}.
 */
final class OutboxClockView extends Clock {

	private final OutboxClock clock;

	private final ZoneId zone;

	OutboxClockView(OutboxClock clock, ZoneId zone) {
		this.clock = clock;
		this.zone = zone;
	}

	@Override
	public ZoneId getZone() {
		return this.zone;
	}

	@Override
	public Clock withZone(ZoneId zone) {
		return new OutboxClockView(this.clock, zone);
	}

	@Override
	public Instant instant() {
		return this.clock.instant();
	}

}
