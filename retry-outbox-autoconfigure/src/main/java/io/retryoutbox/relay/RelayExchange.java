package io.retryoutbox.relay;

import java.net.URI;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.reactive.ClientHttpConnector;
import org.springframework.http.client.reactive.ClientHttpRequest;
import org.springframework.web.reactive.function.BodyInserter;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import org.springframework.web.reactive.function.client.ExchangeFunctions;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * How the relay hands a request to HTTP: through a {@link WebClient}, or straight to its
 * connector. WebClient's own pipeline (an observation, a checkpoint, a dozen operators a
 * request) serves what a builder adds to a request: filters, default headers, cookies and
 * observation. Where the builder adds none of them, the same bytes go to the same
 * connector without it, which took about a tenth of the relay's CPU a message in the
 * shared bench (docs/benchmarks.md, thirty-eighth session).
 */
public final class RelayExchange {

	private static final URI PROBE = URI.create("http://retry-outbox.invalid/probe");

	private final Sender sender;

	private final boolean throughWebClient;

	private RelayExchange(Sender sender, boolean throughWebClient) {
		this.sender = sender;
		this.throughWebClient = throughWebClient;
	}

	/**
	 * Sends every request through a web client.
	 * @param webClient the web client
	 * @return the exchange
	 */
	public static RelayExchange through(WebClient webClient) {
		return new RelayExchange((method, uri, headers, body, reader) -> {
			WebClient.RequestBodySpec request = webClient.method(method).uri(uri).headers(headers);
			return ((body != null) ? request.bodyValue(body) : request).exchangeToMono(reader);
		}, true);
	}

	/**
	 * Sends every request straight to a connector.
	 * @param connector the connector
	 * @return the exchange
	 */
	public static RelayExchange direct(ClientHttpConnector connector) {
		ExchangeFunction exchange = ExchangeFunctions.create(connector);
		return new RelayExchange((method, uri, headers, body, reader) -> {
			ClientRequest.Builder request = ClientRequest.create(method, uri).headers(headers);
			if (body != null) {
				request.body(bytes(body));
			}
			return exchange.exchange(request.build())
				.flatMap((response) -> reader.apply(response)
					.onErrorResume((ex) -> response.releaseBody().then(Mono.error(ex))));
		}, false);
	}

	/**
	 * Sends through a web client built from {@code builder} if it adds anything to a
	 * request, and otherwise straight to {@code connector}, the builder's own.
	 * @param builder the relay's builder, its connector set and customized
	 * @param connector the connector set on it
	 * @param observed whether the builder's web client is observed, which the builder
	 * does not tell
	 * @return the exchange
	 */
	public static RelayExchange of(WebClient.Builder builder, ClientHttpConnector connector, boolean observed) {
		return (observed || addsToRequests(builder)) ? through(builder.build()) : direct(connector);
	}

	/**
	 * Whether this exchange sends every request through a web client.
	 * @return {@code true} if it does, {@code false} if straight to a connector
	 */
	public boolean isThroughWebClient() {
		return this.throughWebClient;
	}

	// A probe request built by the builder's web client, caught before it is sent: a
	// default request, header or cookie shows on it; a filter, which could change any
	// request, is enough by itself.
	private static boolean addsToRequests(WebClient.Builder builder) {
		boolean[] filters = new boolean[1];
		builder.filters((list) -> filters[0] = !list.isEmpty());
		if (filters[0]) {
			return true;
		}
		AtomicReference<ClientRequest> built = new AtomicReference<>();
		builder.clone().exchangeFunction((request) -> {
			built.set(request);
			return Mono.empty();
		}).build().post().uri(PROBE).exchangeToMono((response) -> Mono.empty()).onErrorComplete().block();
		ClientRequest request = built.get();
		return request == null || !request.url().equals(PROBE) || !request.headers().isEmpty()
				|| !request.cookies().isEmpty()
				|| !request.attributes().keySet().equals(Set.of(ClientRequest.LOG_ID_ATTRIBUTE));
	}

	Mono<Void> exchange(HttpMethod method, URI uri, Consumer<HttpHeaders> headers, byte @Nullable [] body,
			Function<ClientResponse, Mono<Void>> reader) {
		return this.sender.exchange(method, uri, headers, body, reader);
	}

	// As WebClient's bodyValue writes a byte array: with its length, and no content
	// type of its own.
	private static BodyInserter<byte[], ClientHttpRequest> bytes(byte[] body) {
		return (message, context) -> {
			message.getHeaders().setContentLength(body.length);
			return message.writeWith(Mono.fromSupplier(() -> message.bufferFactory().wrap(body)));
		};
	}

	@FunctionalInterface
	private interface Sender {

		Mono<Void> exchange(HttpMethod method, URI uri, Consumer<HttpHeaders> headers, byte @Nullable [] body,
				Function<ClientResponse, Mono<Void>> reader);

	}

}
