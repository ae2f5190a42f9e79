package io.retryoutbox.metrics;

import java.util.Map;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.config.MeterFilter;

/**
 * Gives the timers that Micrometer's observation handler makes of the enqueue and attempt
 * observations their descriptions, so that exporters that publish one, such as
 * Prometheus's {@code HELP} line, have a text for them too. The handler registers them
 * without a description, and the first meter registered under a name sets the description
 * for the whole name in Prometheus, so it is set on every meter of the name, as the
 * registry maps its id; a description given elsewhere is kept.
 */
public final class OutboxMeterDescriptions implements MeterFilter {

	private static final Map<String, String> DESCRIPTIONS = Map.of(DefaultOutboxAttemptObservationConvention.NAME,
			"Delivery attempts of outbox messages: sending one and deciding its fate, by outcome and response status class",
			DefaultOutboxAttemptObservationConvention.NAME + ".active", "Delivery attempts under way",
			DefaultOutboxEnqueueObservationConvention.NAME,
			"Recording of messages in the outbox table, in the caller's transaction",
			DefaultOutboxEnqueueObservationConvention.NAME + ".active", "Recordings of messages under way");

	@Override
	public Meter.Id map(Meter.Id id) {
		String description = DESCRIPTIONS.get(id.getName());
		if (description == null || id.getDescription() != null) {
			return id;
		}
		return new Meter.Id(id.getName(), Tags.of(id.getTags()), id.getBaseUnit(), description, id.getType());
	}

}
