package io.retryoutbox.relay;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import io.retryoutbox.testsupport.DestinationServer;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.reactive.ClientHttpConnector;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import org.springframework.web.reactive.function.client.ExchangeFunctions;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The two ways the relay hands a request to HTTP send the same request, and the direct
 * one is taken only where the builder adds nothing to a request.
 */
class RelayExchangeTests {

	@RegisterExtension
	final DestinationServer server = new DestinationServer();

	private static final Consumer<WebClient.Builder> NOTHING = (builder) -> {
	};

	private final ClientHttpConnector connector = new ReactorClientHttpConnector();

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
		assertThat(direct.getMethod()).isEqualTo("POST");
		assertThat(direct.getBody().utf8()).isEqualTo("{\"amount\":42}");
		assertThat(direct.getHeaders().get("Content-Length")).isEqualTo(String.valueOf(body.length));
		assertThat(direct.getHeaders().values("X-Many")).containsExactly("a", "b");
		assertThat(direct.getHeaders().toMultimap()).isEqualTo(throughWebClient.getHeaders().toMultimap());
		assertThat(direct.getBody()).isEqualTo(throughWebClient.getBody());
	}

	@Test
	void sendsABodyWithoutAContentTypeAndAGetWithoutABodyAsWebClientSendsThem() throws InterruptedException {
		byte[] body = "raw".getBytes(StandardCharsets.UTF_8);
		Consumer<HttpHeaders> headers = (h) -> h.set("Idempotency-Key", "k-2");
		RecordedRequest untypedThroughWebClient = send(RelayExchange.through(WebClient.create()), HttpMethod.PUT,
				headers, body);
		RecordedRequest untypedDirect = send(RelayExchange.direct(this.connector), HttpMethod.PUT, headers, body);
		assertThat(untypedDirect.getHeaders().get("Content-Type")).isNull();
		assertThat(untypedDirect.getHeaders().toMultimap())
			.isEqualTo(untypedThroughWebClient.getHeaders().toMultimap());
		RecordedRequest getThroughWebClient = send(RelayExchange.through(WebClient.create()), HttpMethod.GET, headers,
				null);
		RecordedRequest getDirect = send(RelayExchange.direct(this.connector), HttpMethod.GET, headers, null);
		assertThat(getDirect.getBodySize()).isZero();
		assertThat(getDirect.getHeaders().toMultimap()).isEqualTo(getThroughWebClient.getHeaders().toMultimap());
	}

	@Test
	void readsAnErrorAnswerStraightFromTheConnector() {
		this.server.dispatcher()
			.enqueue(new MockResponse.Builder().code(409).body("{\"code\":\"RESOURCE_LOCKED\"}").build());
		AtomicReference<String> read = new AtomicReference<>();
		RelayExchange.direct(this.connector).exchange(HttpMethod.POST, uri(), (headers) -> {
		}, new byte[0],
				(response) -> response.bodyToMono(String.class)
					.doOnNext((text) -> read.set(response.statusCode().value() + " " + text))
					.then())
			.block(Duration.ofSeconds(10));
		assertThat(read).hasValue("409 {\"code\":\"RESOURCE_LOCKED\"}");
	}

	@Test
	void goesStraightToTheConnectorWhenTheBuilderAddsNothingToARequest() {
		assertThat(RelayExchange.of(WebClient.builder(), this.connector, NOTHING, false).isThroughWebClient())
			.isFalse();
	}

	@Test
	void goesThroughWebClientWhenTheBuilderHasADefaultHeader() {
		WebClient.Builder builder = WebClient.builder().defaultHeader("X-Tenant", "t-1");
		assertThat(RelayExchange.of(builder, this.connector, NOTHING, false).isThroughWebClient()).isTrue();
	}

	@Test
	void goesThroughWebClientWhenTheBuilderHasADefaultCookie() {
		WebClient.Builder builder = WebClient.builder().defaultCookie("session", "s-1");
		assertThat(RelayExchange.of(builder, this.connector, NOTHING, false).isThroughWebClient()).isTrue();
	}

	@Test
	void goesThroughWebClientWhenTheBuilderHasADefaultRequest() {
		WebClient.Builder builder = WebClient.builder().defaultRequest((request) -> request.attribute("tenant", "t-1"));
		assertThat(RelayExchange.of(builder, this.connector, NOTHING, false).isThroughWebClient()).isTrue();
	}

	@Test
	void goesThroughWebClientWhenACustomizerSetsAConnectorOfItsOwn() {
		ClientHttpConnector own = new ReactorClientHttpConnector();
		RelayExchange exchange = RelayExchange.of(WebClient.builder(), this.connector,
				(builder) -> builder.clientConnector(own), false);
		assertThat(exchange.isThroughWebClient()).isTrue();
	}

	@Test
	void goesThroughWebClientWhenACustomizerSetsAnExchangeFunctionOfItsOwn() {
		ExchangeFunction own = ExchangeFunctions.create(new ReactorClientHttpConnector());
		RelayExchange exchange = RelayExchange.of(WebClient.builder(), this.connector,
				(builder) -> builder.exchangeFunction(own), false);
		assertThat(exchange.isThroughWebClient()).isTrue();
	}

	@Test
	void goesThroughWebClientWhenItIsObserved() {
		assertThat(RelayExchange.of(WebClient.builder(), this.connector, NOTHING, true).isThroughWebClient()).isTrue();
	}

	@Test
	void goesStraightToTheConnectorThroughTheBuildersFilters() throws InterruptedException {
		WebClient.Builder builder = WebClient.builder()
			.clientConnector(this.connector)
			.filter((request, next) -> next
				.exchange(ClientRequest.from(request).headers((h) -> h.setBearerAuth("token-1")).build()));
		RelayExchange exchange = RelayExchange.of(builder, this.connector, NOTHING, false);
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
		RecordedRequest direct = send(RelayExchange.of(builder, this.connector, NOTHING, false), HttpMethod.POST,
				(h) -> {
				}, new byte[0]);
		RecordedRequest throughWebClient = send(RelayExchange.through(builder.build()), HttpMethod.POST, (h) -> {
		}, new byte[0]);
		assertThat(direct.getHeaders().values("X-Order")).containsExactly("first", "second")
			.isEqualTo(throughWebClient.getHeaders().values("X-Order"));
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

	private URI uri() {
		return this.server.server().url("/charges").uri();
	}

}
