package io.retryoutbox.sample.order;

import java.math.BigDecimal;
import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * An order as {@code GET /orders/{id}} shows it, with its payment messages.
 *
 * @param id the order id
 * @param amount the amount
 * @param currency the currency code
 * @param status the state of the order
 * @param placedAt when the order was placed
 * @param charge the charge message
 * @param refund the refund message, once the order is cancelled
 */
public record OrderView(long id, BigDecimal amount, String currency, OrderStatus status, Instant placedAt,
		@Nullable OutboxMessageState charge, @Nullable OutboxMessageState refund) {

}
