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

	private final boolean rehearsal;

	JdbcOutbox(OrderingKeys keys, JdbcOutboxComponents.EnqueueSettings settings, JsonMapper jsonMapper,
			JdbcOutboxComponents.RelayWakeUp wakeUp, EnqueueObserver observer) {
		this(keys, settings, jsonMapper, wakeUp, observer, () -> null, false);
	}

	/**
	 * Creates an outbox.
	 * @param rehearsal whether it enqueues for the relay's rehearsal, in one transaction
	 * that never commits: what an enqueue leaves for the commit is then done at once
	 */
	JdbcOutbox(OrderingKeys keys, JdbcOutboxComponents.EnqueueSettings settings, JsonMapper jsonMapper,
			JdbcOutboxComponents.RelayWakeUp wakeUp, EnqueueObserver observer,
			Supplier<@Nullable DirectDispatch> directDispatch, boolean rehearsal) {
		this.keys = keys;
		this.validator = new RequestValidator(Set.copyOf(settings.destinations()), settings.maxBodySize(),
				settings.configuredHeaders(), Set.copyOf(settings.signedDestinations()));
		this.jsonMapper = jsonMapper;
		this.idempotencyKeyHeader = settings.idempotencyKeyHeader();
		this.requireTransaction = settings.requireTransaction();
		this.wakeUp = wakeUp;
		this.observer = observer;
		this.directDispatch = directDispatch;
		this.rehearsal = rehearsal;
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
		String key = request.orderingKey();
		// Behind a run of this instance's relay, the message may go on that run: it is
		// inserted to say which message it arrived behind, and never leased, which would
		// need the key's lock.
		DirectDispatch direct = this.directDispatch.get();
		boolean behindRun = direct != null && key != null && this.wakeUp.hasRun(key);
		DirectDispatch dispatch = behindRun ? null : direct;
		String owner = (dispatch != null) ? dispatch.reserve(request.destination()) : null;
		if (owner == null && !behindRun) {
			this.observer.observe(id, request, (trace) -> this.keys.insert(message.apply(trace)));
			afterCommit(inTransaction && !this.rehearsal, key, null);
			return id;
		}
		AtomicReference<@Nullable Handed> handed = new AtomicReference<>();
		try {
			this.observer.observe(id, request, (trace) -> {
				OrderingKeys.Inserted inserted = (dispatch != null && owner != null)
						? this.keys.insertLeased(message.apply(trace), owner, dispatch.leaseTimeout())
						: this.keys.insertBehind(message.apply(trace));
				if (inserted.leased() || inserted.behind() != null) {
					ClaimedMessage claimed = new ClaimedMessage(id, request.destination(), request.method().name(),
							path, Map.copyOf(headers), body, contentType, key, idempotencyKey, 1, inserted.createdAt(),
							traceContext(trace));
					handed.set(new Handed(claimed, inserted.leased() ? dispatch : null, inserted.behind(),
							inserted.ahead()));
				}
			});
		}
		catch (RuntimeException ex) {
			if (dispatch != null && owner != null) {
				dispatch.cancel(request.destination());
			}
			throw ex;
		}
		Handed taken = handed.get();
		if (dispatch != null && owner != null && (taken == null || taken.dispatch() == null)) {
			dispatch.cancel(request.destination());
		}
		afterCommit(inTransaction && !this.rehearsal, key, taken);
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
	 * arrived pending, hands a message inserted leased over to the relay, offers one
	 * inserted pending behind a known message to the relay's run of its key, and wakes
	 * the relays (this one and, through the notifier, the others) for a message inserted
	 * pending. Where none of that is wanted, e.g. on an instance without a relay while no
	 * other instance's relay listens, the transaction gets no synchronization.
	 */
	private void afterCommit(boolean inTransaction, @Nullable String key, @Nullable Handed handed) {
		DirectDispatch dispatch = (handed != null) ? handed.dispatch() : null;
		String arrival = (key != null && dispatch == null && this.keys.notesArrivals()) ? key : null;
		if (arrival == null && dispatch == null && !this.wakeUp.isWanted()) {
			return;
		}
		CommitWork work = CommitWork.of(this.keys, inTransaction);
		UUID behind = (handed != null) ? handed.behind() : null;
		if (handed != null && behind != null && arrival != null) {
			work.follow(arrival, handed.message(), behind, handed.ahead(), this.wakeUp);
		}
		else if (arrival != null) {
			work.arrived(arrival);
		}
		if (handed != null && dispatch != null) {
			work.handOver(handed.message(), dispatch);
		}
		else {
			work.wakeUp(this.wakeUp);
		}
	}

	/**
	 * A message for the relay of this instance once its transaction commits: inserted
	 * leased to it by {@code dispatch}, or pending right behind {@code behind}, with
	 * {@code ahead} messages of its key behind the key's head.
	 */
	private record Handed(ClaimedMessage message, @Nullable DirectDispatch dispatch, @Nullable UUID behind, int ahead) {

	}

}
