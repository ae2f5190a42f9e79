package io.retryoutbox.message;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * What operators read of the outbox: the figures behind health and the gauges, and
 * listings. Nothing here writes.
 */
public interface OutboxReadModel {

	/**
	 * Reads the figures that tell whether the outbox keeps up, in one cheap query.
	 * @return the figures
	 */
	OutboxStats stats();

	/**
	 * Counts the messages of every destination by status.
	 * @return the counts by destination name, then by status
	 */
	Map<String, Map<MessageStatus, Long>> countsByDestination();

	/**
	 * Counts the pending and the dead messages of every destination, cheaply, without
	 * reading the delivered ones.
	 * @return the counts by destination name: every destination this instance configures,
	 * with zeros where it has none, and every other one that has pending or dead messages
	 */
	Map<String, DestinationCounts> pendingAndDeadByDestination();

	/**
	 * Lists the ordering keys held up by a dead message.
	 * @param limit the largest number of keys returned
	 * @return the keys, in order
	 */
	List<String> parkedKeys(int limit);

	/**
	 * Lists messages, newest first.
	 * @param filter which messages
	 * @param before the id of the last message of the previous page, or {@code null} for
	 * the first page
	 * @param limit the largest number of messages returned
	 * @return the messages
	 */
	List<StoredMessage> messages(MessageFilter filter, @Nullable UUID before, int limit);

	/**
	 * Reads one message.
	 * @param id the message id
	 * @return the message, or empty if there is none with that id
	 */
	Optional<StoredMessage> message(UUID id);

	/**
	 * Reads the body of one message, which {@link #message(UUID)} leaves out: it may be
	 * large and may hold what an operator's listing must not show.
	 * @param id the message id
	 * @return the body, or empty if the message has none or there is no such message
	 */
	Optional<byte[]> body(UUID id);

	/**
	 * Reads the attempt log of a message, oldest first.
	 * @param id the message id
	 * @return its attempts and replays
	 */
	List<StoredAttempt> attempts(UUID id);

}
