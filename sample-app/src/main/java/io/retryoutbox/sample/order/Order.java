package io.retryoutbox.sample.order;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

import org.springframework.data.annotation.Id;
import org.springframework.data.relational.core.mapping.Table;

/**
 * An order, with the ids of the outbox messages that charge and refund it.
 *
 * @param id the id, assigned by the database
 * @param amount the amount to charge
 * @param currency the ISO 4217 currency code
 * @param status the state of the order
 * @param chargeMessageId the outbox message that charges the order
 * @param refundMessageId the outbox message that refunds the order, once cancelled
 * @param placedAt when the order was placed
 */
@Table("orders")
public record Order(@Id @Nullable Long id, BigDecimal amount, String currency, OrderStatus status,
		@Nullable UUID chargeMessageId, @Nullable UUID refundMessageId, Instant placedAt) {

	static Order place(BigDecimal amount, String currency, Instant placedAt) {
		return new Order(null, amount, currency, OrderStatus.PLACED, null, null, placedAt);
	}

	Order charged(UUID chargeMessageId) {
		return new Order(this.id, this.amount, this.currency, this.status, chargeMessageId, this.refundMessageId,
				this.placedAt);
	}

	Order cancelled(UUID refundMessageId) {
		return new Order(this.id, this.amount, this.currency, OrderStatus.CANCELLED, this.chargeMessageId,
				refundMessageId, this.placedAt);
	}

	/**
	 * The ordering key of the order's payment messages, so that its refund is delivered
	 * after its charge.
	 * @return the ordering key
	 */
	String orderingKey() {
		return "order-" + this.id;
	}

}
