package io.retryoutbox.sample.order;

import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.ResponseStatus;

/**
 * Thrown when no order has the requested id.
 */
@ResponseStatus(HttpStatus.NOT_FOUND)
public class OrderNotFoundException extends RuntimeException {

	OrderNotFoundException(long id) {
		super("No order " + id);
	}

}
