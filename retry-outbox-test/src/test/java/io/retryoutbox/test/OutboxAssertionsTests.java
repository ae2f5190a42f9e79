package io.retryoutbox.test;

import java.io.IOException;
import java.math.BigDecimal;
import java.util.Map;
import java.util.UUID;

import io.retryoutbox.Outbox;
import io.retryoutbox.OutboxRequest;
import io.retryoutbox.message.OutboxReadModel;
import io.retryoutbox.testsupport.PathDispatcher;
import mockwebserver3.MockResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.http.MediaType;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.support.TransactionTemplate;

import static io.retryoutbox.test.OutboxAssertions.assertThatOutbox;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link OutboxAssertions} on what a real outbox stored, and the messages they fail with.
 */
@SpringBootTest(classes = OutboxAssertionsTests.Application.class,
		properties = "spring.datasource.hikari.maximum-pool-size=4")
@AutoConfigureRetryOutbox
class OutboxAssertionsTests {

	private static final PaymentsDestination payments = new PaymentsDestination();

	private static final PathDispatcher dispatcher = payments.dispatcher();

	@Autowired
	private Outbox outbox;

	@Autowired
	private OutboxReadModel readModel;

	@Autowired
	private OutboxDrainer drainer;

	@Autowired
	private TransactionTemplate transactions;

	@Autowired
	private JdbcClient jdbc;

	@DynamicPropertySource
	static void outbox(DynamicPropertyRegistry registry) throws IOException {
		payments.register(registry);
	}

	@AfterAll
	static void stopServer() {
		payments.close();
	}

	@BeforeEach
	void emptyTheOutbox() {
		this.jdbc.sql("TRUNCATE retry_outbox_attempt, retry_outbox_message, retry_outbox_pause").update();
	}

	@Test
	void passesOnWhatWasEnqueued() {
		UUID id = sendCharge();
		assertThatOutbox(this.readModel).hasPending("payments", 1)
			.hasDelivered("payments", 0)
			.hasDead("payments", 0)
			.hasInFlight("payments", 0)
			.message(id)
			.isPending()
			.hasMethod("POST")
			.hasPath("/charges")
			.hasHeader("x-tenant", "acme")
			.hasContentType(MediaType.APPLICATION_JSON_VALUE)
			.hasOrderingKey("order-7")
			.hasAttempts(0)
			.hasJsonBody("""
					{ "currency": "EUR", "amount": 42.50, "orderId": 7 }
					""");
		assertThatOutbox(this.readModel).singleMessage("payments").hasPath("/charges");
	}

	@Test
	void passesOnADeadMessagesReasonAndLastStatus() {
		dispatcher.answer("/charges", new MockResponse.Builder().code(400).build());
		UUID id = sendCharge();
		this.drainer.drain();
		assertThatOutbox(this.readModel).hasDead("payments", 1)
			.hasPending("payments", 0)
			.message(id)
			.isDead()
			.hasDeadReason("TERMINAL_STATUS")
			.hasLastStatusCode(400)
			.hasAttempts(1);
	}

	@Test
	void failsOnACountNamingTheDestinationStatusAndWhatTheOutboxHolds() {
		sendCharge();
		assertThatThrownBy(() -> assertThatOutbox(this.readModel).hasPending("payments", 2))
			.isInstanceOf(AssertionError.class)
			.hasMessageContaining(
					"Expected 2 PENDING message(s) for destination \"payments\" but found 1; the outbox holds "
							+ "{payments={PENDING=1}}");
		assertThatThrownBy(() -> assertThatOutbox(this.readModel).hasDelivered("audit", 1))
			.hasMessageContaining("Expected 1 DELIVERED message(s) for destination \"audit\" but found 0");
	}

	@Test
	void failsOnADifferentJsonBodyShowingBoth() {
		UUID id = sendCharge();
		assertThatThrownBy(() -> assertThatOutbox(this.readModel).message(id).hasJsonBody("""
				{"orderId": 7, "amount": 42.50, "currency": "USD"}
				""")).isInstanceOf(AssertionError.class)
			.hasMessageContaining("Expected outbox message " + id + " to have the JSON body")
			.hasMessageContaining("\"currency\" : \"USD\"")
			.hasMessageContaining("but it has")
			.hasMessageContaining("\"currency\" : \"EUR\"");
	}

	@Test
	void failsOnAMissingHeaderListingTheMessagesHeaders() {
		UUID id = sendCharge();
		assertThatThrownBy(() -> assertThatOutbox(this.readModel).message(id).hasHeader("X-Tenant", "other"))
			.hasMessageContaining("Expected outbox message " + id
					+ " to have header X-Tenant: other but it has [acme]; its headers are {X-Tenant=[acme]}");
		assertThatThrownBy(() -> assertThatOutbox(this.readModel).message(id).hasHeader("X-Trace", "1"))
			.hasMessageContaining("to have header X-Trace: 1 but it has none of that name");
	}

	@Test
	void failsOnAMessagesFieldNamingTheFieldAndSummingUpTheMessage() {
		UUID id = sendCharge();
		assertThatThrownBy(() -> assertThatOutbox(this.readModel).message(id).hasPath("/refunds"))
			.hasMessageContaining("Expected outbox message " + id + " to have path \"/refunds\" but was \"/charges\"")
			.hasMessageContaining(
					"(PENDING POST /charges to payments, attempts 0, last status null, dead reason null)");
		assertThatThrownBy(() -> assertThatOutbox(this.readModel).message(id).isDelivered())
			.hasMessageContaining("to have status DELIVERED but was PENDING");
	}

	@Test
	void failsOnAnUnknownMessageOrOnNoSingleMessage() {
		UUID unknown = UUID.randomUUID();
		assertThatThrownBy(() -> assertThatOutbox(this.readModel).message(unknown))
			.hasMessageContaining("Expected an outbox message with id " + unknown + " but there is none");
		assertThatThrownBy(() -> assertThatOutbox(this.readModel).singleMessage("payments"))
			.hasMessageContaining("Expected a single outbox message for destination \"payments\" but found 0");
	}

	@Test
	void refusesAnExpectedBodyThatIsNotJson() {
		UUID id = sendCharge();
		assertThatIllegalArgumentException()
			.isThrownBy(() -> assertThatOutbox(this.readModel).message(id).hasJsonBody("{orderId: 7"))
			.withMessageStartingWith("the expected JSON is not JSON");
	}

	private UUID sendCharge() {
		return this.transactions.execute((status) -> this.outbox.send(OutboxRequest.post("payments", "/charges")
			.jsonBody(Map.of("orderId", 7, "amount", new BigDecimal("42.50"), "currency", "EUR"))
			.header("X-Tenant", "acme")
			.orderingKey("order-7")
			.build()));
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class Application {

	}

}
