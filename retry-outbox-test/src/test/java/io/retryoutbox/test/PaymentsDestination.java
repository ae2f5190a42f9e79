package io.retryoutbox.test;

import java.io.IOException;

import io.retryoutbox.testsupport.PathDispatcher;
import io.retryoutbox.testsupport.TestDatabase;
import mockwebserver3.MockWebServer;

import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * The "payments" destination of this module's tests: a real HTTP server answering through
 * a {@link PathDispatcher}, beside a database of its own.
 */
final class PaymentsDestination implements AutoCloseable {

	private final PathDispatcher dispatcher = new PathDispatcher();

	private final MockWebServer server = new MockWebServer();

	PathDispatcher dispatcher() {
		return this.dispatcher;
	}

	/**
	 * Creates a database, starts the server, and points the application at both.
	 * @param registry the test's dynamic properties
	 * @throws IOException if the server cannot start
	 */
	void register(DynamicPropertyRegistry registry) throws IOException {
		String jdbcUrl = TestDatabase.createDatabase();
		this.server.setDispatcher(this.dispatcher);
		this.server.start();
		registry.add("spring.datasource.url", () -> jdbcUrl);
		registry.add("retry-outbox.destinations.payments.base-url", () -> "http://localhost:" + this.server.getPort());
	}

	@Override
	public void close() {
		this.server.close();
	}

}
