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
 * scans. {@code SET LOCAL} keeps the setting inside the transaction, so the pool's
 * connection goes back to the application unchanged.
 */
final class RelayTransactions {

	private static final String CUSTOM_PLANS = "SET LOCAL plan_cache_mode = force_custom_plan";

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
				statement.execute(CUSTOM_PLANS);
			}
		}

	}

}
