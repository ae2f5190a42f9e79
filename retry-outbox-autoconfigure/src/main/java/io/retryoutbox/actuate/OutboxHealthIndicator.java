package io.retryoutbox.actuate;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

import io.retryoutbox.message.OutboxReadModel;
import io.retryoutbox.message.OutboxStats;
import io.retryoutbox.relay.DestinationPause;
import io.retryoutbox.relay.OutboxRelay;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

/**
 * The health of the outbox: {@code DOWN} when the database cannot be read, or the relay
 * stopped polling unexpectedly or its last poll failed; {@code OUT_OF_SERVICE} while the
 * relay is stopped; the configured threshold status when the lag or the number of dead
 * messages is over its threshold; else {@code UP}. The details hold the figures in every
 * case they could be read.
 */
public class OutboxHealthIndicator extends AbstractHealthIndicator {

	private final OutboxReadModel readModel;

	private final @Nullable OutboxRelay relay;

	private final Thresholds thresholds;

	/**
	 * Creates an indicator.
	 * @param readModel reads the figures
	 * @param relay this instance's relay, or {@code null} on an instance that only
	 * enqueues
	 * @param thresholds when the outbox is reported unhealthy
	 */
	public OutboxHealthIndicator(OutboxReadModel readModel, @Nullable OutboxRelay relay, Thresholds thresholds) {
		super("Outbox health check failed");
		this.readModel = readModel;
		this.relay = relay;
		this.thresholds = thresholds;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		OutboxStats stats = this.readModel.stats();
		builder.withDetail("pending", stats.pending())
			.withDetail("inFlight", stats.inFlight())
			.withDetail("dead", stats.dead())
			.withDetail("lag", stats.lag().toString())
			.withDetail("parkedKeys", stats.parkedKeys())
			.withDetail("unknownDestination", stats.unknownDestination());
		if (stats.unknownDestination() > 0) {
			builder.withDetail("warning", stats.unknownDestination() + " pending messages are for a destination "
					+ "this instance does not configure; an instance that configures it sends them");
		}
		if (stats.oldestPendingAge() != null) {
			builder.withDetail("oldestPendingAge", stats.oldestPendingAge().toString());
		}
		builder.status(status(stats, builder));
	}

	private Status status(OutboxStats stats, Health.Builder builder) {
		Status relayStatus = relayStatus(builder);
		if (relayStatus != null) {
			return relayStatus;
		}
		Status exceeded = new Status(this.thresholds.status());
		if (stats.lag().compareTo(this.thresholds.maxLag()) > 0) {
			builder.withDetail("reason", "lag " + stats.lag() + " is over " + this.thresholds.maxLag());
			return exceeded;
		}
		Long maxDead = this.thresholds.maxDead();
		if (maxDead != null && stats.dead() > maxDead) {
			builder.withDetail("reason", stats.dead() + " dead messages are more than " + maxDead);
			return exceeded;
		}
		return Status.UP;
	}

	private @Nullable Status relayStatus(Health.Builder builder) {
		if (this.relay == null) {
			builder.withDetail("relay", "DISABLED");
			return null;
		}
		OutboxRelay.State state = this.relay.getState();
		builder.withDetail("relay", state.name());
		// A paused destination is a detail, not a failure of the outbox.
		Map<String, Map<String, String>> destinations = new TreeMap<>();
		this.relay.getDestinations().forEach((name) -> destinations.put(name, destination(this.relay, name)));
		builder.withDetail("destinations", destinations);
		if (state == OutboxRelay.State.FAILED) {
			builder.withDetail("reason", "the relay stopped polling unexpectedly");
			return Status.DOWN;
		}
		if (state == OutboxRelay.State.STOPPED) {
			return Status.OUT_OF_SERVICE;
		}
		RuntimeException error = this.relay.getLastPollError();
		if (error != null) {
			builder.withDetail("reason", "the relay's last poll failed: " + error.getClass().getName()
					+ ((error.getMessage() != null) ? ": " + error.getMessage() : ""));
			return Status.DOWN;
		}
		return null;
	}

	private static Map<String, String> destination(OutboxRelay relay, String name) {
		Map<String, String> destination = new LinkedHashMap<>();
		destination.put("state", relay.getDestinationState(name).name());
		DestinationPause pause = relay.getDestinationPause(name);
		if (pause != null) {
			destination.put("until", pause.pausedUntil().toString());
			destination.put("reason", pause.reason().name());
			destination.put("detail", pause.detail());
		}
		return destination;
	}

	/**
	 * When the outbox is reported unhealthy.
	 *
	 * @param maxLag the longest a due message may wait
	 * @param maxDead the largest number of dead messages, or {@code null} for no limit
	 * @param status the status reported when either is exceeded
	 */
	public record Thresholds(Duration maxLag, @Nullable Long maxDead, String status) {

	}

}
