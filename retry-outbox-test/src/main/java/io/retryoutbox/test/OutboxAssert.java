package io.retryoutbox.test;

import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.retryoutbox.message.MessageFilter;
import io.retryoutbox.message.MessageStatus;
import io.retryoutbox.message.OutboxReadModel;
import io.retryoutbox.message.StoredMessage;
import org.assertj.core.api.AbstractAssert;

/**
 * Assertions on the outbox's messages by destination and status, and on one message. Each
 * assertion reads the outbox when it runs.
 *
 * @see OutboxAssertions#assertThatOutbox(OutboxReadModel)
 */
public final class OutboxAssert extends AbstractAssert<OutboxAssert, OutboxReadModel> {

	OutboxAssert(OutboxReadModel actual) {
		super(actual, OutboxAssert.class);
		isNotNull();
	}

	/**
	 * Verifies how many messages for a destination wait for an attempt.
	 * @param destination the destination name
	 * @param count the number of {@code PENDING} messages expected
	 * @return this assertion
	 */
	public OutboxAssert hasPending(String destination, long count) {
		return hasCount(destination, MessageStatus.PENDING, count);
	}

	/**
	 * Verifies how many messages for a destination a relay is sending.
	 * @param destination the destination name
	 * @param count the number of {@code IN_FLIGHT} messages expected
	 * @return this assertion
	 */
	public OutboxAssert hasInFlight(String destination, long count) {
		return hasCount(destination, MessageStatus.IN_FLIGHT, count);
	}

	/**
	 * Verifies how many messages for a destination were delivered.
	 * @param destination the destination name
	 * @param count the number of {@code DELIVERED} messages expected
	 * @return this assertion
	 */
	public OutboxAssert hasDelivered(String destination, long count) {
		return hasCount(destination, MessageStatus.DELIVERED, count);
	}

	/**
	 * Verifies how many messages for a destination are dead.
	 * @param destination the destination name
	 * @param count the number of {@code DEAD} messages expected
	 * @return this assertion
	 */
	public OutboxAssert hasDead(String destination, long count) {
		return hasCount(destination, MessageStatus.DEAD, count);
	}

	/**
	 * Verifies how many messages for a destination have a status.
	 * @param destination the destination name
	 * @param status the status
	 * @param count the number of messages expected
	 * @return this assertion
	 */
	public OutboxAssert hasCount(String destination, MessageStatus status, long count) {
		isNotNull();
		Map<String, Map<MessageStatus, Long>> counts = this.actual.countsByDestination();
		long found = counts.getOrDefault(destination, Map.of()).getOrDefault(status, 0L);
		if (found != count) {
			failWithActualExpectedAndMessage(found, count,
					"Expected %s %s message(s) for destination \"%s\" but found %s; the outbox holds %s", count, status,
					destination, found, counts.isEmpty() ? "no messages" : counts);
		}
		return this;
	}

	/**
	 * Starts assertions on one message.
	 * @param id the message id, as {@code Outbox.send} returned it
	 * @return the assertion on the message
	 */
	public OutboxMessageAssert message(UUID id) {
		isNotNull();
		StoredMessage message = this.actual.message(id).orElse(null);
		if (message == null) {
			failWithMessage("Expected an outbox message with id %s but there is none", id);
		}
		return new OutboxMessageAssert(message, this.actual);
	}

	/**
	 * Starts assertions on the one message for a destination, failing if there is none or
	 * more than one.
	 * @param destination the destination name
	 * @return the assertion on the message
	 */
	public OutboxMessageAssert singleMessage(String destination) {
		isNotNull();
		List<StoredMessage> messages = this.actual
			.messages(new MessageFilter(null, destination, null, null, null, null), null, 11);
		if (messages.size() != 1) {
			failWithMessage("Expected a single outbox message for destination \"%s\" but found %s%s", destination,
					(messages.size() > 10) ? "more than 10" : messages.size(),
					messages.isEmpty() ? "" : ": " + messages);
		}
		return new OutboxMessageAssert(messages.get(0), this.actual);
	}

}
