package io.retryoutbox.sample.demo;

import java.math.BigDecimal;
import java.util.random.RandomGenerator;

import io.retryoutbox.sample.order.OrderService;
import io.retryoutbox.sample.order.PaymentRequest;

import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * Places many orders at once, e.g. {@code POST /demo/load?orders=1000}, optionally
 * cancelling a share of them right away.
 */
@RestController
class LoadController {

	private static final int MAX_ORDERS = 100_000;

	private final OrderService orderService;

	LoadController(OrderService orderService) {
		this.orderService = orderService;
	}

	@PostMapping("/demo/load")
	LoadResult load(@RequestParam(defaultValue = "100") int orders, @RequestParam(defaultValue = "0") double cancels) {
		if (orders < 1 || orders > MAX_ORDERS) {
			throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "orders must be between 1 and " + MAX_ORDERS);
		}
		if (cancels < 0 || cancels > 1) {
			throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "cancels must be between 0 and 1");
		}
		RandomGenerator random = RandomGenerator.getDefault();
		long start = System.nanoTime();
		long first = 0;
		long last = 0;
		int cancelled = 0;
		for (int i = 0; i < orders; i++) {
			PaymentRequest placed = this.orderService.place(BigDecimal.valueOf(100 + random.nextInt(99_900), 2), "EUR");
			first = (i == 0) ? placed.orderId() : first;
			last = placed.orderId();
			if (random.nextDouble() < cancels) {
				this.orderService.cancel(placed.orderId());
				cancelled++;
			}
		}
		return new LoadResult(orders, cancelled, first, last, (System.nanoTime() - start) / 1_000_000);
	}

	/**
	 * What a load run did.
	 *
	 * @param placed the number of orders placed
	 * @param cancelled the number of them cancelled right after
	 * @param firstOrderId the id of the first order placed
	 * @param lastOrderId the id of the last order placed
	 * @param millis how long placing them took
	 */
	record LoadResult(int placed, int cancelled, long firstOrderId, long lastOrderId, long millis) {

	}

}
