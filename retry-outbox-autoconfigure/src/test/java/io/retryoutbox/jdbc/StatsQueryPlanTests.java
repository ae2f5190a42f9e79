package io.retryoutbox.jdbc;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.retryoutbox.testsupport.TestDatabase;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

/**
 * The statistics behind health and the gauges, and the pending and dead counts per
 * destination behind the gauges, read the unfinished, dead and parked rows through
 * partial indexes, never the delivered ones that retention keeps: shown on their real
 * plan with 10^6 delivered messages beside 10^4 pending ones (heads, followers, a few for
 * a destination this instance does not know), 100 in flight and 1,000 dead.
 */
class StatsQueryPlanTests {

	private static final int UNFINISHED = 10_000 + 100;

	private static final String[] DESTINATIONS = { "api", "audit" };

	private static JdbcClient jdbc;

	@BeforeAll
	static void fillTheTable() {
		String url = TestDatabase.createDatabase();
		new OutboxSchemaInitializer(new DriverManagerDataSource(url), null).afterPropertiesSet();
		jdbc = JdbcClient.create(new DriverManagerDataSource(url));
		jdbc.sql(
				"""
						INSERT INTO retry_outbox_message (id, destination, method, path, ordering_key, idempotency_key, status,
							attempts, created_at, next_attempt_at, delivered_at)
						SELECT gen_random_uuid(), 'api', 'POST', '/x', CASE WHEN i % 2 = 0 THEN 'key-' || (i % 10000) END, 'd' || i,
							'DELIVERED', 1, now() - interval '7 days' + i * interval '500 milliseconds',
							now() - interval '7 days' + i * interval '500 milliseconds',
							now() - interval '7 days' + i * interval '500 milliseconds' + interval '1 second'
						FROM generate_series(0, 999999) AS i
						""")
			.update();
		// 3,000 unkeyed, then 1,000 keys with a head and six followers each; every
		// thousandth row is for a destination this instance does not configure.
		jdbc.sql("""
				INSERT INTO retry_outbox_message (id, destination, method, path, ordering_key, idempotency_key, status,
					created_at, next_attempt_at, is_head, holds_key)
				SELECT gen_random_uuid(), CASE WHEN i % 1000 = 7 THEN 'retired' ELSE 'api' END, 'POST', '/x',
					CASE WHEN i >= 3000 THEN 'live-' || (i % 1000) END, 'p' || i, 'PENDING',
					now() - interval '1 hour' + i * interval '100 milliseconds',
					now() - interval '30 minutes' + i * interval '1 second', i < 4000, i >= 3000
				FROM generate_series(0, 9999) AS i
				""").update();
		jdbc.sql("""
				INSERT INTO retry_outbox_message (id, destination, method, path, idempotency_key, status, attempts,
					created_at, lease_owner, lease_until)
				SELECT gen_random_uuid(), 'api', 'POST', '/x', 'f' || i, 'IN_FLIGHT', 1, now() - interval '1 minute',
					'other', now() + interval '1 minute'
				FROM generate_series(0, 99) AS i
				""").update();
		// 50 of them dead heads that park their key (on-dead=block); a quarter for audit.
		jdbc.sql("""
				INSERT INTO retry_outbox_message (id, destination, method, path, ordering_key, idempotency_key, status,
					attempts, created_at, dead_reason, holds_key)
				SELECT gen_random_uuid(), CASE WHEN i % 4 = 3 THEN 'audit' ELSE 'api' END, 'POST', '/x',
					CASE WHEN i < 50 THEN 'parked-' || i END, 'x' || i, 'DEAD',
					5, now() - interval '2 days', 'ATTEMPTS_EXHAUSTED', i < 50
				FROM generate_series(0, 999) AS i
				""").update();
		jdbc.sql("ANALYZE retry_outbox_message").update();
	}

	@Test
	void readsTheStatisticsOfTenThousandPendingMessagesBesideAMillionDeliveredOnesFromIndexesAlone() {
		String stats = Sql.render(JdbcOutboxReadModel.STATS, OutboxTables.in(null));

		JsonNode plan = plan(stats);

		assertThat(indexes(plan)).contains("retry_outbox_message_unfinished_idx", "retry_outbox_message_lease_idx",
				"retry_outbox_message_dead_idx", "retry_outbox_message_due_idx");
		assertReadsIndexesAlone(plan);
		Map<String, Object> figures = jdbc.sql(stats).param("destinations", DESTINATIONS).query().singleRow();
		assertThat(figures).containsEntry("pending", 10_000L)
			.containsEntry("in_flight", 100L)
			.containsEntry("dead", 1_000L)
			.containsEntry("parked_keys", 50L)
			.containsEntry("unknown_destination", 10L);
	}

	@Test
	void countsThePendingAndDeadMessagesOfEachDestinationBesideAMillionDeliveredOnesFromIndexesAlone() {
		String pendingAndDead = Sql.render(JdbcOutboxReadModel.PENDING_AND_DEAD, OutboxTables.in(null));

		JsonNode plan = plan(pendingAndDead);

		assertThat(indexes(plan)).containsExactly("retry_outbox_message_dead_idx",
				"retry_outbox_message_unfinished_idx");
		assertReadsIndexesAlone(plan);
		Map<String, List<Long>> counts = new TreeMap<>();
		jdbc.sql(pendingAndDead).query((rs) -> {
			counts.put(rs.getString("destination"), List.of(rs.getLong("pending"), rs.getLong("dead")));
		});
		// The 100 in flight are neither.
		assertThat(counts).containsOnly(entry("api", List.of(9_990L, 750L)), entry("audit", List.of(0L, 250L)),
				entry("retired", List.of(10L, 0L)));
	}

	private static JsonNode plan(String sql) {
		return JsonMapper.shared()
			.readTree(jdbc.sql("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql)
				.param("destinations", DESTINATIONS)
				.query(String.class)
				.single())
			.get(0)
			.get("Plan");
	}

	private static Set<String> indexes(JsonNode plan) {
		Set<String> indexes = new TreeSet<>();
		Matcher names = Pattern.compile("\"Index Name\":\"(\\w+)\"").matcher(plan.toString());
		while (names.find()) {
			indexes.add(names.group(1));
		}
		return indexes;
	}

	private static void assertReadsIndexesAlone(JsonNode plan) {
		String text = plan.toString();
		List<JsonNode> scans = new ArrayList<>();
		collectScans(plan, scans);
		assertThat(scans).as("scans of retry_outbox_message in %s", text)
			.isNotEmpty()
			.allSatisfy((scan) -> assertThat(scan.get("Node Type").asString()).isIn("Index Scan", "Index Only Scan",
					"Bitmap Heap Scan"));
		assertThat(text).doesNotContain("Seq Scan");
		assertThat(scans).as("rows each scan examines, at most the unfinished ones: %s", text)
			.allSatisfy((scan) -> assertThat(examined(scan)).isLessThanOrEqualTo(UNFINISHED));
		long tablePages = jdbc.sql("SELECT relpages FROM pg_class WHERE relname = 'retry_outbox_message'")
			.query(Long.class)
			.single();
		long blocks = plan.get("Shared Hit Blocks").asLong() + plan.get("Shared Read Blocks").asLong();
		assertThat(tablePages).isGreaterThan(10_000);
		assertThat(blocks).as("buffers touched, against %d pages in the table: %s", tablePages, text).isLessThan(1_000);
	}

	private static void collectScans(JsonNode node, List<JsonNode> scans) {
		if ("retry_outbox_message".equals(node.path("Relation Name").asString(null))) {
			scans.add(node);
		}
		for (JsonNode child : node.path("Plans")) {
			collectScans(child, scans);
		}
	}

	private static long examined(JsonNode scan) {
		return (scan.path("Actual Rows").asLong() + scan.path("Rows Removed by Filter").asLong())
				* scan.path("Actual Loops").asLong(1);
	}

}
