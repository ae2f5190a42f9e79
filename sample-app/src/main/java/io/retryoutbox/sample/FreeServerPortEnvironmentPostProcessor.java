package io.retryoutbox.sample;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.util.Map;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Replaces {@code server.port=0} with a free port chosen now.
 * <p>
 * The payments destination's base URL is built from {@code ${server.port}} and resolved
 * when the outbox starts, before Tomcat has picked a random port; choosing the port up
 * front keeps that URL pointing at this application, in tests with a random port too.
 */
public class FreeServerPortEnvironmentPostProcessor implements EnvironmentPostProcessor, Ordered {

	private static final String PROPERTY_SOURCE_NAME = "sampleFreeServerPort";

	@Override
	public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
		Integer port = environment.getProperty("server.port", Integer.class);
		if (port != null && port == 0) {
			environment.getPropertySources()
				.addFirst(new MapPropertySource(PROPERTY_SOURCE_NAME, Map.of("server.port", freePort())));
		}
	}

	@Override
	public int getOrder() {
		return Ordered.LOWEST_PRECEDENCE;
	}

	private static int freePort() {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not find a free port for server.port=0", ex);
		}
	}

}
