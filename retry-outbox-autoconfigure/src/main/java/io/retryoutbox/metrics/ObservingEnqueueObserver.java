package io.retryoutbox.metrics;

import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.ObservationRegistry;
import io.retryoutbox.OutboxRequest;
import io.retryoutbox.message.EnqueueObserver;
import org.jspecify.annotations.Nullable;

/**
 * Makes each enqueue an {@link OutboxObservationDocumentation#ENQUEUE observation}; with
 * tracing, its propagation fields ({@code traceparent}, {@code tracestate}) are stored
 * with the message, so that the delivery continues the trace of the request that caused
 * it.
 */
public final class ObservingEnqueueObserver implements EnqueueObserver {

	private final ObservationRegistry registry;

	private final @Nullable ObservationConvention<OutboxEnqueueContext> convention;

	/**
	 * Creates an observer.
	 * @param registry where observations are made
	 * @param convention the convention that overrides the default one, or {@code null}
	 */
	public ObservingEnqueueObserver(ObservationRegistry registry,
			@Nullable ObservationConvention<OutboxEnqueueContext> convention) {
		this.registry = registry;
		this.convention = convention;
	}

	@Override
	public void observe(UUID id, OutboxRequest request, Consumer<Map<String, String>> write) {
		OutboxEnqueueContext context = new OutboxEnqueueContext(id, request.destination());
		Observation observation = OutboxObservationDocumentation.ENQUEUE.observation(this.convention,
				new DefaultOutboxEnqueueObservationConvention(), () -> context, this.registry);
		// Starting the observation is what fills the carrier when tracing is on.
		observation.observe(() -> write.accept(context.getCarrier()));
	}

}
