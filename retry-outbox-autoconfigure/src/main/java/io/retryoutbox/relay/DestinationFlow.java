package io.retryoutbox.relay;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
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
 * The latency it reads is the destination's own where the sender notes it (see
 * {@link RoundTrip}), else a permit's time from its acquisition to its release.
 */
final class DestinationFlow {

	// Not the library's 20: that holds a healthy 20 ms downstream to 1,000 requests a
	// second until the limit has grown, which took a cold relay a second and a half while
	// the writers committed twice as many (docs/benchmarks.md, twenty-fifth session). The
	// warm-up already sends 64 at a time, and a downstream that cannot take them cuts the
	// limit within a round trip.
	static final int INITIAL_LIMIT = 64;

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

	private final Limit limit;

	private final RelayDestination.Flow flow;

	private final DestinationRate rate;

	private final LongSupplier nanoClock;

	private volatile long pausedUntil;

	private volatile boolean probing;

	// Consecutive transient failures, and how often the circuit opened in a row: the
	// interval between probes doubles with each.
	private final AtomicInteger failures = new AtomicInteger();

	// Runs out: each has at most one request in flight, and takes its next permit as its
	// last answer gives one back, so it counts against the limit in between too.
	private final AtomicInteger runs = new AtomicInteger();

	private volatile int openings;

	private volatile Listener listener = Listener.NONE;

	DestinationFlow(String destination, RelayDestination.Flow flow) {
		this(destination, flow, System::nanoTime);
	}

	DestinationFlow(String destination, RelayDestination.Flow flow, LongSupplier nanoClock) {
		Limit limit = flow.adaptive() ? new LatencyAndLossLimit(Math.min(INITIAL_LIMIT, flow.maxConcurrency()),
				flow.maxConcurrency(), this::inFlight) : FixedLimit.of(flow.maxConcurrency());
		this.limiter = SimpleLimiter.newBuilder().named(destination).limit(limit).nanoClock(nanoClock).build();
		this.limit = limit;
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
		int busy = Math.max(this.runs.get(), this.limiter.getInflight());
		int free = Math.max(0, this.limiter.getLimit() - busy);
		if (state == DestinationState.PROBING) {
			free = Math.min(free, (busy == 0) ? 1 : 0);
		}
		return Math.min(free, this.rate.available());
	}

	/**
	 * Counts a run out until {@link #endRun()}.
	 */
	void startRun() {
		this.runs.incrementAndGet();
	}

	void endRun() {
		this.runs.decrementAndGet();
	}

	/**
	 * Whether a run that just had a good answer may send its next message: the
	 * destination is open and its rate allows one more now. The limit is not asked: a
	 * run's next request replaces its last, so it adds nothing in flight, and a limit
	 * that fell takes effect as runs end (at most a run's size later, or at once on an
	 * answer that is not a success), rather than by cutting runs that were claimed and
	 * would be given back.
	 * @return whether the run goes on
	 */
	boolean continuesRun() {
		return state() == DestinationState.OPEN && this.rate.available() > 0;
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
	 * What is left of the pause.
	 * @return the time until the next probe may go, zero if it may go now
	 */
	Duration pauseLeft() {
		long left = this.pausedUntil - this.nanoClock.getAsLong();
		return (left > 0) ? Duration.ofNanos(left) : Duration.ZERO;
	}

	/**
	 * Sets who hears of this flow's own pauses, and of the probe that ends one.
	 * @param listener the listener
	 */
	void listen(Listener listener) {
		this.listener = listener;
	}

	/**
	 * Pauses for at least {@code pause}, because another instance paused the destination;
	 * a probe follows, as after a pause of its own. A longer pause of its own stays.
	 * @param pause how long from now
	 */
	void adopt(Duration pause) {
		long until = this.nanoClock.getAsLong() + pause.toNanos();
		if (until - this.pausedUntil > 0) {
			this.pausedUntil = until;
		}
		this.probing = true;
	}

	/**
	 * Opens up at once, without a probe: another instance's probe got through, or an
	 * operator resumed the destination.
	 */
	void reopen() {
		this.pausedUntil = this.nanoClock.getAsLong();
		this.probing = false;
		this.openings = 0;
		this.failures.set(0);
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
	 * @return the permit, released by {@link #release}, or ignored if its request is
	 * cancelled; only its first release counts
	 */
	Limiter.Listener acquire() {
		this.rate.take();
		Optional<Limiter.Listener> permit = this.limiter.acquire(null);
		return permit.isPresent() ? new OncePermit(permit.get(), this.limiter.getInflight()) : UNCOUNTED;
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
		release(permit, outcome, -1);
	}

	/**
	 * Gives a permit back, as {@link #release(Limiter.Listener, DeliveryOutcome)} does,
	 * with the limit told the destination's own time where the request's sender noted it:
	 * from the request going out to its answer's head coming back. The permit's own time,
	 * from its acquisition to now, also holds the relay's work and its waits for the CPU
	 * before and after, which rise on a busy machine as a queue downstream would.
	 * @param permit the permit
	 * @param outcome what the request produced
	 * @param roundTripNanos the destination's time, or {@code -1} if not known
	 */
	void release(Limiter.Listener permit, DeliveryOutcome outcome, long roundTripNanos) {
		if (roundTripNanos >= 0 && outcome instanceof DeliveryOutcome.Response response
				&& permit instanceof OncePermit once) {
			once.sample(this.limit, this.nanoClock.getAsLong() - roundTripNanos, roundTripNanos, dropped(response));
		}
		else {
			signal(permit, outcome);
		}
		DestinationState state = state();
		Duration retryAfter = (this.flow.pauseOnRetryAfter()) ? retryAfter(outcome) : null;
		if (retryAfter != null) {
			pause(retryAfter, PauseReason.RETRY_AFTER,
					describe(outcome) + " Retry-After " + retryAfter.toSeconds() + "s");
		}
		else if (isTransient(outcome)) {
			int failures = this.failures.incrementAndGet();
			int threshold = this.flow.circuitFailureThreshold();
			if (threshold > 0 && (state == DestinationState.PROBING
					|| (state == DestinationState.OPEN && failures >= threshold))) {
				pause(Duration.ofSeconds(1L << Math.min(this.openings++, 20)), PauseReason.CIRCUIT,
						(state == DestinationState.PROBING) ? "probe failed: " + describe(outcome)
								: failures + " consecutive transient failures, the last " + describe(outcome));
			}
		}
		else {
			this.failures.set(0);
			// Only an answer after the pause opens up again; one to a request sent
			// before it says nothing of now.
			if (state == DestinationState.PROBING) {
				this.listener.reopened();
				this.probing = false;
				this.openings = 0;
			}
		}
	}

	private void pause(Duration pause, PauseReason reason, String detail) {
		this.failures.set(0);
		Duration capped = min(pause, this.flow.maxPause());
		this.listener.paused(capped, reason, detail);
		this.pausedUntil = this.nanoClock.getAsLong() + capped.toNanos();
		this.probing = true;
	}

	private static String describe(DeliveryOutcome outcome) {
		if (outcome instanceof DeliveryOutcome.Response response) {
			return "HTTP " + response.statusCode();
		}
		Throwable cause = NestedExceptionUtils.getMostSpecificCause(((DeliveryOutcome.Failure) outcome).cause());
		return cause.getClass().getSimpleName();
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

	/**
	 * Whether an answer says the downstream is overloaded and dropped the request.
	 */
	private static boolean dropped(DeliveryOutcome.Response response) {
		return response.statusCode() == 429 || response.statusCode() == 503;
	}

	private static void signal(Limiter.Listener permit, DeliveryOutcome outcome) {
		if (outcome instanceof DeliveryOutcome.Response response) {
			if (dropped(response)) {
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

	/**
	 * A permit that counts its first release only: a request cancelled by a stop gives
	 * its permit back as ignored, which can race with its answer, and the limiter counts
	 * every release it is told of.
	 */
	private static final class OncePermit implements Limiter.Listener {

		private final Limiter.Listener permit;

		// In flight when it was acquired, as the limiter tells its limit.
		private final int inFlight;

		private final AtomicBoolean released = new AtomicBoolean();

		OncePermit(Limiter.Listener permit, int inFlight) {
			this.permit = permit;
			this.inFlight = inFlight;
		}

		/**
		 * Gives the permit back without the limiter's own sample, and tells the limit
		 * this one instead, unless it was given back already.
		 */
		void sample(Limit limit, long startTime, long rtt, boolean dropped) {
			if (this.released.compareAndSet(false, true)) {
				this.permit.onIgnore();
				limit.onSample(startTime, rtt, this.inFlight, dropped);
			}
		}

		@Override
		public void onSuccess() {
			if (this.released.compareAndSet(false, true)) {
				this.permit.onSuccess();
			}
		}

		@Override
		public void onIgnore() {
			if (this.released.compareAndSet(false, true)) {
				this.permit.onIgnore();
			}
		}

		@Override
		public void onDropped() {
			if (this.released.compareAndSet(false, true)) {
				this.permit.onDropped();
			}
		}

	}

	/**
	 * Hears of a flow's own pauses and of the probe that ends one, on the thread that
	 * read the answer, just before the flow changes; it must not block.
	 */
	interface Listener {

		/** Hears nothing. */
		Listener NONE = new Listener() {

			@Override
			public void paused(Duration pause, PauseReason reason, String detail) {
			}

			@Override
			public void reopened() {
			}

		};

		/**
		 * The flow paused, or paused again.
		 * @param pause how long from now
		 * @param reason why
		 * @param detail what the destination answered
		 */
		void paused(Duration pause, PauseReason reason, String detail);

		/**
		 * A probe got through: the flow opened up again.
		 */
		void reopened();

	}

}
