package io.retryoutbox.relay;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.TimeoutException;

import io.retryoutbox.DeliveryOutcome;
import io.retryoutbox.message.ClaimedMessage;
import io.retryoutbox.support.DataBuffers;
import reactor.core.Disposable;
import reactor.core.Scannable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;

/**
 * Sends one claimed message and turns whatever happens into a {@link DeliveryOutcome};
 * the returned publisher never errors.
 */
final class HttpDispatcher {

	// How long the body of an error answer is read before it is classified from what
	// arrived, at most half the attempt's timeout.
	private static final Duration ERROR_BODY_WAIT = Duration.ofSeconds(1);

	private static final byte[] EMPTY = new byte[0];

	private final RelayExchange exchange;

	private final Map<String, RelayDestination> destinations;

	private final String idempotencyKeyHeader;

	private final int maxErrorBodyBytes;

	HttpDispatcher(RelayExchange exchange, Map<String, RelayDestination> destinations, String idempotencyKeyHeader,
			int maxErrorBodyBytes) {
		this.exchange = exchange;
		this.destinations = Map.copyOf(destinations);
		this.idempotencyKeyHeader = idempotencyKeyHeader;
		this.maxErrorBodyBytes = maxErrorBodyBytes;
	}

	Mono<DeliveryOutcome> send(ClaimedMessage message) {
		RelayDestination destination = this.destinations.get(message.destination());
		if (destination == null) {
			return Mono.just(new DeliveryOutcome.Failure(new IllegalStateException(
					"Destination '" + message.destination() + "' is not configured in retry-outbox.destinations")));
		}
		// The outcome is known once the status (and, for an error, what classification
		// needs of its body) has arrived; the rest of the exchange, draining a 2xx body,
		// goes on by itself within the timeout. Waiting for it could turn a success
		// whose body trickles into a timeout, and the message would be sent again.
		// The exchange keeps the subscriber's context, which carries the attempt's
		// observation, so the request continues the message's trace.
		return Mono.deferContextual((context) -> {
			Sinks.One<DeliveryOutcome> outcome = Sinks.one();
			// With a fallback, as without, a timeout fails the exchange; without one,
			// Reactor builds the timeout's description, naming the whole operator chain,
			// for every exchange that never times out.
			Disposable exchange = Mono.defer(() -> exchange(message, destination, outcome))
				.timeout(destination.timeout(), Mono.error(() -> timedOut(destination.timeout())))
				.contextWrite(context)
				.subscribe(null, (ex) -> outcome.tryEmitValue(new DeliveryOutcome.Failure(ex)),
						() -> endedWithoutResponse(outcome));
			return outcome.asMono().doOnCancel(exchange::dispose);
		});
	}

	private static TimeoutException timedOut(Duration timeout) {
		return new TimeoutException(
				"No complete answer within " + timeout.toMillis() + " ms, the destination's timeout");
	}

	// Nearly every exchange has emitted its outcome by the time it completes: an
	// exception made for each of those, and dropped, was 4% of the event loops' CPU.
	private static void endedWithoutResponse(Sinks.One<DeliveryOutcome> outcome) {
		if (!Scannable.from(outcome).scanOrDefault(Scannable.Attr.TERMINATED, false)) {
			outcome.tryEmitValue(
					new DeliveryOutcome.Failure(new IllegalStateException("The exchange ended without a response")));
		}
	}

	private Mono<Void> exchange(ClaimedMessage message, RelayDestination destination,
			Sinks.One<DeliveryOutcome> outcome) {
		byte[] body = (message.body() != null) ? message.body() : EMPTY;
		return this.exchange.exchange(HttpMethod.valueOf(message.method()), destination.resolve(message.path()),
				(headers) -> {
					// The configured headers last, so that they win over a row's own in
					// any case: enqueue refuses them, but a row can be edited.
					message.headers().forEach(headers::put);
					destination.headers().forEach(headers::set);
					headers.set(this.idempotencyKeyHeader, message.idempotencyKey());
					if (message.contentType() != null) {
						headers.set(HttpHeaders.CONTENT_TYPE, message.contentType());
					}
					// The signature last of all, built per attempt: its timestamp is this
					// attempt's, and it signs the very bytes sent below.
					destination.signer().sign(headers, message.id().toString(), Instant.now().getEpochSecond(), body);
				}, message.body(), (response) -> read(response, outcome, destination.timeout()));
	}

	private Mono<Void> read(RelayResponse response, Sinks.One<DeliveryOutcome> outcome, Duration timeout) {
		int status = response.status();
		HttpHeaders headers = response.headers();
		if (status >= 200 && status < 300) {
			outcome.tryEmitValue(new DeliveryOutcome.Response(status, headers, EMPTY));
			return response.releaseBody();
		}
		// Only what arrives within a short wait, up to the limit: classification needs
		// the start of an error envelope, never the whole body.
		Duration errorBodyWait = Duration.ofNanos(Math.min(ERROR_BODY_WAIT.toNanos(), timeout.toNanos() / 2));
		return DataBufferUtils
			.join(DataBufferUtils.takeUntilByteCount(response.body(), this.maxErrorBodyBytes).take(errorBodyWait))
			.map(DataBuffers::toBytes)
			.defaultIfEmpty(EMPTY)
			.doOnNext((body) -> outcome.tryEmitValue(new DeliveryOutcome.Response(status, headers, body)))
			.then();
	}

}
