package io.retryoutbox.jdbc;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Creates version 7 UUIDs (RFC 9562): a millisecond timestamp, a counter and random bits,
 * so ids sort by creation time and index well.
 * <p>
 * The ids of one generator are strictly increasing (RFC 9562, section 6.2, method 1): the
 * 12 bits of {@code rand_a} hold a counter that starts at a random value below 2048 in
 * every new millisecond and grows by one for each further id of that millisecond. A
 * counter that runs over carries into the timestamp, and a clock that goes back is not
 * followed, so an id is never smaller than the one before, however many ids a millisecond
 * sees and whatever the clock does.
 */
final class TimeOrderedUuid {

	// One DRBG per thread: the default SecureRandom (NativePRNG) serializes every caller
	// on one lock, which the enqueuing threads of the bench's profile waited on. Its bits
	// are drawn 512 bytes at a time: a DRBG call costs about as much for 8 bytes as for
	// 512, and one call per id took 17% of the enqueue's own time in the bench's cost
	// profile.
	private static final ThreadLocal<RandomBits> RANDOM = ThreadLocal.withInitial(() -> new RandomBits(drbg()));

	private static final TimeOrderedUuid SHARED = new TimeOrderedUuid(Clock.systemUTC());

	private static final int COUNTER_BITS = 12;

	private final Clock clock;

	// The timestamp and the counter of the last id, as the 60 bits they fill in it.
	private final AtomicLong last = new AtomicLong();

	/**
	 * Creates a generator of its own; ids are increasing per generator.
	 * @param clock the clock whose milliseconds the ids carry
	 */
	TimeOrderedUuid(Clock clock) {
		this.clock = clock;
	}

	/**
	 * Returns the next id of the generator that this JVM shares, on the system clock.
	 * @return an id greater than every id it returned before
	 */
	static UUID next() {
		return SHARED.generate();
	}

	private static SecureRandom drbg() {
		try {
			return SecureRandom.getInstance("DRBG");
		}
		catch (NoSuchAlgorithmException ex) {
			return new SecureRandom();
		}
	}

	/**
	 * Returns the next id of this generator.
	 * @return an id greater than every id this generator returned before
	 */
	UUID generate() {
		long millis = this.clock.millis();
		// The counter's start needs no secrecy, only spread.
		long seed = ThreadLocalRandom.current().nextInt(1 << (COUNTER_BITS - 1));
		long next = this.last.updateAndGet(
				(previous) -> ((previous >>> COUNTER_BITS) < millis) ? (millis << COUNTER_BITS) | seed : previous + 1);
		long msb = ((next >>> COUNTER_BITS) << 16) | 0x7000L | (next & 0x0FFFL);
		long lsb = (RANDOM.get().nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
		return new UUID(msb, lsb);
	}

	/**
	 * Random longs from a secure random generator, drawn in blocks; one thread's.
	 */
	private static final class RandomBits {

		private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

		private final SecureRandom random;

		private final byte[] block = new byte[512];

		private int next = this.block.length;

		RandomBits(SecureRandom random) {
			this.random = random;
		}

		long nextLong() {
			if (this.next == this.block.length) {
				this.random.nextBytes(this.block);
				this.next = 0;
			}
			long value = (long) LONGS.get(this.block, this.next);
			this.next += Long.BYTES;
			return value;
		}

	}

}
