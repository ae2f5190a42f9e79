package io.retryoutbox.metrics;

import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import io.retryoutbox.jdbc.ClaimedMessage;
import io.retryoutbox.jdbc.Completion;
import io.retryoutbox.jdbc.JdbcTraceContexts;
import io.retryoutbox.relay.AttemptObserver;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * Makes each attempt an {@link OutboxObservationDocumentation#ATTEMPT observation} that
 * is the parent of the WebClient's own, so that with tracing the client span and the
 * {@code traceparent} header come from Boot's instrumented WebClient. With a
 * {@link JdbcTraceContexts}, the trace context stored at enqueue is restored as the
 * remote parent of the attempt.
 */
public final class ObservingAttemptObserver implements AttemptObserver {

	private static final Log logger = LogFactory.getLog(ObservingAttemptObserver.class);

	private final ObservationRegistry registry;

	private final @Nullable OutboxAttemptObservationConvention convention;

	private final @Nullable JdbcTraceContexts traceContexts;

	private final Map<UUID, Map<String, String>> propagation;

	/**
	 * Creates an observer.
	 * @param registry where observations are made
	 * @param convention the convention that overrides the default one, or {@code null}
	 * @param traceContexts reads the trace context stored with messages, or {@code null}
	 * to start a new trace for each attempt
	 */
	public ObservingAttemptObserver(ObservationRegistry registry,
			@Nullable OutboxAttemptObservationConvention convention, @Nullable JdbcTraceContexts traceContexts) {
		this(registry, convention, traceContexts, Map.of());
	}

	private ObservingAttemptObserver(ObservationRegistry registry,
			@Nullable OutboxAttemptObservationConvention convention, @Nullable JdbcTraceContexts traceContexts,
			Map<UUID, Map<String, String>> propagation) {
		this.registry = registry;
		this.convention = convention;
		this.traceContexts = traceContexts;
		this.propagation = propagation;
	}

	@Override
	public AttemptObserver forBatch(List<ClaimedMessage> batch) {
		if (this.traceContexts == null || this.registry.isNoop()) {
			return this;
		}
		try {
			Map<UUID, Map<String, String>> found = this.traceContexts
				.find(batch.stream().map(ClaimedMessage::id).toList());
			return new ObservingAttemptObserver(this.registry, this.convention, this.traceContexts, found);
		}
		catch (RuntimeException ex) {
			// A lost parent costs a broken trace; failing here would hold up the whole
			// batch.
			logger.debug("Could not read the stored trace contexts; the attempts start new traces", ex);
			return this;
		}
	}

	@Override
	public Mono<Completion> observe(ClaimedMessage message, Mono<Completion> attempt) {
		return Mono.defer(() -> {
			OutboxAttemptContext context = new OutboxAttemptContext(message,
					this.propagation.getOrDefault(message.id(), Map.of()));
			Observation observation = OutboxObservationDocumentation.ATTEMPT.observation(this.convention,
					new DefaultOutboxAttemptObservationConvention(), () -> context, this.registry);
			observation.start();
			return attempt.doOnNext(context::setCompletion)
				.doOnError(observation::error)
				.doFinally((signal) -> observation.stop())
				.contextWrite((reactorContext) -> reactorContext.put(ObservationThreadLocalAccessor.KEY, observation));
		});
	}

}
