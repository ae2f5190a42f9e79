package io.retryoutbox.sample.order;

import java.math.BigDecimal;
import java.net.URI;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Places, cancels and shows orders.
 */
@RestController
@RequestMapping("/orders")
class OrderController {

	private final OrderService orderService;

	private final OrderRepository orders;

	private final OutboxMessages messages;

	OrderController(OrderService orderService, OrderRepository orders, OutboxMessages messages) {
		this.orderService = orderService;
		this.orders = orders;
		this.messages = messages;
	}

	@PostMapping
	ResponseEntity<PaymentRequest> place(@RequestBody PlaceOrder request) {
		if (request.amount() == null || request.currency() == null) {
			throw new InvalidOrderException("amount and currency are required");
		}
		PaymentRequest placed = this.orderService.place(request.amount(), request.currency());
		return ResponseEntity.created(URI.create("/orders/" + placed.orderId())).body(placed);
	}

	@PostMapping("/{id}/cancel")
	PaymentRequest cancel(@PathVariable long id) {
		return this.orderService.cancel(id);
	}

	@GetMapping("/{id}")
	OrderView get(@PathVariable long id) {
		Order order = this.orders.findById(id).orElseThrow(() -> new OrderNotFoundException(id));
		return new OrderView(id, order.amount(), order.currency(), order.status(), order.placedAt(),
				state(order.chargeMessageId()), state(order.refundMessageId()));
	}

	private @Nullable OutboxMessageState state(@Nullable UUID messageId) {
		return (messageId != null) ? this.messages.find(messageId).orElse(null) : null;
	}

	/**
	 * The body of {@code POST /orders}.
	 *
	 * @param amount the amount to charge
	 * @param currency the currency code, e.g. {@code EUR}
	 */
	record PlaceOrder(@Nullable BigDecimal amount, @Nullable String currency) {

	}

}
