package io.retryoutbox.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.retryoutbox.relay.DestinationState;
import io.retryoutbox.relay.OutboxRelay;

/**
 * The gauges of each destination's flow on this instance: {@code retry.outbox.flow.limit}
 * (how many requests may be in flight), {@code retry.outbox.flow.in.flight}, tagged with
 * the destination, and {@code retry.outbox.flow.state}, one per destination and state, 1
 * for the current state and 0 for the others. They read the relay's own counters, no
 * query.
 * <p>
 * A state set rather than one gauge holding a state's number: it needs no legend, sums
 * across instances by state ({@code sum by (state)}), and an alert is a plain comparison
 * ({@code retry_outbox_flow_state{state="PAUSED"} == 1}), as with the phase of a
 * Kubernetes pod.
 * <p>
 * Beside them, {@code retry.outbox.relay.running} says whether the relay delivers at all:
 * 1 while it polls (or waits for its start delay) and its last poll succeeded, 0 while it
 * is stopped, stopped polling unexpectedly, or its last poll failed (its database cannot
 * be read). Only an instance that runs a relay has it, so an enqueue-only instance raises
 * no alert.
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
		Gauge.builder("retry.outbox.relay.running", this.relay, (relay) -> delivers(relay) ? 1 : 0)
			.description("Whether the relay of this instance polls and its last poll succeeded (1) or not (0): "
					+ "stopped, stopped polling unexpectedly, or its last poll failed")
			.register(registry);
		for (String destination : this.relay.getDestinations()) {
			Gauge.builder("retry.outbox.flow.limit", this.relay, (relay) -> relay.getFlowLimit(destination))
				.description("How many requests to the destination may be in flight on this instance")
				.tag("destination", destination)
				.register(registry);
			Gauge.builder("retry.outbox.flow.in.flight", this.relay, (relay) -> relay.getInFlight(destination))
				.description("Requests to the destination in flight on this instance")
				.tag("destination", destination)
				.register(registry);
			for (DestinationState state : DestinationState.values()) {
				Gauge
					.builder("retry.outbox.flow.state", this.relay,
							(relay) -> (relay.getDestinationState(destination) == state) ? 1 : 0)
					.description("Whether the destination is in this state on this instance (1) or not (0): OPEN, "
							+ "PAUSED or PROBING")
					.tag("destination", destination)
					.tag("state", state.name())
					.register(registry);
			}
		}
	}

	private static boolean delivers(OutboxRelay relay) {
		OutboxRelay.State state = relay.getState();
		return (state == OutboxRelay.State.RUNNING || state == OutboxRelay.State.STARTING)
				&& relay.getLastPollError() == null;
	}

}
