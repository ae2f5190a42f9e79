package io.retryoutbox.test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;

import io.retryoutbox.Outbox;
import io.retryoutbox.OutboxClock;
import io.retryoutbox.OutboxRequest;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Tests for {@link OutboxTestAutoConfiguration}: which clock the outbox gets, and when a
 * drain refuses to run.
 */
class OutboxTestAutoConfigurationTests {

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private final String jdbcUrl = TestDatabase.createDatabase();

	private ApplicationContextRunner runner() {
		return OutboxContexts.runner(this.jdbcUrl)
			.withConfiguration(AutoConfigurations.of(OutboxTestAutoConfiguration.class))
			.withPropertyValues("retry-outbox.relay.auto-startup=false", "retry-outbox.destinations.payments.base-url="
					+ "http://localhost:" + this.destination.server().getPort());
	}

	@Test
	void givesTheOutboxATestClockAndLeavesAnApplicationsClockAlone() {
		Clock applicationClock = Clock.fixed(Instant.parse("2020-01-01T00:00:00Z"), ZoneOffset.UTC);
		runner().withBean(Clock.class, () -> applicationClock).run((context) -> {
			assertThat(context).hasSingleBean(OutboxClock.class).hasSingleBean(Clock.class);
			assertThat(context.getBean(OutboxClock.class)).isInstanceOf(TestOutboxClock.class);
			assertThat(context.getBean(Clock.class)).isSameAs(applicationClock);
		});
	}

	@Test
	void backsOffForAnOutboxClockOfTheTests() {
		runner().withUserConfiguration(OwnClock.class).run((context) -> {
			assertThat(context).hasSingleBean(OutboxClock.class).doesNotHaveBean(TestOutboxClock.class);
			assertThat(context).hasSingleBean(OutboxDrainer.class);
		});
	}

	@Test
	void refusesToDrainBesideARelayRunningInTheBackground() {
		runner().withPropertyValues("retry-outbox.relay.auto-startup=true")
			.run((context) -> assertThatIllegalStateException()
				.isThrownBy(() -> context.getBean(OutboxDrainer.class).drain())
				.withMessage("The outbox relay is running in the background; set "
						+ "retry-outbox.relay.auto-startup=false (or stop it) before draining it"));
	}

	@Test
	void refusesToDrainWithoutARelay() {
		runner().withPropertyValues("retry-outbox.relay.enabled=false")
			.run((context) -> assertThatIllegalStateException()
				.isThrownBy(() -> context.getBean(OutboxDrainer.class).drain())
				.withMessage("There is no outbox relay to drain: retry-outbox.relay.enabled is false"));
	}

	@Test
	void failsADrainThatDoesNotSettleInTimeNamingWhatIsStillInFlight() {
		this.destination.dispatcher().hold();
		runner().run((context) -> {
			OutboxContexts.transactions(context)
				.executeWithoutResult((status) -> context.getBean(Outbox.class)
					.send(OutboxRequest.post("payments", "/slow").build()));
			assertThatIllegalStateException()
				.isThrownBy(() -> context.getBean(OutboxDrainer.class).drain(Duration.ofMillis(500)))
				.withMessage("The outbox relay did not settle within PT0.5S: 1 requests still in flight");
			this.destination.dispatcher().release();
		});
	}

	@Test
	void waitsForADestinationsRateWithinADrain() {
		runner().withPropertyValues("retry-outbox.destinations.payments.flow.max-rate=2").run((context) -> {
			OutboxContexts.transactions(context).executeWithoutResult((status) -> {
				for (int i = 0; i < 4; i++) {
					context.getBean(Outbox.class).send(OutboxRequest.post("payments", "/rated/" + i).build());
				}
			});
			assertThat(context.getBean(OutboxDrainer.class).drain()).isEqualTo(4);
			assertThat(this.destination.dispatcher().requests()).hasSize(4);
		});
	}

	@Test
	void refusesANonPositiveTimeout() {
		runner().run((context) -> assertThatIllegalArgumentException()
			.isThrownBy(() -> context.getBean(OutboxDrainer.class).drain(Duration.ZERO))
			.withMessage("'timeout' must be positive, was PT0S"));
	}

	@Test
	void movesTheTestClockOnlyForward() {
		TestOutboxClock clock = new TestOutboxClock();
		clock.advance(Duration.ofHours(1)).advanceTo(Instant.now());
		assertThat(clock.ahead()).isEqualTo(Duration.ofHours(1));
		assertThat(clock.instant()).isAfter(Instant.now().plus(Duration.ofMinutes(59)));
		assertThatIllegalArgumentException().isThrownBy(() -> clock.advance(Duration.ofSeconds(-1)))
			.withMessage("A test outbox clock only moves forward, not by PT-1S");
	}

	@Configuration(proxyBeanMethods = false)
	static class OwnClock {

		@Bean
		OutboxClock ownOutboxClock() {
			return OutboxClock.system();
		}

	}

}
