package io.retryoutbox.actuate;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

import javax.sql.DataSource;

import io.retryoutbox.actuate.autoconfigure.OutboxHealthContributorAutoConfiguration;
import io.retryoutbox.message.OutboxReadModel;
import io.retryoutbox.relay.OutboxRelay;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.OutboxRows;
import io.retryoutbox.testsupport.TestDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The {@link OutboxHealthIndicator} on a real PostgreSQL, through its transitions.
 */
class OutboxHealthIndicatorTests {

	private static final AtomicBoolean failRelayThread = new AtomicBoolean();

	private static final AtomicBoolean onlyInTransactions = new AtomicBoolean();

	private ApplicationContextRunner runner;

	@BeforeEach
	void createDatabase() {
		failRelayThread.set(false);
		onlyInTransactions.set(false);
		this.runner = OutboxContexts.runner(TestDatabase.createDatabase())
			.withConfiguration(AutoConfigurations.of(OutboxHealthContributorAutoConfiguration.class))
			.withPropertyValues("retry-outbox.destinations.payments.base-url=http://localhost:9/api");
	}

	private static Health health(AssertableApplicationContext context) {
		return context.getBean("retryOutboxHealthIndicator", OutboxHealthIndicator.class).health(true);
	}

	@Test
	void isUpWithTheFiguresAndTheRelayStateWhenNothingLags() {
		this.runner.run((context) -> {
			await().atMost(Duration.ofSeconds(10))
				.until(() -> context.getBean(OutboxRelay.class).getState() == OutboxRelay.State.RUNNING);
			Health health = health(context);
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(health.getDetails()).containsEntry("pending", 0L)
				.containsEntry("inFlight", 0L)
				.containsEntry("dead", 0L)
				.containsEntry("lag", "PT0S")
				.containsEntry("parkedKeys", 0L)
				.containsEntry("relay", "RUNNING")
				.doesNotContainKey("oldestPendingAge");
		});
	}

	@Test
	void isUpWhileTheRelayWaitsForItsStartDelay() {
		this.runner.withPropertyValues("retry-outbox.relay.start-delay=1h").run((context) -> {
			Health health = health(context);
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(health.getDetails()).containsEntry("relay", "STARTING");
		});
	}

	@Test
	void reportsTheThresholdStatusWhenTheOldestDueMessageWaitsLongerThanMaxLag() {
		this.runner.withPropertyValues("retry-outbox.relay.enabled=false").run((context) -> {
			OutboxRows.insert(context, "PENDING", null, Duration.ofMinutes(10));
			Health health = health(context);
			assertThat(health.getStatus()).isEqualTo(Status.DOWN);
			assertThat(health.getDetails()).containsEntry("pending", 1L)
				.containsEntry("relay", "DISABLED")
				.containsKey("oldestPendingAge");
			assertThat((String) health.getDetails().get("reason")).startsWith("lag PT10M");
		});
		this.runner.withPropertyValues("retry-outbox.relay.enabled=false", "retry-outbox.health.max-lag=1h")
			.run((context) -> assertThat(health(context).getStatus()).isEqualTo(Status.UP));
		this.runner
			.withPropertyValues("retry-outbox.relay.enabled=false", "retry-outbox.health.threshold-status=LAGGING")
			.run((context) -> assertThat(health(context).getStatus()).isEqualTo(new Status("LAGGING")));
	}

	@Test
	void countsNoLagForMessagesWaitingBehindTheirKeysHeadThatIsNotDueYet() {
		this.runner.withPropertyValues("retry-outbox.relay.enabled=false").run((context) -> {
			// The head got a ten-minute Retry-After; its followers were enqueued ten
			// minutes ago and wait for it, which is not lag.
			OutboxRows.insert(context, "PENDING", "order-1", Duration.ofMinutes(-10));
			for (int i = 0; i < 5; i++) {
				OutboxRows.insert(context, "PENDING", "order-1", Duration.ofMinutes(10));
			}
			Health health = health(context);
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(health.getDetails()).containsEntry("pending", 6L).containsEntry("lag", "PT0S");
			assertThat(context.getBean(OutboxReadModel.class).stats().lag()).isZero();
			OutboxRows.insert(context, "PENDING", null, Duration.ofMinutes(10));
			assertThat((String) health(context).getDetails().get("lag")).startsWith("PT10M");
		});
	}

	@Test
	void countsNoLagForTheMessagesOfAPausedDestination() {
		this.runner.withPropertyValues("retry-outbox.relay.enabled=false").run((context) -> {
			OutboxRows.insert(context, "PENDING", null, Duration.ofMinutes(10));
			OutboxContexts.jdbc(context).sql("""
					INSERT INTO retry_outbox_pause (destination, started_at, paused_until, reason, detail, paused_by,
						updated_at)
					VALUES ('payments', now() - interval '1 hour', now() + interval '1 minute', 'CIRCUIT',
						'10 consecutive transient failures', 'other', now())
					""").update();
			Health health = health(context);
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(health.getDetails()).containsEntry("pending", 1L).containsEntry("lag", "PT0S");
			OutboxContexts.jdbc(context).sql("UPDATE retry_outbox_pause SET ended_at = now()").update();
			assertThat(health(context).getStatus()).isEqualTo(Status.DOWN);
		});
	}

	@Test
	void reportsTheThresholdStatusWhenThereAreMoreDeadMessagesThanMaxDead() {
		this.runner.withPropertyValues("retry-outbox.relay.enabled=false").run((context) -> {
			OutboxRows.insertDead(context, "payments", 2, "TERMINAL_STATUS", Duration.ZERO);
			assertThat(health(context).getStatus()).isEqualTo(Status.UP);
		});
		this.runner.withPropertyValues("retry-outbox.relay.enabled=false", "retry-outbox.health.max-dead=1")
			.run((context) -> {
				// The same database: the two dead messages of the first run are still
				// there.
				Health health = health(context);
				assertThat(health.getStatus()).isEqualTo(Status.DOWN);
				assertThat(health.getDetails()).containsEntry("dead", 2L)
					.containsEntry("reason", "2 dead messages are more than 1");
			});
	}

	@Test
	void isDownWhileTheTableCannotBeReadAndUpAgainOnceItCan() {
		this.runner.run((context) -> {
			assertThat(health(context).getStatus()).isEqualTo(Status.UP);
			OutboxContexts.jdbc(context).sql("ALTER TABLE retry_outbox_message RENAME TO retry_outbox_away").update();
			await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> assertThat(context.getBean(OutboxRelay.class).getLastPollError()).isNotNull());
			Health down = health(context);
			assertThat(down.getStatus()).isEqualTo(Status.DOWN);
			assertThat(down.getDetails()).containsKey("error");
			OutboxContexts.jdbc(context).sql("ALTER TABLE retry_outbox_away RENAME TO retry_outbox_message").update();
			await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> assertThat(health(context).getStatus()).isEqualTo(Status.UP));
		});
	}

	@Test
	void isDownWhenTheRelayStopsPollingUnexpectedlyAndOutOfServiceWhenItIsStopped() {
		this.runner.withUserConfiguration(FailingOnRelayThreadDataSource.class).run((context) -> {
			assertThat(health(context).getStatus()).isEqualTo(Status.UP);
			failRelayThread.set(true);
			await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> assertThat(context.getBean(OutboxRelay.class).getState())
					.isEqualTo(OutboxRelay.State.FAILED));
			Health health = health(context);
			assertThat(health.getStatus()).isEqualTo(Status.DOWN);
			assertThat(health.getDetails()).containsEntry("relay", "FAILED")
				.containsEntry("reason", "the relay stopped polling unexpectedly");
			failRelayThread.set(false);
			context.getBean(OutboxRelay.class).stop();
			assertThat(health(context).getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
			assertThat(health(context).getDetails()).containsEntry("relay", "STOPPED");
		});
	}

	@Test
	void isDownWhenAnErrorStopsTheRelayWhileATransactionBegins() {
		// Spring's transaction manager wraps what getConnection throws, even an Error, in
		// a CannotCreateTransactionException.
		onlyInTransactions.set(true);
		this.runner.withUserConfiguration(FailingOnRelayThreadDataSource.class).run((context) -> {
			assertThat(health(context).getStatus()).isEqualTo(Status.UP);
			failRelayThread.set(true);
			await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> assertThat(context.getBean(OutboxRelay.class).getState())
					.isEqualTo(OutboxRelay.State.FAILED));
			assertThat(health(context).getDetails()).containsEntry("relay", "FAILED");
		});
	}

	private static boolean beginsTransaction() {
		return StackWalker.getInstance()
			.walk((frames) -> frames
				.anyMatch((frame) -> frame.getClassName().equals(DataSourceTransactionManager.class.getName())));
	}

	@Configuration(proxyBeanMethods = false)
	static class FailingOnRelayThreadDataSource {

		@Bean
		DataSource dataSource(Environment environment) throws SQLException {
			DataSource real = new SimpleDriverDataSource(new org.postgresql.Driver(),
					environment.getRequiredProperty("spring.datasource.url"));
			return new DelegatingDataSource(real) {

				@Override
				public Connection getConnection() throws SQLException {
					if (failRelayThread.get() && Thread.currentThread().getName().startsWith("retry-outbox-relay-")
							&& (!onlyInTransactions.get() || beginsTransaction())) {
						// Not an exception the relay is built to survive.
						throw new LinkageError("simulated fatal error on the relay thread");
					}
					return super.getConnection();
				}

			};
		}

	}

}
