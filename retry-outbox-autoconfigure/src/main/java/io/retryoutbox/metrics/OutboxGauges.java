package io.retryoutbox.metrics;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.retryoutbox.jdbc.JdbcOutboxAdmin;
import io.retryoutbox.jdbc.OutboxStats;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * The gauges {@code retry.outbox.pending}, {@code retry.outbox.dead},
 * {@code retry.outbox.lag.seconds} and {@code retry.outbox.parked.keys}, all read from
 * one {@link JdbcOutboxAdmin#stats() query} on its own thread at a fixed interval, never
 * per scrape. They read {@code NaN} until the first query and after one that failed.
 */
public final class OutboxGauges implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(OutboxGauges.class);

	private final JdbcOutboxAdmin admin;

	private final Duration interval;

	private volatile @Nullable OutboxStats stats;

	private volatile @Nullable ScheduledExecutorService executor;

	/**
	 * Creates the gauges and registers them.
	 * @param admin reads the figures
	 * @param registry where the gauges are registered
	 * @param interval how often the figures are read
	 */
	public OutboxGauges(JdbcOutboxAdmin admin, MeterRegistry registry, Duration interval) {
		this.admin = admin;
		this.interval = interval;
		register(registry, "retry.outbox.pending", "Messages waiting for an attempt", OutboxStats::pending);
		register(registry, "retry.outbox.dead", "Dead messages", OutboxStats::dead);
		register(registry, "retry.outbox.lag.seconds", "How long the oldest due message has been waiting",
				(stats) -> stats.lag().toMillis() / 1000.0);
		register(registry, "retry.outbox.parked.keys", "Ordering keys held up by a dead message",
				OutboxStats::parkedKeys);
	}

	private void register(MeterRegistry registry, String name, String description,
			ToDoubleFunction<OutboxStats> value) {
		Gauge.builder(name, this, (gauges) -> {
			OutboxStats stats = gauges.stats;
			return (stats != null) ? value.applyAsDouble(stats) : Double.NaN;
		}).description(description).register(registry);
	}

	/**
	 * Reads the figures now.
	 */
	public void refresh() {
		try {
			this.stats = this.admin.stats();
		}
		catch (RuntimeException ex) {
			this.stats = null;
			logger.debug("Could not read the outbox figures for the gauges", ex);
		}
	}

	@Override
	public void start() {
		CustomizableThreadFactory threads = new CustomizableThreadFactory("retry-outbox-gauges-");
		threads.setDaemon(true);
		ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, threads);
		executor.scheduleWithFixedDelay(this::refresh, 0, this.interval.toMillis(), TimeUnit.MILLISECONDS);
		this.executor = executor;
	}

	@Override
	public void stop() {
		ScheduledExecutorService executor = this.executor;
		if (executor != null) {
			executor.shutdownNow();
			this.executor = null;
		}
	}

	@Override
	public boolean isRunning() {
		return this.executor != null;
	}

}
