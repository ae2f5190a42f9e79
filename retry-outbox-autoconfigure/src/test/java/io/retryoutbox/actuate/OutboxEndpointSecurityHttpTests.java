package io.retryoutbox.actuate;

import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.UUID;

import io.retryoutbox.Outbox;
import io.retryoutbox.OutboxRequest;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import jakarta.servlet.DispatcherType;
import mockwebserver3.MockResponse;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;

import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.security.autoconfigure.actuate.web.servlet.EndpointRequest;
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

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private ServletApplication application;

	private ConfigurableApplicationContext context;

	@BeforeEach
	void start() {
		this.destination.dispatcher()
			.answer("/api/bad", new MockResponse.Builder().code(400).body("{\"code\":\"INVALID\"}").build());
		this.application = ServletApplication.start(Application.class, this.destination,
				Map.of("management.endpoints.web.exposure.include", "health,outbox",
						"management.endpoint.outbox.access", "unrestricted"));
		this.context = this.application.context();
	}

	@AfterEach
	void stop() {
		if (this.application != null) {
			this.application.close();
		}
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

		this.destination.dispatcher().answer("/api/bad", new MockResponse.Builder().code(200).build());
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
		return this.application.get(path);
	}

	private HttpResponse<String> post(String path, String body, @Nullable String authorization)
			throws IOException, InterruptedException {
		return this.application.post(path, body, authorization);
	}

	private static String basic(String username, String password) {
		return "Basic "
				+ Base64.getEncoder().encodeToString((username + ":" + password).getBytes(StandardCharsets.UTF_8));
	}

	private static JsonNode json(HttpResponse<String> response, int status) {
		return ServletApplication.json(response, status);
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
