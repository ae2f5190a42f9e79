package io.retryoutbox.metrics;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import io.retryoutbox.message.ClaimedMessage;
import io.retryoutbox.message.Outcome;
import io.retryoutbox.relay.AttemptObserver;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * Makes each attempt an {@link OutboxObservationDocumentation#ATTEMPT observation} that
 * is the parent of the WebClient's own, so that with tracing the client span and the
 * {@code traceparent} header come from Boot's instrumented WebClient. The trace context
 * stored at enqueue, claimed with the message, is restored as the remote parent of the
 * attempt.
 */
public final class ObservingAttemptObserver implements AttemptObserver {

	private final ObservationRegistry registry;

	private final @Nullable OutboxAttemptObservationConvention convention;

	/**
	 * Creates an observer.
	 * @param registry where observations are made
	 * @param convention the convention that overrides the default one, or {@code null}
	 */
	public ObservingAttemptObserver(ObservationRegistry registry,
			@Nullable OutboxAttemptObservationConvention convention) {
		this.registry = registry;
		this.convention = convention;
	}

	@Override
	public Mono<Outcome> observe(ClaimedMessage message, Mono<Outcome> attempt) {
		return Mono.defer(() -> {
			OutboxAttemptContext context = new OutboxAttemptContext(message, message.traceContext());
			Observation observation = OutboxObservationDocumentation.ATTEMPT.observation(this.convention,
					new DefaultOutboxAttemptObservationConvention(), () -> context, this.registry);
			observation.start();
			return attempt.doOnNext(context::setOutcome)
				.doOnError(observation::error)
				.doFinally((signal) -> observation.stop())
				.contextWrite((reactorContext) -> reactorContext.put(ObservationThreadLocalAccessor.KEY, observation));
		});
	}

}
