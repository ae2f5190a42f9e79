package io.retryoutbox.direct;

import io.retryoutbox.DeliveryOutcome;
import io.retryoutbox.RetryDecision;
import io.retryoutbox.support.DataBuffers;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;

/**
 * Sends a request until the destination's policy no longer retries it, waiting between
 * attempts with a Reactor delay that the application's stop ends at once.
 */
final class RetryingExchangeFilter implements ExchangeFilterFunction {

	private static final byte[] EMPTY = new byte[0];

	private final DestinationRetry retry;

	RetryingExchangeFilter(DestinationRetry retry) {
		this.retry = retry;
	}

	@Override
	public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
		return Mono.defer(() -> {
			DirectCall call = this.retry.begin();
			String header = this.retry.idempotencyKeyHeader();
			ClientRequest keyed = (request.headers().getFirst(header) != null) ? request
					: ClientRequest.from(request).header(header, call.id().toString()).build();
			return attempt(keyed, next, call);
		});
	}

	private Mono<ClientResponse> attempt(ClientRequest request, ExchangeFunction next, DirectCall call) {
		return next.exchange(request)
			.flatMap(this::read)
			.timeout(this.retry.attemptTimeout())
			.onErrorResume((ex) -> Mono.just(new Attempt(new DeliveryOutcome.Failure(ex), null)))
			.flatMap((attempt) -> decide(attempt, call.after(attempt.outcome()), request, next, call));
	}

	/**
	 * Reads an error response's body whole, since the caller gets it back when the policy
	 * does not retry, as it would without this filter; the policy is given its start, as
	 * much as the relay reads. A 2xx is not read: the caller reads it.
	 */
	private Mono<Attempt> read(ClientResponse response) {
		HttpHeaders headers = HttpHeaders.readOnlyHttpHeaders(response.headers().asHttpHeaders());
		int status = response.statusCode().value();
		if (response.statusCode().is2xxSuccessful()) {
			return Mono.just(new Attempt(new DeliveryOutcome.Response(status, headers, EMPTY), response));
		}
		return DataBufferUtils.join(response.bodyToFlux(DataBuffer.class))
			.map(DataBuffers::toBytes)
			.defaultIfEmpty(EMPTY)
			.map((body) -> new Attempt(
					new DeliveryOutcome.Response(status, headers,
							ThrowableOutcomes.start(body, this.retry.maxErrorBodyBytes())),
					response.mutate().body(Flux.just(DefaultDataBufferFactory.sharedInstance.wrap(body))).build()));
	}

	private Mono<ClientResponse> decide(Attempt attempt, DirectCall.Verdict verdict, ClientRequest request,
			ExchangeFunction next, DirectCall call) {
		ClientResponse response = attempt.response();
		if (verdict.retries()) {
			Mono<Void> wait = Mono.firstWithSignal(Mono.delay(verdict.delay()).then(),
					this.retry.stopSignal()
						.whenStopped()
						.then(Mono.error(() -> new DirectCallFailedException(verdict, true))));
			return release(response).then(wait).then(Mono.defer(() -> attempt(request, next, call)));
		}
		boolean handBack = response != null && (verdict.decision() instanceof RetryDecision.Delivered
				|| verdict.decision() instanceof RetryDecision.Dead dead
						&& dead.reason() == RetryDecision.DeadReason.TERMINAL_STATUS);
		if (handBack) {
			return Mono.just(response);
		}
		return release(response).then(Mono.error(() -> new DirectCallFailedException(verdict, false)));
	}

	private static Mono<Void> release(@Nullable ClientResponse response) {
		return (response != null) ? response.releaseBody().onErrorComplete() : Mono.empty();
	}

	/**
	 * An attempt's outcome and, if it got one, the response to hand to the caller.
	 */
	private record Attempt(DeliveryOutcome outcome, @Nullable ClientResponse response) {

	}

}
