package io.retryoutbox.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;

import javax.sql.DataSource;

import org.postgresql.PGStatement;

import org.springframework.dao.IncorrectResultSizeDataAccessException;
import org.springframework.jdbc.core.ArgumentPreparedStatementSetter;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.core.RowMapperResultSetExtractor;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.util.ClassUtils;

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

	// Only the PostgreSQL driver's statements, or a wrapper's that unwraps to one, are
	// told when to prepare: another driver keeps its own rules.
	private static final boolean PGJDBC_PRESENT = ClassUtils.isPresent("org.postgresql.PGStatement",
			RelayTransactions.class.getClassLoader());

	private RelayTransactions() {
	}

	/**
	 * Transactions that apply the planner settings in a statement of their own, before
	 * any of theirs.
	 * @param dataSource the outbox's data source
	 * @return the transactions
	 */
	static TransactionTemplate create(DataSource dataSource) {
		return new TransactionTemplate(new CustomPlanTransactionManager(dataSource, true));
	}

	/**
	 * Transactions whose statements each carry the planner settings ({@link #carrying}):
	 * for a round, whose every statement does, one round trip fewer. A round's statements
	 * wait for the database as long for a statement that does nothing as for one that
	 * writes its outcomes: in the shared bench the settings' own round trip took as much
	 * of the poll thread's time as the outcomes' statement (docs/benchmarks.md,
	 * thirty-second session).
	 * @param dataSource the outbox's data source
	 * @return the transactions
	 */
	static TransactionTemplate createCarried(DataSource dataSource) {
		return new TransactionTemplate(new CustomPlanTransactionManager(dataSource, false));
	}

	/**
	 * A statement preceded by the planner settings, sent with it in one round trip; the
	 * driver prepares each of the two on the server, and the server applies the settings
	 * before it binds the statement, so the statement's plan is made under them.
	 * @param sql the statement
	 * @return the statement that carries the settings, for {@link #query}
	 */
	static String carrying(String sql) {
		return PLANNER_SETTINGS.strip() + ";\n" + sql;
	}

	/**
	 * A statement made by {@link #carrying} that then commits its transaction, in the
	 * same round trip. For the last statement of a transaction of its own only: the
	 * driver, told by the server that no transaction is open, then sends nothing for the
	 * transaction manager's commit, which a round waited for as long as for either of its
	 * statements (docs/benchmarks.md, thirty-second session). A failed statement is not
	 * followed by the commit: the server skips the rest of the round trip, and the
	 * transaction is rolled back as before.
	 * @param carrying the statement, with the settings
	 * @return the statement that also commits
	 */
	static String committing(String carrying) {
		return carrying + ";\nCOMMIT";
	}

	/**
	 * Runs a statement made by {@link #carrying} and maps the rows of its own result.
	 * @param <T> the type of a row
	 * @param jdbc the template whose connection (the transaction's) runs it
	 * @param sql the statement with the settings
	 * @param params its parameters
	 * @param mapper the mapper of its rows
	 * @return the rows
	 */
	static <T> List<T> query(JdbcTemplate jdbc, String sql, List<?> params, RowMapper<T> mapper) {
		List<T> rows = jdbc.execute((Connection connection) -> prepared(connection, sql),
				(PreparedStatement statement) -> {
					new ArgumentPreparedStatementSetter(params.toArray()).setValues(statement);
					statement.execute();
					if (!statement.getMoreResults()) {
						throw new IncorrectResultSizeDataAccessException(
								"The statement after the planner settings returned no result set: " + sql, 1, 0);
					}
					return new RowMapperResultSetExtractor<>(mapper).extractData(statement.getResultSet());
				});
		return (rows != null) ? rows : List.of();
	}

	/**
	 * A statement that the driver prepares on the server, and so the server plans, on its
	 * first execution on the connection rather than its fifth. The pool hands the relay's
	 * poll thread whichever of its connections is free, so a relay keeps meeting
	 * connections that have not run its statements yet, at its start above all. Sent
	 * unnamed, each of the first four executions on such a connection was parsed and
	 * planned again: in the shared bench, the first rounds after the writers started each
	 * spent 20-40 ms of the server's time planning a round's two statements, and five
	 * rounds took the first half second (docs/benchmarks.md, thirty-third session).
	 */
	private static PreparedStatement prepared(Connection connection, String sql) throws SQLException {
		PreparedStatement statement = connection.prepareStatement(sql);
		if (PGJDBC_PRESENT) {
			PgStatements.prepareOnFirstExecution(statement);
		}
		return statement;
	}

	private static final class PgStatements {

		static void prepareOnFirstExecution(PreparedStatement statement) throws SQLException {
			if (statement.isWrapperFor(PGStatement.class)) {
				PGStatement pgStatement = statement.unwrap(PGStatement.class);
				// 0 turns server-side statements off, e.g. behind a pooler that cannot
				// keep them: left as the application set it.
				if (pgStatement.getPrepareThreshold() > 1) {
					pgStatement.setPrepareThreshold(1);
				}
			}
		}

	}

	private static final class CustomPlanTransactionManager extends DataSourceTransactionManager {

		private final boolean settingsFirst;

		CustomPlanTransactionManager(DataSource dataSource, boolean settingsFirst) {
			super(dataSource);
			this.settingsFirst = settingsFirst;
		}

		@Override
		protected void prepareTransactionalConnection(Connection connection, TransactionDefinition definition)
				throws SQLException {
			super.prepareTransactionalConnection(connection, definition);
			if (!this.settingsFirst) {
				return;
			}
			// Prepared, as the round's statements are, so that the driver keeps it
			// planned on the server: sent as text, it was planned again in every
			// transaction, 9% of the poll thread's CPU.
			try (PreparedStatement statement = prepared(connection, PLANNER_SETTINGS)) {
				statement.execute();
			}
		}

	}

}
