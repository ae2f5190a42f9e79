package io.retryoutbox.jdbc;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;

import io.retryoutbox.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.datasource.DriverManagerDataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The claim statement reads O(batch) rows, not O(table): shown on its real plan with 10^6
 * pending messages spread over 10^4 ordering keys, of which only the 10^4 heads are
 * claimable.
 */
class ClaimQueryPlanTests {

	@Test
	void claimsABatchFromAMillionPendingRowsOverTenThousandKeysReadingOnlyTheBatch() throws Exception {
		String url = TestDatabase.createDatabase();
		new OutboxSchemaInitializer(new DriverManagerDataSource(url), null).afterPropertiesSet();
		try (Connection connection = DriverManager.getConnection(url)) {
			try (Statement statement = connection.createStatement()) {
				statement.execute("""
						INSERT INTO retry_outbox_message (id, destination, method, path, ordering_key, idempotency_key,
							next_attempt_at, is_head, holds_key)
						SELECT gen_random_uuid(), 'api', 'POST', '/x', 'key-' || (i % 10000), 'k' || i,
							now() - interval '1 hour' + i * interval '1 millisecond', i < 10000, true
						FROM generate_series(0, 999999) AS i
						""");
				statement.execute("ANALYZE retry_outbox_message");
			}
			assertReadsOnlyTheBatch(connection);
		}
	}

	@Test
	void claimsABatchFromManyDueMessagesBesideAMillionDeliveredOnesReadingOnlyTheBatch() throws Exception {
		// Many due heads: the planner, blind to the LIMIT's value, once guessed a tenth
		// of
		// them and hash-joined that guess with a scan of the whole table.
		String url = TestDatabase.createDatabase();
		new OutboxSchemaInitializer(new DriverManagerDataSource(url), null).afterPropertiesSet();
		try (Connection connection = DriverManager.getConnection(url)) {
			try (Statement statement = connection.createStatement()) {
				statement.execute("""
						INSERT INTO retry_outbox_message (id, destination, method, path, idempotency_key,
							next_attempt_at, status, delivered_at)
						SELECT gen_random_uuid(), 'api', 'POST', '/x', 'd' || i, now() - interval '2 days',
							'DELIVERED', now() - interval '1 day'
						FROM generate_series(0, 999999) AS i
						""");
				statement.execute("""
						INSERT INTO retry_outbox_message (id, destination, method, path, idempotency_key,
							next_attempt_at)
						SELECT gen_random_uuid(), 'api', 'POST', '/x', 'p' || i,
							now() - interval '1 hour' + i * interval '1 millisecond'
						FROM generate_series(0, 299999) AS i
						""");
				statement.execute("VACUUM ANALYZE retry_outbox_message");
			}
			assertReadsOnlyTheBatch(connection);
		}
	}

	private static void assertReadsOnlyTheBatch(Connection connection) throws Exception {
		connection.setAutoCommit(false);
		JsonNode plan;
		try (PreparedStatement explain = connection.prepareStatement("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "
				+ Sql.render(JdbcOutboxStore.CLAIM, OutboxTables.in(null)))) {
			explain.setString(1, "plan-test");
			explain.setLong(2, 60_000);
			explain.setArray(3, connection.createArrayOf("text", new String[] { "api", "audit" }));
			explain.setArray(4, connection.createArrayOf("int4", new Integer[] { 100, 100 }));
			explain.setObject(5, OffsetDateTime.now(ZoneOffset.UTC));
			try (ResultSet rs = explain.executeQuery()) {
				rs.next();
				plan = JsonMapper.shared().readTree(rs.getString(1)).get(0).get("Plan");
			}
		}
		finally {
			connection.rollback();
		}
		String text = plan.toString();
		assertThat(text).contains("retry_outbox_message_due_idx").doesNotContain("Seq Scan");
		assertThat(plan.get("Actual Rows").asInt()).isEqualTo(100);
		long blocks = plan.get("Shared Hit Blocks").asLong() + plan.get("Shared Read Blocks").asLong();
		assertThat(blocks).as("buffers touched by the claim of 100 rows: %s", text).isLessThan(2_000);
		assertThat(maxRowsScanned(plan)).isLessThanOrEqualTo(100);
	}

	private static long maxRowsScanned(JsonNode node) {
		long max = 0;
		if (node.has("Relation Name") && node.has("Actual Rows")) {
			max = node.get("Actual Rows").asLong() * node.path("Actual Loops").asLong(1);
		}
		for (JsonNode child : node.path("Plans")) {
			max = Math.max(max, maxRowsScanned(child));
		}
		return max;
	}

}
