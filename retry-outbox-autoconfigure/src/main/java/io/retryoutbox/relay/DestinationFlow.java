package io.retryoutbox.relay;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.Limiter;
import com.netflix.concurrency.limits.limit.FixedLimit;
import com.netflix.concurrency.limits.limiter.SimpleLimiter;
import io.retryoutbox.DeliveryOutcome;
import io.retryoutbox.retry.RetryAfter;
import io.retryoutbox.retry.TransientStatus;
import org.jspecify.annotations.Nullable;

import org.springframework.core.NestedExceptionUtils;
import org.springframework.http.HttpHeaders;

/**
 * How many requests one destination may have in flight: an adaptive limit (Netflix
 * concurrency-limits, see {@link LatencyAndLossLimit}) that grows while latency stays
 * near its floor and answers are good, and shrinks on rising latency and on answers that
 * say the downstream is overloaded (429, 503, a timeout), capped at the destination's
 * {@code max-concurrency}; or a fixed limit at that cap. Within that, at most
 * {@code max-rate} requests start per second, if it is set (see {@link DestinationRate}).
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

	private final RelayDestination.Flow flow;

	private final DestinationRate rate;

	private final LongSupplier nanoClock;

	private volatile long pausedUntil;

	private volatile boolean probing;

	// Consecutive transient failures, and how often the circuit opened in a row: the
	// interval between probes doubles with each.
	private final AtomicInteger failures = new AtomicInteger();

	private volatile int openings;

	DestinationFlow(String destination, RelayDestination.Flow flow) {
		this(destination, flow, System::nanoTime);
	}

	DestinationFlow(String destination, RelayDestination.Flow flow, LongSupplier nanoClock) {
		Limit limit = flow.adaptive()
				? new LatencyAndLossLimit(Math.min(INITIAL_LIMIT, flow.maxConcurrency()), flow.maxConcurrency())
				: FixedLimit.of(flow.maxConcurrency());
		this.limiter = SimpleLimiter.newBuilder().named(destination).limit(limit).nanoClock(nanoClock).build();
		this.flow = flow;
		this.rate = new DestinationRate(flow.maxRate(), nanoClock);
		this.nanoClock = nanoClock;
		this.pausedUntil = nanoClock.getAsLong();
	}

	/**
	 * How many more requests may start now: none while the destination is paused, one
	 * probe at a time once the pause is over until a probe gets through, else what the
	 * limit leaves free; never more than the rate allows now.
	 * @return the free permits, never negative
	 */
	int available() {
		DestinationState state = state();
		if (state == DestinationState.PAUSED) {
			return 0;
		}
		int free = Math.max(0, this.limiter.getLimit() - this.limiter.getInflight());
		if (state == DestinationState.PROBING) {
			free = Math.min(free, (this.limiter.getInflight() == 0) ? 1 : 0);
		}
		return Math.min(free, this.rate.available());
	}

	/**
	 * How long until the rate lets one more request start, so that the relay comes back
	 * for a destination with more due messages then.
	 * @return the wait, zero if one may start now or the destination has no rate
	 */
	Duration untilRatePermits() {
		return this.rate.untilNext();
	}

	/**
	 * Whether the destination takes requests.
	 * @return the state
	 */
	DestinationState state() {
		if (this.nanoClock.getAsLong() - this.pausedUntil < 0) {
			return DestinationState.PAUSED;
		}
		return this.probing ? DestinationState.PROBING : DestinationState.OPEN;
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
	 * Takes a permit and a token of the rate for one claimed request. The relay claims
	 * only what {@link #available()} allowed, but the limit may have shrunk since: the
	 * request is sent all the same, outside the limit's count, rather than leave a
	 * claimed message waiting for its lease to run out.
	 * @return the permit, released by {@link #release}
	 */
	Limiter.Listener acquire() {
		this.rate.take();
		return this.limiter.acquire(null).orElse(UNCOUNTED);
	}

	/**
	 * Gives a permit back, telling the limit what the request's answer says of the
	 * downstream's load; a 429 or 503 with {@code Retry-After} pauses the whole
	 * destination until then, when pausing is on, since it tells every caller to back
	 * off, not just this request.
	 * @param permit the permit
	 * @param outcome what the request produced
	 */
	void release(Limiter.Listener permit, DeliveryOutcome outcome) {
		signal(permit, outcome);
		DestinationState state = state();
		Duration retryAfter = (this.flow.pauseOnRetryAfter()) ? retryAfter(outcome) : null;
		if (retryAfter != null) {
			pause(retryAfter);
		}
		else if (isTransient(outcome)) {
			int failures = this.failures.incrementAndGet();
			int threshold = this.flow.circuitFailureThreshold();
			if (threshold > 0 && (state == DestinationState.PROBING
					|| (state == DestinationState.OPEN && failures >= threshold))) {
				pause(Duration.ofSeconds(1L << Math.min(this.openings++, 20)));
			}
		}
		else {
			this.failures.set(0);
			// Only an answer after the pause opens up again; one to a request sent
			// before it says nothing of now.
			if (state == DestinationState.PROBING) {
				this.probing = false;
				this.openings = 0;
			}
		}
	}

	private void pause(Duration pause) {
		this.failures.set(0);
		this.pausedUntil = this.nanoClock.getAsLong() + min(pause, this.flow.maxPause()).toNanos();
		this.probing = true;
	}

	/**
	 * Whether an outcome counts towards opening the circuit: what the default policy
	 * retries by status, and every failure to get a response. A 409 the policy retries
	 * for its error code ({@code RESOURCE_LOCKED}) is not counted: it says one resource
	 * is busy, not that the destination is failing.
	 */
	private static boolean isTransient(DeliveryOutcome outcome) {
		if (outcome instanceof DeliveryOutcome.Response response) {
			return TransientStatus.isTransient(response.statusCode());
		}
		return true;
	}

	private static @Nullable Duration retryAfter(DeliveryOutcome outcome) {
		if (outcome instanceof DeliveryOutcome.Response response
				&& (response.statusCode() == 429 || response.statusCode() == 503)) {
			return RetryAfter.parse(response.headers().getFirst(HttpHeaders.RETRY_AFTER), Instant.now()).orElse(null);
		}
		return null;
	}

	private static Duration min(Duration a, Duration b) {
		return (a.compareTo(b) <= 0) ? a : b;
	}

	private static void signal(Limiter.Listener permit, DeliveryOutcome outcome) {
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
