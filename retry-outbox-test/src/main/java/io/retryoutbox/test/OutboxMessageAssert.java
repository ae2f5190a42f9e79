package io.retryoutbox.test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;

import io.retryoutbox.message.MessageStatus;
import io.retryoutbox.message.OutboxReadModel;
import io.retryoutbox.message.StoredMessage;
import org.assertj.core.api.AbstractAssert;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * Assertions on one outbox message: the request it holds and what became of it, as read
 * when {@link OutboxAssert#message} ran; the body is read when asserted.
 */
public final class OutboxMessageAssert extends AbstractAssert<OutboxMessageAssert, StoredMessage> {

	private static final JsonMapper JSON = JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT).build();

	private final OutboxReadModel outbox;

	OutboxMessageAssert(StoredMessage actual, OutboxReadModel outbox) {
		super(actual, OutboxMessageAssert.class);
		this.outbox = outbox;
	}

	/**
	 * Verifies the message's status.
	 * @param status the status expected
	 * @return this assertion
	 */
	public OutboxMessageAssert hasStatus(MessageStatus status) {
		return has("status", this.actual.status(), status);
	}

	/**
	 * Verifies that the message waits for an attempt.
	 * @return this assertion
	 */
	public OutboxMessageAssert isPending() {
		return hasStatus(MessageStatus.PENDING);
	}

	/**
	 * Verifies that the message was delivered.
	 * @return this assertion
	 */
	public OutboxMessageAssert isDelivered() {
		return hasStatus(MessageStatus.DELIVERED);
	}

	/**
	 * Verifies that the message is dead.
	 * @return this assertion
	 */
	public OutboxMessageAssert isDead() {
		return hasStatus(MessageStatus.DEAD);
	}

	/**
	 * Verifies the request's HTTP method.
	 * @param method the method, e.g. {@code POST}
	 * @return this assertion
	 */
	public OutboxMessageAssert hasMethod(String method) {
		return has("method", this.actual.method(), method);
	}

	/**
	 * Verifies the request's path, relative to its destination's base URL.
	 * @param path the path, e.g. {@code /charges}
	 * @return this assertion
	 */
	public OutboxMessageAssert hasPath(String path) {
		return has("path", this.actual.path(), path);
	}

	/**
	 * Verifies that the request has a header with a value (among others, if it has
	 * several); the name is compared ignoring case, as HTTP does.
	 * @param name the header name
	 * @param value the value
	 * @return this assertion
	 */
	public OutboxMessageAssert hasHeader(String name, String value) {
		List<String> values = this.actual.headers()
			.entrySet()
			.stream()
			.filter((header) -> header.getKey().equalsIgnoreCase(name))
			.flatMap((header) -> header.getValue().stream())
			.toList();
		if (!values.contains(value)) {
			failWithMessage("Expected outbox message %s to have header %s: %s but %s; its headers are %s",
					this.actual.id(), name, value, values.isEmpty() ? "it has none of that name" : "it has " + values,
					this.actual.headers());
		}
		return this;
	}

	/**
	 * Verifies the request's content type.
	 * @param contentType the content type, e.g. {@code application/json}
	 * @return this assertion
	 */
	public OutboxMessageAssert hasContentType(String contentType) {
		return has("content type", this.actual.contentType(), contentType);
	}

	/**
	 * Verifies the request's body as JSON: equal in structure and values, whatever the
	 * order of object members and the whitespace.
	 * @param json the JSON expected
	 * @return this assertion
	 */
	public OutboxMessageAssert hasJsonBody(String json) {
		JsonNode expected = parse(json, "the expected JSON");
		byte[] body = this.outbox.body(this.actual.id()).orElse(null);
		if (body == null) {
			failWithMessage("Expected outbox message %s to have the JSON body%n%s%nbut it has no body",
					this.actual.id(), pretty(expected));
		}
		JsonNode actual;
		try {
			actual = JSON.readTree(body);
		}
		catch (JacksonException ex) {
			failWithMessage("Expected outbox message %s to have the JSON body%n%s%nbut its body is not JSON (%s):%n%s",
					this.actual.id(), pretty(expected), ex.getOriginalMessage(),
					new String(body, StandardCharsets.UTF_8));
			return this;
		}
		if (!expected.equals(actual)) {
			failWithActualExpectedAndMessage(pretty(actual), pretty(expected),
					"Expected outbox message %s to have the JSON body%n%s%nbut it has%n%s", this.actual.id(),
					pretty(expected), pretty(actual));
		}
		return this;
	}

	/**
	 * Verifies the request's body as UTF-8 text, exactly.
	 * @param body the text expected
	 * @return this assertion
	 */
	public OutboxMessageAssert hasBody(String body) {
		String actual = this.outbox.body(this.actual.id())
			.map((bytes) -> new String(bytes, StandardCharsets.UTF_8))
			.orElse(null);
		return has("body", actual, body);
	}

	/**
	 * Verifies the request's ordering key.
	 * @param orderingKey the ordering key
	 * @return this assertion
	 */
	public OutboxMessageAssert hasOrderingKey(String orderingKey) {
		return has("ordering key", this.actual.orderingKey(), orderingKey);
	}

	/**
	 * Verifies how many attempts were made.
	 * @param attempts the number of attempts expected
	 * @return this assertion
	 */
	public OutboxMessageAssert hasAttempts(int attempts) {
		return has("attempts", this.actual.attempts(), attempts);
	}

	/**
	 * Verifies the HTTP status of the last attempt.
	 * @param statusCode the status expected
	 * @return this assertion
	 */
	public OutboxMessageAssert hasLastStatusCode(int statusCode) {
		return has("last status code", this.actual.lastStatusCode(), statusCode);
	}

	/**
	 * Verifies why the message is dead.
	 * @param deadReason the reason, e.g. {@code TERMINAL_STATUS}
	 * @return this assertion
	 */
	public OutboxMessageAssert hasDeadReason(String deadReason) {
		return has("dead reason", this.actual.deadReason(), deadReason);
	}

	private OutboxMessageAssert has(String what, @Nullable Object actual, Object expected) {
		isNotNull();
		if (!Objects.equals(actual, expected)) {
			failWithActualExpectedAndMessage(actual, expected, "Expected outbox message %s to have %s %s but was %s%s",
					this.actual.id(), what, quote(expected), quote(actual), summary());
		}
		return this;
	}

	private String summary() {
		StoredMessage message = this.actual;
		return String.format("%n(%s %s %s to %s, attempts %s, last status %s, dead reason %s)", message.status(),
				message.method(), message.path(), message.destination(), message.attempts(), message.lastStatusCode(),
				message.deadReason());
	}

	private static String quote(@Nullable Object value) {
		return (value instanceof String) ? "\"" + value + "\"" : String.valueOf(value);
	}

	private JsonNode parse(String json, String what) {
		try {
			return JSON.readTree(json);
		}
		catch (JacksonException ex) {
			throw new IllegalArgumentException(what + " is not JSON: " + ex.getOriginalMessage() + ": " + json, ex);
		}
	}

	private static String pretty(JsonNode node) {
		return JSON.writeValueAsString(node);
	}

}
