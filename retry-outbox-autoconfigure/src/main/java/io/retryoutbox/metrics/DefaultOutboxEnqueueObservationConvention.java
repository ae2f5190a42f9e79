package io.retryoutbox.metrics;

import io.micrometer.common.KeyValues;
import io.micrometer.observation.Observation;
import io.retryoutbox.metrics.OutboxObservationDocumentation.HighCardinalityKeys;
import io.retryoutbox.metrics.OutboxObservationDocumentation.LowCardinalityKeys;

/**
 * The naming and tagging of {@link OutboxObservationDocumentation#ENQUEUE enqueue}
 * observations: {@code retry.outbox.enqueue} tagged with the destination.
 */
public class DefaultOutboxEnqueueObservationConvention extends DestinationObservationConvention<OutboxEnqueueContext> {

	/**
	 * The name of the observation and its timer.
	 */
	public static final String NAME = "retry.outbox.enqueue";

	public DefaultOutboxEnqueueObservationConvention() {
		super(NAME, (context) -> "retry-outbox enqueue " + context.getDestination());
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(OutboxEnqueueContext context) {
		return KeyValues.of(LowCardinalityKeys.DESTINATION.withValue(context.getDestination()));
	}

	@Override
	public KeyValues getHighCardinalityKeyValues(OutboxEnqueueContext context) {
		return KeyValues.of(HighCardinalityKeys.MESSAGE_ID.withValue(context.getMessageId().toString()));
	}

	@Override
	public boolean supportsContext(Observation.Context context) {
		return context instanceof OutboxEnqueueContext;
	}

}
