package io.retryoutbox.relay;

import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.Limiter;
import com.netflix.concurrency.limits.limit.FixedLimit;
import com.netflix.concurrency.limits.limiter.SimpleLimiter;
import io.retryoutbox.DeliveryOutcome;

import org.springframework.core.NestedExceptionUtils;

/**
 * How many requests one destination may have in flight: an adaptive limit (Netflix
 * concurrency-limits, see {@link LatencyAndLossLimit}) that grows while latency stays
 * near its floor and answers are good, and shrinks on rising latency and on answers that
 * say the downstream is overloaded (429, 503, a timeout), capped at the destination's
 * {@code max-concurrency}; or a fixed limit at that cap.
 */
final class DestinationFlow {

	private static final int INITIAL_LIMIT = 20;

	private static final Limiter.Listener UNCOUNTED = new Limiter.Listener() {

		@Override
		public void onSuccess() {
		}

		@Override
		public void onIgnore() {
		}

		@Override
		public void onDropped() {
		}

	};

	private final SimpleLimiter<Void> limiter;

	DestinationFlow(String destination, RelayDestination.Flow flow) {
		this(destination, flow, System::nanoTime);
	}

	DestinationFlow(String destination, RelayDestination.Flow flow, LongSupplier nanoClock) {
		Limit limit = flow.adaptive()
				? new LatencyAndLossLimit(Math.min(INITIAL_LIMIT, flow.maxConcurrency()), flow.maxConcurrency())
				: FixedLimit.of(flow.maxConcurrency());
		this.limiter = SimpleLimiter.newBuilder().named(destination).limit(limit).nanoClock(nanoClock).build();
	}

	/**
	 * How many more requests may start now.
	 * @return the free permits, never negative
	 */
	int available() {
		return Math.max(0, this.limiter.getLimit() - this.limiter.getInflight());
	}

	/**
	 * The current limit.
	 * @return the limit
	 */
	int limit() {
		return this.limiter.getLimit();
	}

	/**
	 * The requests in flight.
	 * @return how many
	 */
	int inFlight() {
		return this.limiter.getInflight();
	}

	/**
	 * Takes a permit for one claimed request. The relay claims only what
	 * {@link #available()} allowed, but the limit may have shrunk since: the request is
	 * sent all the same, outside the limit's count, rather than leave a claimed message
	 * waiting for its lease to run out.
	 * @return the permit, released by {@link #release}
	 */
	Limiter.Listener acquire() {
		return this.limiter.acquire(null).orElse(UNCOUNTED);
	}

	/**
	 * Gives a permit back, telling the limit what the request's answer says of the
	 * downstream's load.
	 * @param permit the permit
	 * @param outcome what the request produced
	 */
	static void release(Limiter.Listener permit, DeliveryOutcome outcome) {
		if (outcome instanceof DeliveryOutcome.Response response) {
			int status = response.statusCode();
			if (status == 429 || status == 503) {
				permit.onDropped();
			}
			else {
				permit.onSuccess();
			}
			return;
		}
		Throwable cause = NestedExceptionUtils.getMostSpecificCause(((DeliveryOutcome.Failure) outcome).cause());
		if (cause instanceof TimeoutException) {
			permit.onDropped();
		}
		else {
			// A refused connection says nothing about latency under load.
			permit.onIgnore();
		}
	}

}
