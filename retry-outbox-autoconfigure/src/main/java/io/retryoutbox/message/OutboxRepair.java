package io.retryoutbox.message;

import java.util.UUID;

/**
 * What operators do to dead messages: replay them with a fresh budget, or discard them. A
 * message that holds its ordering key gives it back or takes it again by the same rules
 * as the relay's.
 */
public interface OutboxRepair {

	/**
	 * Makes a dead message {@code PENDING} again, due now, with a fresh budget (no
	 * attempts made, the deadline counted from now) and the same id and idempotency key,
	 * and records the replay in the attempt log.
	 * @param id the message id
	 * @param actor who replays it
	 * @return whether the message was dead and is replayed
	 */
	boolean replay(UUID id, String actor);

	/**
	 * Replays the dead messages that match a filter, oldest first, in chunks.
	 * @param filter which dead messages; its status is ignored
	 * @param limit the largest number of messages replayed
	 * @param actor who replays them
	 * @return how many were replayed and whether all matching ones were
	 */
	BulkResult replay(MessageFilter filter, int limit, String actor);

	/**
	 * Deletes a dead message and its attempt log, releasing its ordering key if it held
	 * it.
	 * @param id the message id
	 * @return whether the message was dead and is deleted
	 */
	boolean discard(UUID id);

	/**
	 * Deletes the dead messages that match a filter, and their attempt logs, oldest
	 * first, in chunks.
	 * @param filter which dead messages; its status is ignored
	 * @param limit the largest number of messages deleted
	 * @return how many were deleted and whether all matching ones were
	 */
	BulkResult discard(MessageFilter filter, int limit);

	/**
	 * The result of a bulk operation.
	 *
	 * @param count the number of messages replayed or discarded
	 * @param complete whether every matching message was; {@code false} when the limit or
	 * the time budget stopped the operation first
	 */
	record BulkResult(int count, boolean complete) {

	}

}
