package io.retryoutbox.relay;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.retryoutbox.RetryPolicy;
import io.retryoutbox.jdbc.ClaimedMessage;
import io.retryoutbox.jdbc.Completion;
import io.retryoutbox.jdbc.JdbcOutboxStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.context.SmartLifecycle;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;
import org.springframework.util.Assert;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Claims due outbox messages, sends them and records what the {@link RetryPolicy} decided.
 * <p>
 * It owns a single scheduler thread, so it needs no {@code @EnableScheduling}. A retry is a
 * new due time on the row, never a sleeping thread, so stopping never waits for a backoff.
 */
public final class OutboxRelay implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(OutboxRelay.class);

	private final JdbcOutboxStore store;

	private final HttpDispatcher dispatcher;

	private final DecisionRecorder recorder;

	private final Settings settings;

	private final AttemptObserver observer;

	private final String owner = ManagementFactory.getRuntimeMXBean().getName() + "/"
			+ UUID.randomUUID().toString().substring(0, 8);

	private final AtomicBoolean wakePending = new AtomicBoolean();

	private volatile boolean running;

	private volatile @Nullable ScheduledExecutorService executor;

	private volatile long lastRecovery;

	private volatile @Nullable ScheduledFuture<?> polling;

	private volatile @Nullable RuntimeException lastPollError;

	/**
	 * Creates a relay.
	 * @param store where messages are claimed and completed
	 * @param policy decides the fate of each attempt
	 * @param webClient sends the requests; it must not retry by itself
	 * @param destinations the destinations by name
	 * @param idempotencyKeyHeader the header that carries each message's idempotency key
	 * @param settings how the relay claims and paces its work
	 */
	public OutboxRelay(JdbcOutboxStore store, RetryPolicy policy, WebClient webClient,
			Map<String, RelayDestination> destinations, String idempotencyKeyHeader, Settings settings) {
		this(store, policy, webClient, destinations, idempotencyKeyHeader, settings, AttemptObserver.NONE);
	}

	/**
	 * Creates a relay whose attempts are watched.
	 * @param store where messages are claimed and completed
	 * @param policy decides the fate of each attempt
	 * @param webClient sends the requests; it must not retry by itself
	 * @param destinations the destinations by name
	 * @param idempotencyKeyHeader the header that carries each message's idempotency key
	 * @param settings how the relay claims and paces its work
	 * @param observer watches each attempt, e.g. for metrics and traces
	 */
	public OutboxRelay(JdbcOutboxStore store, RetryPolicy policy, WebClient webClient,
			Map<String, RelayDestination> destinations, String idempotencyKeyHeader, Settings settings,
			AttemptObserver observer) {
		this.store = store;
		this.dispatcher = new HttpDispatcher(webClient, destinations, idempotencyKeyHeader);
		this.recorder = new DecisionRecorder(policy);
		this.settings = settings;
		this.observer = observer;
	}

	/**
	 * Whether the relay is polling, was stopped, or stopped polling unexpectedly.
	 * @return the state
	 */
	public State getState() {
		ScheduledFuture<?> polling = this.polling;
		if (!this.running) {
			return State.STOPPED;
		}
		return (polling != null && polling.isDone()) ? State.FAILED : State.RUNNING;
	}

	/**
	 * The failure of the last poll, cleared by the next poll that succeeds.
	 * @return the failure, or {@code null} if the last poll succeeded
	 */
	public @Nullable RuntimeException getLastPollError() {
		return this.lastPollError;
	}

	/**
	 * The id this relay writes as lease owner.
	 * @return the owner id
	 */
	public String getOwner() {
		return this.owner;
	}

	/**
	 * Looks for due messages now instead of at the next poll. Calls that arrive while a wake-up
	 * is pending are coalesced.
	 */
	public void wakeUp() {
		ScheduledExecutorService executor = this.executor;
		if (this.running && executor != null && this.wakePending.compareAndSet(false, true)) {
			try {
				executor.execute(this::poll);
			}
			catch (RuntimeException ex) {
				this.wakePending.set(false);
			}
		}
	}

	@Override
	public void start() {
		CustomizableThreadFactory threads = new CustomizableThreadFactory("retry-outbox-relay-");
		threads.setDaemon(true);
		ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, threads);
		executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
		this.executor = executor;
		this.running = true;
		long interval = this.settings.pollInterval().toMillis();
		this.polling = executor.scheduleWithFixedDelay(this::poll, 0, interval, TimeUnit.MILLISECONDS);
	}

	@Override
	public void stop() {
		this.running = false;
		ScheduledExecutorService executor = this.executor;
		if (executor == null) {
			return;
		}
		executor.shutdown();
		try {
			if (!executor.awaitTermination(this.settings.shutdownTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
				executor.shutdownNow();
				executor.awaitTermination(5, TimeUnit.SECONDS);
			}
		}
		catch (InterruptedException ex) {
			executor.shutdownNow();
			Thread.currentThread().interrupt();
		}
		finally {
			this.executor = null;
			releaseLeases();
		}
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	private void releaseLeases() {
		try {
			int released = this.store.release(this.owner);
			if (released > 0) {
				logger.info("Released " + released + " in-flight outbox messages at shutdown; they will be sent again");
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Could not release in-flight outbox messages at shutdown; they become due again when their "
					+ "lease expires", ex);
		}
	}

	private void poll() {
		this.wakePending.set(false);
		try {
			recoverExpiredLeases();
			drain();
			this.lastPollError = null;
		}
		catch (RuntimeException ex) {
			this.lastPollError = ex;
			logger.warn("Outbox relay poll failed; retrying in " + this.settings.pollInterval(), ex);
		}
	}

	private void recoverExpiredLeases() {
		long now = System.nanoTime();
		if (now - this.lastRecovery >= this.settings.pollInterval().toNanos()) {
			this.lastRecovery = now;
			int recovered = this.store.recoverExpiredLeases();
			if (recovered > 0) {
				logger.info("Recovered " + recovered + " outbox messages whose lease expired");
			}
		}
	}

	private void drain() {
		while (this.running && !Thread.currentThread().isInterrupted()) {
			List<ClaimedMessage> batch = this.store.claim(this.owner, this.settings.batchSize(),
					this.settings.leaseTimeout());
			if (batch.isEmpty()) {
				return;
			}
			deliver(batch);
			if (batch.size() < this.settings.batchSize()) {
				return;
			}
		}
	}

	private void deliver(List<ClaimedMessage> batch) {
		List<Completion> completed = Collections.synchronizedList(new ArrayList<>(batch.size()));
		AttemptObserver observer = this.observer.forBatch(batch);
		CompletableFuture<Void> sending = Flux.fromIterable(batch)
			.flatMap((message) -> observer.observe(message, attempt(message)), this.settings.concurrency())
			.doOnNext(completed::add)
			.then()
			.toFuture();
		try {
			sending.get();
		}
		catch (InterruptedException ex) {
			sending.cancel(true);
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException ex) {
			logger.error("Unexpected failure while sending outbox messages", ex.getCause());
		}
		List<Completion> outcomes;
		synchronized (completed) {
			outcomes = new ArrayList<>(completed);
		}
		this.store.complete(this.owner, outcomes);
	}

	private Mono<Completion> attempt(ClaimedMessage message) {
		return Mono.defer(() -> {
			Instant startedAt = Instant.now();
			long start = System.nanoTime();
			return this.dispatcher.send(message)
				.map((outcome) -> this.recorder.record(message, outcome)
					.timed(startedAt, Duration.ofNanos(System.nanoTime() - start)));
		});
	}

	/**
	 * What the relay is doing.
	 */
	public enum State {

		/** Polling for due messages. */
		RUNNING,

		/** Not started, or stopped with the application. */
		STOPPED,

		/** Stopped polling although nobody stopped it. */
		FAILED

	}

	/**
	 * How the relay claims and paces its work.
	 *
	 * @param pollInterval how often to look for due messages when nothing woke the relay
	 * @param batchSize the largest number of messages claimed at once
	 * @param concurrency the largest number of requests in flight at once
	 * @param leaseTimeout how long a claim holds before another relay may take it over
	 * @param shutdownTimeout how long stopping waits for in-flight requests
	 */
	public record Settings(Duration pollInterval, int batchSize, int concurrency, Duration leaseTimeout,
			Duration shutdownTimeout) {

		public Settings {
			Assert.isTrue((!pollInterval.isNegative() && !pollInterval.isZero()), () -> "poll-interval must be positive, was " + pollInterval);
			Assert.isTrue(batchSize > 0, () -> "batch-size must be positive, was " + batchSize);
			Assert.isTrue(concurrency > 0, () -> "concurrency must be positive, was " + concurrency);
			Assert.isTrue((!leaseTimeout.isNegative() && !leaseTimeout.isZero()), () -> "lease-timeout must be positive, was " + leaseTimeout);
			Assert.isTrue(!shutdownTimeout.isNegative(),
					() -> "shutdown-timeout must not be negative, was " + shutdownTimeout);
		}

	}

}
