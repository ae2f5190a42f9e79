package io.retryoutbox.jdbc;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import io.retryoutbox.Outbox;
import io.retryoutbox.OutboxRequest.Body;
import io.retryoutbox.OutboxRequest;
import io.retryoutbox.message.EnqueueObserver;
import io.retryoutbox.support.HttpRequestRules;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.http.MediaType;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The {@link Outbox} that inserts requests into the outbox table and wakes the relay once
 * the enqueuing transaction has committed.
 */
final class JdbcOutbox implements Outbox {

	private final OrderingKeys keys;

	private final RequestValidator validator;

	private final JsonMapper jsonMapper;

	private final String idempotencyKeyHeader;

	private final boolean requireTransaction;

	private final Runnable afterCommit;

	private final EnqueueObserver observer;

	JdbcOutbox(OrderingKeys keys, JdbcOutboxComponents.EnqueueSettings settings, JsonMapper jsonMapper,
			Runnable afterCommit, EnqueueObserver observer) {
		this.keys = keys;
		this.validator = new RequestValidator(Set.copyOf(settings.destinations()), settings.maxBodySize(),
				settings.configuredHeaders(), Set.copyOf(settings.signedDestinations()));
		this.jsonMapper = jsonMapper;
		this.idempotencyKeyHeader = settings.idempotencyKeyHeader();
		this.requireTransaction = settings.requireTransaction();
		this.afterCommit = afterCommit;
		this.observer = observer;
	}

	@Override
	public UUID send(OutboxRequest request) {
		boolean inTransaction = TransactionSynchronizationManager.isActualTransactionActive();
		if (this.requireTransaction && !inTransaction) {
			throw new IllegalStateException("Outbox.send requires an active transaction so that the request commits "
					+ "or rolls back with the business data; call it from a @Transactional method "
					+ "or set retry-outbox.require-transaction=false");
		}
		this.validator.validate(request);
		byte[] body = serialize(request.body());
		if (body != null) {
			this.validator.validateBodySize(body.length);
		}
		UUID id = TimeOrderedUuid.next();
		Map<String, List<String>> headers = new LinkedHashMap<>(request.headers());
		String idempotencyKey = idempotencyKey(headers, id);
		String headersJson = this.jsonMapper.writeValueAsString(headers);
		this.observer.observe(id, request,
				(trace) -> this.keys.insert(new NewMessage(id, request.destination(), request.method().name(),
						HttpRequestRules.normalizePath(request.path()), headersJson, body, contentType(request.body()),
						request.orderingKey(), idempotencyKey, trace.get(EnqueueObserver.TRACEPARENT),
						trace.get(EnqueueObserver.TRACESTATE))));
		wakeAfterCommit(inTransaction);
		return id;
	}

	private byte @Nullable [] serialize(@Nullable Body body) {
		if (body == null) {
			return null;
		}
		if (body instanceof Body.Bytes bytes) {
			return bytes.content();
		}
		return this.jsonMapper.writeValueAsBytes(((Body.Json) body).value());
	}

	private static @Nullable String contentType(@Nullable Body body) {
		if (body instanceof Body.Bytes bytes) {
			return bytes.contentType().toString();
		}
		return (body != null) ? MediaType.APPLICATION_JSON_VALUE : null;
	}

	private String idempotencyKey(Map<String, List<String>> headers, UUID id) {
		for (var entry : Set.copyOf(headers.entrySet())) {
			if (entry.getKey().equalsIgnoreCase(this.idempotencyKeyHeader)) {
				headers.remove(entry.getKey());
				if (entry.getValue().size() != 1) {
					throw new IllegalArgumentException(
							"Header '" + this.idempotencyKeyHeader + "' must have exactly one value");
				}
				return entry.getValue().get(0);
			}
		}
		return id.toString();
	}

	private void wakeAfterCommit(boolean inTransaction) {
		if (!inTransaction || !TransactionSynchronizationManager.isSynchronizationActive()) {
			this.afterCommit.run();
			return;
		}
		WakeAfterCommit wake = new WakeAfterCommit(this.afterCommit);
		if (!TransactionSynchronizationManager.getSynchronizations().contains(wake)) {
			TransactionSynchronizationManager.registerSynchronization(wake);
		}
	}

	/**
	 * Wakes the relay once per committed transaction, however many requests it enqueued.
	 */
	private record WakeAfterCommit(Runnable action) implements TransactionSynchronization {

		@Override
		public void afterCommit() {
			this.action.run();
		}

	}

}
