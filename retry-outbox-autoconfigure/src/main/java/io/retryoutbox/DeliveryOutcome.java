package io.retryoutbox;

import org.springframework.http.HttpHeaders;

/**
 * What one delivery attempt produced: either an HTTP response (of any status) or a
 * failure to obtain one.
 */
public sealed interface DeliveryOutcome permits DeliveryOutcome.Response, DeliveryOutcome.Failure {

	/**
	 * A response was received.
	 *
	 * @param statusCode the HTTP status code
	 * @param headers the response headers
	 * @param body the start of the response body (possibly truncated, possibly empty)
	 */
	record Response(int statusCode, HttpHeaders headers, byte[] body) implements DeliveryOutcome {

	}

	/**
	 * No response was received: connection refused or reset, DNS failure, timeout, the
	 * connection dying mid-request, or any other exception while sending.
	 *
	 * @param cause the exception
	 */
	record Failure(Throwable cause) implements DeliveryOutcome {

	}

}
