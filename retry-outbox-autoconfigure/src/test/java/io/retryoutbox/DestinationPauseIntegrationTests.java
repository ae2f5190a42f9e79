package io.retryoutbox;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;

import io.micrometer.core.instrument.MeterRegistry;
import io.retryoutbox.actuate.OutboxEndpoint;
import io.retryoutbox.actuate.OutboxEndpoint.FlowDescriptor;
import io.retryoutbox.actuate.OutboxEndpoint.OperationResult;
import io.retryoutbox.actuate.OutboxHealthIndicator;
import io.retryoutbox.actuate.autoconfigure.OutboxEndpointAutoConfiguration;
import io.retryoutbox.actuate.autoconfigure.OutboxHealthContributorAutoConfiguration;
import io.retryoutbox.metrics.autoconfigure.OutboxMetricsAutoConfiguration;
import io.retryoutbox.relay.DestinationState;
import io.retryoutbox.relay.OutboxRelay;
import io.retryoutbox.relay.PauseReason;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.OutboxRows;
import io.retryoutbox.testsupport.TestDatabase;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.prometheus.PrometheusMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A destination's pause is shared by every instance on the database: one instance told to
 * wait makes the others wait too, the endpoint, health and a gauge show it, an operator
 * can end it everywhere, and the messages that waited spend neither attempts nor their
 * delivery deadline.
 */
class DestinationPauseIntegrationTests {

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private final String jdbcUrl = TestDatabase.createDatabase();

	private ApplicationContextRunner runner() {
		return OutboxContexts.runner(this.jdbcUrl)
			.withConfiguration(AutoConfigurations.of(EndpointAutoConfiguration.class,
					OutboxEndpointAutoConfiguration.class, OutboxHealthContributorAutoConfiguration.class,
					MetricsAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class,
					PrometheusMetricsExportAutoConfiguration.class, OutboxMetricsAutoConfiguration.class))
			.withPropertyValues("management.endpoints.web.exposure.include=outbox",
					"retry-outbox.destinations.payments.base-url=" + this.destination.server().url("/api"),
					"retry-outbox.retry.jitter=0", "retry-outbox.relay.poll-interval=100ms",
					"retry-outbox.relay.shutdown-timeout=0s");
	}

	@Test
	void aRetryAfterSeenByOneInstancePausesTheOtherSoNeitherSendsBeforeItAndNoMessageSpendsItsDeadline() {
		this.destination.dispatcher()
			.enqueue(new MockResponse.Builder().code(503).setHeader("Retry-After", "4").build());
		// A deadline shorter than the pause: waiting for the destination must not spend
		// it.
		ApplicationContextRunner runner = runner().withPropertyValues("retry-outbox.retry.timeout=2s");
		OutboxContexts.withInstances(List.of(runner, runner), (instances) -> {
			UUID told = send(instances.get(0), "/told");
			await().atMost(Duration.ofSeconds(10)).until(() -> this.destination.dispatcher().requests().size() == 1);
			long answered = this.destination.dispatcher().arrivals().get(0);
			await().atMost(Duration.ofSeconds(3))
				.until(() -> instances.stream().allMatch((instance) -> state(instance) == DestinationState.PAUSED));
			List<UUID> waiting = new ArrayList<>();
			for (int i = 0; i < 6; i++) {
				waiting.add(send(instances.get(i % 2), "/waiting/" + i));
			}
			List<UUID> all = new ArrayList<>(waiting);
			all.add(told);
			await().atMost(Duration.ofSeconds(20))
				.untilAsserted(
						() -> assertThat(all).allSatisfy((id) -> assertThat(OutboxContexts.row(instances.get(0), id))
							.containsEntry("status", "DELIVERED")));
			List<Long> arrivals = this.destination.dispatcher().arrivals();
			assertThat(arrivals).hasSize(8);
			assertThat(arrivals.subList(1, arrivals.size())).allSatisfy((arrival) -> assertThat(arrival - answered)
				.isGreaterThanOrEqualTo(Duration.ofSeconds(4).toNanos()));
			assertThat(OutboxContexts.row(instances.get(0), told)).containsEntry("attempts", 2);
			for (UUID id : waiting) {
				assertThat(OutboxContexts.row(instances.get(0), id)).containsEntry("attempts", 1);
			}
			// The first probe that got through ended the pause for both.
			await().atMost(Duration.ofSeconds(5))
				.until(() -> instances.stream().allMatch((instance) -> state(instance) == DestinationState.OPEN));
			assertThat(OutboxContexts.jdbc(instances.get(0))
				.sql("SELECT count(*) FROM retry_outbox_pause WHERE ended_at IS NULL")
				.query(Long.class)
				.single()).isZero();
		});
	}

	@Test
	void theEndpointHealthAndAGaugeShowThePauseOnEveryInstanceAndAResumeEndsItOnEveryInstance() {
		this.destination.dispatcher()
			.enqueue(new MockResponse.Builder().code(429).setHeader("Retry-After", "600").build());
		ApplicationContextRunner runner = runner().withPropertyValues("retry-outbox.health.max-lag=1m");
		OutboxContexts.withInstances(List.of(runner, runner), (instances) -> {
			Instant before = Instant.now();
			send(instances.get(1), "/told");
			await().atMost(Duration.ofSeconds(10))
				.until(() -> instances.stream().allMatch((instance) -> state(instance) == DestinationState.PAUSED));
			List<String> owners = instances.stream()
				.map((instance) -> instance.getBean(OutboxRelay.class).getOwner())
				.toList();
			// Either relay may have claimed the message and got the 429 (the enqueuing
			// one is
			// woken directly, the other by the notification); every instance names the
			// same one.
			String pausedBy = instances.get(0)
				.getBean(OutboxEndpoint.class)
				.summary()
				.flows()
				.get("payments")
				.pausedBy();
			assertThat(pausedBy).isIn(owners);
			// Due an hour ago, but waiting for its paused destination: no lag.
			UUID waiting = OutboxRows.insert(instances.get(0), "PENDING", null, Duration.ofHours(1));
			for (ApplicationContext instance : instances) {
				FlowDescriptor flow = instance.getBean(OutboxEndpoint.class).summary().flows().get("payments");
				assertThat(flow.state()).isEqualTo(DestinationState.PAUSED);
				assertThat(flow.reason()).isEqualTo(PauseReason.RETRY_AFTER);
				assertThat(flow.detail()).isEqualTo("HTTP 429 Retry-After 600s");
				assertThat(flow.pausedBy()).isEqualTo(pausedBy);
				assertThat(flow.pausedSince()).isAfter(before.minusSeconds(5));
				assertThat(flow.pausedUntil()).isBetween(before.plusSeconds(590), Instant.now().plusSeconds(605));
				Health health = instance.getBean(OutboxHealthIndicator.class).health(true);
				assertThat(health.getStatus()).isEqualTo(Status.UP);
				assertThat(health.getDetails()).containsEntry("lag", "PT0S")
					.containsEntry("destinations",
							Map.of("payments", Map.of("state", "PAUSED", "until", flow.pausedUntil().toString(),
									"reason", "RETRY_AFTER", "detail", "HTTP 429 Retry-After 600s")));
				assertThat(stateGauge(instance, DestinationState.PAUSED)).isOne();
				assertThat(stateGauge(instance, DestinationState.OPEN)).isZero();
				assertThat(stateGauge(instance, DestinationState.PROBING)).isZero();
			}
			OperationResult resumed = instances.get(0)
				.getBean(OutboxEndpoint.class)
				.operate("resume", null, "payments", null, null, null, null, SecurityContext.NONE);
			assertThat(resumed).isEqualTo(new OperationResult("resume", 1, true));
			assertThat(state(instances.get(0))).isEqualTo(DestinationState.OPEN);
			await().atMost(Duration.ofSeconds(5)).until(() -> state(instances.get(1)) == DestinationState.OPEN);
			await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> assertThat(OutboxContexts.row(instances.get(0), waiting)).containsEntry("status",
						"DELIVERED"));
			for (ApplicationContext instance : instances) {
				assertThat(instance.getBean(OutboxEndpoint.class).summary().flows().get("payments"))
					.satisfies((flow) -> {
						assertThat(flow.state()).isEqualTo(DestinationState.OPEN);
						assertThat(flow.pausedUntil()).isNull();
						assertThat(flow.reason()).isNull();
					});
				assertThat(stateGauge(instance, DestinationState.OPEN)).isOne();
				assertThat(stateGauge(instance, DestinationState.PAUSED)).isZero();
			}
		});
	}

	@Test
	void budgetsUntouchedWhilePausedSoADestinationDownForLongerThanTheDeadlineLosesNoMessage() {
		AtomicBoolean down = new AtomicBoolean(true);
		this.destination.dispatcher()
			.otherwise((request) -> new MockResponse.Builder().code(down.get() ? 503 : 200).build());
		// The circuit opens after 3 failures and probes every second (the longest pause),
		// and a message may live 3 seconds unpaused.
		ApplicationContextRunner runner = runner().withPropertyValues("retry-outbox.retry.timeout=3s",
				"retry-outbox.retry.delay=100ms", "retry-outbox.retry.max-delay=200ms",
				"retry-outbox.retry.retry-after-max=1s", "retry-outbox.destinations.payments.flow.adaptive=false",
				"retry-outbox.destinations.payments.flow.max-concurrency=1",
				"retry-outbox.destinations.payments.flow.circuit.failure-threshold=3");
		OutboxContexts.withInstances(List.of(runner), (instances) -> {
			ApplicationContext instance = instances.get(0);
			List<UUID> ids = new ArrayList<>();
			for (int i = 0; i < 5; i++) {
				ids.add(send(instance, "/m/" + i));
			}
			// 3 failures opened the circuit, then 6 probes failed a second apart: down
			// for twice the deadline.
			await().atMost(Duration.ofSeconds(30)).until(() -> this.destination.dispatcher().requests().size() >= 9);
			assertThat(state(instance)).isNotEqualTo(DestinationState.OPEN);
			down.set(false);
			await().atMost(Duration.ofSeconds(20))
				.untilAsserted(() -> assertThat(ids).allSatisfy(
						(id) -> assertThat(OutboxContexts.row(instance, id)).containsEntry("status", "DELIVERED")));
			List<RecordedRequest> requests = this.destination.dispatcher().requests();
			for (int i = 0; i < ids.size(); i++) {
				String path = "/api/m/" + i;
				long sent = requests.stream().filter((request) -> path.equals(request.getTarget())).count();
				assertThat(OutboxContexts.row(instance, ids.get(i))).as("attempts of %s", path)
					.containsEntry("attempts", (int) sent);
			}
			Map<String, Object> pause = OutboxContexts.jdbc(instance)
				.sql("SELECT reason, extract(epoch FROM ended_at - started_at) AS seconds FROM retry_outbox_pause")
				.query()
				.singleRow();
			assertThat(pause).containsEntry("reason", "CIRCUIT");
			assertThat(((Number) pause.get("seconds")).doubleValue()).isGreaterThan(6);
		});
	}

	private static UUID send(ApplicationContext context, String path) {
		return OutboxContexts.transactions(context)
			.execute((status) -> context.getBean(Outbox.class).send(OutboxRequest.post("payments", path).build()));
	}

	private static DestinationState state(ApplicationContext context) {
		return context.getBean(OutboxRelay.class).getDestinationState("payments");
	}

	private static double stateGauge(ApplicationContext context, DestinationState state) {
		return context.getBean(MeterRegistry.class)
			.get("retry.outbox.flow.state")
			.tag("destination", "payments")
			.tag("state", state.name())
			.gauge()
			.value();
	}

}
