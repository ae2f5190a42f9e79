package io.retryoutbox;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.retryoutbox.relay.OutboxRelay;
import io.retryoutbox.testsupport.OutboxContexts;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
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

	private final Map<String, Set<String>> keysByPath = new ConcurrentHashMap<>();

	private final Queue<String> received = new ConcurrentLinkedQueue<>();

	private final AtomicInteger requests = new AtomicInteger();

	@TempDir
	private Path dataDirectory;

	private int port;

	private EmbeddedPostgres postgres;

	private MockWebServer server;

	@BeforeEach
	void start() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			this.port = socket.getLocalPort();
		}
		this.postgres = startPostgres();
		this.server = new MockWebServer();
		this.server.setDispatcher(new Dispatcher() {
			@Override
			public MockResponse dispatch(RecordedRequest request) {
				String path = request.getUrl().encodedPath();
				DatabaseRestartIntegrationTests.this.requests.incrementAndGet();
				DatabaseRestartIntegrationTests.this.received.add(path);
				DatabaseRestartIntegrationTests.this.keysByPath
					.computeIfAbsent(path, (key) -> ConcurrentHashMap.newKeySet())
					.add(request.getHeaders().get("Idempotency-Key"));
				// Slow enough that the restart falls in the middle of the work.
				return new MockResponse.Builder().code(200).headersDelay(10, TimeUnit.MILLISECONDS).build();
			}
		});
		this.server.start();
	}

	private EmbeddedPostgres startPostgres() throws IOException {
		return EmbeddedPostgres.builder()
			.setPort(this.port)
			.setDataDirectory(this.dataDirectory)
			.setCleanDataDirectory(false)
			.setRegisterShutdownHook(false)
			.setPGStartupWait(Duration.ofSeconds(60))
			.start();
	}

	@AfterEach
	void stop() throws IOException {
		this.server.close();
		this.postgres.close();
	}

	private JdbcClient jdbc() {
		return JdbcClient.create(new DriverManagerDataSource(this.postgres.getJdbcUrl("postgres", "postgres")));
	}

	@Test
	void finishesTheWorkAfterTheDatabaseServerRestartsMidRun() {
		OutboxContexts.runner(this.postgres.getJdbcUrl("postgres", "postgres"))
			.withPropertyValues("retry-outbox.destinations.api.base-url=" + this.server.url("/"),
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
				await().atMost(Duration.ofSeconds(30)).until(() -> this.requests.get() > 20);
				this.postgres.close();
				assertThat(this.requests.get()).isLessThan(300);
				OutboxRelay relay = context.getBean(OutboxRelay.class);
				await().atMost(Duration.ofSeconds(30)).until(() -> relay.getLastPollError() != null);
				this.postgres = startPostgres();
				for (int i = 0; i < 50; i++) {
					OutboxContexts.sendDespiteBrokenConnections(outbox,
							OutboxRequest.post("api", "/after/" + i).build());
				}
				OutboxContexts.awaitAllDelivered(jdbc(), 350);
				// A poll may still fail on a connection the restart closed.
				await().atMost(Duration.ofSeconds(10)).until(() -> relay.getLastPollError() == null);
				assertThat(this.keysByPath).hasSize(350).allSatisfy((path, keys) -> assertThat(keys).hasSize(1));
				for (int key = 0; key < 5; key++) {
					String prefix = "/before/" + key + "/";
					List<Integer> firstArrivals = this.received.stream()
						.filter((path) -> path.startsWith(prefix))
						.map((path) -> Integer.valueOf(path.substring(prefix.length())))
						.distinct()
						.toList();
					assertThat(firstArrivals).hasSize(60).isSorted();
				}
			});
	}

}
