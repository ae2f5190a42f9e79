package io.retryoutbox.direct;

import java.io.IOException;
import java.util.Arrays;
import java.util.concurrent.TimeoutException;

import io.retryoutbox.DeliveryOutcome;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;
import org.springframework.web.client.ResourceAccessException;
import org.springframework.web.client.RestClientResponseException;
import org.springframework.web.reactive.function.client.WebClientRequestException;
import org.springframework.web.reactive.function.client.WebClientResponseException;

/**
 * Reads what an exception thrown by an HTTP client says of the attempt that threw it: a
 * response ({@link RestClientResponseException}, {@link WebClientResponseException}), no
 * response (an I/O failure or a timeout), or neither.
 */
final class ThrowableOutcomes {

	private ThrowableOutcomes() {
	}

	/**
	 * The outcome of an attempt that threw.
	 * @param thrown the exception
	 * @param maxBodyBytes how much of an error body is given to the policy, as the relay
	 * reads at most that much
	 * @return the outcome, or {@code null} if the exception is not the HTTP client's
	 * report of an attempt (a bug, or a body that could not be read), which is not
	 * retried
	 */
	static @Nullable DeliveryOutcome of(Throwable thrown, int maxBodyBytes) {
		if (thrown instanceof RestClientResponseException response) {
			HttpHeaders headers = response.getResponseHeaders();
			return new DeliveryOutcome.Response(response.getStatusCode().value(),
					(headers != null) ? headers : new HttpHeaders(),
					start(response.getResponseBodyAsByteArray(), maxBodyBytes));
		}
		if (thrown instanceof WebClientResponseException response) {
			return new DeliveryOutcome.Response(response.getStatusCode().value(), response.getHeaders(),
					start(response.getResponseBodyAsByteArray(), maxBodyBytes));
		}
		return isNoResponse(thrown) ? new DeliveryOutcome.Failure(thrown) : null;
	}

	static byte[] start(byte[] body, int maxBytes) {
		return (body.length <= maxBytes) ? body : Arrays.copyOf(body, maxBytes);
	}

	private static boolean isNoResponse(Throwable thrown) {
		if (thrown instanceof ResourceAccessException || thrown instanceof WebClientRequestException) {
			return true;
		}
		for (Throwable cause = thrown; cause != null; cause = (cause.getCause() != cause) ? cause.getCause() : null) {
			if (cause instanceof IOException || cause instanceof TimeoutException) {
				return true;
			}
		}
		return false;
	}

}
