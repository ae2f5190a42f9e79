package io.retryoutbox.relay;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.IntSupplier;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.limit.AIMDLimit;
import com.netflix.concurrency.limits.limit.Gradient2Limit;

/**
 * The lower of two limits from Netflix concurrency-limits, fed the same samples: a
 * gradient limit, which follows latency but ignores dropped requests, and an AIMD limit,
 * which backs off on dropped requests (429, 503, timeouts) but ignores latency. The
 * library has no limit that does both, which a destination needs; this only combines two
 * of its own. Latency under {@value #LATENCY_FLOOR_NANOS} ns counts as that floor.
 * <p>
 * The gradient limit is tuned to settle near a destination's knee, where its latency
 * starts to rise with the requests in flight. With the library's defaults (tolerance 1.5,
 * smoothing 0.2) it swung between 8 and 64 around a knee at 24: each answer grew the
 * limit by 0.8, most of the limit per round trip, so it was far past the knee before the
 * first slow answer came back a round trip later; then the slow answers, each allowed to
 * cut 10%, brought it down to 8 within one round trip. Smoothing 0.05 grows it by 0.2 an
 * answer and cuts at most 2.5%, slow enough for a signal one round trip late. Tolerance
 * 1.2 shrinks it once the latency is a fifth above the long-term average rather than half
 * as much again: that average follows the latency up, so with 1.5 the limit crept past
 * the knee.
 * <p>
 * The relay sends what a round claimed at once, and the answers come back spread out. Two
 * things about such a burst misled the gradient limit, which held a limit of 20-30 while
 * a fixed limit delivered two to three times as many messages in a cold relay's first
 * seconds (docs/benchmarks.md). It counts an answer as the latency now, and on a busy
 * machine the last requests of a burst wait longest in the relay's own client, so they
 * are slower than the average without any queue downstream; it now gets the average of
 * about the last limit's worth of answers, which still rises within a round trip when a
 * queue builds. And it takes an answer with under half the limit in flight when its
 * request was sent as the relay not using its limit, which is the first half of every
 * burst; it now gets the most in flight while the request was out, at its start or at its
 * answer. The AIMD limit keeps the count at the start: it grows by one for each answer it
 * counts, and with every answer of a burst counted it outgrew a downstream that answers
 * 503 to a third of the requests.
 * <p>
 * The gradient limit cuts a little on each slow answer, so when the machine stalls for a
 * moment and every request in flight comes back late at once, it cut a limit of 153 to 34
 * within a quarter of a second, on no queue downstream, and took seconds to grow back
 * (docs/benchmarks.md). As TCP cuts its window at most once a round trip, it now gives up
 * at most half of itself until an answer comes to a request sent after that round trip
 * began: only that answer shows what the cut did. (The last answer it takes may cut it a
 * step under half.)
 */
final class LatencyAndLossLimit implements Limit {

	// Below this, a request's time is mostly the relay's own: its event loop and the
	// rounds it waits for under a busy CPU, not a queue at the downstream. Read as
	// overload, a rise from 1 to 10 ms held a 0 ms downstream at 652/s where a fixed
	// limit reached 1,136/s (docs/benchmarks.md).
	static final long LATENCY_FLOOR_NANOS = 25_000_000L;

	private final Gradient2Limit latency;

	private final AIMDLimit loss;

	private final IntSupplier inFlight;

	private double recentRtt;

	// The round trip the latency limit is in: it began when the answer at windowStart
	// came, and lasts until an answer to a request sent after that comes back. Within it
	// the latency limit is fed no more answers once it is down to windowFloor.
	private long windowStart = Long.MIN_VALUE;

	private int windowFloor;

	private final List<Consumer<Integer>> listeners = new CopyOnWriteArrayList<>();

	private volatile int limit;

	/**
	 * Creates a limit.
	 * @param initialLimit the limit to start at
	 * @param maxLimit the highest limit
	 * @param inFlight the requests in flight now, read when an answer is counted
	 */
	LatencyAndLossLimit(int initialLimit, int maxLimit, IntSupplier inFlight) {
		this.latency = Gradient2Limit.newBuilder()
			.initialLimit(initialLimit)
			.minLimit(1)
			.maxConcurrency(maxLimit)
			.rttTolerance(1.2)
			.smoothing(0.05)
			.build();
		this.loss = AIMDLimit.newBuilder().initialLimit(initialLimit).minLimit(1).maxLimit(maxLimit).build();
		this.inFlight = inFlight;
		this.limit = initialLimit;
	}

	@Override
	public int getLimit() {
		return this.limit;
	}

	@Override
	public void notifyOnChange(Consumer<Integer> consumer) {
		this.listeners.add(consumer);
	}

	/**
	 * Feeds a sample to both limits and reports a new limit; synchronized, as the
	 * library's own limits are, since the limiter adjusts its permits by the difference
	 * from the previous limit, and two answers reporting at once made its permits drift
	 * from the limit (it refused requests with the limit not reached).
	 */
	@Override
	public synchronized void onSample(long startTime, long rtt, int inflight, boolean didDrop) {
		long floored = Math.max(rtt, LATENCY_FLOOR_NANOS);
		double weight = 2.0 / (this.latency.getLimit() + 1);
		this.recentRtt = (this.recentRtt == 0) ? floored : this.recentRtt + weight * (floored - this.recentRtt);
		int busiest = Math.max(inflight, this.inFlight.getAsInt());
		if (this.windowStart == Long.MIN_VALUE || startTime - this.windowStart >= 0) {
			this.windowStart = startTime + rtt;
			this.windowFloor = this.latency.getLimit() / 2;
		}
		if (this.latency.getLimit() > this.windowFloor) {
			this.latency.onSample(startTime, (long) this.recentRtt, busiest, didDrop);
		}
		this.loss.onSample(startTime, rtt, inflight, didDrop);
		int limit = Math.min(this.latency.getLimit(), this.loss.getLimit());
		if (limit != this.limit) {
			this.limit = limit;
			this.listeners.forEach((listener) -> listener.accept(limit));
		}
	}

}
