package io.retryoutbox;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.util.Assert;

/**
 * An HTTP request to deliver through the outbox: a method, a destination named in
 * {@code retry-outbox.destinations}, a path relative to that destination's base URL,
 * headers, an optional body and an optional ordering key.
 * <p>
 * Build one with {@link #get}, {@link #post}, {@link #put}, {@link #patch} or
 * {@link #delete}: <pre class="code">
 * outbox.send(OutboxRequest.post("payments", "/charges").jsonBody(charge).orderingKey("order-42").build());
 * </pre>
 *
 * @param method the HTTP method
 * @param destination the name of a configured destination
 * @param path the path (and query) relative to the destination's base URL
 * @param headers the request headers, in insertion order
 * @param body the body: {@code null}, bytes, or a value to serialize as JSON
 * @param orderingKey the key whose messages are delivered in enqueue order, or
 * {@code null}
 */
public record OutboxRequest(HttpMethod method, String destination, String path, Map<String, List<String>> headers,
		@Nullable Body body, @Nullable String orderingKey) {

	public OutboxRequest {
		Assert.notNull(method, "method must not be null");
		Assert.hasText(destination, "destination must not be empty");
		Assert.notNull(path, "path must not be null");
		headers = copy(headers);
	}

	/**
	 * Starts a {@code GET} request.
	 * @param destination the configured destination name
	 * @param path the path relative to the destination's base URL
	 * @return a builder
	 */
	public static Builder get(String destination, String path) {
		return new Builder(HttpMethod.GET, destination, path);
	}

	/**
	 * Starts a {@code POST} request.
	 * @param destination the configured destination name
	 * @param path the path relative to the destination's base URL
	 * @return a builder
	 */
	public static Builder post(String destination, String path) {
		return new Builder(HttpMethod.POST, destination, path);
	}

	/**
	 * Starts a {@code PUT} request.
	 * @param destination the configured destination name
	 * @param path the path relative to the destination's base URL
	 * @return a builder
	 */
	public static Builder put(String destination, String path) {
		return new Builder(HttpMethod.PUT, destination, path);
	}

	/**
	 * Starts a {@code PATCH} request.
	 * @param destination the configured destination name
	 * @param path the path relative to the destination's base URL
	 * @return a builder
	 */
	public static Builder patch(String destination, String path) {
		return new Builder(HttpMethod.PATCH, destination, path);
	}

	/**
	 * Starts a {@code DELETE} request.
	 * @param destination the configured destination name
	 * @param path the path relative to the destination's base URL
	 * @return a builder
	 */
	public static Builder delete(String destination, String path) {
		return new Builder(HttpMethod.DELETE, destination, path);
	}

	private static Map<String, List<String>> copy(Map<String, List<String>> headers) {
		Map<String, List<String>> copy = new LinkedHashMap<>();
		headers.forEach((name, values) -> copy.put(name, List.copyOf(values)));
		return Collections.unmodifiableMap(copy);
	}

	/**
	 * A request body.
	 */
	public sealed interface Body permits Body.Bytes, Body.Json {

		/**
		 * A body given as bytes with their content type.
		 *
		 * @param content the bytes to send
		 * @param contentType the content type
		 */
		record Bytes(byte[] content, MediaType contentType) implements Body {

		}

		/**
		 * A value that is serialized as JSON with the application's JSON mapper when the
		 * request is recorded.
		 *
		 * @param value the value to serialize
		 */
		record Json(Object value) implements Body {

		}

	}

	/**
	 * Builds an {@link OutboxRequest}.
	 */
	public static final class Builder {

		private final HttpMethod method;

		private final String destination;

		private final String path;

		private final Map<String, List<String>> headers = new LinkedHashMap<>();

		private @Nullable Body body;

		private @Nullable String orderingKey;

		private Builder(HttpMethod method, String destination, String path) {
			this.method = method;
			this.destination = destination;
			this.path = path;
		}

		/**
		 * Adds a header value.
		 * @param name the header name
		 * @param value the header value
		 * @return this builder
		 */
		public Builder header(String name, String value) {
			Assert.hasText(name, "header name must not be empty");
			Assert.notNull(value, () -> "value of header '" + name + "' must not be null");
			this.headers.computeIfAbsent(name, (key) -> new ArrayList<>()).add(value);
			return this;
		}

		/**
		 * Sets a body that is serialized as JSON with the application's JSON mapper.
		 * @param value the value to serialize
		 * @return this builder
		 */
		public Builder jsonBody(Object value) {
			Assert.notNull(value, "JSON body must not be null");
			this.body = new Body.Json(value);
			return this;
		}

		/**
		 * Sets a raw body.
		 * @param content the bytes to send
		 * @param contentType their content type
		 * @return this builder
		 */
		public Builder body(byte[] content, MediaType contentType) {
			Assert.notNull(content, "body must not be null");
			Assert.notNull(contentType, "content type must not be null");
			this.body = new Body.Bytes(content.clone(), contentType);
			return this;
		}

		/**
		 * Sets a text body, encoded with the content type's charset or UTF-8.
		 * @param content the text to send
		 * @param contentType its content type
		 * @return this builder
		 */
		public Builder body(String content, MediaType contentType) {
			Assert.notNull(content, "body must not be null");
			Assert.notNull(contentType, "content type must not be null");
			var charset = (contentType.getCharset() != null) ? contentType.getCharset() : StandardCharsets.UTF_8;
			this.body = new Body.Bytes(content.getBytes(charset), contentType);
			return this;
		}

		/**
		 * Sets the ordering key: messages with the same key are delivered in enqueue
		 * order.
		 * @param orderingKey the key, or {@code null} for none
		 * @return this builder
		 */
		public Builder orderingKey(@Nullable String orderingKey) {
			this.orderingKey = orderingKey;
			return this;
		}

		/**
		 * Builds the request.
		 * @return the request
		 */
		public OutboxRequest build() {
			return new OutboxRequest(this.method, this.destination, this.path, this.headers, this.body,
					this.orderingKey);
		}

	}

}
