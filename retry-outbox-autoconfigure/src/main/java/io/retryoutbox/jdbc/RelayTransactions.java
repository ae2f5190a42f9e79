package io.retryoutbox.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

import javax.sql.DataSource;

import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The transactions of the relay's rounds and of the key statements, in which PostgreSQL
 * reads the outbox through its indexes, and plans each statement once per connection.
 * <p>
 * A plan made from the table's statistics does not last: a relay starts on an empty or
 * small outbox, where a plan scans the whole table, and keeps scanning as the table grows
 * (measured on a 20,000-message run without autovacuum: 25 million rows read by about
 * 1,700 such scans), and a queue table rarely has its statistics right (none at all
 * without autovacuum, and its partial indexes hold a fraction of what the table's size
 * suggests: in an 8,000-message run, bitmap scans of the partial indexes walked thousands
 * of entries of rows long gone, which a bitmap scan never marks dead). Every statement of
 * the relay is written to be read through an index, so scans are switched off in its
 * transactions and plain index scans mark the dead entries they pass. Then the plan made
 * on the empty table is the plan for the grown one, and each statement is planned for any
 * parameters, once: planned again for each execution, the round's statements spent more
 * than a third of their database time in planning (2 ms a round). The settings are local
 * to the transaction, so the pool's connection goes back to the application unchanged.
 */
final class RelayTransactions {

	private static final String PLANNER_SETTINGS = """
			SELECT set_config('plan_cache_mode', 'force_generic_plan', true),
				set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true)
			""";

	private RelayTransactions() {
	}

	static TransactionTemplate create(DataSource dataSource) {
		return new TransactionTemplate(new CustomPlanTransactionManager(dataSource));
	}

	private static final class CustomPlanTransactionManager extends DataSourceTransactionManager {

		CustomPlanTransactionManager(DataSource dataSource) {
			super(dataSource);
		}

		@Override
		protected void prepareTransactionalConnection(Connection connection, TransactionDefinition definition)
				throws SQLException {
			super.prepareTransactionalConnection(connection, definition);
			// Prepared, as the round's statements are, so that the driver keeps it
			// planned on the server: sent as text, it was planned again in every
			// transaction, 9% of the poll thread's CPU.
			try (PreparedStatement statement = connection.prepareStatement(PLANNER_SETTINGS)) {
				statement.execute();
			}
		}

	}

}
