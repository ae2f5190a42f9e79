package io.retryoutbox.metrics;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.retryoutbox.OutboxRequest;
import io.retryoutbox.message.ClaimedMessage;
import io.retryoutbox.message.MessageStatus;
import io.retryoutbox.message.Outcome;
import io.retryoutbox.message.EnqueueObserver;
import io.retryoutbox.relay.AttemptObserver;
import reactor.core.publisher.Mono;

import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The meters fed by events: {@code retry.outbox.enqueued}, counted when the enqueuing
 * transaction commits, and {@code retry.outbox.delivery.latency}, from enqueue to
 * delivery, with a histogram. The attempt timer {@code retry.outbox.attempts} comes from
 * the attempt observation.
 */
public final class OutboxMeters implements AttemptObserver, EnqueueObserver {

	/**
	 * The name of the counter of enqueued messages.
	 */
	public static final String ENQUEUED = "retry.outbox.enqueued";

	/**
	 * The name of the timer from enqueue to delivery.
	 */
	public static final String DELIVERY_LATENCY = "retry.outbox.delivery.latency";

	private final MeterRegistry registry;

	public OutboxMeters(MeterRegistry registry) {
		this.registry = registry;
	}

	@Override
	public void observe(UUID id, OutboxRequest request, Consumer<Map<String, String>> write) {
		write.accept(Map.of());
		Counter counter = Counter.builder(ENQUEUED)
			.description("Messages enqueued, counted when their transaction commits")
			.tag("destination", request.destination())
			.register(this.registry);
		if (TransactionSynchronizationManager.isSynchronizationActive()) {
			TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

				@Override
				public void afterCommit() {
					counter.increment();
				}

			});
		}
		else {
			counter.increment();
		}
	}

	@Override
	public Mono<Outcome> observe(ClaimedMessage message, Mono<Outcome> attempt) {
		return attempt.doOnNext((outcome) -> {
			if (outcome.status() == MessageStatus.DELIVERED) {
				Timer.builder(DELIVERY_LATENCY)
					.description("Time from enqueue to delivery")
					.tag("destination", message.destination())
					.publishPercentileHistogram()
					.register(this.registry)
					.record(Duration.between(message.createdAt(), Instant.now()));
			}
		});
	}

}
