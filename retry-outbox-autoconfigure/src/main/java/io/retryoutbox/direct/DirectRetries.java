package io.retryoutbox.direct;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;

import io.retryoutbox.RetryPolicy;

import org.springframework.context.SmartLifecycle;
import org.springframework.util.Assert;

/**
 * The relay's {@link RetryPolicy} for the calls a service makes to the same destinations
 * directly, outside the outbox: {@link #forDestination(String)} gives what a WebClient, a
 * Spring Framework 7 {@code RetryTemplate} or spring-retry needs to classify and back off
 * exactly as the relay does, from the same {@code retry-outbox.destinations.<name>}
 * configuration.
 * <p>
 * As a {@link SmartLifecycle} it stops in the first phase of the application's shutdown,
 * and every direct call then waiting for its next attempt ends at once, with the last
 * attempt's outcome.
 * <p>
 * Retry in one layer only: never wrap relay traffic in another retry, and never retry a
 * direct call again around these.
 */
public final class DirectRetries implements SmartLifecycle {

	private final RetryPolicy policy;

	private final Map<String, Duration> attemptTimeouts;

	private final String idempotencyKeyHeader;

	private final int maxErrorBodyBytes;

	private final Clock clock;

	private final StopSignal stopSignal = new StopSignal();

	private volatile boolean running;

	/**
	 * Creates the direct retries of the given destinations.
	 * @param policy the policy the relay uses, which decides by the attempt's destination
	 * @param attemptTimeouts the deadline of one attempt, by configured destination name
	 * @param idempotencyKeyHeader the header that carries a call's idempotency key
	 * @param maxErrorBodyBytes how much of an error body the policy is given to classify
	 * @param clock the clock the policy schedules retries from
	 */
	public DirectRetries(RetryPolicy policy, Map<String, Duration> attemptTimeouts, String idempotencyKeyHeader,
			int maxErrorBodyBytes, Clock clock) {
		Assert.notNull(policy, "'policy' must not be null");
		Assert.notNull(attemptTimeouts, "'attemptTimeouts' must not be null");
		Assert.hasText(idempotencyKeyHeader, "'idempotencyKeyHeader' must not be empty");
		Assert.isTrue(maxErrorBodyBytes >= 0, "'maxErrorBodyBytes' must not be negative");
		Assert.notNull(clock, "'clock' must not be null");
		this.policy = policy;
		this.attemptTimeouts = Map.copyOf(attemptTimeouts);
		this.idempotencyKeyHeader = idempotencyKeyHeader;
		this.maxErrorBodyBytes = maxErrorBodyBytes;
		this.clock = clock;
	}

	/**
	 * The retries of one destination.
	 * @param destination a destination configured under {@code retry-outbox.destinations}
	 * @return its retries
	 * @throws IllegalArgumentException if the destination is not configured
	 */
	public DestinationRetry forDestination(String destination) {
		Duration attemptTimeout = this.attemptTimeouts.get(destination);
		if (attemptTimeout == null) {
			throw new IllegalArgumentException(
					"Destination '" + destination + "' is not configured in retry-outbox.destinations; configured: "
							+ this.attemptTimeouts.keySet().stream().sorted().toList());
		}
		return new DestinationRetry(this.policy, destination, attemptTimeout, this.idempotencyKeyHeader,
				this.maxErrorBodyBytes, this.clock, this.stopSignal);
	}

	@Override
	public void start() {
		this.stopSignal.reset();
		this.running = true;
	}

	@Override
	public void stop() {
		this.running = false;
		this.stopSignal.stop();
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	/**
	 * Stops in the first phase, with the relay and before the web server waits for its
	 * requests in flight, so that no retry delay holds up a graceful shutdown.
	 */
	@Override
	public int getPhase() {
		return SmartLifecycle.DEFAULT_PHASE;
	}

}
