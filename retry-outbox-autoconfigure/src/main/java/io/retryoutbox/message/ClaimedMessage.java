package io.retryoutbox.message;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * A message claimed by a relay for one attempt.
 *
 * @param id the message id
 * @param destination the destination name
 * @param method the HTTP method
 * @param path the path relative to the destination's base URL
 * @param headers the request headers
 * @param body the body, or {@code null}
 * @param contentType the body's content type, or {@code null}
 * @param orderingKey the ordering key, or {@code null}
 * @param idempotencyKey the idempotency key sent on every attempt
 * @param attempt the number of this attempt, starting at 1
 * @param createdAt when the message was enqueued
 * @param traceContext the propagation fields ({@code traceparent}, {@code tracestate})
 * stored at enqueue, possibly none
 */
public record ClaimedMessage(UUID id, String destination, String method, String path, Map<String, List<String>> headers,
		byte @Nullable [] body, @Nullable String contentType, @Nullable String orderingKey, String idempotencyKey,
		int attempt, Instant createdAt, Map<String, String> traceContext) implements Claim {

}
