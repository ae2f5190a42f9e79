package io.retryoutbox.testsupport;

import java.io.IOException;

import mockwebserver3.MockWebServer;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import org.springframework.util.Assert;

/**
 * A real HTTP server standing in for a destination, answering by path through a
 * {@link PathDispatcher}; registered with {@code @RegisterExtension}, it starts before
 * each test and stops after it.
 */
public final class DestinationServer implements BeforeEachCallback, AfterEachCallback {

	private final PathDispatcher dispatcher = new PathDispatcher();

	private MockWebServer server;

	@Override
	public void beforeEach(ExtensionContext context) throws IOException {
		MockWebServer server = new MockWebServer();
		server.setDispatcher(this.dispatcher);
		server.start();
		this.server = server;
	}

	@Override
	public void afterEach(ExtensionContext context) {
		if (this.server != null) {
			this.server.close();
		}
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
	 * What answers the server's requests, and records them.
	 * @return the dispatcher
	 */
	public PathDispatcher dispatcher() {
		return this.dispatcher;
	}

}
