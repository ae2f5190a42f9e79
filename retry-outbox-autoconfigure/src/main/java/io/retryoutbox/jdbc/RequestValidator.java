package io.retryoutbox.jdbc;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.List;
import java.util.Set;

import io.retryoutbox.OutboxRequest;

import org.springframework.util.unit.DataSize;

/**
 * Rejects a request that could never be delivered, before anything is written.
 */
final class RequestValidator {

	private static final String PROBE_HOST = "retry-outbox.invalid";

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
		validatePath(request.path());
		request.headers().forEach(RequestValidator::validateHeader);
	}

	void validateBodySize(int size) {
		if (size > this.maxBodySize.toBytes()) {
			throw new IllegalArgumentException("Request body of " + size
					+ " bytes exceeds retry-outbox.max-body-size of " + this.maxBodySize.toBytes() + " bytes");
		}
	}

	static String normalizePath(String path) {
		return path.startsWith("/") ? path : "/" + path;
	}

	private static void validatePath(String path) {
		if (path.startsWith("//") || path.contains("://") || hasScheme(path)) {
			throw new IllegalArgumentException(
					"Path '" + path + "' must be relative to the destination's base URL, not an absolute URL");
		}
		try {
			URI uri = new URI("http://" + PROBE_HOST + normalizePath(path));
			if (!PROBE_HOST.equals(uri.getHost())) {
				throw new IllegalArgumentException("Path '" + path + "' must not name a host");
			}
		}
		catch (URISyntaxException ex) {
			throw new IllegalArgumentException("Path '" + path + "' is not a valid URI path: " + ex.getMessage(), ex);
		}
	}

	private static boolean hasScheme(String path) {
		int colon = path.indexOf(':');
		int slash = path.indexOf('/');
		return colon > 0 && (slash < 0 || colon < slash) && path.substring(0, colon).matches("[A-Za-z][A-Za-z0-9+.-]*");
	}

	private static void validateHeader(String name, List<String> values) {
		if (name.isBlank() || containsLineBreak(name) || !name.chars().allMatch(RequestValidator::isTokenChar)) {
			throw new IllegalArgumentException("Header name '" + name.replace("\r", "\\r").replace("\n", "\\n")
					+ "' is not a valid HTTP header name");
		}
		for (String value : values) {
			if (containsLineBreak(value)) {
				throw new IllegalArgumentException("Value of header '" + name + "' contains CR or LF");
			}
		}
	}

	private static boolean containsLineBreak(String text) {
		return text.indexOf('\r') >= 0 || text.indexOf('\n') >= 0;
	}

	private static boolean isTokenChar(int c) {
		return c > 32 && c < 127 && "\"(),/:;<=>?@[\\]{}".indexOf(c) < 0;
	}

}
