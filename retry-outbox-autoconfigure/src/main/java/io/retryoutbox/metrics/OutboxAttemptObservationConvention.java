package io.retryoutbox.metrics;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * The naming and tagging of {@link OutboxObservationDocumentation#ATTEMPT attempt}
 * observations; declare a bean of this type to change them.
 */
public interface OutboxAttemptObservationConvention extends ObservationConvention<OutboxAttemptContext> {

	@Override
	default boolean supportsContext(Observation.Context context) {
		return context instanceof OutboxAttemptContext;
	}

}
