package io.retryoutbox.sample.simulator;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration properties of the payments simulator.
 */
@ConfigurationProperties("simulator")
public class SimulatorProperties {

	/**
	 * Seed of the fault decisions, which are a function of it, the idempotency key and
	 * the number of the request with that key.
	 */
	private long seed;

	/**
	 * How long a slow answer takes; longer than the destination's timeout.
	 */
	private Duration slowDelay = Duration.ofSeconds(3);

	private final Faults faults = new Faults();

	public long getSeed() {
		return this.seed;
	}

	public void setSeed(long seed) {
		this.seed = seed;
	}

	public Duration getSlowDelay() {
		return this.slowDelay;
	}

	public void setSlowDelay(Duration slowDelay) {
		this.slowDelay = slowDelay;
	}

	public Faults getFaults() {
		return this.faults;
	}

	/**
	 * Shares of requests, between 0 and 1, that get each fault. The per-request shares
	 * must add up to at most 1, and so must the per-key ones.
	 */
	public static class Faults {

		/**
		 * Share of requests answered 503 with Retry-After: 1.
		 */
		private double unavailable;

		/**
		 * Share of requests answered 429 with a Retry-After HTTP-date.
		 */
		private double rateLimited;

		/**
		 * Share of requests answered 409 RESOURCE_LOCKED.
		 */
		private double locked;

		/**
		 * Share of requests processed but answered after the slow delay.
		 */
		private double slow;

		/**
		 * Share of requests processed but whose connection is dropped mid-answer.
		 */
		private double dropped;

		/**
		 * Share of idempotency keys answered 400, on every request.
		 */
		private double badRequest;

		/**
		 * Share of idempotency keys answered 409 CONFLICT, on every request.
		 */
		private double conflict;

		public double getUnavailable() {
			return this.unavailable;
		}

		public void setUnavailable(double unavailable) {
			this.unavailable = unavailable;
		}

		public double getRateLimited() {
			return this.rateLimited;
		}

		public void setRateLimited(double rateLimited) {
			this.rateLimited = rateLimited;
		}

		public double getLocked() {
			return this.locked;
		}

		public void setLocked(double locked) {
			this.locked = locked;
		}

		public double getSlow() {
			return this.slow;
		}

		public void setSlow(double slow) {
			this.slow = slow;
		}

		public double getDropped() {
			return this.dropped;
		}

		public void setDropped(double dropped) {
			this.dropped = dropped;
		}

		public double getBadRequest() {
			return this.badRequest;
		}

		public void setBadRequest(double badRequest) {
			this.badRequest = badRequest;
		}

		public double getConflict() {
			return this.conflict;
		}

		public void setConflict(double conflict) {
			this.conflict = conflict;
		}

		double share(Fault fault) {
			return switch (fault) {
				case UNAVAILABLE -> this.unavailable;
				case RATE_LIMITED -> this.rateLimited;
				case LOCKED -> this.locked;
				case SLOW -> this.slow;
				case DROPPED -> this.dropped;
				case BAD_REQUEST -> this.badRequest;
				case CONFLICT -> this.conflict;
			};
		}

	}

}
