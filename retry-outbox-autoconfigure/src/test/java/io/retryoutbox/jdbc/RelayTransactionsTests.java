package io.retryoutbox.jdbc;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.sql.DataSource;

import io.retryoutbox.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The relay's statements read the outbox through its indexes: a relay that started on an
 * empty outbox must not keep scanning it whole once it has grown.
 */
class RelayTransactionsTests {

	private final DataSource dataSource = new DriverManagerDataSource(TestDatabase.createDatabase());

	@Test
	void readsTheGrownTableThroughTheReleasingIndexAfterManyKeyAdmissionsOnTheEmptyOne() {
		String admitWithoutOutcomes = "'{}', true, '{}', 'retry_outbox_message'" + ", '{}'".repeat(14)
				+ ", 'relay-a', 'relay-a', true";
		String plan = planAfterTheTableGrew(RelayTransactions.create(this.dataSource), OrderingKeys.FINISH,
				admitWithoutOutcomes);
		assertThat(plan).contains("retry_outbox_message_releasing_idx").doesNotContain("Seq Scan");
	}

	@Test
	void aPlainTransactionKeepsThePlanMadeForTheEmptyTable() {
		// Why the relay's transactions switch scans off: without it, the plan cached on
		// the empty table reads every row of the grown one. The statement is one scan, as
		// the admission's once was: a larger one may be planned anew for each execution.
		String plan = planAfterTheTableGrew(new TransactionTemplate(new DataSourceTransactionManager(this.dataSource)),
				"SELECT DISTINCT ordering_key FROM {message} WHERE releasing AND ?", "true");
		assertThat(plan).contains("Seq Scan on retry_outbox_message");
	}

	@Test
	void writesOutcomesByPrimaryKeyHoweverManyRowsTheRelayHasLeased() {
		new OutboxSchemaInitializer(this.dataSource, null).afterPropertiesSet();
		JdbcClient jdbc = JdbcClient.create(this.dataSource);
		// No statistics, as on a new table or without autovacuum: the planner took the
		// owner's leased rows for a handful and read them all through the lease index.
		jdbc.sql(
				"""
						INSERT INTO retry_outbox_message (id, destination, method, path, idempotency_key, status, lease_owner,
							lease_until)
						SELECT gen_random_uuid(), 'api', 'POST', '/x', 'k' || i, 'IN_FLIGHT', 'relay-a', now() + interval '1 minute'
						FROM generate_series(0, 4999) AS i
						""")
			.update();
		List<String> ids = jdbc.sql("SELECT id::text FROM retry_outbox_message LIMIT 50").query(String.class).list();
		int size = ids.size();
		String[][] columns = new String[14][size];
		for (int i = 0; i < size; i++) {
			String[] row = { ids.get(i), "DELIVERED", "DELIVERED", null, "200", null, null, null, "false",
					"2026-12-03T10:00:00Z", "5", null, null, null };
			for (int column = 0; column < row.length; column++) {
				columns[column][i] = row[column];
			}
		}
		List<Object> params = new ArrayList<>();
		params.add(new String[0]);
		params.add(false);
		params.add(new String[0]);
		params.add("retry_outbox_message");
		params.addAll(List.of((Object[]) columns));
		params.add("relay-a");
		params.add("relay-a");
		params.add(true);
		String plan = RelayTransactions.create(this.dataSource)
			.execute((status) -> String.join("\n",
					jdbc.sql("EXPLAIN " + Sql.render(OrderingKeys.FINISH, OutboxTables.in(null)))
						.params(params)
						.query(String.class)
						.list()));
		// Each outcome's row by its key, not all rows by the array of ids and then each
		// compared with every outcome.
		assertThat(plan).contains("Index Scan using retry_outbox_message_pkey")
			.doesNotContain("Join Filter")
			.doesNotContain("retry_outbox_message_lease_idx")
			.doesNotContain("Seq Scan on retry_outbox_message");
	}

	@Test
	void readsTheRestOfARunByPrimaryKeyHoweverManyMessagesWaitBehindTheirHeads() {
		new OutboxSchemaInitializer(this.dataSource, null).afterPropertiesSet();
		JdbcClient jdbc = JdbcClient.create(this.dataSource);
		// Waiting messages of many keys, no statistics: the planner took the index of all
		// waiting messages for the way to the run's few and read it whole, every round.
		jdbc.sql("""
				INSERT INTO retry_outbox_message (id, destination, method, path, ordering_key, idempotency_key,
					is_head, holds_key)
				SELECT gen_random_uuid(), 'api', 'POST', '/x', 'key-' || (i % 100), 'k' || i, false, true
				FROM generate_series(0, 4999) AS i
				""").update();
		String plan = RelayTransactions.create(this.dataSource)
			.execute((status) -> String.join("\n",
					jdbc.sql("EXPLAIN " + Sql.render(OrderingKeys.CLAIM_RUNS, OutboxTables.in(null)))
						.params(new String[] { "key-1" }, new String[] { "api" }, new String[0], 7, 7, 7)
						.query(String.class)
						.list()));
		assertThat(plan).isNotNull();
		// The waiting messages' index only probed for each key's first few, the run's
		// rows
		// then read by their ids.
		assertThat(plan).contains("Index Scan using retry_outbox_message_pkey on retry_outbox_message m")
			.contains("Index Scan using retry_outbox_message_successor_idx on retry_outbox_message x")
			.contains("Index Cond: (ordering_key = h.ordering_key)")
			.doesNotContain("Seq Scan");
	}

	private String planAfterTheTableGrew(TransactionTemplate transactions, String sql, String arguments) {
		new OutboxSchemaInitializer(this.dataSource, null).afterPropertiesSet();
		String statement = numbered(Sql.render(sql, OutboxTables.in(null)));
		String plan = transactions.execute((status) -> {
			JdbcClient jdbc = JdbcClient.create(this.dataSource);
			jdbc.sql("PREPARE admit AS " + statement).update();
			for (int i = 0; i < 10; i++) {
				jdbc.sql("EXECUTE admit(" + arguments + ")").query((rs) -> {
				});
			}
			jdbc.sql("""
					INSERT INTO retry_outbox_message (id, destination, method, path, ordering_key, idempotency_key,
						status, is_head, holds_key, releasing)
					SELECT gen_random_uuid(), 'api', 'POST', '/x', 'key-' || (i % 100), 'k' || i,
						'DELIVERED', i < 100, i < 100, i < 100
					FROM generate_series(0, 99999) AS i
					""").update();
			List<String> lines = jdbc.sql("EXPLAIN EXECUTE admit(" + arguments + ")").query(String.class).list();
			return String.join("\n", lines);
		});
		assertThat(plan).isNotNull();
		return plan;
	}

	static String numbered(String sql) {
		AtomicInteger parameter = new AtomicInteger();
		Matcher matcher = Pattern.compile("\\?").matcher(sql);
		return matcher.replaceAll((match) -> "\\$" + parameter.incrementAndGet());
	}

}
