package io.retryoutbox.relay;

import java.time.Duration;
import java.util.function.LongSupplier;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.TimeMeter;
import org.jspecify.annotations.Nullable;

/**
 * How many requests per second one destination may start: a token bucket (bucket4j), one
 * token per request, or no limit.
 * <p>
 * A bucket of capacity {@code c} refilled greedily with {@code r} tokens per second lets
 * through, in a one-second window, what it held at the start plus what it refills within:
 * at most {@code c + ceil(r) - 1}, since a full bucket does not refill. A full bucket of
 * {@code max-rate} refilled at {@code max-rate} would allow almost twice the rate in a
 * second; so for every one-second window to hold at most {@code n = floor(max-rate)}
 * requests, the bucket refills {@code n - c + 1} tokens, and spreads them over a second
 * and {@link #JITTER}, so that a request that reaches the downstream a few milliseconds
 * later than one sent before it does not add one too many to the downstream's second.
 * <p>
 * The relay comes back for a destination when its next token is due, but takes the token
 * a few milliseconds later, after its claim; a bucket of one is full meanwhile and loses
 * that time. So the bucket holds one token more for every token {@code n} yields in
 * {@link #SLACK} of such lateness, as long as that costs at most a twentieth of the rate
 * (each is a token per second less): none below 20 per second, where a late poll loses
 * less than a token would cost. {@code max-rate} 10 refills 10 tokens, 20 refills 19 with
 * a burst of 2, 100 refills 98 with a burst of 3. Below one per second, the bucket holds
 * one token, refilled every {@code 1 / max-rate} seconds and {@link #JITTER}.
 */
final class DestinationRate {

	/**
	 * The largest rate: bucket4j refills at most one token per nanosecond.
	 */
	static final double MAX_RATE = 1e9;

	private static final Duration SLACK = Duration.ofMillis(20);

	private static final Duration JITTER = Duration.ofMillis(10);

	private final @Nullable Bucket bucket;

	/**
	 * Creates the rate of a destination.
	 * @param maxRate the largest number of requests per second,
	 * {@link Double#POSITIVE_INFINITY} for no limit
	 * @param nanoClock the clock that tokens are refilled by
	 */
	DestinationRate(double maxRate, LongSupplier nanoClock) {
		this.bucket = Double.isInfinite(maxRate) ? null
				: Bucket.builder()
					.addLimit(bandwidth(maxRate))
					.withCustomTimePrecision(new NanoClock(nanoClock))
					.build();
	}

	private static Bandwidth bandwidth(double maxRate) {
		if (maxRate < 1) {
			// Rounding the period up never exceeds the rate.
			Duration period = Duration.ofNanos((long) Math.ceil(1e9 / maxRate)).plus(JITTER);
			return Bandwidth.builder().capacity(1).refillGreedy(1, period).initialTokens(1).build();
		}
		long perSecond = (long) Math.min(Math.floor(maxRate), MAX_RATE);
		long slack = Math.min(ceilDiv(perSecond * SLACK.toNanos(), Duration.ofSeconds(1).toNanos()), perSecond / 20);
		long capacity = 1 + slack;
		return Bandwidth.builder()
			.capacity(capacity)
			.refillGreedy(perSecond - capacity + 1, Duration.ofSeconds(1).plus(JITTER))
			.initialTokens(capacity)
			.build();
	}

	private static long ceilDiv(long x, long y) {
		return -Math.floorDiv(-x, y);
	}

	/**
	 * How many requests may start now as far as the rate is concerned.
	 * @return the tokens available now, {@link Integer#MAX_VALUE} without a limit
	 */
	int available() {
		if (this.bucket == null) {
			return Integer.MAX_VALUE;
		}
		return (int) Math.max(0, Math.min(Integer.MAX_VALUE, this.bucket.getAvailableTokens()));
	}

	/**
	 * Takes the token of a request that starts. It is taken even if none is left, in debt
	 * that the next tokens pay off, so that a claimed message is never held back; the
	 * relay claims only what {@link #available()} allowed, so it has one.
	 */
	void take() {
		if (this.bucket != null) {
			this.bucket.consumeIgnoringRateLimits(1);
		}
	}

	/**
	 * How long until the rate lets one more request start.
	 * @return the wait, zero if one may start now or there is no limit
	 */
	Duration untilNext() {
		if (this.bucket == null) {
			return Duration.ZERO;
		}
		return Duration.ofNanos(this.bucket.estimateAbilityToConsume(1).getNanosToWaitForRefill());
	}

	private record NanoClock(LongSupplier nanoTime) implements TimeMeter {

		@Override
		public long currentTimeNanos() {
			return this.nanoTime.getAsLong();
		}

		@Override
		public boolean isWallClockBased() {
			return false;
		}

	}

}
