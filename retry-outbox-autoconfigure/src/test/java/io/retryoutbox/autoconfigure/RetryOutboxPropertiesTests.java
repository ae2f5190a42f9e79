package io.retryoutbox.autoconfigure;

import io.retryoutbox.retry.RetrySettings;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link RetryOutboxProperties}.
 */
class RetryOutboxPropertiesTests {

	@Test
	void retryDefaultsAreConsistentWithThePolicyDefaults() {
		assertThat(new RetryOutboxProperties().getRetry().toSettings()).isEqualTo(RetrySettings.DEFAULTS);
	}

	@Test
	void aDestinationWithoutOverridesUsesTheGlobalSettings() {
		RetrySettings global = new RetryOutboxProperties().getRetry().toSettings();
		assertThat(new RetryOutboxProperties.Destination().getRetry().applyTo(global)).isEqualTo(global);
	}

}
