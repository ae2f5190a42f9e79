package io.retryoutbox.metrics;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.search.MeterNotFoundException;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.retryoutbox.Outbox;
import io.retryoutbox.OutboxRequest;
import io.retryoutbox.metrics.autoconfigure.OutboxMetricsAutoConfiguration;
import io.retryoutbox.metrics.autoconfigure.OutboxObservationAutoConfiguration;
import io.retryoutbox.relay.OutboxRelay;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.OutboxRows;
import io.retryoutbox.testsupport.TestDatabase;
import mockwebserver3.MockResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.prometheus.PrometheusMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The meters of the outbox, read from a Prometheus registry, with messages driven into
 * each state on a real PostgreSQL and against a real HTTP server.
 */
class OutboxMetricsTests {

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private final String jdbcUrl = TestDatabase.createDatabase();

	private ApplicationContextRunner runner() {
		return OutboxContexts.runner(this.jdbcUrl)
			.withConfiguration(AutoConfigurations.of(ObservationAutoConfiguration.class, MetricsAutoConfiguration.class,
					CompositeMeterRegistryAutoConfiguration.class, PrometheusMetricsExportAutoConfiguration.class,
					OutboxObservationAutoConfiguration.class, OutboxMetricsAutoConfiguration.class))
			.withPropertyValues(
					"retry-outbox.destinations.payments.base-url=http://localhost:"
							+ this.destination.server().getPort() + "/api",
					"retry-outbox.destinations.payments.timeout=10s", "retry-outbox.retry.delay=50ms",
					"retry-outbox.retry.jitter=0", "retry-outbox.metrics.gauge-interval=100ms");
	}

	private static UUID send(AssertableApplicationContext context, String path) {
		return OutboxContexts.transactions(context)
			.execute((status) -> context.getBean(Outbox.class).send(OutboxRequest.post("payments", path).build()));
	}

	private static void awaitStatus(AssertableApplicationContext context, UUID id, String status) {
		await().atMost(Duration.ofSeconds(20))
			.untilAsserted(() -> assertThat(OutboxContexts.row(context, id)).containsEntry("status", status));
	}

	@Test
	void countsCommittedEnqueuesAndTimesAttemptsByOutcomeAndStatusClassAndDeliveriesFromEnqueue() {
		this.destination.dispatcher().answer("/api/bad", new MockResponse.Builder().code(422).build());
		runner().run((context) -> {
			this.destination.dispatcher().answer("/api/flaky", new MockResponse.Builder().code(503).build());
			UUID flaky = send(context, "/flaky");
			await().untilAsserted(
					() -> assertThat(OutboxContexts.row(context, flaky)).containsEntry("last_status_code", 503));
			this.destination.dispatcher().answer("/api/flaky", new MockResponse.Builder().code(200).build());
			awaitStatus(context, flaky, "DELIVERED");
			UUID bad = send(context, "/bad");
			awaitStatus(context, bad, "DEAD");
			OutboxContexts.transactions(context).executeWithoutResult((status) -> {
				context.getBean(Outbox.class).send(OutboxRequest.post("payments", "/rolled-back").build());
				status.setRollbackOnly();
			});
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			assertThat(registry.get("retry.outbox.enqueued").tag("destination", "payments").counter().count())
				.isEqualTo(2);
			// The 503 may have been answered more than once before the answer changed.
			long retries = OutboxContexts.jdbc(context)
				.sql("SELECT count(*) FROM retry_outbox_attempt WHERE outcome = 'RETRY' AND status_code = 503")
				.query(Long.class)
				.single();
			assertThat(retries).isPositive();
			// An attempt's observation stops after its outcome was handed to the relay,
			// which may write it first.
			await().atMost(Duration.ofSeconds(10)).ignoreException(MeterNotFoundException.class).untilAsserted(() -> {
				assertThat(attempts(registry, "RETRY", "5xx").count()).isEqualTo(retries);
				assertThat(attempts(registry, "DELIVERED", "2xx").count()).isEqualTo(1);
				assertThat(attempts(registry, "DEAD", "4xx").count()).isEqualTo(1);
				Timer latency = registry.get("retry.outbox.delivery.latency").tag("destination", "payments").timer();
				assertThat(latency.count()).isEqualTo(1);
				assertThat(latency.totalTime(TimeUnit.MILLISECONDS)).isPositive();
				String scrape = context.getBean(PrometheusMeterRegistry.class).scrape();
				assertThat(scrape).contains("retry_outbox_enqueued_total{destination=\"payments\"} 2.0")
					.containsPattern("retry_outbox_attempts_seconds_count\\{destination=\"payments\",error=\"none\","
							+ "outcome=\"DELIVERED\",status_class=\"2xx\"} 1")
					.containsPattern("retry_outbox_attempts_seconds_count\\{destination=\"payments\",error=\"none\","
							+ "outcome=\"RETRY\",status_class=\"5xx\"} " + retries)
					.containsPattern("retry_outbox_attempts_seconds_count\\{destination=\"payments\",error=\"none\","
							+ "outcome=\"DEAD\",status_class=\"4xx\"} 1")
					.containsPattern(
							"retry_outbox_delivery_latency_seconds_bucket\\{destination=\"payments\",le=\"[0-9.]+\"}")
					.contains("retry_outbox_delivery_latency_seconds_count{destination=\"payments\"} 1");
			});
		});
	}

	@Test
	void showsEachDestinationsFlowLimitAndRequestsInFlight() {
		this.destination.dispatcher().hold();
		runner()
			.withPropertyValues("retry-outbox.destinations.payments.flow.adaptive=false",
					"retry-outbox.destinations.payments.flow.max-concurrency=3")
			.run((context) -> {
				MeterRegistry registry = context.getBean(MeterRegistry.class);
				for (int i = 0; i < 5; i++) {
					send(context, "/held/" + i);
				}
				await().atMost(Duration.ofSeconds(10))
					.untilAsserted(() -> assertThat(
							registry.get("retry.outbox.flow.in.flight").tag("destination", "payments").gauge().value())
						.isEqualTo(3));
				assertThat(registry.get("retry.outbox.flow.limit").tag("destination", "payments").gauge().value())
					.isEqualTo(3);
				await().atMost(Duration.ofSeconds(10))
					.untilAsserted(() -> assertThat(this.destination.dispatcher().requests()).hasSize(3));
				this.destination.dispatcher().release();
				await().atMost(Duration.ofSeconds(10))
					.untilAsserted(() -> assertThat(
							registry.get("retry.outbox.flow.in.flight").tag("destination", "payments").gauge().value())
						.isZero());
			});
	}

	@Test
	void describesTheTimersOfTheObservationsSoThatAScrapeCarriesTheirHelpText() {
		runner().run((context) -> {
			awaitStatus(context, send(context, "/ok"), "DELIVERED");
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			await().atMost(Duration.ofSeconds(10)).ignoreException(MeterNotFoundException.class).untilAsserted(() -> {
				assertThat(registry.get("retry.outbox.attempts").timer().getId().getDescription())
					.startsWith("Delivery attempts");
				assertThat(registry.get("retry.outbox.attempts.active").longTaskTimer().getId().getDescription())
					.isEqualTo("Delivery attempts under way");
				assertThat(registry.get("retry.outbox.enqueue").timer().getId().getDescription())
					.startsWith("Recording of messages");
				assertThat(registry.get("retry.outbox.enqueue.active").longTaskTimer().getId().getDescription())
					.isEqualTo("Recordings of messages under way");
			});
			assertThat(context.getBean(PrometheusMeterRegistry.class).scrape())
				.contains("# HELP retry_outbox_attempts_seconds Delivery attempts")
				.contains("# HELP retry_outbox_enqueue_seconds Recording of messages");
		});
	}

	@Test
	void showsWhetherTheRelayPollsAndItsLastPollSucceeded() {
		runner().run((context) -> {
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> assertThat(registry.get("retry.outbox.relay.running").gauge().value()).isOne());
			JdbcClient jdbc = OutboxContexts.jdbc(context);
			jdbc.sql("ALTER TABLE retry_outbox_message RENAME TO retry_outbox_message_away").update();
			await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> assertThat(registry.get("retry.outbox.relay.running").gauge().value()).isZero());
			jdbc.sql("ALTER TABLE retry_outbox_message_away RENAME TO retry_outbox_message").update();
			await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> assertThat(registry.get("retry.outbox.relay.running").gauge().value()).isOne());
			context.getBean(OutboxRelay.class).stop();
			assertThat(registry.get("retry.outbox.relay.running").gauge().value()).isZero();
		});
	}

	@Test
	void readsTheGaugesFromOnePeriodicQuery() {
		runner().withPropertyValues("retry-outbox.relay.enabled=false", "retry-outbox.metrics.gauge-interval=1h")
			.run((context) -> {
				MeterRegistry registry = context.getBean(MeterRegistry.class);
				PrometheusMeterRegistry prometheus = context.getBean(PrometheusMeterRegistry.class);
				// The first query runs at start, on the empty table; the next in an hour.
				await().atMost(Duration.ofSeconds(10))
					.untilAsserted(() -> assertThat(registry.get("retry.outbox.dead").gauge().value()).isZero());
				OutboxRows.insertDead(context, "payments", 3, "TERMINAL_STATUS", Duration.ZERO);
				OutboxRows.insert(context, "DEAD", "order-7", Duration.ofMinutes(20));
				// Waits behind the dead head that parks its key: pending, but no lag.
				OutboxRows.insert(context, "PENDING", "order-7", Duration.ofMinutes(30));
				OutboxRows.insert(context, "PENDING", null, Duration.ofMinutes(10));
				// Scrapes read what the last query read, however often they come.
				await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
					assertThat(registry.get("retry.outbox.pending").gauge().value()).isZero();
					assertThat(registry.get("retry.outbox.dead").gauge().value()).isZero();
					assertThat(prometheus.scrape()).contains("retry_outbox_pending 0.0")
						.contains("retry_outbox_dead 0.0")
						.contains("retry_outbox_parked_keys 0.0")
						.contains("retry_outbox_lag_seconds 0.0");
				});
				// What the scheduler runs every gauge-interval.
				context.getBean(OutboxGauges.class).run();
				assertThat(registry.get("retry.outbox.pending").gauge().value()).isEqualTo(2);
				assertThat(registry.get("retry.outbox.dead").gauge().value()).isEqualTo(4);
				assertThat(registry.get("retry.outbox.parked.keys").gauge().value()).isEqualTo(1);
				assertThat(registry.get("retry.outbox.unknown.destination").gauge().value()).isZero();
				assertThat(registry.get("retry.outbox.lag.seconds").gauge().value()).isBetween(600.0, 660.0);
				assertThat(prometheus.scrape()).contains("retry_outbox_pending 2.0")
					.contains("retry_outbox_dead 4.0")
					.contains("retry_outbox_parked_keys 1.0")
					.containsPattern("retry_outbox_lag_seconds 6[0-9][0-9]\\.");
			});
	}

	@Test
	void showsThePendingAndDeadMessagesOfEachDestinationWithZerosForTheConfiguredOnes() {
		String url = "http://localhost:" + this.destination.server().getPort();
		runner()
			.withPropertyValues("retry-outbox.relay.enabled=false", "retry-outbox.metrics.gauge-interval=1h",
					"retry-outbox.destinations.shipping.base-url=" + url,
					"retry-outbox.destinations.billing.base-url=" + url)
			.run((context) -> {
				MeterRegistry registry = context.getBean(MeterRegistry.class);
				PrometheusMeterRegistry prometheus = context.getBean(PrometheusMeterRegistry.class);
				OutboxGauges gauges = context.getBean(OutboxGauges.class);
				await().atMost(Duration.ofSeconds(10))
					.untilAsserted(() -> assertThat(destinationGauge(registry, "pending", "billing")).isZero());
				send(context, "/pending");
				OutboxContexts.transactions(context)
					.execute((status) -> context.getBean(Outbox.class)
						.send(OutboxRequest.post("shipping", "/pending").build()));
				OutboxRows.insertDead(context, "payments", 1, "TERMINAL_STATUS", Duration.ZERO);
				OutboxRows.insertDead(context, "shipping", 2, "TERMINAL_STATUS", Duration.ZERO);
				// Left behind by an instance that configured it.
				OutboxRows.insertDead(context, "retired", 1, "TERMINAL_STATUS", Duration.ZERO);

				gauges.run();

				assertThat(destinationGauge(registry, "pending", "payments")).isOne();
				assertThat(destinationGauge(registry, "dead", "payments")).isOne();
				assertThat(destinationGauge(registry, "pending", "shipping")).isOne();
				assertThat(destinationGauge(registry, "dead", "shipping")).isEqualTo(2);
				assertThat(destinationGauge(registry, "pending", "billing")).isZero();
				assertThat(destinationGauge(registry, "dead", "billing")).isZero();
				assertThat(destinationGauge(registry, "pending", "retired")).isZero();
				assertThat(destinationGauge(registry, "dead", "retired")).isOne();
				assertThat(registry.get("retry.outbox.pending").gauge().value()).isEqualTo(2);
				assertThat(prometheus.scrape())
					.contains("# HELP retry_outbox_destination_pending Messages of the destination waiting")
					.contains("# HELP retry_outbox_destination_dead Dead messages of the destination")
					.contains("retry_outbox_destination_pending{destination=\"payments\"} 1.0")
					.contains("retry_outbox_destination_dead{destination=\"shipping\"} 2.0")
					.contains("retry_outbox_destination_dead{destination=\"billing\"} 0.0")
					.contains("retry_outbox_destination_dead{destination=\"retired\"} 1.0");
				// A failed read shows no figure rather than an old one.
				JdbcClient jdbc = OutboxContexts.jdbc(context);
				jdbc.sql("ALTER TABLE retry_outbox_message RENAME TO retry_outbox_message_away").update();
				gauges.run();
				assertThat(destinationGauge(registry, "dead", "shipping")).isNaN();
				jdbc.sql("ALTER TABLE retry_outbox_message_away RENAME TO retry_outbox_message").update();
				// An operator discards the dead letters of shipping and retired.
				jdbc.sql("DELETE FROM retry_outbox_message WHERE status = 'DEAD' AND destination <> 'payments'")
					.update();

				gauges.run();

				assertThat(destinationGauge(registry, "dead", "shipping")).isZero();
				assertThat(destinationGauge(registry, "dead", "payments")).isOne();
				assertThat(registry.find("retry.outbox.destination.dead").tag("destination", "retired").gauge())
					.isNull();
				assertThat(registry.find("retry.outbox.destination.pending").tag("destination", "retired").gauge())
					.isNull();
				assertThat(prometheus.scrape()).doesNotContain("destination=\"retired\"");
			});
	}

	@Test
	void refreshesTheGaugesEveryGaugeInterval() {
		runner().withPropertyValues("retry-outbox.relay.enabled=false").run((context) -> {
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> assertThat(registry.get("retry.outbox.dead").gauge().value()).isZero());
			OutboxRows.insertDead(context, "payments", 3, "TERMINAL_STATUS", Duration.ZERO);
			await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> assertThat(registry.get("retry.outbox.dead").gauge().value()).isEqualTo(3));
		});
	}

	@Test
	void deliversWithoutMetersWhenMicrometerIsNotOnTheClasspath() {
		runner().withClassLoader(new FilteredClassLoader("io.micrometer.core", "io.micrometer.prometheusmetrics"))
			.run((context) -> {
				assertThat(context).hasNotFailed()
					.doesNotHaveBean(OutboxMeters.class)
					.doesNotHaveBean(OutboxGauges.class);
				UUID id = send(context, "/ok");
				awaitStatus(context, id, "DELIVERED");
			});
	}

	private static double destinationGauge(MeterRegistry registry, String status, String destination) {
		return registry.get("retry.outbox.destination." + status).tag("destination", destination).gauge().value();
	}

	private static Timer attempts(MeterRegistry registry, String outcome, String statusClass) {
		return registry.get("retry.outbox.attempts")
			.tag("destination", "payments")
			.tag("outcome", outcome)
			.tag("status.class", statusClass)
			.timer();
	}

}
