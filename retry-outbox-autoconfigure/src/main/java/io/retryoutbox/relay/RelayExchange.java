package io.retryoutbox.relay;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Function;

import io.micrometer.common.KeyValues;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.reactive.ClientHttpConnector;
import org.springframework.http.client.reactive.ClientHttpRequest;
import org.springframework.http.client.reactive.ClientHttpResponse;
import org.springframework.web.reactive.function.BodyInserter;
import org.springframework.web.reactive.function.client.ClientHttpObservationDocumentation;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientRequestObservationContext;
import org.springframework.web.reactive.function.client.ClientRequestObservationConvention;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.DefaultClientRequestObservationConvention;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import org.springframework.web.reactive.function.client.ExchangeFunctions;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * How the relay hands a request to HTTP: through a {@link WebClient}, or straight to its
 * connector through its builder's filters. WebClient's own pipeline (a checkpoint and a
 * dozen operators a request) serves what a builder adds to a request besides its filters
 * and its observation: default headers, cookies, a default request. Where the builder
 * adds none of them and keeps the relay's connector, the same bytes go to the same
 * connector without it, observed as WebClient observes them, which took about a tenth of
 * the relay's CPU a message in the shared bench (docs/benchmarks.md, thirty-eighth
 * session). Where, besides, nothing observes the request and the builder has no filters,
 * and the connector's Reactor Netty client is known, the request goes to that client
 * itself, without Spring's exchange: in the shared bench that cut the time of an attempt
 * to a sink that answers in 20 ms by about two fifths, as the event loops no longer ran
 * Spring's request and response adapters (docs/benchmarks.md, fortieth session).
 */
public final class RelayExchange {

	private static final URI PROBE = URI.create("http://retry-outbox.invalid/probe");

	private static final Duration PROBE_WAIT = Duration.ofSeconds(1);

	private static final ClientRequestObservationConvention DEFAULT_CONVENTION = new DefaultClientRequestObservationConvention();

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
			return ((body != null) ? request.bodyValue(body) : request)
				.exchangeToMono((response) -> reader.apply(RelayResponse.of(response)));
		}, true);
	}

	/**
	 * Sends every request straight to a connector, unobserved.
	 * @param connector the connector
	 * @return the exchange
	 */
	public static RelayExchange direct(ClientHttpConnector connector) {
		return direct(connector, null, List.of(), ObservationRegistry.NOOP, DEFAULT_CONVENTION);
	}

	/**
	 * Sends every request straight to a connector's Reactor Netty client, unobserved.
	 * @param connector the connector
	 * @param client the Reactor Netty client that {@code connector} sends through
	 * @return the exchange
	 */
	public static RelayExchange direct(ClientHttpConnector connector, HttpClient client) {
		return direct(connector, client, List.of(), ObservationRegistry.NOOP, DEFAULT_CONVENTION);
	}

	private static RelayExchange direct(ClientHttpConnector connector, @Nullable HttpClient client,
			List<ExchangeFilterFunction> filters, ObservationRegistry registry,
			ClientRequestObservationConvention convention) {
		if (client != null && filters.isEmpty() && registry.isNoop()) {
			return new RelayExchange(new ReactorNettySender(client), false);
		}
		ExchangeFunction unfiltered = ExchangeFunctions.create(connector);
		// As WebClient applies its builder's filters: the first one outermost.
		@Nullable ExchangeFilterFunction filter = filters.stream().reduce(ExchangeFilterFunction::andThen).orElse(null);
		if (registry.isNoop()) {
			ExchangeFunction exchange = (filter != null) ? filter.apply(unfiltered) : unfiltered;
			return new RelayExchange(
					(method, uri, headers, body,
							reader) -> read(exchange.exchange(request(method, uri, headers, body).build()), reader),
					false);
		}
		return new RelayExchange((method, uri, headers, body, reader) -> read(
				observed(unfiltered, filter, registry, convention, request(method, uri, headers, body)), reader),
				false);
	}

	// As WebClient observes an exchange: started before the request is built, so that
	// a propagating handler's headers are on it, with the attempt's observation as its
	// parent, the response noted beneath the filters, and stopped once the response has
	// arrived or the exchange failed or was cancelled.
	private static Mono<ClientResponse> observed(ExchangeFunction unfiltered, @Nullable ExchangeFilterFunction filter,
			ObservationRegistry registry, ClientRequestObservationConvention convention,
			ClientRequest.Builder builder) {
		return Mono.deferContextual((reactorContext) -> {
			ClientRequestObservationContext context = new ClientRequestObservationContext(builder);
			Observation observation = ClientHttpObservationDocumentation.HTTP_REACTIVE_CLIENT_EXCHANGES
				.observation(convention, DEFAULT_CONVENTION, () -> context, registry)
				.parentObservation(reactorContext.getOrDefault(ObservationThreadLocalAccessor.KEY, null))
				.start();
			ClientRequest request = builder.build();
			context.setRequest(request);
			ExchangeFilterFunction noteResponse = (filtered, next) -> next.exchange(filtered)
				.doOnNext(context::setResponse);
			ExchangeFunction exchange = ((filter != null) ? filter.andThen(noteResponse) : noteResponse)
				.apply(unfiltered);
			return exchange.exchange(request)
				.doOnError(observation::error)
				.doFinally((signal) -> observation.stop())
				.contextWrite((written) -> written.put(ObservationThreadLocalAccessor.KEY, observation));
		});
	}

	private static ClientRequest.Builder request(HttpMethod method, URI uri, Consumer<HttpHeaders> headers,
			byte @Nullable [] body) {
		ClientRequest.Builder request = ClientRequest.create(method, uri).headers(headers);
		if (body != null) {
			request.body(bytes(body));
		}
		return request;
	}

	private static Mono<Void> read(Mono<ClientResponse> exchange, Function<RelayResponse, Mono<Void>> reader) {
		return exchange.flatMap((response) -> reader.apply(RelayResponse.of(response))
			.onErrorResume((ex) -> response.releaseBody().then(Mono.error(ex))));
	}

	/**
	 * Sets {@code connector} on {@code builder}, has {@code customizer} customize it, and
	 * sends straight to {@code connector}, through the builder's filters, if the builder
	 * adds nothing else to a request, the customizer kept the connector, and the
	 * builder's web client is not observed; otherwise through a web client built from the
	 * builder.
	 * @param builder the relay's builder
	 * @param connector the relay's connector
	 * @param customizer customizes the builder once its connector is set
	 * @return the exchange
	 */
	public static RelayExchange of(WebClient.Builder builder, ClientHttpConnector connector,
			Consumer<WebClient.Builder> customizer) {
		return of(builder, connector, null, customizer);
	}

	/**
	 * As {@link #of(WebClient.Builder, ClientHttpConnector, Consumer)}, and where the
	 * builder has no filters either, sends straight to {@code client}.
	 * @param builder the relay's builder
	 * @param connector the relay's connector
	 * @param client the Reactor Netty client that {@code connector} sends through, or
	 * {@code null} if it is not known
	 * @param customizer customizes the builder once its connector is set
	 * @return the exchange
	 */
	public static RelayExchange of(WebClient.Builder builder, ClientHttpConnector connector,
			@Nullable HttpClient client, Consumer<WebClient.Builder> customizer) {
		Probe probe = new Probe(connector);
		customizer.accept(builder.clientConnector(probe.connector));
		probe.send(builder);
		if (!probe.addsNothing() || probe.observed()) {
			return through(builder.build());
		}
		return direct(connector, client, filters(builder), ObservationRegistry.NOOP, DEFAULT_CONVENTION);
	}

	/**
	 * Sets {@code connector}, {@code registry} and {@code convention} on {@code builder},
	 * has {@code customizer} customize it, and sends straight to {@code connector},
	 * through the builder's filters and observed as {@link WebClient} observes a request,
	 * if the builder adds nothing else to a request, the customizer kept the connector,
	 * the registry and the convention, and the convention is Spring's default; otherwise
	 * through a web client built from the builder. A convention of its own may read
	 * whether a request was aborted, which only WebClient can mark.
	 * @param builder the relay's builder
	 * @param connector the relay's connector
	 * @param customizer customizes the builder once its connector and observation are set
	 * @param registry where the relay's requests are observed
	 * @param convention how they are observed
	 * @return the exchange
	 */
	public static RelayExchange of(WebClient.Builder builder, ClientHttpConnector connector,
			Consumer<WebClient.Builder> customizer, ObservationRegistry registry,
			ClientRequestObservationConvention convention) {
		return of(builder, connector, null, customizer, registry, convention);
	}

	/**
	 * As
	 * {@link #of(WebClient.Builder, ClientHttpConnector, Consumer, ObservationRegistry, ClientRequestObservationConvention)},
	 * and where the builder has no filters either and {@code registry} observes nothing,
	 * sends straight to {@code client}.
	 * @param builder the relay's builder
	 * @param connector the relay's connector
	 * @param client the Reactor Netty client that {@code connector} sends through, or
	 * {@code null} if it is not known
	 * @param customizer customizes the builder once its connector and observation are set
	 * @param registry where the relay's requests are observed
	 * @param convention how they are observed
	 * @return the exchange
	 */
	public static RelayExchange of(WebClient.Builder builder, ClientHttpConnector connector,
			@Nullable HttpClient client, Consumer<WebClient.Builder> customizer, ObservationRegistry registry,
			ClientRequestObservationConvention convention) {
		Probe probe = new Probe(connector);
		// Stand-ins for the registry and convention that note whether the probe's
		// observation reached them: its observation goes to a registry of its own, not
		// the application's.
		ProbedHandler handler = new ProbedHandler();
		ObservationRegistry probeRegistry = ObservationRegistry.create();
		probeRegistry.observationConfig().observationHandler(handler);
		ProbedConvention probeConvention = new ProbedConvention(convention);
		customizer.accept(builder.clientConnector(probe.connector)
			.observationRegistry(probeRegistry)
			.observationConvention(probeConvention));
		probe.send(builder);
		boolean registryKept = handler.started;
		boolean conventionKept = probeConvention.consulted;
		if (registryKept) {
			builder.observationRegistry(registry);
		}
		// A convention the probe did not consult stays: a customizer's own, or the
		// relay's stand-in behind a customizer's registry without handlers.
		if (conventionKept) {
			builder.observationConvention(convention);
		}
		if (!probe.addsNothing() || !registryKept || !conventionKept
				|| (!registry.isNoop() && convention.getClass() != DefaultClientRequestObservationConvention.class)) {
			return through(builder.build());
		}
		return direct(connector, client, filters(builder), registry, convention);
	}

	private static List<ExchangeFilterFunction> filters(WebClient.Builder builder) {
		List<ExchangeFilterFunction> filters = new ArrayList<>();
		builder.filters(filters::addAll);
		return filters;
	}

	/**
	 * Whether this exchange sends every request through a web client.
	 * @return {@code true} if it does, {@code false} if straight to a connector
	 */
	public boolean isThroughWebClient() {
		return this.throughWebClient;
	}

	/**
	 * Whether this exchange sends every request straight to a Reactor Netty client.
	 * @return {@code true} if it does
	 */
	public boolean isStraightToReactorNetty() {
		return this.sender instanceof ReactorNettySender;
	}

	Mono<Void> exchange(HttpMethod method, URI uri, Consumer<HttpHeaders> headers, byte @Nullable [] body,
			Function<RelayResponse, Mono<Void>> reader) {
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
	interface Sender {

		Mono<Void> exchange(HttpMethod method, URI uri, Consumer<HttpHeaders> headers, byte @Nullable [] body,
				Function<RelayResponse, Mono<Void>> reader);

	}

	/**
	 * One request through the builder's web client, its filters replaced by one that
	 * notes the request as built, where a default request, header or cookie shows, and
	 * the observation it is made in. It then goes on to the relay's connector, which
	 * answers it itself, unless a customizer set a connector or an exchange function of
	 * its own; that one may try the reserved .invalid host, and only whether the relay's
	 * was reached at once matters.
	 */
	private static final class Probe {

		private final ProbedConnector connector;

		private final AtomicReference<ClientRequest> built = new AtomicReference<>();

		private final AtomicReference<Observation> observation = new AtomicReference<>();

		Probe(ClientHttpConnector connector) {
			this.connector = new ProbedConnector(connector);
		}

		void send(WebClient.Builder builder) {
			builder.clone().filters((filters) -> {
				filters.clear();
				filters.add((request, next) -> Mono.deferContextual((context) -> {
					this.built.set(request);
					this.observation.set(context.getOrDefault(ObservationThreadLocalAccessor.KEY, null));
					return next.exchange(request);
				}));
			})
				.build()
				.post()
				.uri(PROBE)
				.exchangeToMono((response) -> Mono.empty())
				.timeout(PROBE_WAIT)
				.onErrorComplete()
				.block();
		}

		boolean addsNothing() {
			ClientRequest request = this.built.get();
			return request != null && request.url().equals(PROBE) && request.headers().isEmpty()
					&& request.cookies().isEmpty()
					&& request.attributes().keySet().equals(Set.of(ClientRequest.LOG_ID_ATTRIBUTE))
					&& this.connector.probed;
		}

		boolean observed() {
			Observation observation = this.observation.get();
			return observation != null && !observation.isNoop();
		}

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

	/**
	 * The only handler of the probe's registry, which notes that an observation started.
	 */
	private static final class ProbedHandler implements ObservationHandler<Observation.Context> {

		private volatile boolean started;

		@Override
		public void onStart(Observation.Context context) {
			this.started = true;
		}

		@Override
		public boolean supportsContext(Observation.Context context) {
			return true;
		}

	}

	/**
	 * The relay's convention, set on its builder before the customizers, which notes that
	 * an observation consulted it.
	 */
	private static final class ProbedConvention implements ClientRequestObservationConvention {

		private final ClientRequestObservationConvention convention;

		private volatile boolean consulted;

		ProbedConvention(ClientRequestObservationConvention convention) {
			this.convention = convention;
		}

		@Override
		public boolean supportsContext(Observation.Context context) {
			this.consulted = true;
			return this.convention.supportsContext(context);
		}

		@Override
		public String getName() {
			return this.convention.getName();
		}

		@Override
		public @Nullable String getContextualName(ClientRequestObservationContext context) {
			return this.convention.getContextualName(context);
		}

		@Override
		public KeyValues getLowCardinalityKeyValues(ClientRequestObservationContext context) {
			return this.convention.getLowCardinalityKeyValues(context);
		}

		@Override
		public KeyValues getHighCardinalityKeyValues(ClientRequestObservationContext context) {
			return this.convention.getHighCardinalityKeyValues(context);
		}

	}

}
