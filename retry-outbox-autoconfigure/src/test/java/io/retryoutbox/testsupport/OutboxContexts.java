package io.retryoutbox.testsupport;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;

import javax.sql.DataSource;

import io.retryoutbox.Outbox;
import io.retryoutbox.OutboxRequest;
import io.retryoutbox.autoconfigure.RetryOutboxAutoConfiguration;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.webclient.autoconfigure.WebClientAutoConfiguration;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Builds application contexts with the starter on a real PostgreSQL database, the way an
 * application gets them.
 */
public final class OutboxContexts {

	private OutboxContexts() {
	}

	/**
	 * A runner with the outbox and what it builds on, on the given database, polling
	 * quickly and starting the relay with the context, without its warm-up.
	 * @param jdbcUrl the database
	 * @return the runner
	 */
	public static ApplicationContextRunner runner(String jdbcUrl) {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					DataSourceTransactionManagerAutoConfiguration.class, JacksonAutoConfiguration.class,
					WebClientAutoConfiguration.class, RetryOutboxAutoConfiguration.class))
			.withPropertyValues("spring.datasource.url=" + jdbcUrl, "spring.datasource.hikari.maximum-pool-size=4",
					"retry-outbox.relay.poll-interval=100ms",
					// A context runner publishes no ApplicationReadyEvent.
					"retry-outbox.relay.wait-for-ready=false",
					// Seconds a context on two cores; RelayWarmUpIntegrationTests has it.
					"retry-outbox.relay.warm-up.enabled=false");
	}

	/**
	 * Runs {@code body} while one context per runner is up, as separate instances of an
	 * application on the same database.
	 * @param runners the runners, one per instance
	 * @param body what to do with the started contexts, in the order of the runners
	 */
	public static void withInstances(List<ApplicationContextRunner> runners,
			Consumer<List<ConfigurableApplicationContext>> body) {
		startAll(runners, new ArrayList<>(), body);
	}

	private static void startAll(List<ApplicationContextRunner> runners, List<ConfigurableApplicationContext> started,
			Consumer<List<ConfigurableApplicationContext>> body) {
		if (started.size() == runners.size()) {
			body.accept(started);
			return;
		}
		runners.get(started.size()).run((context) -> {
			assertThat(context).hasNotFailed();
			started.add(context.getSourceApplicationContext());
			startAll(runners, started, body);
		});
	}

	/**
	 * A transaction template on the context's transaction manager.
	 * @param context the context
	 * @return the template
	 */
	public static TransactionTemplate transactions(ApplicationContext context) {
		return new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
	}

	/**
	 * Enqueues a request in a transaction of its own.
	 * @param context the context
	 * @param request the request
	 * @return the message id
	 */
	public static UUID send(ApplicationContext context, OutboxRequest request) {
		UUID id = transactions(context).execute((status) -> context.getBean(Outbox.class).send(request));
		assertThat(id).isNotNull();
		return id;
	}

	/**
	 * The row of a message, as a map of column to value.
	 * @param context the context
	 * @param id the message id
	 * @return the row
	 */
	public static Map<String, Object> row(ApplicationContext context, UUID id) {
		return jdbc(context).sql("SELECT * FROM retry_outbox_message WHERE id = ?").param(id).query().singleRow();
	}

	/**
	 * The number of outbox rows.
	 * @param context the context
	 * @return the count
	 */
	public static long count(ApplicationContext context) {
		return jdbc(context).sql("SELECT count(*) FROM retry_outbox_message").query(Long.class).single();
	}

	/**
	 * A JDBC client on the context's data source.
	 * @param context the context
	 * @return the client
	 */
	public static JdbcClient jdbc(ApplicationContext context) {
		return JdbcClient.create(context.getBean(DataSource.class));
	}

	/**
	 * Sends a message without a transaction, trying again while the pool hands out
	 * connections that the database closed.
	 * @param outbox the outbox
	 * @param request the message
	 */
	public static void sendDespiteBrokenConnections(Outbox outbox, OutboxRequest request) {
		await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> {
			outbox.send(request);
			return true;
		});
	}

	/**
	 * Waits until every message on the database is delivered and there are {@code count}
	 * of them.
	 * @param jdbc the database
	 * @param count how many messages there must be
	 */
	public static void awaitAllDelivered(JdbcClient jdbc, int count) {
		await().atMost(Duration.ofSeconds(60))
			.untilAsserted(() -> assertThat(
					jdbc.sql("SELECT status || ':' || count(*) FROM retry_outbox_message GROUP BY status")
						.query(String.class)
						.list())
				.containsExactly("DELIVERED:" + count));
	}

}
