package io.retryoutbox.jdbc;

import java.security.SecureRandom;
import java.time.Clock;
import java.util.UUID;

/**
 * Creates version 7 UUIDs (RFC 9562): a millisecond timestamp followed by random bits, so
 * ids sort roughly by creation time and index well.
 */
final class TimeOrderedUuid {

	private static final SecureRandom RANDOM = new SecureRandom();

	private TimeOrderedUuid() {
	}

	static UUID next(Clock clock) {
		long millis = clock.millis();
		long msb = (millis << 16) | 0x7000L | (RANDOM.nextInt() & 0x0FFFL);
		long lsb = (RANDOM.nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
		return new UUID(msb, lsb);
	}

}
