package io.retryoutbox.retry;

import java.util.List;

import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads an error code out of a response body, such as
 * {@code {"error":{"code":"CONFLICT"}}} or an RFC 9457 problem detail with a {@code code}
 * extension member.
 */
final class ErrorCodeReader {

	private final JsonMapper jsonMapper;

	ErrorCodeReader(JsonMapper jsonMapper) {
		this.jsonMapper = jsonMapper;
	}

	/**
	 * Returns the first non-blank string found at one of the pointers.
	 * @param body the response body, possibly empty, truncated or not JSON
	 * @param pointers valid JSON pointers, tried in order
	 * @return the error code, or {@code null} if the body holds none
	 */
	@Nullable String read(byte[] body, List<String> pointers) {
		JsonNode root = parse(body);
		if (root == null) {
			return null;
		}
		for (String pointer : pointers) {
			JsonNode node = root.at(pointer);
			if (node.isString() && !node.stringValue().isBlank()) {
				return node.stringValue();
			}
		}
		return null;
	}

	private @Nullable JsonNode parse(byte[] body) {
		if (body.length == 0) {
			return null;
		}
		try {
			return this.jsonMapper.readTree(body);
		}
		catch (JacksonException ex) {
			return null;
		}
	}

}
