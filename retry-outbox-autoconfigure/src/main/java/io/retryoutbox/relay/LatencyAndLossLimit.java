package io.retryoutbox.relay;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.limit.AIMDLimit;
import com.netflix.concurrency.limits.limit.Gradient2Limit;

/**
 * The lower of two limits from Netflix concurrency-limits, fed the same samples: a
 * gradient limit, which follows latency but ignores dropped requests, and an AIMD limit,
 * which backs off on dropped requests (429, 503, timeouts) but ignores latency. The
 * library has no limit that does both, which a destination needs; this only combines two
 * of its own. Latency under {@value #LATENCY_FLOOR_NANOS} ns counts as that floor.
 */
final class LatencyAndLossLimit implements Limit {

	// Below this, a request's time is mostly the relay's own: its event loop and the
	// rounds it waits for under a busy CPU, not a queue at the downstream. Read as
	// overload, a rise from 1 to 10 ms held a 0 ms downstream at 652/s where a fixed
	// limit
	// reached 1,136/s (docs/benchmarks.md).
	static final long LATENCY_FLOOR_NANOS = 25_000_000L;

	private final Gradient2Limit latency;

	private final AIMDLimit loss;

	private final List<Consumer<Integer>> listeners = new CopyOnWriteArrayList<>();

	private volatile int limit;

	LatencyAndLossLimit(int initialLimit, int maxLimit) {
		this.latency = Gradient2Limit.newBuilder()
			.initialLimit(initialLimit)
			.minLimit(1)
			.maxConcurrency(maxLimit)
			.build();
		this.loss = AIMDLimit.newBuilder().initialLimit(initialLimit).minLimit(1).maxLimit(maxLimit).build();
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

	@Override
	public void onSample(long startTime, long rtt, int inflight, boolean didDrop) {
		this.latency.onSample(startTime, Math.max(rtt, LATENCY_FLOOR_NANOS), inflight, didDrop);
		this.loss.onSample(startTime, rtt, inflight, didDrop);
		int limit = Math.min(this.latency.getLimit(), this.loss.getLimit());
		if (limit != this.limit) {
			this.limit = limit;
			this.listeners.forEach((listener) -> listener.accept(limit));
		}
	}

}
