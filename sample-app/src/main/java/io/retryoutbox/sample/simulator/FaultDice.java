package io.retryoutbox.sample.simulator;

import java.nio.charset.StandardCharsets;
import java.util.EnumMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/**
 * Decides faults as a pure function of the seed, the idempotency key and the number of
 * the request with that key, so that a run's faults follow from its configuration and a
 * per-key fault sticks to its key.
 */
final class FaultDice {

	private static final long PER_KEY = -1;

	private final long seed;

	private final Map<Fault, Double> shares;

	FaultDice(long seed, SimulatorProperties.Faults faults) {
		this.seed = seed;
		this.shares = new EnumMap<>(Fault.class);
		for (Fault fault : Fault.values()) {
			double share = faults.share(fault);
			Assert.isTrue(share >= 0 && share <= 1,
					() -> "simulator share of " + fault + " must be between 0 and 1, was " + share);
			this.shares.put(fault, share);
		}
		assertTotalAtMostOne(false);
		assertTotalAtMostOne(true);
	}

	/**
	 * The fault of one request, if any.
	 * @param key the idempotency key
	 * @param attempt the number of the request with this key, starting at 1
	 * @return the fault, or {@code null}
	 */
	@Nullable Fault perRequest(String key, int attempt) {
		return pick(false, roll(key, attempt));
	}

	/**
	 * The fault of every request with a key, if any.
	 * @param key the idempotency key
	 * @return the fault, or {@code null}
	 */
	@Nullable Fault perKey(String key) {
		return pick(true, roll(key, PER_KEY));
	}

	private @Nullable Fault pick(boolean perKey, double roll) {
		double bound = 0;
		for (Fault fault : Fault.values()) {
			if (fault.isPerKey() == perKey) {
				bound += this.shares.get(fault);
				if (roll < bound) {
					return fault;
				}
			}
		}
		return null;
	}

	private double roll(String key, long salt) {
		long hash = mix(mix(this.seed ^ fnv1a(key)) ^ salt);
		return (hash >>> 11) * 0x1.0p-53;
	}

	private void assertTotalAtMostOne(boolean perKey) {
		double total = this.shares.entrySet()
			.stream()
			.filter((entry) -> entry.getKey().isPerKey() == perKey)
			.mapToDouble(Map.Entry::getValue)
			.sum();
		Assert.isTrue(total <= 1.0 + 1e-9, () -> "simulator shares of " + (perKey ? "per-key" : "per-request")
				+ " faults must add up to at most 1, were " + total);
	}

	private static long fnv1a(String text) {
		long hash = 0xcbf29ce484222325L;
		for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
			hash ^= (b & 0xff);
			hash *= 0x100000001b3L;
		}
		return hash;
	}

	/**
	 * The SplitMix64 finalizer: spreads every input bit over the whole result.
	 */
	private static long mix(long z) {
		z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
		z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
		return z ^ (z >>> 31);
	}

}
