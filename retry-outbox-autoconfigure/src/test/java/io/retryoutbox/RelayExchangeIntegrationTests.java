package io.retryoutbox;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.retryoutbox.relay.OutboxRelay;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.TestDatabase;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.webclient.WebClientCustomizer;
import org.springframework.boot.webclient.autoconfigure.WebClientObservationAutoConfiguration;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientRequestObservationConvention;
import org.springframework.web.reactive.function.client.DefaultClientRequestObservationConvention;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Which way the auto-configured relay hands its requests to HTTP: straight to its
 * connector, through its builder's filters and observed as Boot observes web clients,
 * unless its builder adds anything else to a request or the application's observation
 * convention is its own.
 */
class RelayExchangeIntegrationTests {

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private final String jdbcUrl = TestDatabase.createDatabase();

	private ApplicationContextRunner runner() {
		return OutboxContexts.runner(this.jdbcUrl)
			.withPropertyValues("retry-outbox.destinations.api.base-url=" + this.destination.server().url("/"));
	}

	@Test
	void sendsStraightToItsConnectorsReactorNettyClientWhenNothingCustomizesOrObservesItsWebClient() {
		runner().run((context) -> {
			assertThat(context.getBean(OutboxRelay.class).getExchange().isThroughWebClient()).isFalse();
			assertThat(context.getBean(OutboxRelay.class).getExchange().isStraightToReactorNetty()).isTrue();
			UUID id = OutboxContexts.send(context,
					OutboxRequest.post("api", "/orders/1").body("{}", MediaType.APPLICATION_JSON).build());
			assertThat(this.destination.nextPath()).isEqualTo("/orders/1");
			await().atMost(Duration.ofSeconds(20))
				.until(() -> "DELIVERED".equals(OutboxContexts.row(context, id).get("status")));
		});
	}

	@Test
	void sendsStraightToItsConnectorThroughTheFiltersOfARelayWebClientCustomizer() {
		RelayWebClientCustomizer credentials = (builder) -> builder.filter((request, next) -> next
			.exchange(ClientRequest.from(request).headers((headers) -> headers.setBearerAuth("token-1")).build()));
		runner().withBean(RelayWebClientCustomizer.class, () -> credentials).run((context) -> {
			assertThat(context.getBean(OutboxRelay.class).getExchange().isThroughWebClient()).isFalse();
			assertThat(context.getBean(OutboxRelay.class).getExchange().isStraightToReactorNetty()).isFalse();
			OutboxContexts.send(context,
					OutboxRequest.post("api", "/orders/2").body("{}", MediaType.APPLICATION_JSON).build());
			RecordedRequest request = this.destination.server().takeRequest(20, TimeUnit.SECONDS);
			assertThat(request).isNotNull();
			assertThat(request.getHeaders().get("Authorization")).isEqualTo("Bearer token-1");
		});
	}

	@Test
	void sendsThroughItsWebClientWhenARelayWebClientCustomizerAddsADefaultHeader() {
		runner().withBean(RelayWebClientCustomizer.class, () -> (builder) -> builder.defaultHeader("X-Tenant", "t-1"))
			.run((context) -> assertThat(context.getBean(OutboxRelay.class).getExchange().isThroughWebClient())
				.isTrue());
	}

	@Test
	void sendsStraightToItsConnectorObservedAsBootObservesWebClients() {
		observedByBoot().withPropertyValues("management.observations.http.client.requests.name=relay.requests")
			.run((context) -> {
				assertThat(context.getBean(OutboxRelay.class).getExchange().isThroughWebClient()).isFalse();
				assertThat(context.getBean(OutboxRelay.class).getExchange().isStraightToReactorNetty()).isFalse();
				Observation.Context client = sendAndObserve(context, "/orders/3", "relay.requests");
				assertThat(client.getLowCardinalityKeyValues().stream().map(Object::toString))
					.contains("keyValue(method=POST)", "keyValue(status=200)", "keyValue(outcome=SUCCESS)");
			});
	}

	@Test
	void sendsThroughItsWebClientObservedWithAConventionOfTheApplications() {
		observedByBoot().withBean(ClientRequestObservationConvention.class,
				() -> new DefaultClientRequestObservationConvention("own.requests") {
				})
			.run((context) -> {
				assertThat(context.getBean(OutboxRelay.class).getExchange().isThroughWebClient()).isTrue();
				assertThat(sendAndObserve(context, "/orders/4", "own.requests")).isNotNull();
			});
	}

	@Test
	void sendsThroughItsWebClientWhenAWebClientCustomizerOfTheApplicationsObservesIt() {
		runner()
			.withBean(WebClientCustomizer.class,
					() -> (builder) -> builder.observationRegistry(RelayExchangeIntegrationTests.observing()))
			.run((context) -> assertThat(context.getBean(OutboxRelay.class).getExchange().isThroughWebClient())
				.isTrue());
	}

	@Test
	void sendsStraightToItsConnectorWhenTheApplicationHasARegistryButBootDoesNotObserveWebClients() {
		runner().withBean(ObservationRegistry.class, RelayExchangeIntegrationTests::observing)
			.run((context) -> assertThat(context.getBean(OutboxRelay.class).getExchange().isThroughWebClient())
				.isFalse());
	}

	@Test
	void sendsStraightToItsConnectorWhenTheObservationRegistryHasNoHandler() {
		runner().withBean(ObservationRegistry.class, ObservationRegistry::create)
			.run((context) -> assertThat(context.getBean(OutboxRelay.class).getExchange().isThroughWebClient())
				.isFalse());
	}

	@Test
	void sendsStraightToItsConnectorWithANoOpObservationRegistry() {
		runner().withBean(ObservationRegistry.class, () -> ObservationRegistry.NOOP)
			.run((context) -> assertThat(context.getBean(OutboxRelay.class).getExchange().isThroughWebClient())
				.isFalse());
	}

	private Observation.Context sendAndObserve(ApplicationContext context, String path, String name)
			throws InterruptedException {
		OutboxContexts.send(context, OutboxRequest.post("api", path).body("{}", MediaType.APPLICATION_JSON).build());
		assertThat(this.destination.nextPath()).isEqualTo(path);
		List<Observation.Context> stopped = context.getBean(Stopped.class).contexts;
		return await().atMost(Duration.ofSeconds(20))
			.until(() -> stopped.stream().filter((observed) -> name.equals(observed.getName())).findFirst(),
					Optional::isPresent)
			.orElseThrow();
	}

	private ApplicationContextRunner observedByBoot() {
		return runner()
			.withConfiguration(AutoConfigurations.of(ObservationAutoConfiguration.class,
					WebClientObservationAutoConfiguration.class))
			.withUserConfiguration(Stopped.class);
	}

	private static ObservationRegistry observing() {
		ObservationRegistry registry = ObservationRegistry.create();
		registry.observationConfig().observationHandler((context) -> true);
		return registry;
	}

	@Configuration(proxyBeanMethods = false)
	static class Stopped {

		final List<Observation.Context> contexts = new CopyOnWriteArrayList<>();

		@Bean
		ObservationHandler<Observation.Context> stoppedObservations() {
			return new ObservationHandler<>() {

				@Override
				public void onStop(Observation.Context context) {
					Stopped.this.contexts.add(context);
				}

				@Override
				public boolean supportsContext(Observation.Context context) {
					return true;
				}

			};
		}

	}

}
