package io.retryoutbox.test;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.retryoutbox.Outbox;
import io.retryoutbox.OutboxRequest;
import io.retryoutbox.message.OutboxReadModel;
import io.retryoutbox.message.StoredMessage;
import io.retryoutbox.relay.DestinationState;
import io.retryoutbox.relay.OutboxRelay;
import io.retryoutbox.testsupport.PathDispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.support.TransactionTemplate;

import static io.retryoutbox.test.OutboxAssertions.assertThatOutbox;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link OutboxDrainer} in a {@code @SpringBootTest} with
 * {@link AutoConfigureRetryOutbox}, on a real PostgreSQL and a real HTTP server: retries
 * are driven by the {@link TestOutboxClock}, and nothing in the test sleeps or waits for
 * the relay.
 */
@SpringBootTest(classes = OutboxDrainerTests.Application.class,
		properties = { "retry-outbox.retry.delay=1h", "retry-outbox.retry.max-delay=2h",
				"retry-outbox.retry.retry-after-max=1h", "spring.datasource.hikari.maximum-pool-size=4" })
@AutoConfigureRetryOutbox
class OutboxDrainerTests {

	private static final PaymentsDestination payments = new PaymentsDestination();

	private static final PathDispatcher dispatcher = payments.dispatcher();

	@Autowired
	private Outbox outbox;

	@Autowired
	private OutboxReadModel readModel;

	@Autowired
	private OutboxDrainer drainer;

	@Autowired
	private TestOutboxClock clock;

	@Autowired
	private OutboxRelay relay;

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
	void emptyTheOutboxAndCheckTheClockWasReset() {
		assertThat(this.clock.ahead()).as("the test clock, reset before each test").isZero();
		this.jdbc.sql("TRUNCATE retry_outbox_attempt, retry_outbox_message, retry_outbox_pause").update();
	}

	@Test
	void retriesAMessageAnswered503ThenDeliversItOnceTheClockPassesItsRetry() {
		dispatcher.answer("/charges/1", new MockResponse.Builder().code(503).build(),
				new MockResponse.Builder().code(200).build());
		UUID id = send("/charges/1");

		assertThat(this.drainer.drain()).isOne();
		assertThatOutbox(this.readModel).hasPending("payments", 1)
			.message(id)
			.isPending()
			.hasAttempts(1)
			.hasLastStatusCode(503);
		assertThat(this.drainer.drain()).as("claimed before the retry is due").isZero();

		this.clock.advanceTo(nextAttemptAt(id));
		assertThat(this.drainer.drain()).isOne();
		assertThatOutbox(this.readModel).hasPending("payments", 0)
			.hasDelivered("payments", 1)
			.message(id)
			.isDelivered()
			.hasAttempts(2)
			.hasLastStatusCode(200);
		assertThat(requests("/charges/1")).hasSize(2);
	}

	@Test
	void sendsNothingBeforeAMessagesDueTimeAndSendsItOnceTheClockPassesIt() {
		dispatcher.answer("/charges/2", new MockResponse.Builder().code(503).build(),
				new MockResponse.Builder().code(200).build());
		UUID id = send("/charges/2");
		this.drainer.drain();
		Instant due = nextAttemptAt(id);

		this.clock.advanceTo(due.minus(Duration.ofMinutes(1)));
		assertThat(this.drainer.drain()).isZero();
		assertThat(requests("/charges/2")).hasSize(1);
		assertThatOutbox(this.readModel).message(id).isPending().hasAttempts(1);

		this.clock.advance(Duration.ofMinutes(2));
		assertThat(this.drainer.drain()).isOne();
		assertThat(requests("/charges/2")).hasSize(2);
		assertThatOutbox(this.readModel).message(id).isDelivered();
	}

	@Test
	void deliversANewMessageAtOnceWhateverTheClockWasAdvancedBy() {
		this.clock.advance(Duration.ofDays(3));
		UUID id = send("/charges/3");
		assertThat(this.drainer.drain()).isOne();
		assertThatOutbox(this.readModel).message(id).isDelivered().hasAttempts(1);
	}

	@Test
	void endsADestinationsRetryAfterPauseOnceTheClockPassesIt() {
		dispatcher.answer("/charges/4", new MockResponse.Builder().code(503).setHeader("Retry-After", "1800").build(),
				new MockResponse.Builder().code(200).build());
		UUID id = send("/charges/4");
		this.drainer.drain();
		assertThat(this.relay.getDestinationState("payments")).isEqualTo(DestinationState.PAUSED);
		assertThat(this.drainer.drain()).isZero();

		this.clock.advanceTo(nextAttemptAt(id));
		assertThat(this.drainer.drain()).isOne();
		assertThat(this.relay.getDestinationState("payments")).isEqualTo(DestinationState.OPEN);
		assertThatOutbox(this.readModel).message(id).isDelivered().hasAttempts(2);
	}

	@Test
	void deliversTheMessagesOfAnOrderingKeyOneAfterTheOtherInOneDrain() {
		List<UUID> ids = this.transactions.execute((status) -> List.of(
				this.outbox.send(OutboxRequest.post("payments", "/keyed/1").orderingKey("order-5").build()),
				this.outbox.send(OutboxRequest.post("payments", "/keyed/2").orderingKey("order-5").build())));
		assertThat(this.drainer.drain()).isEqualTo(2);
		assertThatOutbox(this.readModel).hasDelivered("payments", 2);
		assertThat(ids).allSatisfy((id) -> assertThatOutbox(this.readModel).message(id).isDelivered());
	}

	private UUID send(String path) {
		UUID id = this.transactions.execute((status) -> this.outbox
			.send(OutboxRequest.post("payments", path).jsonBody(Map.of("path", path)).build()));
		assertThat(id).isNotNull();
		return id;
	}

	private Instant nextAttemptAt(UUID id) {
		return this.readModel.message(id).map(StoredMessage::nextAttemptAt).orElseThrow();
	}

	private static List<RecordedRequest> requests(String path) {
		return dispatcher.requests().stream().filter((request) -> path.equals(request.getTarget())).toList();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class Application {

	}

}
