package io.retryoutbox.sample.simulator;

import java.time.Clock;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;

/**
 * The payments API's behaviour, apart from HTTP: transient faults first, then the answer
 * stored for the idempotency key if there is one, else the key is processed once and its
 * answer stored.
 */
public class PaymentsSimulator {

	static final String CHARGES = "/charges";

	private static final DateTimeFormatter HTTP_DATE = DateTimeFormatter
		.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US)
		.withZone(ZoneOffset.UTC);

	private final FaultDice dice;

	private final Clock clock;

	private final Map<String, Integer> requestsByKey = new HashMap<>();

	private final Map<String, Answer> answersByKey = new HashMap<>();

	private final Map<String, List<Receipt>> receiptsByOrder = new LinkedHashMap<>();

	private final Map<Fault, Long> faults = new EnumMap<>(Fault.class);

	private final Set<String> healedKeys = new HashSet<>();

	private long received;

	private long payments;

	private long duplicates;

	private long outOfOrder;

	PaymentsSimulator(FaultDice dice, Clock clock) {
		this.dice = dice;
		this.clock = clock;
		for (Fault fault : Fault.values()) {
			this.faults.put(fault, 0L);
		}
	}

	/**
	 * Answers a request.
	 * @param path the path below {@code /simulator/payments}
	 * @param key the idempotency key, if the request had one
	 * @param orderId the order id in the request body, if any
	 * @return the answer
	 */
	synchronized Answer receive(String path, @Nullable String key, @Nullable String orderId) {
		this.received++;
		if (key == null || key.isBlank()) {
			return Answer.error(400, "IDEMPOTENCY_KEY_MISSING");
		}
		int request = this.requestsByKey.merge(key, 1, Integer::sum);
		Fault fault = this.dice.perRequest(key, request);
		if (fault != null && fault.refusesRequest()) {
			count(fault);
			return refusal(fault);
		}
		Answer stored = this.answersByKey.get(key);
		if (stored != null) {
			this.duplicates++;
			return stored;
		}
		Answer answer = process(path, key, orderId);
		this.answersByKey.put(key, answer);
		if (orderId != null) {
			recordReceipt(orderId, new Receipt(path, key, answer.status()));
		}
		if (answer.isSuccess() && (fault == Fault.SLOW || fault == Fault.DROPPED)) {
			count(fault);
			return answer.deliveredAs(fault);
		}
		return answer;
	}

	/**
	 * Makes the simulator accept a key it rejected for good: the stored 400 or 409
	 * {@code CONFLICT} answer is forgotten and the key gets no per-key fault any more, so
	 * that the next request with it, e.g. a replay of its dead message, is processed.
	 * Transient faults still apply.
	 * @param key the idempotency key
	 * @return the status of the terminal answer that was forgotten, or {@code null} if
	 * the key had none
	 */
	synchronized @Nullable Integer heal(String key) {
		this.healedKeys.add(key);
		Answer stored = this.answersByKey.get(key);
		if (stored == null || stored.isSuccess()) {
			return null;
		}
		this.answersByKey.remove(key);
		return stored.status();
	}

	/**
	 * What the simulator has seen so far.
	 * @return the statistics
	 */
	public synchronized SimulatorStats stats() {
		Map<String, List<Receipt>> orders = new LinkedHashMap<>();
		this.receiptsByOrder.forEach((orderId, receipts) -> orders.put(orderId, List.copyOf(receipts)));
		return new SimulatorStats(this.received, this.requestsByKey.size(), this.answersByKey.size(), this.duplicates,
				this.outOfOrder, new EnumMap<>(this.faults), orders);
	}

	private Answer refusal(Fault fault) {
		return switch (fault) {
			case UNAVAILABLE -> Answer.error(503, "UNAVAILABLE").withHeader(HttpHeaders.RETRY_AFTER, "1");
			// HTTP-dates have whole seconds: two ahead asks for a wait of one to two.
			case RATE_LIMITED -> Answer.error(429, "RATE_LIMITED")
				.withHeader(HttpHeaders.RETRY_AFTER,
						HTTP_DATE.format(this.clock.instant().plus(2, ChronoUnit.SECONDS)));
			case LOCKED -> Answer.error(409, "RESOURCE_LOCKED");
			default -> throw new IllegalArgumentException(fault + " does not refuse a request");
		};
	}

	private Answer process(String path, String key, @Nullable String orderId) {
		Fault fault = this.healedKeys.contains(key) ? null : this.dice.perKey(key);
		Answer answer;
		if (fault == Fault.BAD_REQUEST) {
			answer = Answer.error(400, "INVALID_REQUEST");
		}
		else if (fault == Fault.CONFLICT) {
			answer = Answer.error(409, "CONFLICT");
		}
		else {
			answer = Answer.of(201, new Payment("pay_" + (++this.payments), path, orderId));
		}
		if (fault != null) {
			count(fault);
		}
		return answer;
	}

	private void recordReceipt(String orderId, Receipt receipt) {
		List<Receipt> receipts = this.receiptsByOrder.computeIfAbsent(orderId, (id) -> new ArrayList<>());
		if (!CHARGES.equals(receipt.path())
				&& receipts.stream().noneMatch((earlier) -> CHARGES.equals(earlier.path()))) {
			this.outOfOrder++;
		}
		receipts.add(receipt);
	}

	private void count(Fault fault) {
		this.faults.merge(fault, 1L, Long::sum);
	}

}
