package io.retryoutbox;

import java.util.UUID;

/**
 * Records HTTP requests in the outbox table, in the caller's transaction, for the relay
 * to deliver once that transaction has committed.
 * <p>
 * Call it inside a {@code @Transactional} method: the request commits or rolls back with
 * the business data written beside it.
 */
public interface Outbox {

	/**
	 * Records a request for delivery after the current transaction commits.
	 * @param request the request to deliver
	 * @return the id of the message, a time-ordered UUID that is also sent as its
	 * idempotency key on every attempt
	 * @throws IllegalStateException if no transaction is active and
	 * {@code retry-outbox.require-transaction} is {@code true}
	 * @throws IllegalArgumentException if the request is invalid (unknown destination, an
	 * absolute URL as path, a header with CR or LF, a body over the size limit); nothing
	 * is written then
	 */
	UUID send(OutboxRequest request);

}
