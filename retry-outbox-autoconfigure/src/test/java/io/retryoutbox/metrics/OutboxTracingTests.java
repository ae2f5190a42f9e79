package io.retryoutbox.metrics;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.exporter.FinishedSpan;
import io.micrometer.tracing.exporter.SpanReporter;
import io.retryoutbox.Outbox;
import io.retryoutbox.OutboxRequest;
import io.retryoutbox.metrics.autoconfigure.OutboxObservationAutoConfiguration;
import io.retryoutbox.relay.OutboxRelay;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.TestDatabase;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.micrometer.tracing.autoconfigure.MicrometerTracingAutoConfiguration;
import org.springframework.boot.micrometer.tracing.brave.autoconfigure.BraveAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.webclient.autoconfigure.WebClientObservationAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * With Micrometer Tracing (Brave), the delivery of a message continues the trace of the
 * request that enqueued it, through the trace context stored with the row, and the client
 * span the relay observes itself, straight to its connector.
 */
class OutboxTracingTests {

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private final String jdbcUrl = TestDatabase.createDatabase();

	private ApplicationContextRunner runner() {
		return OutboxContexts.runner(this.jdbcUrl)
			.withConfiguration(AutoConfigurations.of(ObservationAutoConfiguration.class,
					MicrometerTracingAutoConfiguration.class, BraveAutoConfiguration.class,
					WebClientObservationAutoConfiguration.class, OutboxObservationAutoConfiguration.class))
			.withUserConfiguration(SpanCollector.class)
			.withPropertyValues("management.tracing.sampling.probability=1.0",
					"retry-outbox.destinations.payments.base-url=http://localhost:"
							+ this.destination.server().getPort() + "/api",
					"retry-outbox.destinations.payments.timeout=10s");
	}

	@Test
	void continuesTheTraceOfTheEnqueuingRequestWhenTheMessageIsSent() {
		runner().run((context) -> {
			assertThat(context.getBean(OutboxRelay.class).getExchange().isThroughWebClient()).isFalse();
			ObservationRegistry registry = context.getBean(ObservationRegistry.class);
			Observation business = Observation.start("place.order", registry);
			UUID id;
			try (Observation.Scope scope = business.openScope()) {
				id = OutboxContexts.transactions(context)
					.execute((status) -> context.getBean(Outbox.class)
						.send(OutboxRequest.post("payments", "/charges").build()));
			}
			finally {
				business.stop();
			}
			String stored = (String) OutboxContexts.row(context, id).get("trace_parent");
			assertThat(stored).matches("00-[0-9a-f]{32}-[0-9a-f]{16}-01");
			String traceId = stored.split("-")[1];
			String enqueueSpanId = stored.split("-")[2];
			RecordedRequest request = this.destination.server().takeRequest(20, TimeUnit.SECONDS);
			assertThat(request).isNotNull();
			String sent = request.getHeaders().get("traceparent");
			assertThat(sent).startsWith("00-" + traceId + "-");
			List<FinishedSpan> spans = context.getBean(SpanCollector.class).spans;
			await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> assertThat(spans).extracting(FinishedSpan::getName)
					.contains("place.order", "retry-outbox enqueue payments", "retry-outbox attempt payments",
							"http post"));
			FinishedSpan placeOrder = span(spans, "place.order");
			FinishedSpan enqueue = span(spans, "retry-outbox enqueue payments");
			FinishedSpan attempt = span(spans, "retry-outbox attempt payments");
			FinishedSpan client = span(spans, "http post");
			assertThat(List.of(placeOrder, enqueue, attempt, client)).extracting(FinishedSpan::getTraceId)
				.containsOnly(traceId);
			assertThat(enqueue.getSpanId()).isEqualTo(enqueueSpanId);
			assertThat(enqueue.getParentId()).isEqualTo(placeOrder.getSpanId());
			assertThat(attempt.getParentId()).isEqualTo(enqueue.getSpanId());
			assertThat(client.getParentId()).isEqualTo(attempt.getSpanId());
			assertThat(sent).isEqualTo("00-" + traceId + "-" + client.getSpanId() + "-01");
			assertThat(attempt.getTags()).containsEntry("outcome", "DELIVERED")
				.containsEntry("retry-outbox.message.id", id.toString());
		});
	}

	private static FinishedSpan span(List<FinishedSpan> spans, String name) {
		return spans.stream().filter((span) -> span.getName().equals(name)).findFirst().orElseThrow();
	}

	@Configuration(proxyBeanMethods = false)
	static class SpanCollector {

		final List<FinishedSpan> spans = new CopyOnWriteArrayList<>();

		@Bean
		SpanReporter collectingSpanReporter() {
			return this.spans::add;
		}

	}

}
