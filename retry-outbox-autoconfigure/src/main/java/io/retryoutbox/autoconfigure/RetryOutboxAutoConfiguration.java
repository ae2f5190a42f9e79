package io.retryoutbox.autoconfigure;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;

import javax.sql.DataSource;

import io.micrometer.observation.ObservationRegistry;
import io.retryoutbox.Outbox;
import io.retryoutbox.OutboxClock;
import io.retryoutbox.RelayWebClientCustomizer;
import io.retryoutbox.RetryPolicy;
import io.retryoutbox.direct.DirectRetries;
import io.retryoutbox.message.EnqueueObserver;
import io.retryoutbox.jdbc.JdbcOutboxComponents;
import io.retryoutbox.jdbc.OutboxSchemaInitializer;
import io.retryoutbox.jdbc.OutboxTables;
import io.retryoutbox.notify.PostgresNotifier;
import io.retryoutbox.notify.PostgresWakeupListener;
import io.retryoutbox.message.OutboxReadModel;
import io.retryoutbox.message.OutboxRepair;
import io.retryoutbox.relay.AttemptObserver;
import io.retryoutbox.relay.DestinationPauses;
import io.retryoutbox.relay.DirectDispatch;
import io.retryoutbox.relay.InvalidSigningSecretException;
import io.retryoutbox.relay.OnDead;
import io.retryoutbox.relay.OutboxRelay;
import io.retryoutbox.relay.OutboxStore;
import io.retryoutbox.relay.PauseStore;
import io.retryoutbox.relay.RelayDestination;
import io.retryoutbox.relay.RelayExchange;
import io.retryoutbox.relay.WebhookSigner;
import io.retryoutbox.retry.DefaultRetryPolicy;
import io.retryoutbox.retry.InvalidRetrySettingException;
import io.retryoutbox.retry.RetrySettings;
import io.retryoutbox.support.SecretValues;
import org.flywaydb.core.Flyway;
import org.jspecify.annotations.Nullable;
import org.postgresql.PGConnection;
import reactor.netty.http.client.HttpClient;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.http.client.HttpClientSettings;
import org.springframework.boot.http.client.HttpRedirects;
import org.springframework.boot.http.client.reactive.ClientHttpConnectorBuilder;
import org.springframework.boot.http.client.reactive.ReactorClientHttpConnectorBuilder;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.boot.webclient.autoconfigure.WebClientAutoConfiguration;
import org.springframework.boot.webclient.observation.ObservationWebClientCustomizer;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.http.client.reactive.ClientHttpConnector;
import org.springframework.util.function.SingletonSupplier;
import org.springframework.web.reactive.function.client.ClientRequestObservationConvention;
import org.springframework.web.reactive.function.client.DefaultClientRequestObservationConvention;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration
 * Auto-configuration} for retry-outbox: the {@link Outbox}, its table, the
 * {@link RetryPolicy}, the relay, and the {@link DirectRetries} that apply the policy to
 * calls made outside the outbox.
 */
@AutoConfiguration(
		after = { DataSourceAutoConfiguration.class, JacksonAutoConfiguration.class, WebClientAutoConfiguration.class },
		afterName = "org.springframework.boot.webclient.autoconfigure.WebClientObservationAutoConfiguration")
@ConditionalOnClass({ WebClient.class, HttpClient.class, Flyway.class, JsonMapper.class })
@ConditionalOnSingleCandidate(DataSource.class)
@ConditionalOnBooleanProperty(name = "retry-outbox.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RetryOutboxProperties.class)
public final class RetryOutboxAutoConfiguration {

	// After the application's own database initializers (e.g. Boot's Flyway), which would
	// refuse a schema that already holds the outbox tables but no history of their own.
	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "retry-outbox.jdbc.initialize-schema", matchIfMissing = true)
	@DependsOnDatabaseInitialization
	OutboxSchemaInitializer retryOutboxSchemaInitializer(DataSource dataSource, RetryOutboxProperties properties) {
		return new OutboxSchemaInitializer(dataSource, properties.getJdbc().getSchema());
	}

	// Its own type, so that an application's Clock bean is never taken for it.
	@Bean
	@ConditionalOnMissingBean
	OutboxClock retryOutboxClock() {
		return OutboxClock.system();
	}

	@Bean
	@ConditionalOnMissingBean
	JdbcOutboxComponents retryOutboxJdbc(DataSource dataSource, RetryOutboxProperties properties,
			ObjectProvider<JsonMapper> jsonMapper, ObjectProvider<OutboxSchemaInitializer> schemaInitializer,
			OutboxClock clock) {
		// Created first, so the table exists before anything can use it.
		schemaInitializer.getIfAvailable();
		RetryOutboxProperties.AttemptLog attemptLog = properties.getAttemptLog();
		return new JdbcOutboxComponents(dataSource, OutboxTables.in(properties.getJdbc().getSchema()),
				jsonMapper.getIfAvailable(RetryOutboxAutoConfiguration::defaultJsonMapper),
				new JdbcOutboxComponents.AttemptLog(attemptLog.isEnabled(),
						(int) attemptLog.getResponseSnippetSize().toBytes()),
				clock);
	}

	@Bean
	@ConditionalOnMissingBean
	OutboxStore retryOutboxStore(JdbcOutboxComponents jdbc) {
		return jdbc.store();
	}

	@Bean
	@ConditionalOnMissingBean
	PauseStore retryOutboxPauseStore(JdbcOutboxComponents jdbc) {
		return jdbc.pauses();
	}

	@Bean
	@ConditionalOnMissingBean
	OutboxReadModel retryOutboxReadModel(JdbcOutboxComponents jdbc, RetryOutboxProperties properties) {
		return jdbc.readModel(properties.getDestinations().keySet());
	}

	@Bean
	@ConditionalOnMissingBean
	OutboxRepair retryOutboxRepair(JdbcOutboxComponents jdbc) {
		return jdbc.repair(Duration.ofSeconds(20));
	}

	@Bean
	@ConditionalOnMissingBean
	RetryPolicy retryOutboxRetryPolicy(RetryOutboxProperties properties, ObjectProvider<JsonMapper> jsonMapper,
			OutboxClock clock) {
		return defaultRetryPolicy(properties, jsonMapper, clock);
	}

	// The relay's own policy, so that direct calls to a destination are classified and
	// backed off by the same rules as its messages.
	@Bean
	@ConditionalOnMissingBean
	DirectRetries retryOutboxDirectRetries(RetryPolicy retryPolicy, RetryOutboxProperties properties,
			OutboxClock clock) {
		Map<String, Duration> attemptTimeouts = new LinkedHashMap<>();
		properties.getDestinations()
			.forEach((name, destination) -> attemptTimeouts.put(name, destination.getTimeout()));
		return new DirectRetries(retryPolicy, attemptTimeouts, properties.getIdempotencyKeyHeader(),
				Math.toIntExact(properties.getRelay().getErrorBodyLimit().toBytes()), clock.asClock());
	}

	static DefaultRetryPolicy defaultRetryPolicy(RetryOutboxProperties properties,
			ObjectProvider<JsonMapper> jsonMapper, OutboxClock clock) {
		RetrySettings defaults = retrySettings("retry-outbox.retry", properties.getRetry(), RetrySettings.DEFAULTS);
		Map<String, RetrySettings> perDestination = new LinkedHashMap<>();
		properties.getDestinations()
			.forEach((name, destination) -> perDestination.put(name,
					retrySettings("retry-outbox.destinations." + name + ".retry", destination.getRetry(), defaults)));
		return new DefaultRetryPolicy(defaults, perDestination,
				jsonMapper.getIfAvailable(RetryOutboxAutoConfiguration::defaultJsonMapper), clock.asClock(),
				() -> ThreadLocalRandom.current().nextLong());
	}

	/**
	 * The longest delivery deadline, global or of a destination: how long an ended pause
	 * may still count for a message's deadline.
	 */
	static Duration longestTimeout(RetryOutboxProperties properties) {
		RetrySettings defaults = retrySettings("retry-outbox.retry", properties.getRetry(), RetrySettings.DEFAULTS);
		Duration longest = defaults.timeout();
		for (Map.Entry<String, RetryOutboxProperties.Destination> destination : properties.getDestinations()
			.entrySet()) {
			Duration timeout = retrySettings("retry-outbox.destinations." + destination.getKey() + ".retry",
					destination.getValue().getRetry(), defaults)
				.timeout();
			longest = (timeout.compareTo(longest) > 0) ? timeout : longest;
		}
		return longest;
	}

	@Bean
	@ConditionalOnMissingBean
	Outbox outbox(JdbcOutboxComponents jdbc, RetryOutboxProperties properties, ObjectProvider<OutboxRelay> relay,
			ObjectProvider<PostgresNotifier> notifier, ObjectProvider<EnqueueObserver> enqueueObservers) {
		Map<String, RelayDestination> destinations = destinations(properties);
		Map<String, Set<String>> configuredHeaders = new LinkedHashMap<>();
		destinations.forEach((name, destination) -> configuredHeaders.put(name, destination.headers().keySet()));
		Set<String> signedDestinations = new LinkedHashSet<>();
		destinations.forEach((name, destination) -> {
			if (destination.signer().isSigning()) {
				signedDestinations.add(name);
			}
		});
		JdbcOutboxComponents.EnqueueSettings settings = new JdbcOutboxComponents.EnqueueSettings(destinations.keySet(),
				properties.getMaxBodySize(), properties.getIdempotencyKeyHeader(), properties.isRequireTransaction(),
				configuredHeaders, signedDestinations);
		// Looked up once: a lookup on every commit cost the enqueuing threads about a
		// twentieth of their time in the side-by-side benchmark's profile.
		OutboxRelay localRelay = relay.getIfAvailable();
		PostgresNotifier otherRelays = notifier.getIfAvailable();
		DirectDispatch direct = properties.getRelay().isDirectDispatch() ? localRelay : null;
		return jdbc.outbox(settings, new RelayWakeUps(localRelay, otherRelays),
				EnqueueObserver.of(enqueueObservers.orderedStream().toList()), () -> direct);
	}

	/**
	 * Merges the retry settings bound under {@code prefix} over the inherited ones. The
	 * inherited ones are valid already, so a refused value is one set under
	 * {@code prefix}, and the failure names its property.
	 */
	private static RetrySettings retrySettings(String prefix, RetryOutboxProperties.Retry retry,
			RetrySettings inherited) {
		try {
			return retry.over(inherited);
		}
		catch (InvalidRetrySettingException ex) {
			throw new InvalidConfigurationPropertyValueException(prefix + "." + ex.getSetting(), ex.getValue(),
					ex.getReason());
		}
	}

	static Map<String, RelayDestination> destinations(RetryOutboxProperties properties) {
		Map<String, RelayDestination> destinations = new LinkedHashMap<>();
		properties.getDestinations().forEach((name, destination) -> {
			if (destination.getBaseUrl() == null) {
				throw new IllegalStateException("retry-outbox.destinations." + name + ".base-url must be set");
			}
			WebhookSigner signer = signer("retry-outbox.destinations." + name + ".signing.secrets",
					destination.getSigning().getSecrets());
			try {
				OnDead onDead = (destination.getOrdering().getOnDead() != null) ? destination.getOrdering().getOnDead()
						: properties.getOrdering().getOnDead();
				RetryOutboxProperties.Flow flow = destination.getFlow();
				// A pause on Retry-After is capped as the policy caps the header.
				Duration maxPause = retrySettings("retry-outbox.destinations." + name + ".retry",
						destination.getRetry(),
						retrySettings("retry-outbox.retry", properties.getRetry(), RetrySettings.DEFAULTS))
					.retryAfterMax();
				destinations.put(name,
						new RelayDestination(destination.getBaseUrl(), destination.getTimeout(),
								destination.getHeaders(), onDead,
								new RelayDestination.Flow(flow.isAdaptive(), flow.getMaxConcurrency(),
										(flow.getMaxRate() != null) ? flow.getMaxRate() : Double.POSITIVE_INFINITY,
										flow.isPauseOnRetryAfter(), maxPause, flow.getCircuit().getFailureThreshold()),
								signer));
			}
			catch (IllegalArgumentException ex) {
				throw new IllegalStateException("Invalid retry-outbox.destinations." + name + ": " + ex.getMessage(),
						ex);
			}
		});
		return destinations;
	}

	/**
	 * The signer of the secrets bound under {@code property}; a refused secret is named
	 * by its property and index, and its value is never shown.
	 */
	private static WebhookSigner signer(String property, List<String> secrets) {
		try {
			return WebhookSigner.of(secrets);
		}
		catch (InvalidSigningSecretException ex) {
			throw new InvalidConfigurationPropertyValueException(property + "[" + ex.getIndex() + "]",
					SecretValues.MASK, ex.getReason());
		}
	}

	private static JsonMapper defaultJsonMapper() {
		return JsonMapper.builder().build();
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(PGConnection.class)
	@ConditionalOnBooleanProperty(name = "retry-outbox.relay.notify", matchIfMissing = true)
	static class NotifyConfiguration {

		@Bean
		@ConditionalOnMissingBean
		PostgresNotifier retryOutboxNotifier(DataSource dataSource, RetryOutboxProperties properties) {
			return new PostgresNotifier(dataSource, properties.getRelay().getNotifyChannel(),
					properties.getRelay().getNotifyMinInterval());
		}

		@Bean
		@ConditionalOnMissingBean
		@ConditionalOnBooleanProperty(name = "retry-outbox.relay.enabled", matchIfMissing = true)
		PostgresWakeupListener retryOutboxWakeupListener(DataSource dataSource, RetryOutboxProperties properties,
				ObjectProvider<OutboxRelay> relay, ObjectProvider<PostgresNotifier> notifier) {
			// Kept once it exists: a lookup in the bean factory per notification was
			// half of the listening thread's CPU under load.
			SingletonSupplier<OutboxRelay> localRelay = SingletonSupplier.of(relay::getIfAvailable);
			PostgresWakeupListener listener = new PostgresWakeupListener(dataSource,
					properties.getRelay().getNotifyChannel(), () -> {
						OutboxRelay found = localRelay.get();
						if (found != null) {
							found.wakeUpForOtherInstance();
						}
					});
			// This instance's own enqueues wake its relay directly, and its notifier
			// sends only while a relay of another instance listens.
			PostgresNotifier own = notifier.getIfAvailable();
			if (own != null) {
				listener.setIgnoredPayload(own.getPayload());
				own.setOwnListener(listener::getBackendPid);
			}
			return listener;
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnBooleanProperty(name = "retry-outbox.relay.enabled", matchIfMissing = true)
	static class RelayConfiguration {

		@Bean
		@ConditionalOnMissingBean
		RelayConnectionPool retryOutboxRelayConnectionPool(RetryOutboxProperties properties) {
			return new RelayConnectionPool(properties.getRelay().getConcurrency());
		}

		@Bean
		@ConditionalOnMissingBean
		OutboxRelay retryOutboxRelay(OutboxStore store, PauseStore pauseStore, RetryPolicy retryPolicy,
				RetryOutboxProperties properties, RelayConnectionPool connectionPool,
				ObjectProvider<JsonMapper> jsonMapper, ObjectProvider<WebClient.Builder> webClientBuilder,
				ObjectProvider<ClientHttpConnectorBuilder<?>> connectorBuilder,
				ObjectProvider<HttpClientSettings> httpClientSettings,
				ObjectProvider<RelayWebClientCustomizer> customizers, ObjectProvider<AttemptObserver> attemptObservers,
				ObjectProvider<ObservationRegistry> observationRegistry,
				ObjectProvider<ObservationWebClientCustomizer> observedWebClients,
				ObjectProvider<ClientRequestObservationConvention> observationConvention, Environment environment,
				OutboxClock clock) {
			RetryOutboxProperties.Relay relay = properties.getRelay();
			OutboxRelay.Settings settings = new OutboxRelay.Settings(relay.getPollInterval(), relay.getBatchSize(),
					relay.getConcurrency(), relay.getLeaseTimeout(), relay.getShutdownTimeout(), relay.getStartDelay(),
					Math.toIntExact(relay.getErrorBodyLimit().toBytes()), relay.getRunSize(),
					relay.getMinRoundInterval(), relay.getRunLinger());
			RetryPolicy fallback = (retryPolicy instanceof DefaultRetryPolicy) ? retryPolicy
					: defaultRetryPolicy(properties, jsonMapper, clock);
			RelayConnector relayConnector = relayConnector(connectionPool, connectorBuilder, httpClientSettings);
			ObservationRegistry registry = (observedWebClients.getIfAvailable() != null)
					? observationRegistry.getIfAvailable() : null;
			RelayExchange exchange = relayExchange(relayConnector, webClientBuilder.getIfAvailable(WebClient::builder),
					customizers, registry,
					() -> observationConvention.getIfAvailable(() -> defaultObservationConvention(environment)));
			OutboxRelay outboxRelay = new OutboxRelay(store,
					new DestinationPauses(pauseStore, longestTimeout(properties)), retryPolicy, fallback, exchange,
					destinations(properties), properties.getIdempotencyKeyHeader(), settings,
					AttemptObserver.of(attemptObservers.orderedStream().toList()));
			outboxRelay.setAutoStartup(relay.isAutoStartup() && !relay.isWaitForReady());
			RetryOutboxProperties.WarmUp warmUp = relay.getWarmUp();
			if (warmUp.isEnabled()) {
				outboxRelay.setWarmUp(new OutboxRelay.WarmUp(warmUpExchange(exchange, relayConnector),
						warmUp.getRequests(), warmUp.getTimeout()));
			}
			return outboxRelay;
		}

		@Bean
		@ConditionalOnBooleanProperty(name = "retry-outbox.relay.wait-for-ready", matchIfMissing = true)
		ApplicationListener<ApplicationReadyEvent> retryOutboxRelayStarter(ObjectProvider<OutboxRelay> relay,
				RetryOutboxProperties properties) {
			return (event) -> {
				if (properties.getRelay().isAutoStartup()) {
					relay.ifAvailable(OutboxRelay::start);
				}
			};
		}

		// The relay's path without the application's filters and observation, which
		// Boot's builder would bring.
		private static RelayExchange warmUpExchange(RelayExchange exchange, RelayConnector connector) {
			HttpClient client = connector.client();
			if (exchange.isStraightToReactorNetty() && client != null) {
				return RelayExchange.direct(connector.connector(), client);
			}
			return exchange.isThroughWebClient()
					? RelayExchange.through(WebClient.builder().clientConnector(connector.connector()).build())
					: RelayExchange.direct(connector.connector());
		}

		/**
		 * Boot's builder brings codecs, customizers and observation, and Boot's connector
		 * builder and settings bring SSL, proxy and timeouts. Two things are the relay's
		 * own: Reactor Netty must not retry failed requests by itself, as the relay is
		 * the only layer that retries, and redirects are not followed, as a 3xx is a
		 * terminal answer. Its connections come from a pool of the relay's own, as large
		 * as its concurrency: Reactor Netty's shared pool allows only 16 connections per
		 * host on two cores, which would cap the relay below what its limits allow.
		 */
		private static RelayConnector relayConnector(RelayConnectionPool connectionPool,
				ObjectProvider<ClientHttpConnectorBuilder<?>> connectorBuilder,
				ObjectProvider<HttpClientSettings> httpClientSettings) {
			ReactorClientHttpConnectorBuilder reactor = (connectorBuilder
				.getIfAvailable() instanceof ReactorClientHttpConnectorBuilder boot) ? boot
						: ClientHttpConnectorBuilder.reactor();
			HttpClientSettings settings = httpClientSettings.getIfAvailable(HttpClientSettings::defaults)
				.withRedirects(HttpRedirects.DONT_FOLLOW);
			if (settings.connectTimeout() == null) {
				settings = settings.withConnectTimeout(Duration.ofSeconds(10));
			}
			// The last customizer gets the client as the connector will send through it.
			AtomicReference<HttpClient> built = new AtomicReference<>();
			ClientHttpConnector connector = reactor.withHttpClientFactory(connectionPool::httpClient)
				.withHttpClientCustomizer((client) -> {
					HttpClient relayClient = client.disableRetry(true);
					built.set(relayClient);
					return relayClient;
				})
				.build(settings);
			return new RelayConnector(connector, built.get());
		}

		/**
		 * The relay's builder is a copy of Boot's with the relay's connector and the
		 * relay's customizers, applied once. Where Boot observes every builder, the relay
		 * is observed with the same registry and convention, which it sets on its builder
		 * before its customizers; otherwise its builder's observation is left as it is.
		 */
		private static RelayExchange relayExchange(RelayConnector connector, WebClient.Builder bootBuilder,
				ObjectProvider<RelayWebClientCustomizer> customizers, @Nullable ObservationRegistry registry,
				Supplier<ClientRequestObservationConvention> convention) {
			Consumer<WebClient.Builder> customizer = (builder) -> customizers.orderedStream()
				.forEach((relayCustomizer) -> relayCustomizer.customize(builder));
			return (registry != null)
					? RelayExchange.of(bootBuilder.clone(), connector.connector(), connector.client(), customizer,
							registry, convention.get())
					: RelayExchange.of(bootBuilder.clone(), connector.connector(), connector.client(), customizer);
		}

		// As Boot's WebClientObservationAutoConfiguration names it, without a dependency
		// on Boot's observation module for its properties.
		private static ClientRequestObservationConvention defaultObservationConvention(Environment environment) {
			return new DefaultClientRequestObservationConvention(Binder.get(environment)
				.bind("management.observations.http.client.requests.name", String.class)
				.orElse("http.client.requests"));
		}

	}

	/**
	 * The relay's connector and the Reactor Netty client it sends through.
	 *
	 * @param connector the connector
	 * @param client its client, or {@code null} if the connector builder did not build
	 * one
	 */
	private record RelayConnector(ClientHttpConnector connector, @Nullable HttpClient client) {

	}

}
