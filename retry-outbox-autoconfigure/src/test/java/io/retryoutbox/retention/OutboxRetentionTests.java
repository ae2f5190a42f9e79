package io.retryoutbox.retention;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import io.retryoutbox.autoconfigure.OutboxRetentionAutoConfiguration;
import io.retryoutbox.jdbc.JdbcOutboxComponents;
import io.retryoutbox.jdbc.OutboxTables;
import io.retryoutbox.message.OutboxReadModel;
import io.retryoutbox.message.OutboxRepair;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.OutboxRows;
import io.retryoutbox.testsupport.TestDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The retention of finished messages on a real PostgreSQL.
 */
class OutboxRetentionTests {

	private ApplicationContextRunner runner;

	@BeforeEach
	void createDatabase() {
		this.runner = OutboxContexts.runner(TestDatabase.createDatabase())
			.withConfiguration(AutoConfigurations.of(OutboxRetentionAutoConfiguration.class))
			.withPropertyValues("retry-outbox.destinations.payments.base-url=http://localhost:9/api",
					"retry-outbox.retention.interval=100ms", "retry-outbox.retention.batch-size=10");
	}

	/**
	 * Inserts messages of a status, finished (delivered or enqueued) {@code age} ago,
	 * each with an attempt log row; pending and in-flight ones are not due and leased far
	 * ahead.
	 */
	private static void insert(AssertableApplicationContext context, String status, int count, Duration age) {
		OutboxContexts.jdbc(context).sql("""
				WITH inserted AS (
					INSERT INTO retry_outbox_message (id, destination, method, path, idempotency_key, status, attempts,
						created_at, delivered_at, next_attempt_at, lease_owner, lease_until)
					SELECT gen_random_uuid(), 'payments', 'POST', '/old', 'k' || i, ?, 1,
						now() - ? * interval '1 millisecond',
						CASE WHEN ? = 'DELIVERED' THEN now() - ? * interval '1 millisecond' END,
						now() + interval '1 day', CASE WHEN ? = 'IN_FLIGHT' THEN 'elsewhere' END,
						CASE WHEN ? = 'IN_FLIGHT' THEN now() + interval '1 day' END
					FROM generate_series(1, ?) i
					RETURNING id)
				INSERT INTO retry_outbox_attempt (message_id, attempt, started_at, outcome)
				SELECT id, 1, now(), 'RETRY' FROM inserted
				""").params(status, age.toMillis(), status, age.toMillis(), status, status, count).update();
	}

	private static long count(AssertableApplicationContext context, String status) {
		return OutboxContexts.jdbc(context)
			.sql("SELECT count(*) FROM retry_outbox_message WHERE status = ?")
			.param(status)
			.query(Long.class)
			.single();
	}

	private static long attempts(AssertableApplicationContext context) {
		return OutboxContexts.jdbc(context).sql("SELECT count(*) FROM retry_outbox_attempt").query(Long.class).single();
	}

	@Test
	void deletesDeliveredMessagesPastRetentionInChunksWithTheirAttemptsAndNothingElse() {
		this.runner.run((context) -> {
			insert(context, "DELIVERED", 25, Duration.ofDays(8));
			insert(context, "DELIVERED", 3, Duration.ofDays(6));
			insert(context, "DEAD", 4, Duration.ofDays(30));
			insert(context, "PENDING", 5, Duration.ofDays(30));
			insert(context, "IN_FLIGHT", 6, Duration.ofDays(30));
			await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> assertThat(count(context, "DELIVERED")).isEqualTo(3));
			assertThat(count(context, "DEAD")).isEqualTo(4);
			assertThat(count(context, "PENDING")).isEqualTo(5);
			assertThat(count(context, "IN_FLIGHT")).isEqualTo(6);
			assertThat(attempts(context)).isEqualTo(3 + 4 + 5 + 6);
		});
	}

	@Test
	void deletesOneChunkPerStatementAndSkipsMessagesLockedElsewhere() {
		this.runner.withPropertyValues("retry-outbox.retention.enabled=false").run((context) -> {
			insert(context, "DELIVERED", 25, Duration.ofDays(8));
			AtomicInteger deletes = new AtomicInteger();
			DataSource counting = countingDeletes(context.getBean(DataSource.class), deletes);
			OutboxRetention retention = new JdbcOutboxComponents(counting, OutboxTables.in(null), JsonMapper.shared(),
					JdbcOutboxComponents.AttemptLog.DEFAULTS)
				.retention(10);
			TransactionTemplate elsewhere = OutboxContexts.transactions(context);
			long deleted = elsewhere.execute((status) -> {
				OutboxContexts.jdbc(context)
					.sql("SELECT id FROM retry_outbox_message ORDER BY delivered_at LIMIT 1 FOR UPDATE")
					.query(UUID.class)
					.single();
				// Runs on its own connection while this transaction holds the lock.
				return retention.deleteDelivered(Duration.ofDays(7));
			});
			assertThat(deleted).isEqualTo(24);
			assertThat(deletes).hasValue(3);
			assertThat(count(context, "DELIVERED")).isOne();
		});
	}

	private static DataSource countingDeletes(DataSource dataSource, AtomicInteger deletes) {
		return new DelegatingDataSource(dataSource) {
			@Override
			public Connection getConnection() throws SQLException {
				Connection connection = super.getConnection();
				return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(),
						new Class<?>[] { Connection.class }, (proxy, method, args) -> {
							if (method.getName().equals("prepareStatement")
									&& ((String) args[0]).contains("DELETE FROM retry_outbox_message")) {
								deletes.incrementAndGet();
							}
							try {
								return method.invoke(connection, args);
							}
							catch (InvocationTargetException ex) {
								throw ex.getCause();
							}
						});
			}
		};
	}

	@Test
	void deletesDeadMessagesOnlyWhenTheirRetentionIsSet() {
		this.runner.withPropertyValues("retry-outbox.retention.dead=14d").run((context) -> {
			insert(context, "DEAD", 12, Duration.ofDays(15));
			insert(context, "DEAD", 2, Duration.ofDays(13));
			await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(count(context, "DEAD")).isEqualTo(2));
		});
	}

	@Test
	void keepsADeadMessageThatParksItsKeyWhetherTheKeysNextMessageCameBeforeOrAfterAndADiscardThenReleasesIt() {
		this.runner.withPropertyValues("retry-outbox.retention.dead=1d").run((context) -> {
			OutboxReadModel admin = context.getBean(OutboxReadModel.class);
			OutboxRepair repair = context.getBean(OutboxRepair.class);
			// Followers are due only tomorrow, so that the relay leaves them alone once
			// they are heads.
			UUID earlyHead = OutboxRows.insert(context, "DEAD", "early", Duration.ofDays(30));
			UUID earlyNext = OutboxRows.insert(context, "PENDING", "early", Duration.ofDays(-1));
			UUID lateHead = OutboxRows.insert(context, "DEAD", "late", Duration.ofDays(30));
			insert(context, "DEAD", 12, Duration.ofDays(30));
			await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(count(context, "DEAD")).isEqualTo(2));
			UUID lateNext = OutboxRows.insert(context, "PENDING", "late", Duration.ofDays(-1));
			insert(context, "DEAD", 12, Duration.ofDays(30));
			await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(count(context, "DEAD")).isEqualTo(2));
			assertThat(admin.parkedKeys(10)).containsExactly("early", "late");
			assertThat(admin.stats().parkedKeys()).isEqualTo(2);
			assertThat(isHead(context, earlyNext)).isFalse();
			assertThat(isHead(context, lateNext)).isFalse();
			assertThat(repair.discard(earlyHead)).isTrue();
			assertThat(repair.discard(lateHead)).isTrue();
			assertThat(isHead(context, earlyNext)).isTrue();
			assertThat(isHead(context, lateNext)).isTrue();
			assertThat(admin.parkedKeys(10)).isEmpty();
			assertThat(OutboxContexts.jdbc(context)
				.sql("SELECT ordering_key, count(*) FROM retry_outbox_message WHERE holds_key GROUP BY 1 ORDER BY 1")
				.query((rs, row) -> rs.getString(1) + "=" + rs.getInt(2))
				.list()).containsExactly("early=1", "late=1");
		});
	}

	@Test
	void keepsADeliveredMessageUntilItsKeyIsReleasedSoThatTheKeysNextMessageStillGoes() {
		this.runner.withPropertyValues("retry-outbox.relay.enabled=false").run((context) -> {
			UUID head = OutboxRows.insert(context, "PENDING", "k", Duration.ofDays(-1));
			UUID next = OutboxRows.insert(context, "PENDING", "k", Duration.ofDays(-1));
			// Delivered long ago, but its relay has not released the key yet.
			OutboxContexts.jdbc(context).sql("""
					UPDATE retry_outbox_message SET status = 'DELIVERED', releasing = true,
						delivered_at = now() - interval '30 days'
					WHERE id = ?
					""").param(head).update();
			JdbcOutboxComponents jdbc = context.getBean(JdbcOutboxComponents.class);
			OutboxRetention retention = jdbc.retention(10);
			assertThat(retention.deleteDelivered(Duration.ofDays(7))).isZero();
			assertThat(jdbc.store().releaseKeys()).isOne();
			assertThat(isHead(context, next)).isTrue();
			assertThat(retention.deleteDelivered(Duration.ofDays(7))).isOne();
		});
	}

	private static boolean isHead(AssertableApplicationContext context, UUID id) {
		return OutboxContexts.jdbc(context)
			.sql("SELECT is_head FROM retry_outbox_message WHERE id = ?")
			.param(id)
			.query(Boolean.class)
			.single();
	}

	@Test
	void runsOnlyOnInstancesWithARelay() {
		this.runner.withPropertyValues("retry-outbox.relay.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(OutboxRetentionRunner.class));
		this.runner.withPropertyValues("retry-outbox.retention.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(OutboxRetentionRunner.class));
	}

}
