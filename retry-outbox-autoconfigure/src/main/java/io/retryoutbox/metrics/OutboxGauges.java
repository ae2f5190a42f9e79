package io.retryoutbox.metrics;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.function.ToDoubleFunction;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.retryoutbox.message.DestinationCounts;
import io.retryoutbox.message.OutboxReadModel;
import io.retryoutbox.message.OutboxStats;
import io.retryoutbox.support.PeriodicLifecycle;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The gauges {@code retry.outbox.pending}, {@code retry.outbox.dead},
 * {@code retry.outbox.lag.seconds}, {@code retry.outbox.parked.keys} and
 * {@code retry.outbox.unknown.destination}, read from one {@link OutboxReadModel#stats()
 * query}, and {@code retry.outbox.destination.pending} and
 * {@code retry.outbox.destination.dead}, tagged with the destination, read from
 * {@link OutboxReadModel#pendingAndDeadByDestination() another} right after it: on their
 * own thread at a fixed interval, never per scrape. The first five read {@code NaN} until
 * the first read, the others appear with it, and all read {@code NaN} after a read that
 * failed.
 * <p>
 * A destination this instance configures always has its two gauges, 0 when it has no such
 * message, so that an alert can compare them over time; any other destination has them
 * while it has pending or dead messages, and they are removed at the first read that
 * finds none, so that destinations long gone leave no series behind.
 */
public final class OutboxGauges extends PeriodicLifecycle {

	private static final Log logger = LogFactory.getLog(OutboxGauges.class);

	private final OutboxReadModel readModel;

	private final MultiGauge destinationPending;

	private final MultiGauge destinationDead;

	private volatile @Nullable OutboxStats stats;

	private volatile @Nullable Map<String, DestinationCounts> byDestination;

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
		this.destinationPending = MultiGauge.builder("retry.outbox.destination.pending")
			.description("Messages of the destination waiting for an attempt")
			.register(registry);
		this.destinationDead = MultiGauge.builder("retry.outbox.destination.dead")
			.description("Dead messages of the destination")
			.register(registry);
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
			OutboxStats stats = this.readModel.stats();
			Map<String, DestinationCounts> byDestination = this.readModel.pendingAndDeadByDestination();
			this.stats = stats;
			this.byDestination = byDestination;
			register(this.destinationPending, byDestination.keySet(), DestinationCounts::pending);
			register(this.destinationDead, byDestination.keySet(), DestinationCounts::dead);
		}
		catch (RuntimeException ex) {
			this.stats = null;
			this.byDestination = null;
			logger.debug("Could not read the outbox figures for the gauges", ex);
		}
	}

	/**
	 * Keeps the rows of the destinations read, adds new ones and removes the others.
	 */
	private void register(MultiGauge gauge, Set<String> destinations, ToDoubleFunction<DestinationCounts> value) {
		gauge.register(destinations.stream()
			.map((destination) -> MultiGauge.Row.of(Tags.of("destination", destination), this, (gauges) -> {
				Map<String, DestinationCounts> byDestination = gauges.byDestination;
				return (byDestination != null)
						? value.applyAsDouble(byDestination.getOrDefault(destination, DestinationCounts.NONE))
						: Double.NaN;
			}))
			.toList());
	}

}
