package io.retryoutbox;

import java.time.Duration;
import java.util.UUID;

import io.retryoutbox.autoconfigure.RetryOutboxAutoConfiguration;
import io.retryoutbox.notify.PostgresWakeupListener;
import io.retryoutbox.relay.OutboxRelay;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.TestDatabase;
import mockwebserver3.MockWebServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.webclient.autoconfigure.WebClientAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The relay sends nothing before the application is ready, nor before its start delay
 * passed, however early messages are enqueued.
 */
class RelayStartupIntegrationTests {

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private final String jdbcUrl = TestDatabase.createDatabase();

	@Test
	void sendsNothingWhileTheApplicationRunnersStillRun() {
		try (ConfigurableApplicationContext context = startEnqueuingApplication(
				"retry-outbox.relay.poll-interval=100ms")) {
			UUID id = context.getBean(EnqueuingRunner.class).id;
			assertThat(id).isNotNull();
			await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> assertThat(OutboxContexts.row(context, id)).containsEntry("status", "DELIVERED"));
		}
	}

	@Test
	void startsTheRelayAndItsListenerUnderLazyInitialization() {
		try (ConfigurableApplicationContext context = startEnqueuingApplication("spring.main.lazy-initialization=true",
				"retry-outbox.relay.poll-interval=1h")) {
			UUID id = context.getBean(EnqueuingRunner.class).id;
			await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> assertThat(OutboxContexts.row(context, id)).containsEntry("status", "DELIVERED"));
			await().atMost(Duration.ofSeconds(10))
				.until(() -> context.getBean(PostgresWakeupListener.class).isListening());
		}
	}

	/**
	 * Runs a Spring application whose runner enqueues a message and checks that nothing
	 * is sent while it runs.
	 */
	private ConfigurableApplicationContext startEnqueuingApplication(String... properties) {
		return new SpringApplicationBuilder(EnqueuingRunner.class).web(WebApplicationType.NONE)
			.initializers((initializing) -> initializing.getBeanFactory()
				.registerSingleton("server", this.destination.server()))
			.properties("spring.datasource.url=" + this.jdbcUrl,
					"retry-outbox.destinations.api.base-url=" + this.destination.server().url("/"))
			.properties(properties)
			.run();
	}

	@Test
	void holdsBackTheFirstPollAndEveryWakeUpUntilTheStartDelayPassed() {
		long started = System.nanoTime();
		OutboxContexts.runner(this.jdbcUrl)
			.withPropertyValues("retry-outbox.destinations.api.base-url=" + this.destination.server().url("/"),
					"retry-outbox.relay.start-delay=3s")
			.run((context) -> {
				assertThat(context.getBean(OutboxRelay.class).getState()).isEqualTo(OutboxRelay.State.STARTING);
				UUID id = OutboxContexts.transactions(context)
					.execute((status) -> context.getBean(Outbox.class)
						.send(OutboxRequest.post("api", "/early").build()));
				await().atMost(Duration.ofSeconds(20))
					.untilAsserted(
							() -> assertThat(OutboxContexts.row(context, id)).containsEntry("status", "DELIVERED"));
				assertThat(this.destination.dispatcher().arrivals()).singleElement()
					.satisfies((arrival) -> assertThat(Duration.ofNanos(arrival - started))
						.isGreaterThanOrEqualTo(Duration.ofSeconds(3)));
				assertThat(context.getBean(OutboxRelay.class).getState()).isEqualTo(OutboxRelay.State.RUNNING);
			});
	}

	@Test
	void waitsForTheApplicationToBeReadyByDefault() {
		OutboxContexts.runner(this.jdbcUrl)
			.withPropertyValues("retry-outbox.destinations.api.base-url=" + this.destination.server().url("/"),
					"retry-outbox.relay.wait-for-ready=true")
			.run((context) -> {
				OutboxRelay relay = context.getBean(OutboxRelay.class);
				assertThat(relay.isRunning()).isFalse();
				assertThat(relay.getState()).isEqualTo(OutboxRelay.State.STOPPED);
			});
	}

	/**
	 * Enqueues a message from an application runner and checks that nothing is sent while
	 * the runner still runs.
	 */
	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
			JacksonAutoConfiguration.class, WebClientAutoConfiguration.class, RetryOutboxAutoConfiguration.class })
	static class EnqueuingRunner {

		private volatile UUID id;

		@Bean
		ApplicationRunner enqueueAtStartup(Outbox outbox, PlatformTransactionManager transactionManager,
				MockWebServer server) {
			return (args) -> {
				this.id = new TransactionTemplate(transactionManager)
					.execute((status) -> outbox.send(OutboxRequest.post("api", "/at-startup").build()));
				// A started relay would have sent it by then: it polls every 100ms and
				// the commit wakes it.
				await().during(Duration.ofSeconds(1))
					.atMost(Duration.ofSeconds(5))
					.until(() -> server.getRequestCount() == 0);
			};
		}

	}

}
