package io.retryoutbox.metrics;

import java.util.Map;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.config.MeterFilter;

/**
 * Micrometer's observation handler registers the timers of the enqueue and attempt
 * observations without a description; this filter gives them one, so that exporters that
 * publish it, such as Prometheus's {@code HELP} line, have a text for them too. A filter
 * rather than registering each timer up front with a description: it applies to every tag
 * combination as the registry creates it, whichever is first, and Prometheus takes the
 * help text of a name from the first meter registered under it. A description given
 * elsewhere is kept.
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
