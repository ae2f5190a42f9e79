package io.retryoutbox.metrics;

import java.util.function.Function;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * What the enqueue and attempt conventions share: a fixed name, and a contextual name
 * made from the context (its destination).
 *
 * @param <C> the observation context
 */
abstract class DestinationObservationConvention<C extends Observation.Context> implements ObservationConvention<C> {

	private final String name;

	private final Function<C, String> contextualName;

	DestinationObservationConvention(String name, Function<C, String> contextualName) {
		this.name = name;
		this.contextualName = contextualName;
	}

	@Override
	public String getName() {
		return this.name;
	}

	@Override
	public String getContextualName(C context) {
		return this.contextualName.apply(context);
	}

}
