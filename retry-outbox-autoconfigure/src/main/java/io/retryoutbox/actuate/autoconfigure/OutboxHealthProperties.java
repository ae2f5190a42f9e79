package io.retryoutbox.actuate.autoconfigure;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration properties of the {@code retryOutbox} health indicator.
 */
@ConfigurationProperties("retry-outbox.health")
public class OutboxHealthProperties {

	/**
	 * Longest time the oldest due message may wait before the outbox is reported
	 * unhealthy.
	 */
	private Duration maxLag = Duration.ofMinutes(5);

	/**
	 * Largest number of dead messages before the outbox is reported unhealthy; no limit
	 * when not set.
	 */
	private @Nullable Long maxDead;

	/**
	 * Health status reported when max-lag or max-dead is exceeded, e.g. DOWN or a custom
	 * status mapped in management.endpoint.health.status.
	 */
	private String thresholdStatus = "DOWN";

	public Duration getMaxLag() {
		return this.maxLag;
	}

	public void setMaxLag(Duration maxLag) {
		this.maxLag = maxLag;
	}

	public @Nullable Long getMaxDead() {
		return this.maxDead;
	}

	public void setMaxDead(@Nullable Long maxDead) {
		this.maxDead = maxDead;
	}

	public String getThresholdStatus() {
		return this.thresholdStatus;
	}

	public void setThresholdStatus(String thresholdStatus) {
		this.thresholdStatus = thresholdStatus;
	}

}
