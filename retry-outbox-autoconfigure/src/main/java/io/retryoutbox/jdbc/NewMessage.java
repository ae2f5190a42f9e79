package io.retryoutbox.jdbc;

import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * A validated message, ready to be inserted.
 *
 * @param id the message id
 * @param destination the destination name
 * @param method the HTTP method
 * @param path the path relative to the destination's base URL
 * @param headersJson the request headers as a JSON object of string arrays
 * @param body the body, or {@code null}
 * @param contentType the body's content type, or {@code null}
 * @param orderingKey the ordering key, or {@code null}
 * @param idempotencyKey the idempotency key sent on every attempt
 * @param traceParent the W3C traceparent of the enqueuing request, or {@code null}
 * @param traceState the W3C tracestate of the enqueuing request, or {@code null}
 */
record NewMessage(UUID id, String destination, String method, String path, String headersJson, byte @Nullable [] body,
		@Nullable String contentType, @Nullable String orderingKey, String idempotencyKey, @Nullable String traceParent,
		@Nullable String traceState) {

	/**
	 * Creates a message without trace context.
	 * @param id the message id
	 * @param destination the destination name
	 * @param method the HTTP method
	 * @param path the path relative to the destination's base URL
	 * @param headersJson the request headers as a JSON object of string arrays
	 * @param body the body, or {@code null}
	 * @param contentType the body's content type, or {@code null}
	 * @param orderingKey the ordering key, or {@code null}
	 * @param idempotencyKey the idempotency key sent on every attempt
	 */
	NewMessage(UUID id, String destination, String method, String path, String headersJson, byte @Nullable [] body,
			@Nullable String contentType, @Nullable String orderingKey, String idempotencyKey) {
		this(id, destination, method, path, headersJson, body, contentType, orderingKey, idempotencyKey, null, null);
	}

}
