package io.retryoutbox.autoconfigure;

import java.net.URI;
import java.util.List;

import io.retryoutbox.jdbc.JdbcOutboxComponents;
import io.retryoutbox.relay.RelayDestination;
import io.retryoutbox.retry.RetrySettings;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link RetryOutboxProperties}.
 */
class RetryOutboxPropertiesTests {

	@Test
	void retrySettingsSetNowhereAreThePolicyDefaults() {
		assertThat(new RetryOutboxProperties().getRetry().over(RetrySettings.DEFAULTS))
			.isEqualTo(RetrySettings.DEFAULTS);
	}

	@Test
	void attemptLogDefaultsAreConsistentWithTheStoreDefaults() {
		RetryOutboxProperties.AttemptLog attemptLog = new RetryOutboxProperties().getAttemptLog();
		assertThat(new JdbcOutboxComponents.AttemptLog(attemptLog.isEnabled(),
				(int) attemptLog.getResponseSnippetSize().toBytes()))
			.isEqualTo(JdbcOutboxComponents.AttemptLog.DEFAULTS);
	}

	@Test
	void flowDefaultsAreTheRelayDefaults() {
		RetryOutboxProperties properties = new RetryOutboxProperties();
		RetryOutboxProperties.Destination destination = new RetryOutboxProperties.Destination();
		destination.setBaseUrl(URI.create("http://localhost:9"));
		properties.getDestinations().put("api", destination);
		assertThat(RetryOutboxAutoConfiguration.destinations(properties).get("api").flow())
			.isEqualTo(RelayDestination.Flow.DEFAULTS);
	}

	@Test
	void aDestinationSignsNothingByDefaultAndShowsNoSecretWhenItDoes() {
		RetryOutboxProperties properties = new RetryOutboxProperties();
		RetryOutboxProperties.Destination destination = new RetryOutboxProperties.Destination();
		destination.setBaseUrl(URI.create("http://localhost:9"));
		properties.getDestinations().put("api", destination);
		assertThat(destination.getSigning().getSecrets()).isEmpty();
		assertThat(RetryOutboxAutoConfiguration.destinations(properties).get("api").signer().isSigning()).isFalse();
		destination.getSigning().setSecrets(List.of("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"));
		assertThat(List.of(destination.toString(), destination.getSigning().toString(),
				RetryOutboxAutoConfiguration.destinations(properties).toString()))
			.noneMatch((shown) -> shown.contains("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"));
	}

	@Test
	void aDestinationWithoutOverridesUsesTheGlobalSettings() {
		RetryOutboxProperties properties = new RetryOutboxProperties();
		properties.getRetry().setMaxAttempts(7);
		RetrySettings global = properties.getRetry().over(RetrySettings.DEFAULTS);
		assertThat(new RetryOutboxProperties.Destination().getRetry().over(global)).isEqualTo(global);
	}

	@Test
	void aDestinationSettingThatIsSetOverridesTheGlobalOneAndOneThatIsNotInheritsIt() {
		RetryOutboxProperties properties = new RetryOutboxProperties();
		properties.getRetry().setMaxAttempts(7);
		properties.getRetry().setJitter(0.0);
		RetryOutboxProperties.Destination destination = new RetryOutboxProperties.Destination();
		destination.getRetry().setMaxAttempts(3);
		destination.getRetry().setRetryConflictWithoutCode(false);
		RetrySettings settings = destination.getRetry().over(properties.getRetry().over(RetrySettings.DEFAULTS));
		assertThat(settings.maxAttempts()).isEqualTo(3);
		assertThat(settings.retryConflictWithoutCode()).isFalse();
		assertThat(settings.jitter()).isZero();
		assertThat(settings.delay()).isEqualTo(RetrySettings.DEFAULTS.delay());
	}

}
