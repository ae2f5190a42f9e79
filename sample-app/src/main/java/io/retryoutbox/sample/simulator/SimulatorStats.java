package io.retryoutbox.sample.simulator;

import java.util.List;
import java.util.Map;

/**
 * What the simulator has seen, as {@code GET /simulator/stats} shows it.
 *
 * @param received the number of requests received
 * @param uniqueKeys the number of distinct idempotency keys received
 * @param processed the number of keys processed (answered other than by a transient
 * fault)
 * @param duplicates the number of requests answered with the stored answer of their key
 * @param outOfOrder the number of requests processed for an order before its charge
 * @param faults the number of requests that got each fault
 * @param orders the processed requests per order id, in the order they were processed
 */
public record SimulatorStats(long received, long uniqueKeys, long processed, long duplicates, long outOfOrder,
		Map<Fault, Long> faults, Map<String, List<Receipt>> orders) {

}
