package io.retryoutbox.sample.simulator;

import org.jspecify.annotations.Nullable;

/**
 * The simulator's answer to a processed payment request.
 *
 * @param id the id of the payment
 * @param path the path it was requested at, e.g. {@code /charges}
 * @param orderId the order id in the request body, if any
 */
record Payment(String id, String path, @Nullable String orderId) {

}
