package io.retryoutbox.sample.order;

import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.ResponseStatus;

/**
 * Thrown when an order cannot be placed as requested.
 */
@ResponseStatus(HttpStatus.BAD_REQUEST)
public class InvalidOrderException extends RuntimeException {

	InvalidOrderException(String message) {
		super(message);
	}

}
