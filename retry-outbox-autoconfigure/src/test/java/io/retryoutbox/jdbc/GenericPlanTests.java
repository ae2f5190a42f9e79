package io.retryoutbox.jdbc;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import io.retryoutbox.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A relay plans each statement of its rounds once per connection, often on an empty
 * outbox, and keeps that plan as the outbox grows: each statement, planned on the empty
 * table, must still read only the rows it needs from a grown one.
 */
class GenericPlanTests {

	private static final String OWNER = "relay-a";

	private final DataSource dataSource = new DriverManagerDataSource(TestDatabase.createDatabase());

	private final JdbcClient jdbc = JdbcClient.create(this.dataSource);

	@Test
	void everyStatementOfARoundPlannedOnTheEmptyOutboxReadsOnlyWhatItNeedsFromAGrownOne() {
		new OutboxSchemaInitializer(this.dataSource, null).afterPropertiesSet();
		Map<String, String> statements = new LinkedHashMap<>();
		statements.put("claim", JdbcOutboxStore.CLAIM);
		statements.put("claim_runs", OrderingKeys.CLAIM_RUNS);
		statements.put("finish", OrderingKeys.FINISH);
		statements.put("release_keys", OrderingKeys.RELEASE);
		statements.put("promote", OrderingKeys.claimAndPromoteStatement());
		statements.put("arrived_keys", OrderingKeys.ARRIVED_KEYS);
		Map<String, JsonNode> plans = new LinkedHashMap<>();
		RelayTransactions.create(this.dataSource).executeWithoutResult((status) -> {
			statements.forEach((name, sql) -> {
				this.jdbc
					.sql("PREPARE " + name + " AS "
							+ RelayTransactionsTests.numbered(Sql.render(sql, OutboxTables.in(null))))
					.update();
				explain(name, parameters(name, List.of()));
			});
			grow();
			List<String> leased = this.jdbc
				.sql("SELECT id::text FROM retry_outbox_message WHERE status = 'IN_FLIGHT' ORDER BY seq LIMIT 2")
				.query(String.class)
				.list();
			statements.keySet().forEach((name) -> plans.put(name, explain(name, parameters(name, leased))));
			assertThat(this.jdbc
				.sql("SELECT name FROM pg_prepared_statements WHERE custom_plans = 0 AND generic_plans = 2")
				.query(String.class)
				.list()).as("the statements planned once, for any parameters")
				.containsExactlyInAnyOrderElementsOf(statements.keySet());
			status.setRollbackOnly();
		});
		plans.forEach((name, plan) -> {
			String text = plan.toString();
			assertThat(text).as("the plan of %s", name).doesNotContain("Seq Scan");
			assertThat(mostRowsRead(plan)).as("the most rows one step of %s read: %s", name, text)
				.isLessThanOrEqualTo(500);
		});
	}

	private JsonNode explain(String name, String parameters) {
		String json = this.jdbc.sql("EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE " + name + "(" + parameters + ")")
			.query(String.class)
			.single();
		return JsonMapper.shared().readTree(json).get(0).get("Plan");
	}

	/**
	 * 20,000 delivered messages; 100 keys whose heads are leased, with 2,000 messages
	 * waiting and 200 arrived behind them; 100 due heads of other keys; 5,000 due
	 * messages without a key.
	 */
	private void grow() {
		this.jdbc.sql("""
				INSERT INTO retry_outbox_message (id, destination, method, path, ordering_key, idempotency_key,
					status, is_head, holds_key, new_arrival, lease_owner, lease_until, delivered_at)
				SELECT gen_random_uuid(), 'api', 'POST', '/x', 'key-' || (i % 200), 'k' || i,
					CASE WHEN i < 20000 THEN 'DELIVERED' WHEN i < 20100 THEN 'IN_FLIGHT' ELSE 'PENDING' END,
					i >= 20000 AND i < 20200, i >= 20000, i >= 22200,
					CASE WHEN i >= 20000 AND i < 20100 THEN 'relay-a' END,
					CASE WHEN i >= 20000 AND i < 20100 THEN now() + interval '1 minute' END,
					CASE WHEN i < 20000 THEN now() END
				FROM generate_series(0, 22399) AS i
				""").update();
		this.jdbc.sql("""
				INSERT INTO retry_outbox_message (id, destination, method, path, idempotency_key)
				SELECT gen_random_uuid(), 'api', 'POST', '/x', 'u' || i FROM generate_series(0, 4999) AS i
				""").update();
	}

	private static String parameters(String name, List<String> leased) {
		String keys = "'{key-1,key-2}'";
		return switch (name) {
			case "claim" -> "'" + OWNER + "', 60000, '{api}', '{10}', now()";
			case "claim_runs" -> keys + ", '{api,api}', '{}', 7, 7, 7";
			case "arrived_keys" -> "'', 10000";
			case "release_keys" -> keys;
			case "promote" -> "'" + OWNER + "', 60000, '{api}', '{10}', now(), " + keys + ", now(), '{api}', '{10}', '"
					+ OWNER + "', 60000, 7, 7, 7";
			case "finish" -> finishParameters(leased);
			default -> throw new IllegalArgumentException(name);
		};
	}

	private static String finishParameters(List<String> leased) {
		String ids = "'{" + String.join(",", leased) + "}'";
		String[] row = { ids, "DELIVERED", "DELIVERED", null, "200", null, null, null, "true", "1796292000000000", "5",
				null, null, null };
		StringBuilder parameters = new StringBuilder(ids + ", true, '{key-1,key-2}', 'retry_outbox_message'");
		for (int column = 0; column < row.length; column++) {
			parameters.append(", ").append((column == 0) ? ids : array(row[column], leased.size()));
		}
		return parameters.append(", '").append(OWNER).append("', '").append(OWNER).append("', true").toString();
	}

	private static String array(String value, int size) {
		String element = (value != null) ? value : "NULL";
		return "'{" + String.join(",", Collections.nCopies(size, element)) + "}'";
	}

	private static long mostRowsRead(JsonNode node) {
		long most = 0;
		if (node.has("Relation Name")) {
			long loops = node.path("Actual Loops").asLong(1);
			most = (node.path("Actual Rows").asLong() + node.path("Rows Removed by Filter").asLong()) * loops;
		}
		for (JsonNode child : node.path("Plans")) {
			most = Math.max(most, mostRowsRead(child));
		}
		return most;
	}

}
