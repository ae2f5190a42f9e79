package io.retryoutbox.testsupport;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import org.springframework.util.Assert;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A real HTTP server standing in for a destination, answering by path through a
 * {@link PathDispatcher}; registered with {@code @RegisterExtension}, it starts before
 * each test and stops after it, sending any answers still held back first. A test can
 * stop it and start it again on the same port, as a destination that goes down and comes
 * back.
 */
public final class DestinationServer implements BeforeEachCallback, AfterEachCallback {

	private final PathDispatcher dispatcher = new PathDispatcher();

	private MockWebServer server;

	@Override
	public void beforeEach(ExtensionContext context) throws IOException {
		start(0);
	}

	@Override
	public void afterEach(ExtensionContext context) {
		this.dispatcher.release();
		if (this.server != null) {
			this.server.close();
		}
	}

	/**
	 * Stops the server, closing its port, until {@link #start()}.
	 */
	public void stop() {
		server().close();
	}

	/**
	 * Starts the server again, on the port it had and with the same dispatcher.
	 * @throws IOException if the port cannot be opened
	 */
	public void start() throws IOException {
		start(server().getPort());
	}

	private void start(int port) throws IOException {
		MockWebServer server = new MockWebServer();
		server.setDispatcher(this.dispatcher);
		server.start(port);
		this.server = server;
	}

	/**
	 * The running server.
	 * @return the server
	 */
	public MockWebServer server() {
		Assert.state(this.server != null, "The destination server runs only during a test");
		return this.server;
	}

	/**
	 * The path of the next request the server receives, within 20 s.
	 * @return the path
	 * @throws InterruptedException if interrupted while waiting
	 */
	public String nextPath() throws InterruptedException {
		RecordedRequest request = server().takeRequest(20, TimeUnit.SECONDS);
		assertThat(request).as("a request within 20 s").isNotNull();
		return request.getUrl().encodedPath();
	}

	/**
	 * What answers the server's requests, and records them.
	 * @return the dispatcher
	 */
	public PathDispatcher dispatcher() {
		return this.dispatcher;
	}

}
