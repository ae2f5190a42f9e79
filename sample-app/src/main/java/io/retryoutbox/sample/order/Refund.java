package io.retryoutbox.sample.order;

import java.math.BigDecimal;

/**
 * The body of {@code POST /refunds} to the payments API.
 *
 * @param orderId the order whose charge is refunded
 * @param amount the amount
 * @param currency the currency code
 */
public record Refund(long orderId, BigDecimal amount, String currency) {

}
