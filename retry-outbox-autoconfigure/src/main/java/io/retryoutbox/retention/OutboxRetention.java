package io.retryoutbox.retention;

import java.time.Duration;

/**
 * Deletes finished messages, and with them their attempt logs, once they are older than
 * their retention. It never deletes a message that is unfinished, nor a dead one that
 * still holds its ordering key (it parks the key until an operator replays or discards
 * it).
 */
public interface OutboxRetention {

	/**
	 * Deletes the messages delivered longer ago than {@code age}.
	 * @param age how long delivered messages are kept
	 * @return the number of messages deleted
	 */
	long deleteDelivered(Duration age);

	/**
	 * Deletes the dead messages enqueued longer ago than {@code age}, except those that
	 * park their key.
	 * @param age how long dead messages are kept
	 * @return the number of messages deleted
	 */
	long deleteDead(Duration age);

}
