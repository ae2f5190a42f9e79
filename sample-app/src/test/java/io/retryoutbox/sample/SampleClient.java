package io.retryoutbox.sample;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import io.retryoutbox.sample.order.PaymentRequest;
import io.retryoutbox.sample.simulator.SimulatorStats;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Calls the sample application over HTTP, as a user would.
 */
final class SampleClient {

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private final JsonMapper json = JsonMapper.builder().build();

	private final String baseUrl;

	SampleClient(int port) {
		this.baseUrl = "http://localhost:" + port;
	}

	PaymentRequest placeOrder(BigDecimal amount, String currency) {
		HttpResponse<String> response = post("/orders", Map.of("amount", amount, "currency", currency));
		assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
		return this.json.readValue(response.body(), PaymentRequest.class);
	}

	PaymentRequest cancelOrder(long orderId) {
		HttpResponse<String> response = post("/orders/" + orderId + "/cancel", Map.of());
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		return this.json.readValue(response.body(), PaymentRequest.class);
	}

	JsonNode order(long orderId) {
		HttpResponse<String> response = get("/orders/" + orderId);
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		return this.json.readTree(response.body());
	}

	SimulatorStats stats() {
		HttpResponse<String> response = get("/simulator/stats");
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		return this.json.readValue(response.body(), SimulatorStats.class);
	}

	/**
	 * Makes the simulator accept a key it rejected for good.
	 * @param key the idempotency key
	 * @return the answer
	 */
	JsonNode heal(String key) {
		HttpResponse<String> response = post("/simulator/heal/" + key, Map.of());
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		return this.json.readTree(response.body());
	}

	/**
	 * Calls {@code GET /actuator/outbox} or one of its sub-paths.
	 * @param path the path below {@code /actuator/outbox}, e.g.
	 * {@code /messages?status=DEAD}
	 * @return the answer
	 */
	JsonNode outbox(String path) {
		HttpResponse<String> response = get("/actuator/outbox" + path);
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		return this.json.readTree(response.body());
	}

	/**
	 * Replays one dead message through the actuator endpoint, as the README shows.
	 * @param id the message id
	 * @return the answer
	 */
	JsonNode replay(UUID id) {
		HttpResponse<String> response = post("/actuator/outbox/replay", Map.of("id", id));
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		return this.json.readTree(response.body());
	}

	boolean isHealthy() {
		HttpResponse<String> response = get("/actuator/health");
		return response.statusCode() == 200
				&& this.json.readTree(response.body()).path("status").asString().equals("UP");
	}

	HttpResponse<String> get(String path) {
		return send(HttpRequest.newBuilder(URI.create(this.baseUrl + path)).GET());
	}

	HttpResponse<String> post(String path, Object body) {
		return send(HttpRequest.newBuilder(URI.create(this.baseUrl + path))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(this.json.writeValueAsString(body))));
	}

	private HttpResponse<String> send(HttpRequest.Builder request) {
		try {
			return this.http.send(request.timeout(Duration.ofSeconds(30)).build(),
					HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted", ex);
		}
	}

}
