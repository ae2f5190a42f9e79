package io.retryoutbox.jdbc;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;

import io.retryoutbox.Outbox;
import io.retryoutbox.OutboxRequest.Body;
import io.retryoutbox.OutboxRequest;
import io.retryoutbox.message.ClaimedMessage;
import io.retryoutbox.message.EnqueueObserver;
import io.retryoutbox.relay.DirectDispatch;
import io.retryoutbox.support.HttpRequestRules;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.http.MediaType;
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

	private final JdbcOutboxComponents.RelayWakeUp wakeUp;

	private final EnqueueObserver observer;

	private final Supplier<@Nullable DirectDispatch> directDispatch;

	JdbcOutbox(OrderingKeys keys, JdbcOutboxComponents.EnqueueSettings settings, JsonMapper jsonMapper,
			JdbcOutboxComponents.RelayWakeUp wakeUp, EnqueueObserver observer) {
		this(keys, settings, jsonMapper, wakeUp, observer, () -> null);
	}

	JdbcOutbox(OrderingKeys keys, JdbcOutboxComponents.EnqueueSettings settings, JsonMapper jsonMapper,
			JdbcOutboxComponents.RelayWakeUp wakeUp, EnqueueObserver observer,
			Supplier<@Nullable DirectDispatch> directDispatch) {
		this.keys = keys;
		this.validator = new RequestValidator(Set.copyOf(settings.destinations()), settings.maxBodySize(),
				settings.configuredHeaders(), Set.copyOf(settings.signedDestinations()));
		this.jsonMapper = jsonMapper;
		this.idempotencyKeyHeader = settings.idempotencyKeyHeader();
		this.requireTransaction = settings.requireTransaction();
		this.wakeUp = wakeUp;
		this.observer = observer;
		this.directDispatch = directDispatch;
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
		String headersJson = headers.isEmpty() ? "{}" : this.jsonMapper.writeValueAsString(headers);
		String path = HttpRequestRules.normalizePath(request.path());
		String contentType = contentType(request.body());
		Function<Map<String, String>, NewMessage> message = (trace) -> new NewMessage(id, request.destination(),
				request.method().name(), path, headersJson, body, contentType, request.orderingKey(), idempotencyKey,
				trace.get(EnqueueObserver.TRACEPARENT), trace.get(EnqueueObserver.TRACESTATE));
		DirectDispatch dispatch = this.directDispatch.get();
		String owner = (dispatch != null) ? dispatch.reserve(request.destination()) : null;
		if (dispatch == null || owner == null) {
			this.observer.observe(id, request, (trace) -> this.keys.insert(message.apply(trace)));
			afterCommit(inTransaction, request.orderingKey(), null, null);
			return id;
		}
		AtomicReference<@Nullable ClaimedMessage> leased = new AtomicReference<>();
		try {
			this.observer.observe(id, request, (trace) -> {
				Instant createdAt = this.keys.insertLeased(message.apply(trace), owner, dispatch.leaseTimeout());
				if (createdAt != null) {
					leased.set(new ClaimedMessage(id, request.destination(), request.method().name(), path,
							Map.copyOf(headers), body, contentType, request.orderingKey(), idempotencyKey, 1, createdAt,
							traceContext(trace)));
				}
			});
		}
		catch (RuntimeException ex) {
			dispatch.cancel();
			throw ex;
		}
		ClaimedMessage handed = leased.get();
		if (handed == null) {
			dispatch.cancel();
		}
		afterCommit(inTransaction, request.orderingKey(), handed, dispatch);
		return id;
	}

	private static Map<String, String> traceContext(Map<String, String> trace) {
		Map<String, String> context = new LinkedHashMap<>();
		for (String field : List.of(EnqueueObserver.TRACEPARENT, EnqueueObserver.TRACESTATE)) {
			String value = trace.get(field);
			if (value != null) {
				context.put(field, value);
			}
		}
		return context;
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
		if (headers.isEmpty()) {
			return id.toString();
		}
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

	/**
	 * Once the enqueuing transaction commits: notes the key of a keyed message that
	 * arrived pending, hands a message inserted leased over to the relay, and wakes the
	 * relays (this one and, through the notifier, the others) for a message inserted
	 * pending. Where none of that is wanted, e.g. on an instance without a relay while no
	 * other instance's relay listens, the transaction gets no synchronization.
	 */
	private void afterCommit(boolean inTransaction, @Nullable String key, @Nullable ClaimedMessage leased,
			@Nullable DirectDispatch dispatch) {
		String arrival = (key != null && leased == null && this.keys.notesArrivals()) ? key : null;
		if (arrival == null && leased == null && !this.wakeUp.isWanted()) {
			return;
		}
		CommitWork work = CommitWork.of(this.keys, inTransaction);
		if (arrival != null) {
			work.arrived(arrival);
		}
		if (leased != null && dispatch != null) {
			work.handOver(leased, dispatch);
		}
		else {
			work.wakeUp(this.wakeUp);
		}
	}

}
