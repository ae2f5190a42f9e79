package io.retryoutbox.jdbc;

import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.retryoutbox.OutboxRequest;
import io.retryoutbox.relay.WebhookSigner;
import io.retryoutbox.support.HttpRequestRules;

import org.springframework.util.unit.DataSize;

/**
 * Rejects a request that could never be delivered, before anything is written.
 */
final class RequestValidator {

	private final Set<String> destinations;

	private final DataSize maxBodySize;

	private final Map<String, Collection<String>> configuredHeaders;

	private final Set<String> signedDestinations;

	RequestValidator(Set<String> destinations, DataSize maxBodySize,
			Map<String, ? extends Collection<String>> configuredHeaders, Set<String> signedDestinations) {
		this.destinations = Set.copyOf(destinations);
		this.maxBodySize = maxBodySize;
		this.configuredHeaders = Collections.unmodifiableMap(configuredHeaders);
		this.signedDestinations = Set.copyOf(signedDestinations);
	}

	void validate(OutboxRequest request) {
		if (!this.destinations.contains(request.destination())) {
			throw new IllegalArgumentException(
					"Unknown destination '" + request.destination() + "': configure retry-outbox.destinations."
							+ request.destination() + ".base-url (configured: " + this.destinations + ")");
		}
		HttpRequestRules.check(request.method().name(), request.path(), request.headers());
		if (request.headers().isEmpty()) {
			return;
		}
		Collection<String> configured = this.configuredHeaders.getOrDefault(request.destination(), List.of());
		for (String name : request.headers().keySet()) {
			if (configured.stream().anyMatch(name::equalsIgnoreCase)) {
				throw new IllegalArgumentException("Header '" + name + "' is set by the configuration of destination '"
						+ request.destination() + "' (retry-outbox.destinations." + request.destination()
						+ ".headers); a message must not set it too");
			}
			if (this.signedDestinations.contains(request.destination())
					&& WebhookSigner.HEADERS.stream().anyMatch(name::equalsIgnoreCase)) {
				throw new IllegalArgumentException("Header '" + name + "' is set by the relay to sign the requests of "
						+ "destination '" + request.destination() + "' (retry-outbox.destinations."
						+ request.destination() + ".signing.secrets); a message must not set it");
			}
		}
	}

	void validateBodySize(int size) {
		if (size > this.maxBodySize.toBytes()) {
			throw new IllegalArgumentException("Request body of " + size
					+ " bytes exceeds retry-outbox.max-body-size of " + this.maxBodySize.toBytes() + " bytes");
		}
	}

}
