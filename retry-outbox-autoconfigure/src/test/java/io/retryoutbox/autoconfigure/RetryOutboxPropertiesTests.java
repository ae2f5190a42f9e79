package io.retryoutbox.autoconfigure;

import io.retryoutbox.jdbc.JdbcOutboxStore;
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
	void attemptLogDefaultsAreConsistentWithTheStoreDefaults() {
		RetryOutboxProperties.AttemptLog attemptLog = new RetryOutboxProperties().getAttemptLog();
		assertThat(new JdbcOutboxStore.AttemptLog(attemptLog.isEnabled(),
				(int) attemptLog.getResponseSnippetSize().toBytes()))
			.isEqualTo(JdbcOutboxStore.AttemptLog.DEFAULTS);
	}

	@Test
	void aDestinationWithoutOverridesUsesTheGlobalSettings() {
		RetrySettings global = new RetryOutboxProperties().getRetry().toSettings();
		assertThat(new RetryOutboxProperties.Destination().getRetry().applyTo(global)).isEqualTo(global);
	}

}
