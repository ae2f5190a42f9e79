package io.retryoutbox.actuate;

import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import io.retryoutbox.Outbox;
import io.retryoutbox.OutboxRequest;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import mockwebserver3.MockResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;

import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.annotation.web.configurers.AbstractHttpConfigurer;
import org.springframework.security.web.SecurityFilterChain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The actuator endpoints over real HTTP, in a servlet application with the whole
 * auto-configuration, on a real PostgreSQL and against a real HTTP server. Run by the
 * separate Surefire execution that has the servlet stack on its classpath.
 */
class OutboxActuatorHttpTests {

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private ServletApplication application;

	private ConfigurableApplicationContext context;

	@BeforeEach
	void answerByPath() {
		this.destination.dispatcher()
			.answer("/api/bad", new MockResponse.Builder().code(400).body("{\"code\":\"INVALID\"}").build());
	}

	@AfterEach
	void stop() {
		if (this.application != null) {
			this.application.close();
		}
	}

	private void start(String... args) {
		this.application = ServletApplication.start(Application.class, this.destination,
				Map.of("management.endpoints.web.exposure.include", "health,outbox,prometheus",
						"management.endpoint.health.show-details", "always",
						"management.endpoint.health.probes.enabled", "true", "retry-outbox.metrics.gauge-interval",
						"100ms"),
				args);
		this.context = this.application.context();
	}

	private UUID sendAndAwait(String path, String status) {
		UUID id = OutboxContexts.transactions(this.context)
			.execute((tx) -> this.context.getBean(Outbox.class)
				.send(OutboxRequest.post("payments", path).header("Authorization", "Bearer s3cr3t").build()));
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(() -> assertThat(OutboxContexts.row(this.context, id)).containsEntry("status", status));
		return id;
	}

	@Test
	void readsTheOutboxHealthAndMetricsButRefusesWritesByDefault() throws Exception {
		start();
		UUID dead = sendAndAwait("/bad", "DEAD");
		sendAndAwait("/ok", "DELIVERED");
		JsonNode summary = json(get("/actuator/outbox"), 200);
		assertThat(summary.at("/statuses/DEAD").asLong()).isEqualTo(1);
		assertThat(summary.at("/statuses/DELIVERED").asLong()).isEqualTo(1);
		assertThat(summary.at("/destinations/payments/DEAD").asLong()).isEqualTo(1);
		assertThat(summary.at("/flows/payments/state").asString()).isEqualTo("OPEN");
		assertThat(summary.at("/flows/payments/limit").asInt()).isEqualTo(64);
		assertThat(json(get("/actuator/outbox/messages?status=DELIVERED&destination=payments"
				+ "&from=2020-01-01T00:00:00Z&to=2999-01-01T00:00:00Z&limit=10"), 200)
			.at("/messages")).hasSize(1);
		JsonNode page = json(get("/actuator/outbox/messages"), 200);
		assertThat(page.at("/messages/0/id").asString()).isEqualTo(dead.toString());
		assertThat(page.at("/messages/0/headers/Authorization/0").asString()).isEqualTo("******");
		JsonNode message = json(get("/actuator/outbox/messages/" + dead), 200);
		assertThat(message.at("/attemptLog/0/outcome").asString()).isEqualTo("DEAD");
		assertThat(message.at("/attemptLog/0/responseSnippet").asString()).isEqualTo("{\"code\":\"INVALID\"}");
		assertThat(get("/actuator/outbox/messages/" + UUID.randomUUID()).statusCode()).isEqualTo(404);
		HttpResponse<String> refused = post("/actuator/outbox/replay", "{\"id\":\"" + dead + "\"}");
		assertThat(refused.statusCode()).isEqualTo(405);
		assertThat(OutboxContexts.row(this.context, dead)).containsEntry("status", "DEAD");
		assertThat(post("/actuator/outbox/resume", "{\"destination\":\"payments\"}").statusCode()).isEqualTo(405);

		JsonNode health = json(get("/actuator/health"), 200);
		assertThat(health.at("/components/retryOutbox/status").asString()).isEqualTo("UP");
		assertThat(health.at("/components/retryOutbox/details/dead").asLong()).isEqualTo(1);
		assertThat(health.at("/components/retryOutbox/details/relay").asString()).isEqualTo("RUNNING");
		assertThat(health.at("/components/retryOutbox/details/destinations/payments/state").asString())
			.isEqualTo("OPEN");
		assertThat(get("/actuator/health/liveness").body()).doesNotContain("retryOutbox");

		await().untilAsserted(() -> assertThat(get("/actuator/prometheus").body()).contains("retry_outbox_dead 1.0")
			.contains("retry_outbox_pending 0.0")
			.contains("retry_outbox_parked_keys 0.0")
			.contains("retry_outbox_lag_seconds 0.0")
			.contains("retry_outbox_flow_state{destination=\"payments\",state=\"OPEN\"} 1.0")
			.contains("retry_outbox_flow_state{destination=\"payments\",state=\"PAUSED\"} 0.0")
			.contains("retry_outbox_enqueued_total{destination=\"payments\"} 2.0")
			.containsPattern("retry_outbox_attempts_seconds_count\\{destination=\"payments\",error=\"none\","
					+ "outcome=\"DEAD\",status_class=\"4xx\"} 1")
			.containsPattern(
					"retry_outbox_delivery_latency_seconds_bucket\\{destination=\"payments\",le=\"[0-9.]+\"}"));
	}

	@Test
	void replaysAndDiscardsOverHttpOnceAccessIsUnrestricted() throws Exception {
		start("--management.endpoint.outbox.access=unrestricted");
		UUID replayed = sendAndAwait("/bad", "DEAD");
		UUID discarded = sendAndAwait("/bad", "DEAD");
		this.destination.dispatcher().answer("/api/bad", new MockResponse.Builder().code(200).build());
		JsonNode replay = json(post("/actuator/outbox/replay", "{\"id\":\"" + replayed + "\"}"), 200);
		assertThat(replay.at("/count").asInt()).isEqualTo(1);
		assertThat(replay.at("/complete").asBoolean()).isTrue();
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(
					() -> assertThat(OutboxContexts.row(this.context, replayed)).containsEntry("status", "DELIVERED"));
		JsonNode log = json(get("/actuator/outbox/messages/" + replayed), 200).at("/attemptLog");
		assertThat(log.at("/1/outcome").asString()).isEqualTo("REPLAYED");
		assertThat(log.at("/1/actor").asString()).isEqualTo("anonymous");
		JsonNode discard = json(
				post("/actuator/outbox/discard", "{\"destination\":\"payments\",\"deadReason\":\"TERMINAL_STATUS\","
						+ "\"from\":\"2020-01-01T00:00:00Z\",\"to\":\"2999-01-01T00:00:00+02:00\",\"limit\":10}"),
				200);
		assertThat(discard.at("/count").asInt()).isEqualTo(1);
		assertThat(OutboxContexts.jdbc(this.context)
			.sql("SELECT count(*) FROM retry_outbox_message WHERE id = ?")
			.param(discarded)
			.query(Long.class)
			.single()).isZero();
		assertThat(post("/actuator/outbox/rewind", "{}").statusCode()).isEqualTo(400);
		JsonNode resume = json(post("/actuator/outbox/resume", "{\"destination\":\"payments\"}"), 200);
		assertThat(resume.at("/action").asString()).isEqualTo("resume");
		assertThat(resume.at("/count").asInt()).isZero();
		assertThat(post("/actuator/outbox/resume", "{\"destination\":\"nowhere\"}").statusCode()).isEqualTo(400);
		assertThat(post("/actuator/outbox/resume", "{}").statusCode()).isEqualTo(400);
	}

	private HttpResponse<String> get(String path) throws IOException, InterruptedException {
		return this.application.get(path);
	}

	private HttpResponse<String> post(String path, String body) throws IOException, InterruptedException {
		return this.application.post(path, body, null);
	}

	private static JsonNode json(HttpResponse<String> response, int status) {
		return ServletApplication.json(response, status);
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(OpenSecurity.class)
	static class Application {

	}

	/**
	 * Spring Security is on this execution's classpath and would secure every endpoint:
	 * these tests are about the endpoints, so everything is let through.
	 * {@link OutboxEndpointSecurityHttpTests} is about the security.
	 */
	@Configuration(proxyBeanMethods = false)
	static class OpenSecurity {

		@Bean
		SecurityFilterChain openSecurityFilterChain(HttpSecurity http) throws Exception {
			return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
				.csrf(AbstractHttpConfigurer::disable)
				.build();
		}

	}

}
