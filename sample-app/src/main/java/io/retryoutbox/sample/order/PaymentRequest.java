package io.retryoutbox.sample.order;

import java.util.UUID;

/**
 * A payment request recorded for an order.
 *
 * @param orderId the order
 * @param messageId the id of the outbox message, also its idempotency key
 */
public record PaymentRequest(long orderId, UUID messageId) {

}
