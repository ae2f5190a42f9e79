package io.retryoutbox;

import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.retryoutbox.jdbc.OutboxSchemaInitializer;
import io.retryoutbox.testsupport.TestDatabase;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;

import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The checks on a message's status and an attempt's outcome, rewritten by V9 and V10 as
 * array constants that PostgreSQL need not fold again for every statement, keep the rows
 * of an outbox written before them and refuse what they refused before.
 */
class StatusChecksUpgradeIntegrationTests {

	private final DriverManagerDataSource dataSource = new DriverManagerDataSource(TestDatabase.createDatabase());

	private final JdbcClient jdbc = JdbcClient.create(this.dataSource);

	@Test
	void anOutboxOfVersionEightKeepsItsRowsAndItsChecksBecomeValidatedArrayConstants() {
		migrate("8");
		for (String status : List.of("PENDING", "IN_FLIGHT", "DELIVERED", "DEAD")) {
			UUID id = insertMessage(status);
			if (!status.equals("PENDING")) {
				insertAttempt(id, status.equals("IN_FLIGHT") ? "RETRY" : status);
			}
		}
		insertAttempt(insertMessage("PENDING"), "REPLAYED");
		new OutboxSchemaInitializer(this.dataSource, null).afterPropertiesSet();
		assertThat(this.jdbc.sql("""
				SELECT conname, pg_get_constraintdef(oid) || CASE WHEN convalidated THEN '' ELSE ' NOT VALID' END
				FROM pg_constraint WHERE conname IN ('retry_outbox_message_status_check',
					'retry_outbox_attempt_outcome_check')
				""").query((rs, row) -> Map.entry(rs.getString(1), rs.getString(2))).list()).containsExactlyInAnyOrder(
				Map.entry("retry_outbox_message_status_check",
						"CHECK ((status = ANY ('{PENDING,IN_FLIGHT,DELIVERED,DEAD}'::text[])))"),
				Map.entry("retry_outbox_attempt_outcome_check",
						"CHECK ((outcome = ANY ('{DELIVERED,RETRY,DEAD,REPLAYED}'::text[])))"));
		assertThat(this.jdbc.sql("SELECT status, count(*) FROM retry_outbox_message GROUP BY status")
			.query((rs, row) -> Map.entry(rs.getString(1), rs.getLong(2)))
			.list()).containsExactlyInAnyOrder(Map.entry("PENDING", 2L), Map.entry("IN_FLIGHT", 1L),
					Map.entry("DELIVERED", 1L), Map.entry("DEAD", 1L));
		assertThat(this.jdbc.sql("SELECT count(*) FROM retry_outbox_attempt").query(Long.class).single()).isEqualTo(4);
	}

	@Test
	void stillRefusesAStatusOrAnOutcomeItDoesNotKnowAndWritesNothing() {
		new OutboxSchemaInitializer(this.dataSource, null).afterPropertiesSet();
		UUID id = insertMessage("PENDING");
		assertThatExceptionOfType(DataIntegrityViolationException.class).isThrownBy(() -> insertMessage("PARKED"))
			.withMessageContaining("retry_outbox_message_status_check");
		assertThatExceptionOfType(DataIntegrityViolationException.class)
			.isThrownBy(() -> this.jdbc.sql("UPDATE retry_outbox_message SET status = 'pending' WHERE id = ?")
				.param(id)
				.update())
			.withMessageContaining("retry_outbox_message_status_check");
		assertThatExceptionOfType(DataIntegrityViolationException.class).isThrownBy(() -> insertAttempt(id, "SKIPPED"))
			.withMessageContaining("retry_outbox_attempt_outcome_check");
		assertThat(this.jdbc.sql("SELECT status FROM retry_outbox_message").query(String.class).list())
			.containsExactly("PENDING");
		assertThat(this.jdbc.sql("SELECT count(*) FROM retry_outbox_attempt").query(Long.class).single()).isZero();
	}

	private void migrate(String target) {
		Flyway.configure(getClass().getClassLoader())
			.dataSource(this.dataSource)
			.locations(OutboxSchemaInitializer.LOCATION)
			.table(OutboxSchemaInitializer.HISTORY_TABLE)
			.baselineOnMigrate(true)
			.baselineVersion("0")
			.target(target)
			.load()
			.migrate();
	}

	private UUID insertMessage(String status) {
		UUID id = UUID.randomUUID();
		this.jdbc.sql("""
				INSERT INTO retry_outbox_message (id, destination, method, path, idempotency_key, status)
				VALUES (?, 'api', 'POST', '/orders', ?, ?)
				""").params(id, id.toString(), status).update();
		return id;
	}

	private void insertAttempt(UUID messageId, String outcome) {
		this.jdbc.sql("""
				INSERT INTO retry_outbox_attempt (message_id, attempt, started_at, outcome)
				VALUES (?, 1, now(), ?)
				""").params(messageId, outcome).update();
	}

}
