package io.retryoutbox.relay;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * Where the relay instances share their destinations' pauses, and keep the ended ones
 * that a message's delivery deadline still needs. Each call is one short statement on a
 * tiny table; the relay calls it when a pause begins or ends and once per poll interval
 * to read, never per message.
 */
public interface PauseStore {

	/**
	 * Opens a pause of {@code destination}, or extends the open one: of the two ends, the
	 * later is kept, with its reason, detail and instance.
	 * @param destination the destination name
	 * @param pause how long from now nothing may be sent
	 * @param reason why
	 * @param detail what the destination answered
	 * @param pausedBy the relay instance
	 */
	void pause(String destination, Duration pause, PauseReason reason, String detail, String pausedBy);

	/**
	 * Ends the open pause of {@code destination} after a probe got through, unless
	 * another instance has extended it meanwhile.
	 * @param destination the destination name
	 * @return whether a pause ended
	 */
	boolean endIfOver(String destination);

	/**
	 * Ends the open pause of {@code destination} at once, e.g. on an operator's request.
	 * @param destination the destination name
	 * @return whether a pause ended
	 */
	boolean end(String destination);

	/**
	 * Deletes the ended pauses of {@code destination} that no message can count any more.
	 * @param destination the destination name
	 * @param endedBefore the pauses that ended at or before this time are deleted
	 * @return the number deleted
	 */
	int prune(String destination, Instant endedBefore);

	/**
	 * Reads the open pauses and those that ended after {@code endedAfter}.
	 * @param endedAfter the earliest end of the ended pauses read
	 * @return the pauses, with the database's time of the read
	 */
	Snapshot read(Instant endedAfter);

	/**
	 * What one {@link #read} found.
	 *
	 * @param now the time of the read, on the database's clock, which every instance
	 * shares
	 * @param pauses the pauses found
	 */
	record Snapshot(Instant now, List<DestinationPause> pauses) {

	}

}
