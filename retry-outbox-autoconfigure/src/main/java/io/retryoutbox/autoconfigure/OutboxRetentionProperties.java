package io.retryoutbox.autoconfigure;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration properties of the retention of finished messages.
 */
@ConfigurationProperties("retry-outbox.retention")
public class OutboxRetentionProperties {

	/**
	 * Whether relay instances delete finished messages past their retention.
	 */
	private boolean enabled = true;

	/**
	 * How long delivered messages and their attempt logs are kept after delivery.
	 */
	private Duration delivered = Duration.ofDays(7);

	/**
	 * How long dead messages are kept after enqueue; until replayed or discarded when not
	 * set.
	 */
	private @Nullable Duration dead;

	/**
	 * How often the retention is applied.
	 */
	private Duration interval = Duration.ofHours(1);

	/**
	 * Largest number of messages one delete statement removes.
	 */
	private int batchSize = 1000;

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public Duration getDelivered() {
		return this.delivered;
	}

	public void setDelivered(Duration delivered) {
		this.delivered = delivered;
	}

	public @Nullable Duration getDead() {
		return this.dead;
	}

	public void setDead(@Nullable Duration dead) {
		this.dead = dead;
	}

	public Duration getInterval() {
		return this.interval;
	}

	public void setInterval(Duration interval) {
		this.interval = interval;
	}

	public int getBatchSize() {
		return this.batchSize;
	}

	public void setBatchSize(int batchSize) {
		this.batchSize = batchSize;
	}

}
