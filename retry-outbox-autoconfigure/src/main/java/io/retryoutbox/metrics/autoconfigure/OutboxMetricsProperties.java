package io.retryoutbox.metrics.autoconfigure;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration properties of the retry-outbox metrics.
 */
@ConfigurationProperties("retry-outbox.metrics")
public class OutboxMetricsProperties {

	/**
	 * How often the gauges (pending, dead, lag, parked keys, and pending and dead per
	 * destination) are read from the database.
	 */
	private Duration gaugeInterval = Duration.ofSeconds(15);

	public Duration getGaugeInterval() {
		return this.gaugeInterval;
	}

	public void setGaugeInterval(Duration gaugeInterval) {
		this.gaugeInterval = gaugeInterval;
	}

}
