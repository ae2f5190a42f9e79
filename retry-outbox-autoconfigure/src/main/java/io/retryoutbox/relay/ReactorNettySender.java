package io.retryoutbox.relay;

import java.net.URI;
import java.util.function.Consumer;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.support.Netty4HeadersAdapter;
import org.springframework.web.reactive.function.client.WebClientRequestException;

/**
 * Sends a request to a Reactor Netty client itself, as Spring's connector and exchange
 * would send it: the headers written straight into Netty's, a body with its length, and a
 * failure before the answer wrapped as the exchange wraps it. In the shared bench the
 * relay's event loops took 338 microseconds a message through Spring's exchange, 40 of
 * them in its adapters, against 184 for a relay that used the client itself, and its
 * attempts to a sink that answers in 20 ms took 58-67 ms at the median against 37-39 ms
 * once they went this way (docs/benchmarks.md, fortieth session).
 */
final class ReactorNettySender implements RelayExchange.Sender {

	private final HttpClient client;

	ReactorNettySender(HttpClient client) {
		this.client = client;
	}

	// The headers as they were sent, or as they would have been if it failed before.
	private static HttpHeaders requested(HttpHeaders sent, Consumer<HttpHeaders> headers) {
		if (sent != HttpHeaders.EMPTY) {
			return sent;
		}
		HttpHeaders requested = new HttpHeaders();
		headers.accept(requested);
		return requested;
	}

	@Override
	public Mono<Void> exchange(HttpMethod method, URI uri, Consumer<HttpHeaders> headers, byte @Nullable [] body,
			Function<RelayResponse, Mono<Void>> reader) {
		return Mono.deferContextual((context) -> {
			// Written on the event loop before the failure or the answer that reads them.
			HttpHeaders[] sent = { HttpHeaders.EMPTY };
			boolean[] answered = new boolean[1];
			RoundTrip roundTrip = RoundTrip.in(context);
			return this.client.request(io.netty.handler.codec.http.HttpMethod.valueOf(method.name()))
				.uri(uri)
				.send((request, outbound) -> {
					if (roundTrip != null) {
						roundTrip.sent();
					}
					HttpHeaders written = new HttpHeaders(new Netty4HeadersAdapter(request.requestHeaders()));
					headers.accept(written);
					sent[0] = written;
					if (body == null) {
						return outbound;
					}
					written.setContentLength(body.length);
					return outbound.sendByteArray(Mono.just(body));
				})
				.responseConnection((response, connection) -> {
					if (roundTrip != null) {
						roundTrip.answered();
					}
					answered[0] = true;
					return reader.apply(RelayResponse.of(response, connection));
				})
				.then()
				.onErrorMap((ex) -> !answered[0] && !(ex instanceof WebClientRequestException),
						(ex) -> new WebClientRequestException(ex, method, uri, requested(sent[0], headers)));
		});
	}

}
