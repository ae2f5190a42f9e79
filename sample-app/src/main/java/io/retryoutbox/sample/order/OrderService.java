package io.retryoutbox.sample.order;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.Locale;
import java.util.UUID;

import io.retryoutbox.Outbox;
import io.retryoutbox.OutboxRequest;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.util.Assert;

/**
 * Places and cancels orders. The payment request of each change is recorded in the outbox
 * in the same transaction as the change, so neither exists without the other.
 */
@Service
public class OrderService {

	private static final String PAYMENTS = "payments";

	private final OrderRepository orders;

	private final Outbox outbox;

	public OrderService(OrderRepository orders, Outbox outbox) {
		this.orders = orders;
		this.outbox = outbox;
	}

	/**
	 * Places an order and requests its charge.
	 * @param amount the amount, positive
	 * @param currency a three-letter currency code
	 * @return the order id and the id of the charge message
	 * @throws InvalidOrderException if the amount or currency is invalid
	 */
	@Transactional
	public PaymentRequest place(BigDecimal amount, String currency) {
		if (amount.signum() <= 0 || amount.scale() > 2 || amount.precision() - amount.scale() > 10) {
			throw new InvalidOrderException(
					"amount must be positive, below 10^10 and have at most two decimals, was " + amount);
		}
		if (!currency.matches("[A-Za-z]{3}")) {
			throw new InvalidOrderException("currency must be a three-letter code, was " + currency);
		}
		Order order = this.orders.save(Order.place(amount, currency.toUpperCase(Locale.ROOT), Instant.now()));
		long id = idOf(order);
		UUID messageId = this.outbox.send(OutboxRequest.post(PAYMENTS, "/charges")
			.jsonBody(new Charge(id, order.amount(), order.currency()))
			.orderingKey(order.orderingKey())
			.build());
		this.orders.save(order.charged(messageId));
		return new PaymentRequest(id, messageId);
	}

	/**
	 * Cancels an order and requests its refund. Cancelling a cancelled order changes
	 * nothing.
	 * @param id the order id
	 * @return the order id and the id of the refund message
	 * @throws OrderNotFoundException if there is no such order
	 */
	@Transactional
	public PaymentRequest cancel(long id) {
		Order order = this.orders.findLockedById(id).orElseThrow(() -> new OrderNotFoundException(id));
		if (order.status() == OrderStatus.CANCELLED && order.refundMessageId() != null) {
			return new PaymentRequest(id, order.refundMessageId());
		}
		UUID messageId = this.outbox.send(OutboxRequest.post(PAYMENTS, "/refunds")
			.jsonBody(new Refund(id, order.amount(), order.currency()))
			.orderingKey(order.orderingKey())
			.build());
		this.orders.save(order.cancelled(messageId));
		return new PaymentRequest(id, messageId);
	}

	private static long idOf(Order order) {
		Long id = order.id();
		Assert.state(id != null, "saved order has no id");
		return id;
	}

}
