package io.retryoutbox.test;

import java.io.IOException;
import java.util.UUID;

import io.retryoutbox.Outbox;
import io.retryoutbox.OutboxRequest;
import io.retryoutbox.message.OutboxReadModel;
import io.retryoutbox.testsupport.PathDispatcher;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.jdbc.test.autoconfigure.AutoConfigureTestDatabase;
import org.springframework.boot.jdbc.test.autoconfigure.JdbcTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionTemplate;

import static io.retryoutbox.test.OutboxAssertions.assertThatOutbox;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link AutoConfigureRetryOutbox} in a slice test, which brings no outbox of its own:
 * the annotation brings it, and its drainer delivers what the test committed.
 */
@JdbcTest(properties = "spring.datasource.hikari.maximum-pool-size=4")
@AutoConfigureTestDatabase(replace = AutoConfigureTestDatabase.Replace.NONE)
@AutoConfigureRetryOutbox
@Transactional(propagation = Propagation.NOT_SUPPORTED)
class OutboxJdbcSliceTests {

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

	@DynamicPropertySource
	static void outbox(DynamicPropertyRegistry registry) throws IOException {
		payments.register(registry);
	}

	@AfterAll
	static void stopServer() {
		payments.close();
	}

	@Test
	void deliversWhatTheTestCommittedWhenDrained() {
		UUID id = this.transactions
			.execute((status) -> this.outbox.send(OutboxRequest.post("payments", "/charges").build()));
		assertThatOutbox(this.readModel).hasPending("payments", 1);
		assertThat(this.drainer.drain()).isOne();
		assertThatOutbox(this.readModel).message(id).isDelivered();
		assertThat(dispatcher.requests()).singleElement()
			.satisfies((request) -> assertThat(request.getTarget()).isEqualTo("/charges"));
	}

	@SpringBootConfiguration
	static class Application {

	}

}
