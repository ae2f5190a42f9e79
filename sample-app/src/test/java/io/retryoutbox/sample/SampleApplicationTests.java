package io.retryoutbox.sample;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import javax.sql.DataSource;

import io.retryoutbox.sample.order.PaymentRequest;
import io.retryoutbox.sample.simulator.Fault;
import io.retryoutbox.sample.simulator.Receipt;
import io.retryoutbox.sample.simulator.SimulatorStats;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.web.server.servlet.context.ServletWebServerApplicationContext;
import org.springframework.context.ApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

/**
 * Places orders over HTTP against a simulator that injects every fault it knows, and
 * checks what the outbox made of them.
 * <p>
 * The shares are high enough that each fault occurs in practically every run (the least
 * likely to be missing, a slow answer among about 250 processed keys, is missing with a
 * probability below 1e-8), and the attempt budget is high enough that no message runs out
 * of it (0.4^30). One dead charge is then replayed through the actuator endpoint, as an
 * operator would once the payments API accepts it.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "sample.embedded-database.data-directory=", "sample.embedded-database.port=0",
				"simulator.seed=20261129", "simulator.faults.unavailable=0.08", "simulator.faults.rate-limited=0.08",
				"simulator.faults.locked=0.08", "simulator.faults.slow=0.08", "simulator.slow-delay=5s",
				"simulator.faults.dropped=0.08", "simulator.faults.bad-request=0.08", "simulator.faults.conflict=0.08",
				"retry-outbox.retry.max-attempts=30", "retry-outbox.relay.poll-interval=100ms" })
class SampleApplicationTests {

	private static final int ORDERS = 200;

	private static final Duration SETTLE_TIMEOUT = Duration.ofMinutes(2);

	private static final Duration REPLAY_TIMEOUT = Duration.ofSeconds(30);

	@LocalServerPort
	private int port;

	@Autowired
	private ApplicationContext context;

	@Autowired
	private DataSource dataSource;

	@Test
	void isAServletWebApplication() {
		assertThat(this.context).isInstanceOf(ServletWebServerApplicationContext.class);
	}

	@Test
	void deliversEachPaymentOnceInOrderKillsTerminalAnswersAndReplaysOneThroughTheActuatorEndpoint() {
		SampleClient client = new SampleClient(this.port);
		List<PaymentRequest> charges = new ArrayList<>();
		Map<Long, PaymentRequest> refunds = new HashMap<>();
		for (int i = 0; i < ORDERS; i++) {
			PaymentRequest charge = client.placeOrder(new BigDecimal("10.00").add(BigDecimal.valueOf(i)), "EUR");
			charges.add(charge);
			if (i % 4 == 0) {
				// Right away, while the charge is still pending: the ordering key keeps
				// the refund behind it.
				refunds.put(charge.orderId(), client.cancelOrder(charge.orderId()));
			}
		}
		awaitSettled();
		Map<UUID, Row> rows = rows();
		SimulatorStats stats = client.stats();

		for (PaymentRequest charge : charges) {
			List<Receipt> receipts = stats.orders().getOrDefault(String.valueOf(charge.orderId()), List.of());
			assertThat(receipts).filteredOn((receipt) -> receipt.path().equals("/charges"))
				.as("charges processed for order %s", charge.orderId())
				.singleElement()
				.satisfies((receipt) -> assertThat(receipt.key()).isEqualTo(charge.messageId().toString()));
			PaymentRequest refund = refunds.get(charge.orderId());
			if (refund != null) {
				assertThat(receipts).extracting(Receipt::path).containsExactly("/charges", "/refunds");
				assertThat(receipts).extracting(Receipt::key)
					.containsExactly(charge.messageId().toString(), refund.messageId().toString());
			}
		}
		assertThat(stats.outOfOrder()).isZero();

		Set<String> answeredTerminally = new HashSet<>();
		stats.orders()
			.values()
			.forEach((receipts) -> receipts.stream()
				.filter((receipt) -> receipt.status() == 400 || receipt.status() == 409)
				.forEach((receipt) -> answeredTerminally.add(receipt.key())));
		Set<String> dead = new HashSet<>();
		rows.values().stream().filter((row) -> row.status().equals("DEAD")).forEach((row) -> {
			assertThat(row.deadReason()).as("dead reason of %s", row.id()).isEqualTo("TERMINAL_STATUS");
			assertThat(row.lastStatusCode()).as("last status of %s", row.id()).isIn(400, 409);
			dead.add(row.id().toString());
		});
		assertThat(dead).isNotEmpty().isEqualTo(answeredTerminally);
		assertThat(rows.values()).extracting(Row::status).containsOnly("DELIVERED", "DEAD");
		assertThat(deadLettersShownByTheActuatorEndpoint(client)).isEqualTo(dead);

		assertThat(stats.faults()).allSatisfy((fault, count) -> assertThat(count).as("%s faults", fault).isPositive());
		// A slow answer is lost after the charge was processed, so the retry that follows
		// is answered from the stored result. A dropped answer's 200 arrived before its
		// body broke off: a success once its status arrives, never sent again.
		assertThat(stats.duplicates()).isGreaterThanOrEqualTo(stats.faults().get(Fault.SLOW));
		assertThat(stats.uniqueKeys()).isEqualTo(rows.size());

		PaymentRequest deadCharge = charges.stream()
			.filter((charge) -> !refunds.containsKey(charge.orderId()))
			.filter((charge) -> dead.contains(charge.messageId().toString()))
			.findFirst()
			.orElseThrow();
		replaysOnceTheSimulatorAcceptsIt(client, deadCharge);
	}

	/**
	 * The operator's path: the payments API is fixed, then the dead charge is replayed
	 * through {@code POST /actuator/outbox/replay}, keeping its id and idempotency key.
	 */
	private void replaysOnceTheSimulatorAcceptsIt(SampleClient client, PaymentRequest charge) {
		String key = charge.messageId().toString();
		assertThat(client.heal(key).path("forgottenStatus").asInt()).isIn(400, 409);
		JsonNode replay = client.replay(charge.messageId());
		assertThat(replay.path("action").asString()).isEqualTo("replay");
		assertThat(replay.path("count").asInt()).isEqualTo(1);
		await().atMost(REPLAY_TIMEOUT)
			.pollInterval(Duration.ofMillis(100))
			.until(() -> client.outbox("/messages/" + key).path("status").asString(), "DELIVERED"::equals);
		JsonNode message = client.outbox("/messages/" + key);
		assertThat(message.path("idempotencyKey").asString()).isEqualTo(key);
		// Transient faults may come before the terminal answer and after the replay.
		List<String> outcomes = message.path("attemptLog")
			.valueStream()
			.map((attempt) -> attempt.path("outcome").asString())
			.toList();
		assertThat(outcomes).containsSubsequence("DEAD", "REPLAYED").endsWith("DELIVERED");
		assertThat(outcomes.subList(0, outcomes.indexOf("REPLAYED"))).endsWith("DEAD").doesNotContain("DELIVERED");
		List<Receipt> receipts = client.stats().orders().get(String.valueOf(charge.orderId()));
		assertThat(receipts).extracting(Receipt::path, Receipt::key)
			.containsExactly(tuple("/charges", key), tuple("/charges", key));
		assertThat(receipts).extracting(Receipt::status)
			.satisfiesExactly((status) -> assertThat(status).isIn(400, 409),
					(status) -> assertThat(status).isEqualTo(201));
	}

	private static Set<String> deadLettersShownByTheActuatorEndpoint(SampleClient client) {
		JsonNode summary = client.outbox("");
		Set<String> ids = new HashSet<>();
		client.outbox("/messages?status=DEAD&limit=500")
			.path("messages")
			.forEach((message) -> ids.add(message.path("id").asString()));
		assertThat(summary.at("/statuses/DEAD").asLong()).isEqualTo(ids.size());
		return ids;
	}

	private void awaitSettled() {
		JdbcClient jdbc = JdbcClient.create(this.dataSource);
		await().atMost(SETTLE_TIMEOUT)
			.pollInterval(Duration.ofMillis(250))
			.until(() -> jdbc.sql("SELECT count(*) FROM retry_outbox_message WHERE status IN ('PENDING', 'IN_FLIGHT')")
				.query(Long.class)
				.single() == 0);
	}

	private Map<UUID, Row> rows() {
		Map<UUID, Row> rows = new HashMap<>();
		JdbcClient.create(this.dataSource)
			.sql("SELECT id, status, dead_reason, last_status_code FROM retry_outbox_message")
			.query((rs, rowNum) -> new Row(rs.getObject("id", UUID.class), rs.getString("status"),
					rs.getString("dead_reason"), rs.getObject("last_status_code", Integer.class)))
			.list()
			.forEach((row) -> rows.put(row.id(), row));
		return rows;
	}

	private record Row(UUID id, String status, String deadReason, Integer lastStatusCode) {

	}

}
