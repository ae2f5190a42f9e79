package io.retryoutbox.relay;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import io.retryoutbox.support.DataBuffers;
import io.retryoutbox.testsupport.DestinationServer;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;

import org.springframework.core.NestedExceptionUtils;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.reactive.ClientHttpConnector;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientRequestObservationContext;
import org.springframework.web.reactive.function.client.ClientRequestObservationConvention;
import org.springframework.web.reactive.function.client.DefaultClientRequestObservationConvention;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import org.springframework.web.reactive.function.client.ExchangeFunctions;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientRequestException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.awaitility.Awaitility.await;

/**
 * The two ways the relay hands a request to HTTP send and observe the same request, and
 * the direct one is taken only where the builder adds nothing to a request and observes
 * it as the application would.
 */
class RelayExchangeTests {

	@RegisterExtension
	final DestinationServer server = new DestinationServer();

	private static final Consumer<WebClient.Builder> NOTHING = (builder) -> {
	};

	private static final ObservationRegistry UNOBSERVED = ObservationRegistry.NOOP;

	private static final ClientRequestObservationConvention CONVENTION = new DefaultClientRequestObservationConvention();

	// As Spring's connector makes its own.
	private final HttpClient client = HttpClient.create().compress(true);

	private final ClientHttpConnector connector = new ReactorClientHttpConnector(this.client);

	@Test
	void sendsAPostStraightToTheConnectorAsWebClientSendsIt() throws InterruptedException {
		byte[] body = "{\"amount\":42}".getBytes(StandardCharsets.UTF_8);
		Consumer<HttpHeaders> headers = (h) -> {
			h.set("Idempotency-Key", "k-1");
			h.set(HttpHeaders.CONTENT_TYPE, "application/json");
			h.add("X-Many", "a");
			h.add("X-Many", "b");
		};
		RecordedRequest throughWebClient = send(RelayExchange.through(WebClient.create()), HttpMethod.POST, headers,
				body);
		RecordedRequest direct = send(RelayExchange.direct(this.connector), HttpMethod.POST, headers, body);
		RecordedRequest reactorNetty = send(RelayExchange.direct(this.connector, this.client), HttpMethod.POST, headers,
				body);
		for (RecordedRequest request : List.of(direct, reactorNetty)) {
			assertThat(request.getMethod()).isEqualTo("POST");
			assertThat(request.getBody().utf8()).isEqualTo("{\"amount\":42}");
			assertThat(request.getHeaders().get("Content-Length")).isEqualTo(String.valueOf(body.length));
			assertThat(request.getHeaders().values("X-Many")).containsExactly("a", "b");
			assertThat(request.getHeaders().toMultimap()).isEqualTo(throughWebClient.getHeaders().toMultimap());
			assertThat(request.getBody()).isEqualTo(throughWebClient.getBody());
		}
	}

	@Test
	void sendsABodyWithoutAContentTypeAndAGetWithoutABodyAsWebClientSendsThem() throws InterruptedException {
		byte[] body = "raw".getBytes(StandardCharsets.UTF_8);
		Consumer<HttpHeaders> headers = (h) -> h.set("Idempotency-Key", "k-2");
		RecordedRequest untypedThroughWebClient = send(RelayExchange.through(WebClient.create()), HttpMethod.PUT,
				headers, body);
		RecordedRequest getThroughWebClient = send(RelayExchange.through(WebClient.create()), HttpMethod.GET, headers,
				null);
		RecordedRequest deleteThroughWebClient = send(RelayExchange.through(WebClient.create()), HttpMethod.DELETE,
				headers, null);
		for (RelayExchange exchange : List.of(RelayExchange.direct(this.connector),
				RelayExchange.direct(this.connector, this.client))) {
			RecordedRequest untyped = send(exchange, HttpMethod.PUT, headers, body);
			assertThat(untyped.getHeaders().get("Content-Type")).isNull();
			assertThat(untyped.getHeaders().toMultimap()).isEqualTo(untypedThroughWebClient.getHeaders().toMultimap());
			RecordedRequest get = send(exchange, HttpMethod.GET, headers, null);
			assertThat(get.getBodySize()).isZero();
			assertThat(get.getHeaders().toMultimap()).isEqualTo(getThroughWebClient.getHeaders().toMultimap());
			RecordedRequest delete = send(exchange, HttpMethod.DELETE, headers, null);
			assertThat(delete.getHeaders().toMultimap()).isEqualTo(deleteThroughWebClient.getHeaders().toMultimap());
		}
	}

	@Test
	void readsAnErrorAnswerStraightFromTheConnectorAndFromItsReactorNettyClient() {
		for (RelayExchange exchange : List.of(RelayExchange.direct(this.connector),
				RelayExchange.direct(this.connector, this.client))) {
			this.server.dispatcher()
				.enqueue(new MockResponse.Builder().code(409)
					.addHeader("Retry-After", "7")
					.body("{\"code\":\"RESOURCE_LOCKED\"}")
					.build());
			AtomicReference<String> read = new AtomicReference<>();
			exchange.exchange(HttpMethod.POST, uri(), (headers) -> {
			}, new byte[0], (response) -> DataBufferUtils.join(response.body())
				.map(DataBuffers::toBytes)
				.doOnNext((bytes) -> read.set(response.status() + " " + response.headers().getFirst("Retry-After") + " "
						+ new String(bytes, StandardCharsets.UTF_8)))
				.then()).block(Duration.ofSeconds(10));
			assertThat(read).hasValue("409 7 {\"code\":\"RESOURCE_LOCKED\"}");
		}
	}

	/**
	 * The destination's own time, which the adaptive limit is told: from the request
	 * going out to the head of its answer, without the relay's work after that, here half
	 * a second. Through the connector it is not known, and the limit is told the permit's
	 * time instead.
	 */
	@Test
	void notesTheDestinationsOwnTimeWhenItSendsStraightToItsReactorNettyClient() {
		RoundTrip direct = roundTrip(RelayExchange.direct(this.connector, this.client));
		RoundTrip throughConnector = roundTrip(RelayExchange.direct(this.connector));
		assertThat(Duration.ofNanos(direct.nanos())).isBetween(Duration.ofMillis(200), Duration.ofMillis(450));
		assertThat(throughConnector.nanos()).isEqualTo(-1);
	}

	private RoundTrip roundTrip(RelayExchange exchange) {
		this.server.dispatcher()
			.enqueue(new MockResponse.Builder().code(200).headersDelay(200, TimeUnit.MILLISECONDS).body("ok").build());
		RoundTrip roundTrip = new RoundTrip();
		exchange.exchange(HttpMethod.POST, uri(), (headers) -> {
		}, new byte[0],
				(response) -> DataBufferUtils.join(response.body()).then(Mono.delay(Duration.ofMillis(500))).then())
			.contextWrite(RoundTrip.into(roundTrip))
			.block(Duration.ofSeconds(10));
		return roundTrip;
	}

	@Test
	void failsARefusedRequestToItsReactorNettyClientAsTheConnectorFailsIt() {
		URI refused = URI.create("http://127.0.0.1:" + closedPort() + "/refused");
		Throwable direct = failure(RelayExchange.direct(this.connector), refused);
		Throwable reactorNetty = failure(RelayExchange.direct(this.connector, this.client), refused);
		assertThat(reactorNetty).isInstanceOf(WebClientRequestException.class)
			.hasMessage(direct.getMessage())
			.hasRootCauseInstanceOf(NestedExceptionUtils.getMostSpecificCause(direct).getClass());
		assertThat(((WebClientRequestException) reactorNetty).getHeaders().getFirst("Idempotency-Key"))
			.isEqualTo("k-4");
	}

	@Test
	void goesStraightToItsConnectorsReactorNettyClientOnlyWithoutFiltersOrObservation() {
		assertThat(
				RelayExchange.of(WebClient.builder(), this.connector, this.client, NOTHING).isStraightToReactorNetty())
			.isTrue();
		assertThat(RelayExchange.of(WebClient.builder(), this.connector, NOTHING).isStraightToReactorNetty()).isFalse();
		assertThat(RelayExchange.of(WebClient.builder().filter(order("first")), this.connector, this.client, NOTHING)
			.isStraightToReactorNetty()).isFalse();
		assertThat(RelayExchange
			.of(WebClient.builder(), this.connector, this.client, NOTHING, new Observations().registry, CONVENTION)
			.isStraightToReactorNetty()).isFalse();
		assertThat(RelayExchange.of(WebClient.builder(), this.connector, this.client, NOTHING, UNOBSERVED, CONVENTION)
			.isStraightToReactorNetty()).isTrue();
		assertThat(RelayExchange
			.of(WebClient.builder().defaultHeader("X-Tenant", "t-1"), this.connector, this.client, NOTHING)
			.isStraightToReactorNetty()).isFalse();
	}

	private static Throwable failure(RelayExchange exchange, URI uri) {
		AtomicReference<Throwable> failure = new AtomicReference<>();
		exchange
			.exchange(HttpMethod.POST, uri, (h) -> h.set("Idempotency-Key", "k-4"), new byte[0],
					(response) -> response.releaseBody())
			.onErrorResume((ex) -> {
				failure.set(ex);
				return Mono.empty();
			})
			.block(Duration.ofSeconds(10));
		assertThat(failure.get()).as("the exchange's failure").isNotNull();
		return failure.get();
	}

	@Test
	void goesStraightToTheConnectorWhenTheBuilderAddsNothingToARequest() {
		assertThat(RelayExchange.of(WebClient.builder(), this.connector, NOTHING).isThroughWebClient()).isFalse();
	}

	@Test
	void goesThroughWebClientWhenTheBuilderHasADefaultHeader() {
		WebClient.Builder builder = WebClient.builder().defaultHeader("X-Tenant", "t-1");
		assertThat(RelayExchange.of(builder, this.connector, NOTHING).isThroughWebClient()).isTrue();
	}

	@Test
	void goesThroughWebClientWhenTheBuilderHasADefaultCookie() {
		WebClient.Builder builder = WebClient.builder().defaultCookie("session", "s-1");
		assertThat(RelayExchange.of(builder, this.connector, NOTHING).isThroughWebClient()).isTrue();
	}

	@Test
	void goesThroughWebClientWhenTheBuilderHasADefaultRequest() {
		WebClient.Builder builder = WebClient.builder().defaultRequest((request) -> request.attribute("tenant", "t-1"));
		assertThat(RelayExchange.of(builder, this.connector, NOTHING).isThroughWebClient()).isTrue();
	}

	@Test
	void goesThroughWebClientWhenACustomizerSetsAConnectorOfItsOwn() {
		ClientHttpConnector own = new ReactorClientHttpConnector();
		RelayExchange exchange = RelayExchange.of(WebClient.builder(), this.connector,
				(builder) -> builder.clientConnector(own));
		assertThat(exchange.isThroughWebClient()).isTrue();
	}

	@Test
	void goesThroughWebClientWhenACustomizerSetsAnExchangeFunctionOfItsOwn() {
		ExchangeFunction own = ExchangeFunctions.create(new ReactorClientHttpConnector());
		RelayExchange exchange = RelayExchange.of(WebClient.builder(), this.connector,
				(builder) -> builder.exchangeFunction(own));
		assertThat(exchange.isThroughWebClient()).isTrue();
	}

	@Test
	void goesThroughWebClientWhenItsBuilderIsObservedAndTheRelayIsNotToldHow() {
		WebClient.Builder builder = WebClient.builder().observationRegistry(new Observations().registry);
		assertThat(RelayExchange.of(builder, this.connector, NOTHING).isThroughWebClient()).isTrue();
	}

	@Test
	void goesStraightToTheConnectorWhenItsBuildersRegistryHasNoHandler() {
		WebClient.Builder builder = WebClient.builder().observationRegistry(ObservationRegistry.create());
		assertThat(RelayExchange.of(builder, this.connector, NOTHING).isThroughWebClient()).isFalse();
	}

	@Test
	void goesStraightToTheConnectorWhenTheApplicationObservesItsWebClients() {
		Observations observations = new Observations();
		assertThat(RelayExchange.of(WebClient.builder(), this.connector, NOTHING, observations.registry, CONVENTION)
			.isThroughWebClient()).isFalse();
	}

	@Test
	void leavesNoObservationOfItsProbeInTheApplicationsRegistry() {
		Observations observations = new Observations();
		RelayExchange.of(WebClient.builder().observationRegistry(observations.registry), this.connector, NOTHING,
				observations.registry, CONVENTION);
		RelayExchange.of(WebClient.builder().defaultHeader("X-Tenant", "t-1"), this.connector, NOTHING,
				observations.registry, CONVENTION);
		assertThat(observations.started).isZero();
	}

	@Test
	void goesThroughWebClientWhenACustomizerSetsARegistryOfItsOwn() {
		Observations own = new Observations();
		RelayExchange exchange = RelayExchange.of(WebClient.builder(), this.connector,
				(builder) -> builder.observationRegistry(own.registry), new Observations().registry, CONVENTION);
		assertThat(exchange.isThroughWebClient()).isTrue();
	}

	@Test
	void goesThroughWebClientWhenACustomizerSetsAConventionOfItsOwn() {
		RelayExchange exchange = RelayExchange.of(WebClient.builder(), this.connector,
				(builder) -> builder.observationConvention(new DefaultClientRequestObservationConvention("own")),
				new Observations().registry, CONVENTION);
		assertThat(exchange.isThroughWebClient()).isTrue();
	}

	@Test
	void goesThroughWebClientWhenTheApplicationsConventionIsNotSpringsDefault() {
		ClientRequestObservationConvention own = new DefaultClientRequestObservationConvention() {
		};
		assertThat(RelayExchange.of(WebClient.builder(), this.connector, NOTHING, new Observations().registry, own)
			.isThroughWebClient()).isTrue();
		assertThat(RelayExchange.of(WebClient.builder(), this.connector, NOTHING, UNOBSERVED, own).isThroughWebClient())
			.isFalse();
	}

	@Test
	void observesThroughWebClientWithTheApplicationsRegistryAndConvention() throws InterruptedException {
		Observations observations = new Observations();
		RelayExchange exchange = RelayExchange.of(WebClient.builder().defaultHeader("X-Tenant", "t-1"), this.connector,
				NOTHING, observations.registry, new DefaultClientRequestObservationConvention("named"));
		assertThat(exchange.isThroughWebClient()).isTrue();
		send(exchange, HttpMethod.POST, (h) -> {
		}, new byte[0]);
		assertThat(observations.stopped(1)).extracting(Observation.Context::getName).containsExactly("named");
	}

	@Test
	void observesARequestStraightToTheConnectorAsWebClientObservesIt() throws InterruptedException {
		Observations direct = new Observations();
		Observations throughWebClient = new Observations();
		RelayExchange exchange = RelayExchange.of(WebClient.builder(), this.connector, NOTHING, direct.registry,
				CONVENTION);
		assertThat(exchange.isThroughWebClient()).isFalse();
		RelayExchange webClient = RelayExchange.through(WebClient.builder()
			.clientConnector(this.connector)
			.observationRegistry(throughWebClient.registry)
			.observationConvention(CONVENTION)
			.build());
		Observation parent = Observation.start("attempt", direct.registry);
		Observation webClientParent = Observation.start("attempt", throughWebClient.registry);
		this.server.dispatcher().enqueue(new MockResponse.Builder().code(503).build());
		send(exchange, parent);
		this.server.dispatcher().enqueue(new MockResponse.Builder().code(503).build());
		send(webClient, webClientParent);
		RecordedRequest directRequest = send(exchange, parent);
		RecordedRequest webClientRequest = send(webClient, webClientParent);
		assertThat(directRequest.getHeaders().get("X-Trace")).isEqualTo("t-1");
		assertThat(directRequest.getHeaders().toMultimap()).isEqualTo(webClientRequest.getHeaders().toMultimap());
		URI refused = URI.create("http://127.0.0.1:" + closedPort() + "/charges");
		sendRefused(exchange, refused);
		sendRefused(webClient, refused);
		List<Observation.Context> observed = direct.stopped(3);
		List<Observation.Context> expected = throughWebClient.stopped(3);
		for (int i = 0; i < 3; i++) {
			assertThat(describe(observed.get(i))).isEqualTo(describe(expected.get(i)));
		}
		assertThat(observed.get(0).getParentObservation()).isSameAs(parent);
		assertThat(expected.get(0).getParentObservation()).isSameAs(webClientParent);
		assertThat(describe(observed.get(0))).contains("status=503", "outcome=SERVER_ERROR");
		assertThat(describe(observed.get(1))).contains("status=200", "outcome=SUCCESS");
		assertThat(describe(observed.get(2))).contains("status=CLIENT_ERROR", "exception=WebClientRequestException");
	}

	@Test
	void goesStraightToTheConnectorThroughTheBuildersFilters() throws InterruptedException {
		WebClient.Builder builder = WebClient.builder()
			.clientConnector(this.connector)
			.filter((request, next) -> next
				.exchange(ClientRequest.from(request).headers((h) -> h.setBearerAuth("token-1")).build()));
		RelayExchange exchange = RelayExchange.of(builder, this.connector, NOTHING);
		assertThat(exchange.isThroughWebClient()).isFalse();
		RecordedRequest request = send(exchange, HttpMethod.POST, (h) -> {
		}, new byte[0]);
		assertThat(request.getHeaders().get("Authorization")).isEqualTo("Bearer token-1");
	}

	@Test
	void appliesTheBuildersFiltersInTheOrderWebClientAppliesThem() throws InterruptedException {
		WebClient.Builder builder = WebClient.builder()
			.clientConnector(this.connector)
			.filter(order("first"))
			.filter(order("second"));
		RecordedRequest direct = send(RelayExchange.of(builder, this.connector, NOTHING), HttpMethod.POST, (h) -> {
		}, new byte[0]);
		RecordedRequest throughWebClient = send(RelayExchange.through(builder.build()), HttpMethod.POST, (h) -> {
		}, new byte[0]);
		assertThat(direct.getHeaders().values("X-Order")).containsExactly("first", "second")
			.isEqualTo(throughWebClient.getHeaders().values("X-Order"));
	}

	private RecordedRequest send(RelayExchange exchange, Observation parent) throws InterruptedException {
		exchange
			.exchange(HttpMethod.POST, uri(), (h) -> h.set("Idempotency-Key", "k-3"), new byte[0],
					(response) -> response.releaseBody())
			.contextWrite((context) -> context.put(ObservationThreadLocalAccessor.KEY, parent))
			.block(Duration.ofSeconds(10));
		RecordedRequest request = this.server.server().takeRequest(10, TimeUnit.SECONDS);
		assertThat(request).as("a request within 10 s").isNotNull();
		return request;
	}

	private static void sendRefused(RelayExchange exchange, URI uri) {
		assertThatException().isThrownBy(() -> exchange.exchange(HttpMethod.POST, uri, (h) -> {
		}, new byte[0], (response) -> response.releaseBody()).block(Duration.ofSeconds(10)));
	}

	private static int closedPort() {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static String describe(Observation.Context context) {
		return context.getName() + " " + context.getContextualName() + " " + context.getLowCardinalityKeyValues() + " "
				+ context.getHighCardinalityKeyValues() + " " + context.getError();
	}

	private static ExchangeFilterFunction order(String name) {
		return (request, next) -> next.exchange(ClientRequest.from(request).header("X-Order", name).build());
	}

	private RecordedRequest send(RelayExchange exchange, HttpMethod method, Consumer<HttpHeaders> headers,
			byte @Nullable [] body) throws InterruptedException {
		exchange.exchange(method, uri(), headers, body, (response) -> response.releaseBody())
			.block(Duration.ofSeconds(10));
		RecordedRequest request = this.server.server().takeRequest(10, TimeUnit.SECONDS);
		assertThat(request).as("a request within 10 s").isNotNull();
		return request;
	}

	/**
	 * A registry whose handler notes the observations it started and stopped, and sets a
	 * header on each request as a tracing handler sets its trace context.
	 */
	private static final class Observations implements ObservationHandler<Observation.Context> {

		final ObservationRegistry registry = ObservationRegistry.create();

		final List<Observation.Context> stopped = new CopyOnWriteArrayList<>();

		volatile int started;

		Observations() {
			this.registry.observationConfig().observationHandler(this);
		}

		@Override
		public void onStart(Observation.Context context) {
			this.started++;
			if (context instanceof ClientRequestObservationContext client) {
				client.getSetter().set(client.getCarrier(), "X-Trace", "t-1");
			}
		}

		@Override
		public void onStop(Observation.Context context) {
			if (context instanceof ClientRequestObservationContext) {
				this.stopped.add(context);
			}
		}

		@Override
		public boolean supportsContext(Observation.Context context) {
			return true;
		}

		List<Observation.Context> stopped(int count) {
			await().atMost(Duration.ofSeconds(10)).until(() -> this.stopped.size() >= count);
			return this.stopped;
		}

	}

	private URI uri() {
		return this.server.server().url("/charges").uri();
	}

}
