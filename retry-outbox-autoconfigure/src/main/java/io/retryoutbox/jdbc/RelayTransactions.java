package io.retryoutbox.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

import javax.sql.DataSource;

import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The transactions of the relay's rounds and of the key statements, in which PostgreSQL
 * plans each statement for the table as it is now.
 * <p>
 * A server-side prepared statement gets a generic plan after five executions, made for
 * the table's size at that moment and kept for the connection's life unless an
 * {@code ANALYZE} invalidates it. A relay starts on an empty or small outbox, where a
 * generic plan scans the whole table, and keeps scanning as the table grows: measured on
 * a 20,000-message run without autovacuum, 25 million rows read by about 1,700 such
 * scans. Even a custom plan is made from statistics that a queue table rarely has right
 * (none at all without autovacuum, and its partial indexes hold a fraction of what the
 * table's size suggests): measured in an 8,000-message run, the admission read every row
 * of the table by a sequential scan, and bitmap scans of the partial indexes walked
 * thousands of entries of rows long gone, which a bitmap scan never marks dead. Every
 * statement of the relay is written to be read through an index, so scans are switched
 * off in its transactions, and plain index scans mark the dead entries they pass. The
 * settings are local to the transaction, so the pool's connection goes back to the
 * application unchanged.
 */
final class RelayTransactions {

	private static final String PLANNER_SETTINGS = """
			SELECT set_config('plan_cache_mode', 'force_custom_plan', true),
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
			try (Statement statement = connection.createStatement()) {
				statement.execute(PLANNER_SETTINGS);
			}
		}

	}

}
