package io.retryoutbox.relay;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
import org.springframework.http.client.reactive.ClientHttpResponse;
import org.springframework.web.reactive.function.BodyInserter;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import org.springframework.web.reactive.function.client.ExchangeFunctions;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * How the relay hands a request to HTTP: through a {@link WebClient}, or straight to its
 * connector through its builder's filters. WebClient's own pipeline (an observation, a
 * checkpoint, a dozen operators a request) serves what a builder adds to a request
 * besides its filters: default headers, cookies, a default request, and observation.
 * Where the builder adds none of them and keeps the relay's connector, the same bytes go
 * to the same connector without it, which took about a tenth of the relay's CPU a message
 * in the shared bench (docs/benchmarks.md, thirty-eighth session).
 */
public final class RelayExchange {

	private static final URI PROBE = URI.create("http://retry-outbox.invalid/probe");

	private static final Duration PROBE_WAIT = Duration.ofSeconds(1);

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
		return direct(connector, List.of());
	}

	private static RelayExchange direct(ClientHttpConnector connector, List<ExchangeFilterFunction> filters) {
		ExchangeFunction unfiltered = ExchangeFunctions.create(connector);
		// As WebClient applies its builder's filters: the first one outermost.
		ExchangeFunction exchange = filters.stream()
			.reduce(ExchangeFilterFunction::andThen)
			.map((filter) -> filter.apply(unfiltered))
			.orElse(unfiltered);
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
	 * Sets {@code connector} on {@code builder}, has {@code customizer} customize it, and
	 * sends through a web client built from it if it is observed, adds anything to a
	 * request other than by its filters, or no longer sends with {@code connector}; and
	 * otherwise straight to {@code connector}, through the builder's filters.
	 * @param builder the relay's builder
	 * @param connector the relay's connector
	 * @param customizer customizes the builder once its connector is set
	 * @param observed whether the builder's web client is observed, which the builder
	 * does not tell
	 * @return the exchange
	 */
	public static RelayExchange of(WebClient.Builder builder, ClientHttpConnector connector,
			Consumer<WebClient.Builder> customizer, boolean observed) {
		ProbedConnector probed = new ProbedConnector(connector);
		customizer.accept(builder.clientConnector(probed));
		if (observed || addsToRequestsOrSendsElsewhere(builder, probed)) {
			return through(builder.build());
		}
		List<ExchangeFilterFunction> filters = new ArrayList<>();
		builder.filters(filters::addAll);
		return direct(connector, filters);
	}

	/**
	 * Whether this exchange sends every request through a web client.
	 * @return {@code true} if it does, {@code false} if straight to a connector
	 */
	public boolean isThroughWebClient() {
		return this.throughWebClient;
	}

	// One probe request through the builder's web client, its filters replaced by one
	// that notes the request as built: a default request, header or cookie shows on it.
	// It then goes on to the relay's connector, which answers it itself, unless a
	// customizer set a connector or an exchange function of its own; that one may try
	// the reserved .invalid host, and only whether the relay's was reached at once
	// matters.
	private static boolean addsToRequestsOrSendsElsewhere(WebClient.Builder builder, ProbedConnector probed) {
		AtomicReference<ClientRequest> built = new AtomicReference<>();
		builder.clone().filters((filters) -> {
			filters.clear();
			filters.add((request, next) -> {
				built.set(request);
				return next.exchange(request);
			});
		})
			.build()
			.post()
			.uri(PROBE)
			.exchangeToMono((response) -> Mono.empty())
			.timeout(PROBE_WAIT)
			.onErrorComplete()
			.block();
		ClientRequest request = built.get();
		return request == null || !request.url().equals(PROBE) || !request.headers().isEmpty()
				|| !request.cookies().isEmpty()
				|| !request.attributes().keySet().equals(Set.of(ClientRequest.LOG_ID_ATTRIBUTE)) || !probed.probed;
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

	/**
	 * The relay's connector, set on its builder before the customizers, that answers the
	 * probe itself instead of sending it.
	 */
	private static final class ProbedConnector implements ClientHttpConnector {

		private final ClientHttpConnector connector;

		private volatile boolean probed;

		ProbedConnector(ClientHttpConnector connector) {
			this.connector = connector;
		}

		@Override
		public Mono<ClientHttpResponse> connect(HttpMethod method, URI uri,
				Function<? super ClientHttpRequest, Mono<Void>> requestCallback) {
			if (uri == PROBE) {
				this.probed = true;
				return Mono.error(new IllegalStateException("The relay's probe is not sent"));
			}
			return this.connector.connect(method, uri, requestCallback);
		}

	}

}
