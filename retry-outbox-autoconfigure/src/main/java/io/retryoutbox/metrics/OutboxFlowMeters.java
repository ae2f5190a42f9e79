package io.retryoutbox.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.retryoutbox.relay.OutboxRelay;

/**
 * The gauges of each destination's flow on this instance: {@code retry.outbox.flow.limit}
 * (how many requests may be in flight) and {@code retry.outbox.flow.in.flight}, tagged
 * with the destination. They read the relay's own counters, no query.
 */
public final class OutboxFlowMeters implements MeterBinder {

	private final OutboxRelay relay;

	/**
	 * Creates the gauges of a relay's destinations.
	 * @param relay the relay
	 */
	public OutboxFlowMeters(OutboxRelay relay) {
		this.relay = relay;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		for (String destination : this.relay.getDestinations()) {
			Gauge.builder("retry.outbox.flow.limit", this.relay, (relay) -> relay.getFlowLimit(destination))
				.description("How many requests to the destination may be in flight on this instance")
				.tag("destination", destination)
				.register(registry);
			Gauge.builder("retry.outbox.flow.in.flight", this.relay, (relay) -> relay.getInFlight(destination))
				.description("Requests to the destination in flight on this instance")
				.tag("destination", destination)
				.register(registry);
		}
	}

}
