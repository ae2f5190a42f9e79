package io.retryoutbox.sample.simulator;

/**
 * A request the simulator processed, i.e. the first one with its idempotency key that got
 * past the transient faults.
 *
 * @param path the path below {@code /simulator/payments}
 * @param key the idempotency key
 * @param status the status it was answered with, replayed for every later request with
 * the key
 */
public record Receipt(String path, String key, int status) {

}
