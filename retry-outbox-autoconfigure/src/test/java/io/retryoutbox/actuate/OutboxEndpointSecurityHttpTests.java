package io.retryoutbox.actuate;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

import io.retryoutbox.Outbox;
import io.retryoutbox.OutboxRequest;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.PathDispatcher;
import io.retryoutbox.testsupport.TestDatabase;
import jakarta.servlet.DispatcherType;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.security.autoconfigure.actuate.web.servlet.EndpointRequest;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpMethod;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The write operations of the {@code outbox} endpoint, once allowed, are subject to the
 * application's Spring Security rules like any actuator operation: here reads are open
 * and writes need the role {@code OPS}. A servlet application with the whole
 * auto-configuration and Spring Security, on a real PostgreSQL and against a real HTTP
 * server; run by the Surefire execution that has the servlet stack and Spring Security on
 * its classpath.
 */
class OutboxEndpointSecurityHttpTests {

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private final PathDispatcher dispatcher = new PathDispatcher();

	private MockWebServer server;

	private ConfigurableApplicationContext context;

	@BeforeEach
	void start() throws IOException {
		this.server = new MockWebServer();
		this.server.setDispatcher(this.dispatcher);
		this.server.start();
		this.dispatcher.answer("/api/bad", new MockResponse.Builder().code(400).body("{\"code\":\"INVALID\"}").build());
		SpringApplication application = new SpringApplication(Application.class);
		application.setWebApplicationType(WebApplicationType.SERVLET);
		Map<String, Object> defaults = new HashMap<>();
		defaults.put("spring.datasource.url", TestDatabase.createDatabase());
		defaults.put("server.port", "0");
		defaults.put("management.endpoints.web.exposure.include", "health,outbox");
		defaults.put("management.endpoint.outbox.access", "unrestricted");
		defaults.put("retry-outbox.relay.poll-interval", "100ms");
		defaults.put("retry-outbox.destinations.payments.base-url",
				"http://localhost:" + this.server.getPort() + "/api");
		application.setDefaultProperties(defaults);
		this.context = application.run();
	}

	@AfterEach
	void stop() {
		if (this.context != null) {
			this.context.close();
		}
		this.server.close();
	}

	@Test
	void replaysADeadMessageOnlyForAUserWithTheOpsRoleAndRecordsThatUserAsTheActor() throws Exception {
		UUID dead = sendAndAwait("/bad", "DEAD");
		String replay = "{\"id\":\"" + dead + "\"}";

		HttpResponse<String> anonymous = post("/actuator/outbox/replay", replay, null);
		assertThat(anonymous.statusCode()).as(anonymous.body()).isEqualTo(401);
		assertThat(anonymous.headers().firstValue("WWW-Authenticate"))
			.hasValueSatisfying((challenge) -> assertThat(challenge).startsWith("Basic"));
		assertThat(OutboxContexts.row(this.context, dead)).containsEntry("status", "DEAD");

		HttpResponse<String> wrongPassword = post("/actuator/outbox/replay", replay, basic("ops", "wrong"));
		assertThat(wrongPassword.statusCode()).as(wrongPassword.body()).isEqualTo(401);
		assertThat(OutboxContexts.row(this.context, dead)).containsEntry("status", "DEAD");

		HttpResponse<String> viewer = post("/actuator/outbox/replay", replay, basic("viewer", "secret"));
		assertThat(viewer.statusCode()).as(viewer.body()).isEqualTo(403);
		assertThat(OutboxContexts.row(this.context, dead)).containsEntry("status", "DEAD");
		assertThat(json(get("/actuator/outbox/messages/" + dead), 200).at("/attemptLog")).hasSize(1);

		this.dispatcher.answer("/api/bad", new MockResponse.Builder().code(200).build());
		JsonNode result = json(post("/actuator/outbox/replay", replay, basic("ops", "secret")), 200);
		assertThat(result.at("/count").asInt()).isEqualTo(1);
		assertThat(result.at("/complete").asBoolean()).isTrue();
		assertThat(OutboxContexts.row(this.context, dead).get("status")).isIn("PENDING", "IN_FLIGHT", "DELIVERED");
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(
					() -> assertThat(OutboxContexts.row(this.context, dead)).containsEntry("status", "DELIVERED"));
		JsonNode log = json(get("/actuator/outbox/messages/" + dead), 200).at("/attemptLog");
		assertThat(log.at("/0/outcome").asString()).isEqualTo("DEAD");
		assertThat(log.at("/1/outcome").asString()).isEqualTo("REPLAYED");
		assertThat(log.at("/1/actor").asString()).isEqualTo("ops");
	}

	@Test
	void discardsADeadMessageOnlyForAUserWithTheOpsRole() throws Exception {
		UUID dead = sendAndAwait("/bad", "DEAD");
		String discard = "{\"id\":\"" + dead + "\"}";
		assertThat(post("/actuator/outbox/discard", discard, null).statusCode()).isEqualTo(401);
		assertThat(post("/actuator/outbox/discard", discard, basic("viewer", "secret")).statusCode()).isEqualTo(403);
		assertThat(OutboxContexts.row(this.context, dead)).containsEntry("status", "DEAD");
		assertThat(json(post("/actuator/outbox/discard", discard, basic("ops", "secret")), 200).at("/count").asInt())
			.isEqualTo(1);
		assertThat(OutboxContexts.count(this.context)).isZero();
	}

	@Test
	void readsTheOutboxWithoutCredentials() throws Exception {
		UUID dead = sendAndAwait("/bad", "DEAD");
		JsonNode summary = json(get("/actuator/outbox"), 200);
		assertThat(summary.at("/statuses/DEAD").asLong()).isEqualTo(1);
		assertThat(json(get("/actuator/outbox/messages"), 200).at("/messages/0/id").asString())
			.isEqualTo(dead.toString());
		assertThat(json(get("/actuator/outbox/messages/" + dead), 200).at("/attemptLog/0/outcome").asString())
			.isEqualTo("DEAD");
	}

	private UUID sendAndAwait(String path, String status) {
		UUID id = OutboxContexts.transactions(this.context)
			.execute((tx) -> this.context.getBean(Outbox.class).send(OutboxRequest.post("payments", path).build()));
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(() -> assertThat(OutboxContexts.row(this.context, id)).containsEntry("status", status));
		return id;
	}

	private HttpResponse<String> get(String path) throws IOException, InterruptedException {
		return this.http.send(HttpRequest.newBuilder(uri(path)).GET().build(), HttpResponse.BodyHandlers.ofString());
	}

	private HttpResponse<String> post(String path, String body, @Nullable String authorization)
			throws IOException, InterruptedException {
		HttpRequest.Builder request = HttpRequest.newBuilder(uri(path))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(body));
		if (authorization != null) {
			request.header("Authorization", authorization);
		}
		return this.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	private static String basic(String username, String password) {
		return "Basic "
				+ Base64.getEncoder().encodeToString((username + ":" + password).getBytes(StandardCharsets.UTF_8));
	}

	private URI uri(String path) {
		int port = ((WebServerApplicationContext) this.context).getWebServer().getPort();
		return URI.create("http://localhost:" + port + path);
	}

	private static JsonNode json(HttpResponse<String> response, int status) {
		assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
		return JsonMapper.shared().readTree(response.body());
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class Application {

		@Bean
		SecurityFilterChain actuatorSecurityFilterChain(HttpSecurity http) throws Exception {
			return http
				.authorizeHttpRequests((requests) -> requests.dispatcherTypeMatchers(DispatcherType.ERROR)
					.permitAll()
					.requestMatchers(EndpointRequest.toAnyEndpoint().withHttpMethod(HttpMethod.GET))
					.permitAll()
					.requestMatchers(EndpointRequest.toAnyEndpoint())
					.hasRole("OPS")
					.anyRequest()
					.denyAll())
				.httpBasic(Customizer.withDefaults())
				.csrf((csrf) -> csrf.ignoringRequestMatchers(EndpointRequest.toAnyEndpoint()))
				.build();
		}

		@Bean
		InMemoryUserDetailsManager users() {
			return new InMemoryUserDetailsManager(
					User.withUsername("ops").password("{noop}secret").roles("OPS").build(),
					User.withUsername("viewer").password("{noop}secret").roles("VIEWER").build());
		}

	}

}
