package io.retryoutbox.jdbc;

import java.util.Set;

import io.retryoutbox.OutboxRequest;
import io.retryoutbox.support.HttpRequestRules;

import org.springframework.util.unit.DataSize;

/**
 * Rejects a request that could never be delivered, before anything is written.
 */
final class RequestValidator {

	private final Set<String> destinations;

	private final DataSize maxBodySize;

	RequestValidator(Set<String> destinations, DataSize maxBodySize) {
		this.destinations = Set.copyOf(destinations);
		this.maxBodySize = maxBodySize;
	}

	void validate(OutboxRequest request) {
		if (!this.destinations.contains(request.destination())) {
			throw new IllegalArgumentException(
					"Unknown destination '" + request.destination() + "': configure retry-outbox.destinations."
							+ request.destination() + ".base-url (configured: " + this.destinations + ")");
		}
		HttpRequestRules.check(request.method().name(), request.path(), request.headers());
	}

	void validateBodySize(int size) {
		if (size > this.maxBodySize.toBytes()) {
			throw new IllegalArgumentException("Request body of " + size
					+ " bytes exceeds retry-outbox.max-body-size of " + this.maxBodySize.toBytes() + " bytes");
		}
	}

}
