package io.retryoutbox.sample;

import java.io.IOException;
import java.math.BigDecimal;
import java.time.Duration;

import io.retryoutbox.message.OutboxReadModel;
import io.retryoutbox.sample.order.OrderService;
import io.retryoutbox.sample.order.PaymentRequest;
import io.retryoutbox.test.AutoConfigureRetryOutbox;
import io.retryoutbox.test.OutboxDrainer;
import io.retryoutbox.test.TestOutboxClock;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static io.retryoutbox.test.OutboxAssertions.assertThatOutbox;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * How a service tests what it sends through the outbox, to copy: the payments API is a
 * MockWebServer, the relay sends only when the test drains it, and the test moves the
 * outbox's clock to make a retry due instead of waiting for it. The timeout is generous,
 * as a busy build machine can take seconds to make the first request.
 */
@SpringBootTest(properties = { "sample.embedded-database.data-directory=", "sample.embedded-database.port=0",
		"retry-outbox.retry.delay=1m", "retry-outbox.destinations.payments.timeout=30s" })
@AutoConfigureRetryOutbox
class OrderServiceOutboxTests {

	private static final MockWebServer paymentsApi = new MockWebServer();

	@Autowired
	private OrderService orders;

	@Autowired
	private OutboxReadModel outbox;

	@Autowired
	private OutboxDrainer relay;

	@Autowired
	private TestOutboxClock clock;

	@DynamicPropertySource
	static void paymentsApi(DynamicPropertyRegistry registry) throws IOException {
		paymentsApi.start();
		registry.add("retry-outbox.destinations.payments.base-url", () -> paymentsApi.url("/api").toString());
	}

	@AfterAll
	static void stopPaymentsApi() {
		paymentsApi.close();
	}

	@Test
	void chargesAPlacedOrderAndRetriesTheChargeWhenThePaymentsApiIsUnavailable() throws InterruptedException {
		paymentsApi.enqueue(new MockResponse.Builder().code(503).build());
		paymentsApi.enqueue(new MockResponse.Builder().code(201).build());

		PaymentRequest charge = this.orders.place(new BigDecimal("42.50"), "EUR");

		assertThatOutbox(this.outbox).hasPending("payments", 1)
			.message(charge.messageId())
			.hasMethod("POST")
			.hasPath("/charges")
			.hasJsonBody("""
					{"orderId": %d, "amount": 42.50, "currency": "EUR"}
					""".formatted(charge.orderId()));

		assertThat(this.relay.drain()).isOne();
		assertThatOutbox(this.outbox).message(charge.messageId()).isPending().hasAttempts(1).hasLastStatusCode(503);
		assertThat(this.relay.drain()).as("sent again before the retry is due").isZero();

		this.clock.advance(Duration.ofMinutes(2));
		assertThat(this.relay.drain()).isOne();
		assertThatOutbox(this.outbox).hasPending("payments", 0)
			.hasDelivered("payments", 1)
			.message(charge.messageId())
			.isDelivered()
			.hasAttempts(2)
			.hasLastStatusCode(201);

		RecordedRequest first = paymentsApi.takeRequest();
		RecordedRequest retry = paymentsApi.takeRequest();
		assertThat(first.getTarget()).isEqualTo("/api/charges");
		assertThat(retry.getHeaders().get("Idempotency-Key")).isEqualTo(charge.messageId().toString())
			.isEqualTo(first.getHeaders().get("Idempotency-Key"));
	}

}
