package io.retryoutbox.actuate;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.TestDatabase;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A servlet application with the whole auto-configuration on a fresh database, sending to
 * a {@link DestinationServer} as destination {@code payments}, and an HTTP client for its
 * endpoints.
 */
final class ServletApplication implements AutoCloseable {

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private final ConfigurableApplicationContext context;

	private ServletApplication(ConfigurableApplicationContext context) {
		this.context = context;
	}

	/**
	 * Starts the application.
	 * @param configuration its configuration class
	 * @param destination the server of destination {@code payments}
	 * @param properties properties beside the defaults
	 * @param args command line arguments, which override both
	 * @return the running application
	 */
	static ServletApplication start(Class<?> configuration, DestinationServer destination,
			Map<String, Object> properties, String... args) {
		SpringApplication application = new SpringApplication(configuration);
		application.setWebApplicationType(WebApplicationType.SERVLET);
		Map<String, Object> defaults = new HashMap<>();
		defaults.put("spring.datasource.url", TestDatabase.createDatabase());
		defaults.put("server.port", "0");
		defaults.put("retry-outbox.relay.poll-interval", "100ms");
		defaults.put("retry-outbox.destinations.payments.base-url", destination.server().url("/api").toString());
		defaults.putAll(properties);
		application.setDefaultProperties(defaults);
		return new ServletApplication(application.run(args));
	}

	ConfigurableApplicationContext context() {
		return this.context;
	}

	HttpResponse<String> get(String path) throws IOException, InterruptedException {
		return this.http.send(HttpRequest.newBuilder(uri(path)).GET().build(), HttpResponse.BodyHandlers.ofString());
	}

	HttpResponse<String> post(String path, String body, @Nullable String authorization)
			throws IOException, InterruptedException {
		HttpRequest.Builder request = HttpRequest.newBuilder(uri(path))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(body));
		if (authorization != null) {
			request.header("Authorization", authorization);
		}
		return this.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	private URI uri(String path) {
		int port = ((WebServerApplicationContext) this.context).getWebServer().getPort();
		return URI.create("http://localhost:" + port + path);
	}

	/**
	 * Reads a response's JSON body after checking its status.
	 * @param response the response
	 * @param status the status it must have
	 * @return the body
	 */
	static JsonNode json(HttpResponse<String> response, int status) {
		assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
		return JsonMapper.shared().readTree(response.body());
	}

	@Override
	public void close() {
		this.context.close();
	}

}
