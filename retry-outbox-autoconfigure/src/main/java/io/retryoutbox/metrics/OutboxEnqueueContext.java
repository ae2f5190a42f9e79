package io.retryoutbox.metrics;

import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

import io.micrometer.observation.transport.Kind;
import io.micrometer.observation.transport.SenderContext;

/**
 * The context of an {@link OutboxObservationDocumentation#ENQUEUE enqueue} observation;
 * its carrier receives the propagation fields that are stored with the message.
 */
public class OutboxEnqueueContext extends SenderContext<Map<String, String>> {

	private final UUID messageId;

	private final String destination;

	/**
	 * Creates a context.
	 * @param messageId the id of the message
	 * @param destination its destination
	 */
	public OutboxEnqueueContext(UUID messageId, String destination) {
		super((carrier, key, value) -> carrier.put(key, value), Kind.PRODUCER);
		this.messageId = messageId;
		this.destination = destination;
		setCarrier(new HashMap<>());
	}

	public UUID getMessageId() {
		return this.messageId;
	}

	public String getDestination() {
		return this.destination;
	}

}
