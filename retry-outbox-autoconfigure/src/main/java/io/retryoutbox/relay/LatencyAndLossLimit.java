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
 * of its own.
 */
final class LatencyAndLossLimit implements Limit {

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

	/**
	 * Feeds a sample to both limits and reports a new limit; synchronized, as the
	 * library's own limits are, since the limiter adjusts its permits by the difference
	 * from the previous limit, and two answers reporting at once made its permits drift
	 * from the limit (it refused requests with the limit not reached).
	 */
	@Override
	public synchronized void onSample(long startTime, long rtt, int inflight, boolean didDrop) {
		this.latency.onSample(startTime, rtt, inflight, didDrop);
		this.loss.onSample(startTime, rtt, inflight, didDrop);
		int limit = Math.min(this.latency.getLimit(), this.loss.getLimit());
		if (limit != this.limit) {
			this.limit = limit;
			this.listeners.forEach((listener) -> listener.accept(limit));
		}
	}

}
