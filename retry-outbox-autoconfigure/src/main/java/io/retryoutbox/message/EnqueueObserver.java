package io.retryoutbox.message;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;

import io.retryoutbox.OutboxRequest;

/**
 * Watches the enqueueing of messages, e.g. to count them or to capture the trace context
 * that is stored with each one and restored when it is sent.
 */
@FunctionalInterface
public interface EnqueueObserver {

	/**
	 * An observer that stores no trace context and does nothing else.
	 */
	EnqueueObserver NONE = (id, request, write) -> write.accept(Map.of());

	/**
	 * The propagation field that holds the W3C trace parent.
	 */
	String TRACEPARENT = "traceparent";

	/**
	 * The propagation field that holds the W3C trace state.
	 */
	String TRACESTATE = "tracestate";

	/**
	 * Wraps the write of one message, in the enqueuing thread and transaction.
	 * @param id the id of the message
	 * @param request the request being enqueued
	 * @param write writes the message with the given propagation fields
	 * ({@link #TRACEPARENT}, {@link #TRACESTATE}, possibly none); to be called exactly
	 * once
	 */
	void observe(UUID id, OutboxRequest request, Consumer<Map<String, String>> write);

	/**
	 * Combines observers; the first one wraps the others, and the fields of all of them
	 * are stored.
	 * @param observers the observers, in order
	 * @return one observer that applies them all
	 */
	static EnqueueObserver of(List<EnqueueObserver> observers) {
		EnqueueObserver combined = NONE;
		for (int i = observers.size() - 1; i >= 0; i--) {
			EnqueueObserver outer = observers.get(i);
			EnqueueObserver inner = combined;
			combined = (inner == NONE) ? outer : (id, request, write) -> outer.observe(id, request,
					(outerFields) -> inner.observe(id, request, (innerFields) -> {
						Map<String, String> fields = new HashMap<>(innerFields);
						fields.putAll(outerFields);
						write.accept(fields);
					}));
		}
		return combined;
	}

}
