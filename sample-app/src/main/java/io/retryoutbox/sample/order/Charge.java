package io.retryoutbox.sample.order;

import java.math.BigDecimal;

/**
 * The body of {@code POST /charges} to the payments API.
 *
 * @param orderId the order to charge
 * @param amount the amount
 * @param currency the currency code
 */
public record Charge(long orderId, BigDecimal amount, String currency) {

}
