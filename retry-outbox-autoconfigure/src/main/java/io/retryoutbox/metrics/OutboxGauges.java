package io.retryoutbox.metrics;

import java.time.Duration;
import java.util.function.ToDoubleFunction;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.retryoutbox.message.OutboxReadModel;
import io.retryoutbox.message.OutboxStats;
import io.retryoutbox.support.PeriodicLifecycle;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The gauges {@code retry.outbox.pending}, {@code retry.outbox.dead},
 * {@code retry.outbox.lag.seconds}, {@code retry.outbox.parked.keys} and
 * {@code retry.outbox.unknown.destination}, all read from one
 * {@link OutboxReadModel#stats() query} on its own thread at a fixed interval, never per
 * scrape. They read {@code NaN} until the first query and after one that failed.
 */
public final class OutboxGauges extends PeriodicLifecycle {

	private static final Log logger = LogFactory.getLog(OutboxGauges.class);

	private final OutboxReadModel readModel;

	private volatile @Nullable OutboxStats stats;

	/**
	 * Creates the gauges and registers them.
	 * @param readModel reads the figures
	 * @param registry where the gauges are registered
	 * @param interval how often the figures are read
	 */
	public OutboxGauges(OutboxReadModel readModel, MeterRegistry registry, Duration interval) {
		super("retry-outbox-gauges-", Duration.ZERO, interval);
		this.readModel = readModel;
		register(registry, "retry.outbox.pending", "Messages waiting for an attempt", OutboxStats::pending);
		register(registry, "retry.outbox.dead", "Dead messages", OutboxStats::dead);
		register(registry, "retry.outbox.lag.seconds", "How long the oldest due message has been waiting",
				(stats) -> stats.lag().toMillis() / 1000.0);
		register(registry, "retry.outbox.parked.keys", "Ordering keys held up by a dead message",
				OutboxStats::parkedKeys);
		register(registry, "retry.outbox.unknown.destination",
				"Pending messages for a destination this instance does not configure", OutboxStats::unknownDestination);
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
	@Override
	public void run() {
		try {
			this.stats = this.readModel.stats();
		}
		catch (RuntimeException ex) {
			this.stats = null;
			logger.debug("Could not read the outbox figures for the gauges", ex);
		}
	}

}
