package io.retryoutbox.autoconfigure;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.UUID;

import io.retryoutbox.DeliveryAttempt;
import io.retryoutbox.DeliveryOutcome;
import io.retryoutbox.Outbox;
import io.retryoutbox.OutboxClock;
import io.retryoutbox.RetryDecision;
import io.retryoutbox.RetryPolicy;
import io.retryoutbox.relay.OutboxStore;
import io.retryoutbox.relay.OutboxRelay;
import io.retryoutbox.relay.RelayDestination;
import io.retryoutbox.retry.DefaultRetryPolicy;
import io.retryoutbox.retry.RetrySettings;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.TestDatabase;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpHeaders;
import org.springframework.web.context.WebApplicationContext;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * Tests for {@link RetryOutboxAutoConfiguration}.
 */
class RetryOutboxAutoConfigurationTests {

	private static final String SIGNING_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

	private String jdbcUrl;

	private ApplicationContextRunner runner;

	@BeforeEach
	void createDatabase() {
		this.jdbcUrl = TestDatabase.createDatabase();
		this.runner = OutboxContexts.runner(this.jdbcUrl)
			.withPropertyValues("retry-outbox.destinations.payments.base-url=http://localhost:9/api");
	}

	@Test
	void providesTheOutboxTheRelayAndTheDefaultPolicy() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(Outbox.class)
				.hasSingleBean(OutboxRelay.class)
				.hasSingleBean(OutboxStore.class)
				.hasSingleBean(DefaultRetryPolicy.class);
			assertThat(context.getBean(OutboxRelay.class).isRunning()).isTrue();
		});
	}

	@Test
	void backsOffWithoutADataSource() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RetryOutboxAutoConfiguration.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(Outbox.class));
	}

	@Test
	void backsOffWithoutWebClient() {
		this.runner.withClassLoader(new FilteredClassLoader(WebClient.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(Outbox.class)
				.doesNotHaveBean(OutboxRelay.class));
	}

	@Test
	void backsOffWhenDisabled() {
		this.runner.withPropertyValues("retry-outbox.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(Outbox.class)
				.doesNotHaveBean(RetryPolicy.class)
				.doesNotHaveBean(OutboxRelay.class));
	}

	@Test
	void runsNoRelayOnAnEnqueueOnlyInstance() {
		this.runner.withPropertyValues("retry-outbox.relay.enabled=false")
			.run((context) -> assertThat(context).hasSingleBean(Outbox.class).doesNotHaveBean(OutboxRelay.class));
	}

	@Test
	void tellsDueTimesByTheSystemClockAndLeavesAnApplicationsClockAlone() {
		Clock applicationClock = Clock.fixed(Instant.parse("2020-01-01T00:00:00Z"), ZoneOffset.UTC);
		this.runner.withBean(Clock.class, () -> applicationClock).run((context) -> {
			assertThat(context).hasSingleBean(OutboxClock.class).hasSingleBean(Clock.class);
			assertThat(context.getBean(Clock.class)).isSameAs(applicationClock);
			assertThat(context.getBean(OutboxClock.class).instant()).isCloseTo(Instant.now(),
					within(1, ChronoUnit.MINUTES));
		});
	}

	@Test
	void schedulesRetriesFromAUsersOutboxClock() {
		Instant now = Instant.parse("2030-06-01T12:00:00Z");
		this.runner.withBean(OutboxClock.class, () -> () -> now)
			.withPropertyValues("retry-outbox.retry.delay=10s", "retry-outbox.retry.jitter=0")
			.run((context) -> {
				RetryDecision decision = context.getBean(RetryPolicy.class)
					.decide(new DeliveryAttempt(UUID.randomUUID(), "payments", 1, now),
							new DeliveryOutcome.Response(503, new HttpHeaders(), new byte[0]));
				assertThat(decision).isInstanceOfSatisfying(RetryDecision.Retry.class,
						(retry) -> assertThat(retry.nextAttemptAt()).isEqualTo(now.plusSeconds(10)));
			});
	}

	@Test
	void leavesTheRelayStoppedWithoutAutoStartup() {
		this.runner.withPropertyValues("retry-outbox.relay.auto-startup=false")
			.run((context) -> assertThat(context.getBean(OutboxRelay.class).isRunning()).isFalse());
	}

	@Test
	void letsAUserRetryPolicyReplaceTheDefault() {
		this.runner.withUserConfiguration(CustomPolicyConfiguration.class).run((context) -> {
			assertThat(context).hasSingleBean(RetryPolicy.class).doesNotHaveBean(DefaultRetryPolicy.class);
			assertThat(context.getBean(RetryPolicy.class)).isSameAs(context.getBean("customPolicy"));
		});
	}

	@Test
	void bindsDestinationsWithPerDestinationRetryOverrides() {
		this.runner
			.withPropertyValues("retry-outbox.retry.max-attempts=7", "retry-outbox.retry.delay=2s",
					"retry-outbox.destinations.payments.timeout=3s",
					"retry-outbox.destinations.payments.headers.X-Api-Version=2",
					"retry-outbox.destinations.payments.retry.max-attempts=3",
					"retry-outbox.destinations.payments.retry.transient-error-codes=BUSY,RESOURCE_LOCKED")
			.run((context) -> {
				RetryOutboxProperties properties = context.getBean(RetryOutboxProperties.class);
				RetryOutboxProperties.Destination payments = properties.getDestinations().get("payments");
				assertThat(payments.getBaseUrl()).isEqualTo(URI.create("http://localhost:9/api"));
				assertThat(payments.getTimeout()).isEqualTo(Duration.ofSeconds(3));
				assertThat(payments.getHeaders()).containsEntry("X-Api-Version", "2");
				var merged = payments.getRetry().over(properties.getRetry().over(RetrySettings.DEFAULTS));
				assertThat(merged.maxAttempts()).isEqualTo(3);
				assertThat(merged.delay()).isEqualTo(Duration.ofSeconds(2));
				assertThat(merged.transientErrorCodes()).containsExactlyInAnyOrder("BUSY", "RESOURCE_LOCKED");
				assertThat(merged.terminalErrorCodes()).containsExactly("CONFLICT");
			});
	}

	@Test
	void bindsADestinationsMaxRateAndLeavesAnotherUnlimited() {
		this.runner
			.withPropertyValues("retry-outbox.destinations.payments.flow.max-rate=0.5",
					"retry-outbox.destinations.orders.base-url=http://localhost:9/orders")
			.run((context) -> {
				Map<String, RelayDestination> destinations = RetryOutboxAutoConfiguration
					.destinations(context.getBean(RetryOutboxProperties.class));
				assertThat(destinations.get("payments").flow().maxRate()).isEqualTo(0.5);
				assertThat(destinations.get("orders").flow().maxRate()).isInfinite();
			});
	}

	@Test
	void failsFastOnAMaxRateThatIsNotPositive() {
		this.runner.withPropertyValues("retry-outbox.destinations.payments.flow.max-rate=0")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasStackTraceContaining("Invalid retry-outbox.destinations.payments: flow.max-rate must be positive"));
	}

	@Test
	void failsFastOnANegativeMinRoundInterval() {
		this.runner.withPropertyValues("retry-outbox.relay.min-round-interval=-1ms")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasStackTraceContaining("min-round-interval must not be negative, was PT-0.001S"));
	}

	@Test
	void failsFastOnANegativeRunLinger() {
		this.runner.withPropertyValues("retry-outbox.relay.run-linger=-1ms")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasStackTraceContaining("run-linger must not be negative, was PT-0.001S"));
	}

	@Test
	void failsFastOnAMinRoundIntervalNotShorterThanThePollInterval() {
		this.runner
			.withPropertyValues("retry-outbox.relay.poll-interval=500ms", "retry-outbox.relay.min-round-interval=500ms")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasStackTraceContaining("min-round-interval (PT0.5S) must be shorter than poll-interval (PT0.5S)"));
	}

	@Test
	void failsFastWhenADestinationHasNoBaseUrl() {
		this.runner.withPropertyValues("retry-outbox.destinations.broken.timeout=1s")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("retry-outbox.destinations.broken.base-url must be set"));
	}

	@Test
	void failsFastOnAnInvalidRetrySetting() {
		this.runner.withPropertyValues("retry-outbox.retry.multiplier=0.5")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("multiplier"));
	}

	@Test
	void refusesAGlobalRetrySettingThatWouldOverflowNamingItsProperty() {
		this.runner.withPropertyValues("retry-outbox.retry.jitter=1e300")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.isInstanceOf(InvalidConfigurationPropertyValueException.class)
				.hasMessage("Property retry-outbox.retry.jitter with value '1.0E300' is invalid: "
						+ "must be between 0.0 and 10.0"));
	}

	@Test
	void refusesADestinationRetrySettingThatWouldOverflowNamingItsProperty() {
		this.runner
			.withPropertyValues("retry-outbox.destinations.payments.retry.max-delay=9223372036854775807s",
					"retry-outbox.destinations.orders.base-url=http://localhost:9/orders")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.isInstanceOf(InvalidConfigurationPropertyValueException.class)
				.hasMessageStartingWith("Property retry-outbox.destinations.payments.retry.max-delay with value ")
				.hasMessageEndingWith(" is invalid: must be between 0s and 36500d"));
	}

	@Test
	void refusesADestinationErrorCodePointerThatIsNotAJsonPointerNamingItsProperty() {
		this.runner.withPropertyValues("retry-outbox.destinations.payments.retry.error-code-pointers=/code,error.code")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.isInstanceOf(InvalidConfigurationPropertyValueException.class)
				.hasMessageContaining("retry-outbox.destinations.payments.retry.error-code-pointers")
				.hasMessageContaining("error.code"));
	}

	@Test
	void bindsADestinationsSigningSecretsInTheirOrder() {
		this.runner
			.withPropertyValues("retry-outbox.destinations.payments.signing.secrets[0]=" + SIGNING_SECRET,
					"retry-outbox.destinations.payments.signing.secrets[1]=whsec_"
							+ Base64.getEncoder().encodeToString(new byte[32]),
					"retry-outbox.destinations.orders.base-url=http://localhost:9/orders")
			.run((context) -> {
				RetryOutboxProperties properties = context.getBean(RetryOutboxProperties.class);
				assertThat(properties.getDestinations().get("payments").getSigning().getSecrets()).hasSize(2)
					.startsWith(SIGNING_SECRET);
				Map<String, RelayDestination> destinations = RetryOutboxAutoConfiguration.destinations(properties);
				assertThat(destinations.get("payments").signer()).hasToString("WebhookSigner[2 secrets]");
				assertThat(destinations.get("orders").signer().isSigning()).isFalse();
			});
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|',
			value = { "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw | must start with 'whsec_'",
					"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw! | must be 'whsec_' followed by base64",
					"whsec_ | must hold a key of 24 to 64 bytes after 'whsec_', had 0" })
	void refusesASigningSecretNamingItsPropertyWithoutShowingIt(String secret, String reason) {
		this.runner
			.withPropertyValues("retry-outbox.destinations.payments.signing.secrets[0]=" + SIGNING_SECRET,
					"retry-outbox.destinations.payments.signing.secrets[1]=" + secret)
			.run((context) -> {
				assertThat(context).hasFailed()
					.getFailure()
					.rootCause()
					.isInstanceOf(InvalidConfigurationPropertyValueException.class)
					.hasMessageStartingWith("Property retry-outbox.destinations.payments.signing.secrets[1] with value "
							+ "'******' is invalid: " + reason);
				StringWriter trace = new StringWriter();
				context.getStartupFailure().printStackTrace(new PrintWriter(trace));
				assertThat(trace.toString()).doesNotContain("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
			});
	}

	@Test
	void refusesAConfiguredSignatureHeaderOnADestinationThatSigns() {
		this.runner
			.withPropertyValues("retry-outbox.destinations.payments.signing.secrets=" + SIGNING_SECRET,
					"retry-outbox.destinations.payments.headers.Webhook-Id=fixed")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasStackTraceContaining("Invalid retry-outbox.destinations.payments: headers.Webhook-Id must not be "
						+ "set with signing.secrets"));
	}

	@Test
	void createsItsTableWithItsOwnHistoryAndLeavesTheApplicationsMigrationsAlone() {
		this.runner.run((context) -> {
			var jdbc = OutboxContexts.jdbc(context);
			assertThat(tableExists(context, "retry_outbox_message")).isTrue();
			assertThat(tableExists(context, "retry_outbox_schema_history")).isTrue();
			assertThat(tableExists(context, "flyway_schema_history")).isFalse();
			assertThat(tableExists(context, "application_table_that_must_not_exist")).isFalse();
			assertThat(context).doesNotHaveBean(Flyway.class);
			assertThat(jdbc.sql("SELECT count(*) FROM retry_outbox_schema_history WHERE success")
				.query(Long.class)
				.single()).isPositive();
		});
	}

	@Test
	void createsItsTableInTheConfiguredSchema() {
		this.runner.withPropertyValues("retry-outbox.jdbc.schema=outbox").run((context) -> {
			assertThat(context).hasNotFailed();
			Long count = OutboxContexts.jdbc(context)
				.sql("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'outbox' "
						+ "AND table_name = 'retry_outbox_message'")
				.query(Long.class)
				.single();
			assertThat(count).isEqualTo(1);
			assertThat(tableExists(context, "retry_outbox_message")).isFalse();
		});
	}

	@Test
	void leavesTheSchemaToTheUserWhenInitializationIsOff() {
		this.runner.withPropertyValues("retry-outbox.jdbc.initialize-schema=false", "retry-outbox.relay.enabled=false")
			.run((context) -> {
				assertThat(context).hasSingleBean(Outbox.class);
				assertThat(tableExists(context, "retry_outbox_message")).isFalse();
			});
	}

	@Test
	void keepsANonWebApplicationNonWebAlthoughWebClientBringsWebFlux() {
		SpringApplication application = new SpringApplication(NonWebApplication.class);
		application.setDefaultProperties(Map.of("spring.datasource.url", this.jdbcUrl,
				"retry-outbox.destinations.payments.base-url", "http://localhost:9"));
		assertThat(application.getWebApplicationType()).isEqualTo(WebApplicationType.NONE);
		try (ConfigurableApplicationContext context = application.run()) {
			assertThat(context).isNotInstanceOf(WebApplicationContext.class);
			assertThat(context.getClass().getName()).doesNotContain("Reactive");
			assertThat(context.getBean(Outbox.class)).isNotNull();
		}
	}

	private static boolean tableExists(ApplicationContext context, String table) {
		return OutboxContexts.jdbc(context)
			.sql("SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() "
					+ "AND table_name = ?")
			.param(table)
			.query(Long.class)
			.single() > 0;
	}

	@Configuration(proxyBeanMethods = false)
	static class CustomPolicyConfiguration {

		@Bean
		RetryPolicy customPolicy() {
			return (DeliveryAttempt attempt, DeliveryOutcome outcome) -> new RetryDecision.Delivered();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class NonWebApplication {

	}

}
