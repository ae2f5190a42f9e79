package io.retryoutbox.metrics;

import java.util.Map;

import io.micrometer.observation.transport.Kind;
import io.micrometer.observation.transport.ReceiverContext;
import io.retryoutbox.message.ClaimedMessage;
import io.retryoutbox.message.Outcome;
import org.jspecify.annotations.Nullable;

/**
 * The context of an {@link OutboxObservationDocumentation#ATTEMPT attempt} observation.
 * Its carrier holds the propagation fields stored at enqueue, so that with tracing the
 * attempt continues the trace of the request that enqueued the message.
 */
public class OutboxAttemptContext extends ReceiverContext<Map<String, String>> {

	private final ClaimedMessage message;

	private @Nullable Outcome outcome;

	/**
	 * Creates a context.
	 * @param message the message attempted
	 * @param propagation the propagation fields stored with it, possibly none
	 */
	public OutboxAttemptContext(ClaimedMessage message, Map<String, String> propagation) {
		super((carrier, key) -> carrier.get(key), Kind.CONSUMER);
		this.message = message;
		setCarrier(Map.copyOf(propagation));
	}

	public ClaimedMessage getMessage() {
		return this.message;
	}

	/**
	 * What the attempt led to, once it is known.
	 * @return the outcome, or {@code null} while the attempt runs
	 */
	public @Nullable Outcome getOutcome() {
		return this.outcome;
	}

	public void setOutcome(@Nullable Outcome outcome) {
		this.outcome = outcome;
	}

}
