package io.retryoutbox;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.retryoutbox.relay.OutboxRelay;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.RestartablePostgres;
import mockwebserver3.MockResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The relay survives a restart of the database server mid-run: it keeps the outcomes it
 * could not write, reconnects, and finishes the work. Always on a server of its own,
 * since the test stops it.
 */
class DatabaseRestartIntegrationTests {

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	@TempDir
	private Path dataDirectory;

	private RestartablePostgres postgres;

	@BeforeEach
	void start() {
		this.postgres = RestartablePostgres.start(this.dataDirectory);
		// Slow enough that the restart falls in the middle of the work.
		this.destination.dispatcher()
			.otherwise(
					(request) -> new MockResponse.Builder().code(200).headersDelay(10, TimeUnit.MILLISECONDS).build());
	}

	private List<String> received() {
		return this.destination.dispatcher().paths();
	}

	private Map<String, Set<String>> keysByPath() {
		return this.destination.dispatcher()
			.requests()
			.stream()
			.collect(Collectors.groupingBy((request) -> request.getUrl().encodedPath(),
					Collectors.mapping((request) -> request.getHeaders().get("Idempotency-Key"), Collectors.toSet())));
	}

	@AfterEach
	void stop() {
		this.postgres.close();
	}

	private JdbcClient jdbc() {
		return JdbcClient.create(new DriverManagerDataSource(this.postgres.jdbcUrl()));
	}

	@Test
	void finishesTheWorkAfterTheDatabaseServerRestartsMidRun() {
		OutboxContexts.runner(this.postgres.jdbcUrl())
			.withPropertyValues("retry-outbox.destinations.api.base-url=" + this.destination.server().url("/"),
					"retry-outbox.require-transaction=false", "retry-outbox.relay.lease-timeout=2s",
					"spring.datasource.hikari.connection-timeout=1000")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				Outbox outbox = context.getBean(Outbox.class);
				for (int i = 0; i < 300; i++) {
					outbox.send(OutboxRequest.post("api", "/before/" + (i % 5) + "/" + i)
						.orderingKey("key-" + (i % 5))
						.build());
				}
				await().atMost(Duration.ofSeconds(30)).until(() -> received().size() > 20);
				this.postgres.stop();
				assertThat(received().size()).isLessThan(300);
				OutboxRelay relay = context.getBean(OutboxRelay.class);
				await().atMost(Duration.ofSeconds(30)).until(() -> relay.getLastPollError() != null);
				this.postgres.startAgain();
				for (int i = 0; i < 50; i++) {
					OutboxContexts.sendDespiteBrokenConnections(outbox,
							OutboxRequest.post("api", "/after/" + i).build());
				}
				OutboxContexts.awaitAllDelivered(jdbc(), 350);
				// A poll may still fail on a connection the restart closed.
				await().atMost(Duration.ofSeconds(10)).until(() -> relay.getLastPollError() == null);
				assertThat(keysByPath()).hasSize(350).allSatisfy((path, keys) -> assertThat(keys).hasSize(1));
				for (int key = 0; key < 5; key++) {
					String prefix = "/before/" + key + "/";
					List<Integer> firstArrivals = received().stream()
						.filter((path) -> path.startsWith(prefix))
						.map((path) -> Integer.valueOf(path.substring(prefix.length())))
						.distinct()
						.toList();
					assertThat(firstArrivals).hasSize(60).isSorted();
				}
			});
	}

}
