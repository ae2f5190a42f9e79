package io.retryoutbox.relay;

import java.util.Map;

import io.retryoutbox.DeliveryOutcome;
import io.retryoutbox.message.ClaimedMessage;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Sends one claimed message and turns whatever happens into a {@link DeliveryOutcome};
 * the returned publisher never errors.
 */
final class HttpDispatcher {

	static final int MAX_ERROR_BODY_BYTES = 64 * 1024;

	private static final byte[] EMPTY = new byte[0];

	private final WebClient webClient;

	private final Map<String, RelayDestination> destinations;

	private final String idempotencyKeyHeader;

	HttpDispatcher(WebClient webClient, Map<String, RelayDestination> destinations, String idempotencyKeyHeader) {
		this.webClient = webClient;
		this.destinations = Map.copyOf(destinations);
		this.idempotencyKeyHeader = idempotencyKeyHeader;
	}

	Mono<DeliveryOutcome> send(ClaimedMessage message) {
		RelayDestination destination = this.destinations.get(message.destination());
		if (destination == null) {
			return Mono.just(new DeliveryOutcome.Failure(new IllegalStateException(
					"Destination '" + message.destination() + "' is not configured in retry-outbox.destinations")));
		}
		return Mono.defer(() -> exchange(message, destination))
			.timeout(destination.timeout())
			.onErrorResume((ex) -> Mono.just(new DeliveryOutcome.Failure(ex)));
	}

	private Mono<DeliveryOutcome> exchange(ClaimedMessage message, RelayDestination destination) {
		WebClient.RequestBodySpec request = this.webClient.method(HttpMethod.valueOf(message.method()))
			.uri(destination.resolve(message.path()))
			.headers((headers) -> {
				destination.headers().forEach(headers::set);
				message.headers().forEach(headers::put);
				headers.set(this.idempotencyKeyHeader, message.idempotencyKey());
				if (message.contentType() != null) {
					headers.set(HttpHeaders.CONTENT_TYPE, message.contentType());
				}
			});
		WebClient.RequestHeadersSpec<?> spec = (message.body() != null) ? request.bodyValue(message.body()) : request;
		return spec.exchangeToMono(HttpDispatcher::read);
	}

	private static Mono<DeliveryOutcome> read(ClientResponse response) {
		int status = response.statusCode().value();
		HttpHeaders headers = HttpHeaders.readOnlyHttpHeaders(response.headers().asHttpHeaders());
		if (response.statusCode().is2xxSuccessful()) {
			return response.releaseBody().thenReturn(new DeliveryOutcome.Response(status, headers, EMPTY));
		}
		return DataBufferUtils
			.join(DataBufferUtils.takeUntilByteCount(response.bodyToFlux(DataBuffer.class), MAX_ERROR_BODY_BYTES))
			.map(HttpDispatcher::toBytes)
			.defaultIfEmpty(EMPTY)
			.map((body) -> new DeliveryOutcome.Response(status, headers, body));
	}

	private static byte[] toBytes(DataBuffer buffer) {
		try {
			byte[] bytes = new byte[buffer.readableByteCount()];
			buffer.read(bytes);
			return bytes;
		}
		finally {
			DataBufferUtils.release(buffer);
		}
	}

}
