package io.retryoutbox.jdbc;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import javax.sql.DataSource;

import io.retryoutbox.message.Claim;
import io.retryoutbox.testsupport.TestDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for the inserts that tell which message of its key a new one arrived behind, on a
 * real PostgreSQL: the key's last unfinished message, the one a run must end with to take
 * the new one without reading it again.
 */
class InsertBehindTests {

	private DataSource dataSource;

	private JdbcClient jdbc;

	private OrderingKeys keys;

	private JdbcOutboxStore store;

	@BeforeEach
	void createKeysOnAFreshDatabase() {
		this.dataSource = new DriverManagerDataSource(TestDatabase.createDatabase());
		new OutboxSchemaInitializer(this.dataSource, null).afterPropertiesSet();
		this.jdbc = JdbcClient.create(this.dataSource);
		this.keys = new OrderingKeys(this.dataSource, OutboxTables.in(null));
		this.store = new JdbcOutboxStore(this.dataSource, OutboxTables.in(null), JsonMapper.shared(), this.keys,
				JdbcOutboxComponents.AttemptLog.DEFAULTS, Instant::now);
	}

	@Test
	void anArrivalBehindAClaimedHeadWithNothingElseOfItsKeyIsInsertedBehindThatHead() {
		UUID head = insert("k");
		assertThat(claim(1)).containsExactly(head);
		OrderingKeys.Inserted inserted = this.keys.insertBehind(message("k"));
		assertThat(inserted.leased()).isFalse();
		assertThat(inserted.behind()).isEqualTo(head);
		assertThat(inserted.ahead()).isZero();
		assertThat(inserted.createdAt()).isNotNull();
	}

	@Test
	void anArrivalIsInsertedBehindTheLastOfItsKeysUnfinishedMessagesWhetherArrivedOrWaitingAndCountsThem() {
		List<UUID> ids = List.of(insert("k"), insert("k"), insert("k"));
		insert("other");
		// The head and one behind it claimed, the third left waiting.
		assertThat(claim(2)).contains(ids.get(0), ids.get(1));
		OrderingKeys.Inserted arrived = this.keys.insertBehind(message("k"));
		assertThat(arrived.behind()).isEqualTo(ids.get(2));
		assertThat(arrived.ahead()).isEqualTo(2);
		UUID last = this.jdbc.sql("SELECT id FROM retry_outbox_message ORDER BY seq DESC LIMIT 1")
			.query(UUID.class)
			.single();
		OrderingKeys.Inserted next = this.keys.insertBehind(message("k"));
		assertThat(next.behind()).isEqualTo(last);
		assertThat(next.ahead()).isEqualTo(3);
	}

	@Test
	void anArrivalOfAKeyWithNothingUnfinishedIsInsertedBehindNone() {
		UUID delivered = insert("k");
		insert("other");
		this.jdbc.sql(
				"UPDATE retry_outbox_message SET status = 'DELIVERED', holds_key = false, new_arrival = false WHERE id = ?")
			.param(delivered)
			.update();
		assertThat(this.keys.insertBehind(message("k")).behind()).isNull();
	}

	@Test
	void anArrivalInARepeatableReadTransactionIsInsertedBehindNoneAsItsSnapshotMayMissAMessageOfItsKey() {
		insert("k");
		TransactionTemplate repeatableRead = new TransactionTemplate(new DataSourceTransactionManager(this.dataSource));
		repeatableRead.setIsolationLevel(TransactionDefinition.ISOLATION_REPEATABLE_READ);
		OrderingKeys.Inserted inserted = repeatableRead.execute((status) -> this.keys.insertBehind(message("k")));
		assertThat(inserted).isNotNull();
		assertThat(inserted.behind()).isNull();
		assertThat(this.jdbc.sql("SELECT count(*) FROM retry_outbox_message WHERE ordering_key = 'k' AND new_arrival")
			.query(Long.class)
			.single()).isEqualTo(2);
	}

	@Test
	void directDispatchLeasesTheMessageOfAFreeKeyAndInsertsOneBehindAHeadPendingSayingWhichItFollows() {
		OrderingKeys.Inserted head = this.keys.insertLeased(message("k"), "relay-a", Duration.ofMinutes(1));
		assertThat(head.leased()).isTrue();
		assertThat(head.behind()).isNull();
		UUID headId = this.jdbc.sql("SELECT id FROM retry_outbox_message WHERE status = 'IN_FLIGHT'")
			.query(UUID.class)
			.single();
		OrderingKeys.Inserted next = this.keys.insertLeased(message("k"), "relay-a", Duration.ofMinutes(1));
		assertThat(next.leased()).isFalse();
		assertThat(next.behind()).isEqualTo(headId);
	}

	private List<UUID> claim(int runSize) {
		return this.store
			.round("relay-a", List.of(), List.of(), true, Map.of("api", 10), runSize, false, Duration.ofMinutes(1))
			.claimed()
			.stream()
			.map(Claim::id)
			.toList();
	}

	private UUID insert(String key) {
		NewMessage message = message(key);
		this.keys.insert(message);
		return message.id();
	}

	private static NewMessage message(String key) {
		UUID id = UUID.randomUUID();
		return new NewMessage(id, "api", "POST", "/charges", "{}", null, null, key, id.toString());
	}

}
