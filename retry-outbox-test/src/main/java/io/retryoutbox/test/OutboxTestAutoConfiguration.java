package io.retryoutbox.test;

import io.retryoutbox.OutboxClock;
import io.retryoutbox.autoconfigure.RetryOutboxAutoConfiguration;
import io.retryoutbox.relay.OutboxRelay;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.util.Assert;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration
 * Auto-configuration} of the outbox's test support, imported by
 * {@link AutoConfigureRetryOutbox}: a {@link TestOutboxClock} in place of the outbox's
 * system clock (hence before the outbox's auto-configuration), and an
 * {@link OutboxDrainer}.
 */
@AutoConfiguration(before = RetryOutboxAutoConfiguration.class)
public final class OutboxTestAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(OutboxClock.class)
	TestOutboxClock retryOutboxTestClock() {
		return new TestOutboxClock();
	}

	@Bean
	@ConditionalOnMissingBean
	OutboxDrainer retryOutboxDrainer(ObjectProvider<OutboxRelay> relay, OutboxClock clock) {
		return new OutboxDrainer(() -> {
			OutboxRelay found = relay.getIfAvailable();
			Assert.state(found != null, "There is no outbox relay to drain: retry-outbox.relay.enabled is false");
			return found;
		}, clock);
	}

}
