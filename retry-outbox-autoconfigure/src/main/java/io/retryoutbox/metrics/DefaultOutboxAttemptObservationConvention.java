package io.retryoutbox.metrics;

import io.micrometer.common.KeyValues;
import io.retryoutbox.message.Outcome;
import io.retryoutbox.metrics.OutboxObservationDocumentation.HighCardinalityKeys;
import io.retryoutbox.metrics.OutboxObservationDocumentation.LowCardinalityKeys;

/**
 * The default {@link OutboxAttemptObservationConvention}: {@code retry.outbox.attempts}
 * tagged with destination, outcome and status class.
 */
public class DefaultOutboxAttemptObservationConvention extends DestinationObservationConvention<OutboxAttemptContext>
		implements OutboxAttemptObservationConvention {

	/**
	 * The name of the observation and its timer.
	 */
	public static final String NAME = "retry.outbox.attempts";

	public DefaultOutboxAttemptObservationConvention() {
		super(NAME, (context) -> "retry-outbox attempt " + context.getMessage().destination());
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(OutboxAttemptContext context) {
		Outcome outcome = context.getOutcome();
		String name = (outcome != null) ? outcome.attemptOutcome().name() : "UNKNOWN";
		Integer status = (outcome != null) ? outcome.statusCode() : null;
		return KeyValues.of(LowCardinalityKeys.DESTINATION.withValue(context.getMessage().destination()),
				LowCardinalityKeys.OUTCOME.withValue(name),
				LowCardinalityKeys.STATUS_CLASS.withValue((status != null) ? (status / 100) + "xx" : "NONE"));
	}

	@Override
	public KeyValues getHighCardinalityKeyValues(OutboxAttemptContext context) {
		return KeyValues.of(HighCardinalityKeys.MESSAGE_ID.withValue(context.getMessage().id().toString()),
				HighCardinalityKeys.ATTEMPT.withValue(Integer.toString(context.getMessage().attempt())));
	}

}
