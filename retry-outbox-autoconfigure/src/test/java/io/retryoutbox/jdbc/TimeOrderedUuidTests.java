package io.retryoutbox.jdbc;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link TimeOrderedUuid}.
 */
class TimeOrderedUuidTests {

	private static final int COUNT = 100_000;

	@Test
	void idsCreatedInATightLoopAreStrictlyIncreasingVersion7Variant2Uuids() {
		List<UUID> ids = new ArrayList<>(COUNT);
		for (int i = 0; i < COUNT; i++) {
			ids.add(TimeOrderedUuid.next());
		}
		assertStrictlyIncreasingVersion7(ids);
	}

	@Test
	void everyIdCarriesRandomBitsOfItsOwn() {
		Set<Long> randomBits = new HashSet<>();
		for (int i = 0; i < COUNT; i++) {
			randomBits.add(TimeOrderedUuid.next().getLeastSignificantBits());
		}
		assertThat(randomBits).hasSize(COUNT);
	}

	@Test
	void idsCarryTheMillisecondOfTheirCreation() {
		TimeOrderedUuid generator = new TimeOrderedUuid(Clock.systemUTC());
		long before = System.currentTimeMillis();
		UUID id = generator.generate();
		long after = System.currentTimeMillis();
		assertThat(id.getMostSignificantBits() >>> 16).isBetween(before, after);
	}

	@Test
	void moreIdsThanTheCounterHoldsInOneMillisecondStayIncreasing() {
		TimeOrderedUuid generator = new TimeOrderedUuid(
				Clock.fixed(Instant.parse("2025-06-01T12:00:00Z"), ZoneOffset.UTC));
		List<UUID> ids = new ArrayList<>(COUNT);
		for (int i = 0; i < COUNT; i++) {
			ids.add(generator.generate());
		}
		assertStrictlyIncreasingVersion7(ids);
	}

	@Test
	void idsStayIncreasingWhenTheClockGoesBack() {
		AtomicLong millis = new AtomicLong(Instant.parse("2025-06-01T12:00:00Z").toEpochMilli());
		TimeOrderedUuid generator = new TimeOrderedUuid(new SteppingClock(millis));
		List<UUID> ids = new ArrayList<>();
		for (int i = 0; i < 1_000; i++) {
			ids.add(generator.generate());
			// Back a second every tenth id, forward a millisecond otherwise.
			millis.addAndGet((i % 10 == 9) ? -1_000 : 1);
		}
		assertStrictlyIncreasingVersion7(ids);
	}

	@Test
	void idsCreatedOnSeveralThreadsAreDistinctAndIncreasingOnEachThread() throws Exception {
		ExecutorService executor = Executors.newFixedThreadPool(4);
		try {
			List<Future<List<UUID>>> results = new ArrayList<>();
			for (int t = 0; t < 4; t++) {
				results.add(executor.submit(() -> {
					List<UUID> ids = new ArrayList<>(COUNT / 4);
					for (int i = 0; i < COUNT / 4; i++) {
						ids.add(TimeOrderedUuid.next());
					}
					return ids;
				}));
			}
			List<UUID> all = new ArrayList<>(COUNT);
			for (Future<List<UUID>> result : results) {
				List<UUID> ids = result.get();
				assertStrictlyIncreasingVersion7(ids);
				all.addAll(ids);
			}
			assertThat(all).doesNotHaveDuplicates();
		}
		finally {
			executor.shutdownNow();
		}
	}

	private static void assertStrictlyIncreasingVersion7(List<UUID> ids) {
		for (int i = 0; i < ids.size(); i++) {
			UUID id = ids.get(i);
			assertThat(id.version()).as("version of %s", id).isEqualTo(7);
			assertThat(id.variant()).as("variant of %s", id).isEqualTo(2);
			if (i > 0) {
				assertThat(compareUnsigned(id, ids.get(i - 1))).as("%s after %s", id, ids.get(i - 1)).isPositive();
			}
		}
	}

	/**
	 * Compares as the 128-bit unsigned numbers that sort UUIDs in PostgreSQL and as
	 * strings; {@link UUID#compareTo} compares signed halves.
	 */
	private static int compareUnsigned(UUID a, UUID b) {
		int msb = Long.compareUnsigned(a.getMostSignificantBits(), b.getMostSignificantBits());
		return (msb != 0) ? msb : Long.compareUnsigned(a.getLeastSignificantBits(), b.getLeastSignificantBits());
	}

	private static final class SteppingClock extends Clock {

		private final AtomicLong millis;

		SteppingClock(AtomicLong millis) {
			this.millis = millis;
		}

		@Override
		public long millis() {
			return this.millis.get();
		}

		@Override
		public Instant instant() {
			return Instant.ofEpochMilli(millis());
		}

		@Override
		public ZoneId getZone() {
			return ZoneOffset.UTC;
		}

		@Override
		public Clock withZone(ZoneId zone) {
			return this;
		}

	}

}
