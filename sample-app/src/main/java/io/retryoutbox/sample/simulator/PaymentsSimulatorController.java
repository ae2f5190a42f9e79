package io.retryoutbox.sample.simulator;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * Serves the {@link PaymentsSimulator} over HTTP below {@code /simulator/payments}, and
 * its statistics at {@code /simulator/stats}; {@code POST /simulator/heal/{key}} makes it
 * accept a key it rejected for good.
 */
@RestController
class PaymentsSimulatorController {

	private static final String PREFIX = "/simulator/payments";

	private final PaymentsSimulator simulator;

	private final JsonMapper jsonMapper;

	private final Executor slowly;

	PaymentsSimulatorController(PaymentsSimulator simulator, JsonMapper jsonMapper, SimulatorProperties properties) {
		this.simulator = simulator;
		this.jsonMapper = jsonMapper;
		this.slowly = CompletableFuture.delayedExecutor(properties.getSlowDelay().toMillis(), TimeUnit.MILLISECONDS);
	}

	@PostMapping(PREFIX + "/**")
	@Nullable CompletableFuture<ResponseEntity<Object>> receive(HttpServletRequest request, HttpServletResponse response,
			@RequestHeader(name = "Idempotency-Key", required = false) @Nullable String key,
			@RequestBody(required = false) @Nullable Map<String, Object> body) throws IOException {
		String path = request.getRequestURI().substring(request.getContextPath().length() + PREFIX.length());
		Object orderId = (body != null) ? body.get("orderId") : null;
		Answer answer = this.simulator.receive(path, key, (orderId != null) ? orderId.toString() : null);
		return switch (answer.delivery()) {
			case AT_ONCE -> CompletableFuture.completedFuture(entity(answer));
			case SLOWLY -> CompletableFuture.supplyAsync(() -> entity(answer), this.slowly);
			case DROPPED -> {
				drop(answer, response);
				yield null;
			}
		};
	}

	@PostMapping("/simulator/heal/{key}")
	Healed heal(@PathVariable String key) {
		return new Healed(key, this.simulator.heal(key));
	}

	@GetMapping("/simulator/stats")
	SimulatorStats stats() {
		return this.simulator.stats();
	}

	private static ResponseEntity<Object> entity(Answer answer) {
		ResponseEntity.BodyBuilder builder = ResponseEntity.status(answer.status())
			.contentType(MediaType.APPLICATION_JSON);
		answer.headers().forEach((name, value) -> builder.header(name, value));
		return builder.body(answer.body());
	}

	/**
	 * Starts the answer, promising a longer body than is sent, and closes the connection:
	 * the client sees it end mid-response, as when a connection drops.
	 */
	private void drop(Answer answer, HttpServletResponse response) throws IOException {
		byte[] json = this.jsonMapper.writeValueAsBytes(answer.body());
		response.setStatus(answer.status());
		response.setContentType(MediaType.APPLICATION_JSON_VALUE);
		response.setHeader(HttpHeaders.CONNECTION, "close");
		response.setContentLength(json.length);
		response.getOutputStream().write(json, 0, json.length / 2);
		response.flushBuffer();
	}

	/**
	 * The answer to {@code POST /simulator/heal/{key}}.
	 *
	 * @param key the idempotency key
	 * @param forgottenStatus the status of the terminal answer that was forgotten, or
	 * {@code null} if the key had none
	 */
	record Healed(String key, @Nullable Integer forgottenStatus) {

	}

}
