package io.retryoutbox.jdbc;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import javax.sql.DataSource;

import io.retryoutbox.RetryDecision;
import io.retryoutbox.RetryDecision.DeadReason;
import io.retryoutbox.message.Claim;
import io.retryoutbox.message.Outcome;
import io.retryoutbox.relay.OutboxStore;
import io.retryoutbox.testsupport.TestDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.TransactionState;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * Tests for {@link JdbcOutboxStore} on a real PostgreSQL: what a relay whose lease was
 * taken over may still write.
 */
class JdbcOutboxStoreTests {

	private DataSource dataSource;

	private JdbcClient jdbc;

	private OrderingKeys keys;

	private JdbcOutboxStore store;

	// The outbox clock's lead over the system's.
	private volatile Duration ahead = Duration.ZERO;

	@BeforeEach
	void createStoreOnAFreshDatabase() {
		DataSource dataSource = new DriverManagerDataSource(TestDatabase.createDatabase());
		this.dataSource = dataSource;
		new OutboxSchemaInitializer(dataSource, null).afterPropertiesSet();
		this.jdbc = JdbcClient.create(dataSource);
		this.keys = new OrderingKeys(dataSource, OutboxTables.in(null));
		this.store = new JdbcOutboxStore(dataSource, OutboxTables.in(null), JsonMapper.shared(), this.keys,
				JdbcOutboxComponents.AttemptLog.DEFAULTS, () -> Instant.now().plus(this.ahead));
	}

	@Test
	void refusesTheLateOutcomeOfARelayWhoseExpiredLeaseWasTakenOverAndWritesTheNewOwners() {
		UUID id = insert();
		assertThat(this.store.claim("relay-a", Map.of("api", 10), 1, Duration.ofSeconds(1))).singleElement()
			.satisfies((message) -> assertThat(message.id()).isEqualTo(id));
		expireLease(id);
		assertThat(this.store.recoverExpiredLeases()).isOne();
		assertThat(this.store.claim("relay-b", Map.of("api", 10), 1, Duration.ofMinutes(1))).singleElement()
			.satisfies((message) -> assertThat(message.attempt()).isEqualTo(2));
		// relay-a's request finally got an answer: too late, relay-b holds the message.
		int late = this.store.complete("relay-a", List.of(dead(id, 422)), List.of());
		assertThat(late).isZero();
		assertThat(row(id)).containsEntry("status", "IN_FLIGHT")
			.containsEntry("lease_owner", "relay-b")
			.containsEntry("attempts", 2)
			.containsEntry("last_status_code", null)
			.containsEntry("dead_reason", null);
		assertThat(attemptLog(id)).isEmpty();
		int written = this.store.complete("relay-b", List.of(delivered(id, 201)), List.of());
		assertThat(written).isOne();
		assertThat(row(id)).containsEntry("status", "DELIVERED")
			.containsEntry("lease_owner", null)
			.containsEntry("last_status_code", 201);
		assertThat(attemptLog(id)).singleElement()
			.satisfies((attempt) -> assertThat(attempt).containsEntry("attempt", 2)
				.containsEntry("outcome", "DELIVERED")
				.containsEntry("status_code", 201));
	}

	@Test
	void refusesTheLateOutcomeOfARelayWhoseExpiredLeaseWasRecoveredBeforeAnotherRelayClaimedIt() {
		UUID id = insert();
		assertThat(this.store.claim("relay-a", Map.of("api", 10), 1, Duration.ofSeconds(1))).hasSize(1);
		expireLease(id);
		assertThat(this.store.recoverExpiredLeases()).isOne();
		assertThat(this.store.complete("relay-a", List.of(delivered(id, 200)), List.of())).isZero();
		assertThat(row(id)).containsEntry("status", "PENDING")
			.containsEntry("lease_owner", null)
			.containsEntry("delivered_at", null);
		assertThat(attemptLog(id)).isEmpty();
	}

	@Test
	void extendsAndRecoversLeasesWithoutWaitingForARowAnotherTransactionHolds() throws Exception {
		UUID held = insert();
		UUID free = insert();
		assertThat(this.store.claim("relay-a", Map.of("api", 10), 1, Duration.ofMinutes(1))).hasSize(2);
		expireLease(held);
		expireLease(free);
		// As a round writing this row's outcome holds it: the keeper and the rounds lock
		// rows in different orders, so a keeper that waited could deadlock with a round.
		try (Connection round = this.dataSource.getConnection()) {
			round.setAutoCommit(false);
			try (PreparedStatement lock = round
				.prepareStatement("SELECT id FROM retry_outbox_message WHERE id = ? FOR UPDATE")) {
				lock.setObject(1, held);
				lock.executeQuery().close();
			}
			assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
				assertThat(this.store.extendLeases("relay-a", List.of(held, free), Duration.ofMinutes(1))).isOne();
				expireLease(free);
				assertThat(this.store.recoverExpiredLeases()).isOne();
			});
			round.rollback();
		}
		assertThat(row(free)).containsEntry("status", "PENDING");
		assertThat(row(held)).containsEntry("status", "IN_FLIGHT");
		assertThat(this.store.recoverExpiredLeases()).isOne();
	}

	@Test
	void doesNotExtendALeaseThatAnotherRelayTookOver() {
		UUID id = insert();
		assertThat(this.store.claim("relay-a", Map.of("api", 10), 1, Duration.ofSeconds(1))).hasSize(1);
		expireLease(id);
		assertThat(this.store.recoverExpiredLeases()).isOne();
		assertThat(this.store.claim("relay-b", Map.of("api", 10), 1, Duration.ofSeconds(30))).hasSize(1);
		assertThat(this.store.extendLeases("relay-a", List.of(id), Duration.ofHours(1))).isZero();
		assertThat(row(id)).containsEntry("lease_owner", "relay-b");
		assertThat(
				this.jdbc.sql("SELECT lease_until < now() + interval '1 minute' FROM retry_outbox_message WHERE id = ?")
					.param(id)
					.query(Boolean.class)
					.single())
			.isTrue();
	}

	@Test
	void claimsARetryOnceTheOutboxClockPassesItsDueTimeThoughTheDatabaseClockHasNot() {
		UUID id = insert();
		this.jdbc.sql("UPDATE retry_outbox_message SET next_attempt_at = now() + interval '1 hour' WHERE id = ?")
			.param(id)
			.update();
		this.ahead = Duration.ofMinutes(59);
		assertThat(this.store.claim("relay-a", Map.of("api", 10), 1, Duration.ofMinutes(1))).isEmpty();
		this.ahead = Duration.ofMinutes(61);
		assertThat(this.store.claim("relay-a", Map.of("api", 10), 1, Duration.ofMinutes(1))).singleElement()
			.satisfies((message) -> assertThat(message.id()).isEqualTo(id));
	}

	@Test
	void claimsANewMessageByTheDatabaseClockThoughTheOutboxClockLagsBehindIt() {
		UUID id = insert();
		this.ahead = Duration.ofHours(-1);
		assertThat(this.store.claim("relay-a", Map.of("api", 10), 1, Duration.ofMinutes(1))).singleElement()
			.satisfies((message) -> assertThat(message.id()).isEqualTo(id));
	}

	@Test
	void givesAFinishedHeadsKeyToItsSuccessorAndClaimsItInTheRoundThatWritesTheOutcome() {
		UUID first = insert("k");
		UUID second = insert("k");
		OutboxStore.Round admitted = this.store.round("relay-a", List.of(), List.of(), true, Map.of("api", 10), 1,
				false, Duration.ofMinutes(1));
		assertThat(admitted.claimed()).singleElement()
			.satisfies((message) -> assertThat(message.id()).isEqualTo(first));
		Outcome delivered = new Outcome(first, new RetryDecision.Delivered(), true, 200, null, null, Instant.now(),
				Duration.ofMillis(5));
		OutboxStore.Round round = this.store.round("relay-a", List.of(delivered), List.of(), true, Map.of("api", 10), 1,
				false, Duration.ofMinutes(1));
		assertThat(round.written()).isOne();
		assertThat(round.claimed()).singleElement().satisfies((message) -> assertThat(message.id()).isEqualTo(second));
		// Given up in the outcome's own write: nothing is left for a later release.
		assertThat(row(first)).containsEntry("holds_key", false).containsEntry("releasing", false);
		assertThat(row(second)).containsEntry("is_head", true).containsEntry("status", "IN_FLIGHT");
	}

	@Test
	void leasesANewHeadInTheUpdateThatMakesItTheHeadNotInASecondOne() {
		countRowVersions();
		UUID first = insert("k");
		UUID second = insert("k");
		assertThat(this.store
			.round("relay-a", List.of(), List.of(), true, Map.of("api", 10), 1, false, Duration.ofMinutes(1))
			.claimed()
			.stream()
			.map(Claim::id)).containsExactly(first);
		assertThat(rowVersions(first)).isOne();
		// An arrival behind a head is not written until it goes.
		assertThat(rowVersions(second)).isZero();
		Outcome delivered = new Outcome(first, new RetryDecision.Delivered(), true, 200, null, null, Instant.now(),
				Duration.ofMillis(5));
		assertThat(this.store
			.round("relay-a", List.of(delivered), List.of(), true, Map.of("api", 10), 1, false, Duration.ofMinutes(1))
			.claimed()
			.stream()
			.map(Claim::id)).containsExactly(second);
		// Promoted and leased in one row version.
		assertThat(rowVersions(second)).isOne();
		assertThat(row(second)).containsEntry("is_head", true)
			.containsEntry("status", "IN_FLIGHT")
			.containsEntry("lease_owner", "relay-a")
			.containsEntry("attempts", 1);
	}

	@Test
	void claimsTheHeadsThatWaitedFirstAndLeasesNewHeadsOnlyWithinWhatIsLeftOfTheirDestinationsLimit() {
		UUID waited = insert();
		UUID alsoWaited = insert();
		UUID older = insert("k");
		UUID newer = insert("j");
		UUID elsewhere = insert("m", "mail");
		assertThat(this.store
			.round("relay-a", List.of(), List.of(), true, Map.of("api", 3), 1, false, Duration.ofMinutes(1))
			.claimed()
			.stream()
			.map(Claim::id)).containsExactlyInAnyOrder(waited, alsoWaited, older);
		// Heads now, one beyond the limit and one of a destination the round did not
		// claim for.
		assertThat(row(newer)).containsEntry("is_head", true).containsEntry("status", "PENDING");
		assertThat(row(elsewhere)).containsEntry("is_head", true)
			.containsEntry("status", "PENDING")
			.containsEntry("attempts", 0);
		assertThat(this.store
			.round("relay-a", List.of(), List.of(), true, Map.of("api", 3, "mail", 3), 1, false, Duration.ofMinutes(1))
			.claimed()
			.stream()
			.map(Claim::id)).containsExactlyInAnyOrder(newer, elsewhere);
	}

	@Test
	void leasesNoNewHeadWhenOnlyTheKeysAreReleased() {
		UUID head = insert("k");
		assertThat(this.store.releaseKeys()).isOne();
		assertThat(row(head)).containsEntry("is_head", true)
			.containsEntry("status", "PENDING")
			.containsEntry("lease_owner", null);
	}

	@Test
	void marksAFinishedHeadReleasingWhenAnotherRelayHoldsItsKeyAndReleasesItOnceFree() throws Exception {
		UUID first = insert("k");
		UUID second = insert("k");
		assertThat(this.store
			.round("relay-a", List.of(), List.of(), true, Map.of("api", 10), 1, false, Duration.ofMinutes(1))
			.claimed()).hasSize(1);
		Outcome delivered = new Outcome(first, new RetryDecision.Delivered(), true, 200, null, null, Instant.now(),
				Duration.ofMillis(5));
		try (Connection other = this.dataSource.getConnection()) {
			other.setAutoCommit(false);
			try (PreparedStatement lock = other
				.prepareStatement("SELECT pg_advisory_xact_lock(hashtext('retry_outbox_message'), hashtext('k'))")) {
				lock.executeQuery().close();
			}
			OutboxStore.Round round = this.store.round("relay-a", List.of(delivered), List.of(), true,
					Map.of("api", 10), 1, false, Duration.ofMinutes(1));
			assertThat(round.written()).isOne();
			assertThat(round.claimed()).isEmpty();
			assertThat(row(first)).containsEntry("holds_key", true).containsEntry("releasing", true);
			other.rollback();
		}
		assertThat(this.store
			.round("relay-a", List.of(), List.of(), true, Map.of("api", 10), 1, false, Duration.ofMinutes(1))
			.claimed()).singleElement().satisfies((message) -> assertThat(message.id()).isEqualTo(second));
		assertThat(row(first)).containsEntry("holds_key", false).containsEntry("releasing", false);
	}

	@Test
	void claimsTheMessagesWaitingBehindAHeadAsItsRunInTheirKeysOrderWritingOnlyTheHead() {
		List<UUID> ids = List.of(insert("k"), insert("k"), insert("k"), insert("k"));
		UUID other = insert("other");
		List<UUID> claimed = this.store
			.round("relay-a", List.of(), List.of(), true, Map.of("api", 10), 3, false, Duration.ofMinutes(1))
			.claimed()
			.stream()
			.map(Claim::id)
			.toList();
		// Heads first, in no particular order, then each head's run: at most three of a
		// key in all.
		assertThat(claimed).hasSize(4).endsWith(ids.get(1), ids.get(2));
		assertThat(claimed.subList(0, 2)).containsExactlyInAnyOrder(ids.get(0), other);
		assertThat(row(ids.get(0))).containsEntry("status", "IN_FLIGHT").containsEntry("attempts", 1);
		// The rest of the run is held by its head's lease, not written.
		assertThat(row(ids.get(1))).containsEntry("status", "PENDING")
			.containsEntry("is_head", false)
			.containsEntry("attempts", 0)
			.containsEntry("lease_owner", null);
		assertThat(row(ids.get(3))).containsEntry("status", "PENDING");
	}

	@Test
	void readsTheRunsBehindHeadsInTheCallersTransactionWithoutCommittingIt() {
		insert("k");
		UUID behind = insert("k");
		List<Claim> heads = this.store
			.round("relay-a", List.of(), List.of(), true, Map.of("api", 10), 1, false, Duration.ofMinutes(1))
			.claimed();
		TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(this.dataSource));
		transactions.executeWithoutResult((status) -> {
			status.setRollbackOnly();
			UUID rolledBack = insert("k");
			assertThat(this.store.runsBehind(heads, 3)).extracting(Claim::id).containsExactly(behind, rolledBack);
		});
		// The warm-up's rehearsal reads runs so, in a transaction that must roll back.
		assertThat(this.jdbc.sql("SELECT count(*) FROM retry_outbox_message").query(Long.class).single()).isEqualTo(2);
	}

	@Test
	void countsTheAttemptOfEachMessageOfARunWithItsOutcome() {
		List<UUID> ids = List.of(insert("k"), insert("k"), insert("k"));
		List<Claim> run = this.store
			.round("relay-a", List.of(), List.of(), true, Map.of("api", 10), 3, false, Duration.ofMinutes(1))
			.claimed();
		assertThat(run).extracting(Claim::attempt).containsExactly(1, 1, 1);
		Instant sent = Instant.parse("2026-12-03T10:00:00Z");
		List<Outcome> outcomes = ids.stream()
			.map((id) -> new Outcome(id, new RetryDecision.Delivered(), true, 200, null, null, sent,
					Duration.ofMillis(5)))
			.toList();
		assertThat(this.store.complete("relay-a", outcomes, List.of())).isEqualTo(3);
		assertThat(ids).allSatisfy((id) -> {
			assertThat(row(id)).containsEntry("status", "DELIVERED")
				.containsEntry("attempts", 1)
				.containsEntry("new_arrival", false)
				.containsEntry("releasing", true);
			assertThat(attemptLog(id)).singleElement()
				.satisfies((attempt) -> assertThat(attempt).containsEntry("attempt", 1));
		});
		assertThat(row(ids.get(2)).get("last_attempt_at")).isEqualTo(Timestamp.from(sent));
	}

	@Test
	void writesAnAttemptsStartAndARetrysDueTimeCutToTheMicrosecondOnBothSidesOfTheEpoch() {
		UUID retried = insert();
		UUID early = insert();
		this.store.round("relay-a", List.of(), List.of(), true, Map.of("api", 10), 1, false, Duration.ofMinutes(1));
		Instant started = Instant.parse("2026-12-03T10:00:00.123456789Z");
		Instant due = Instant.parse("2026-12-03T10:00:07.000001Z");
		Instant beforeTheEpoch = Instant.parse("1969-12-31T23:59:59.999999999Z");
		List<Outcome> outcomes = List.of(
				new Outcome(retried, new RetryDecision.Retry(due, RetryDecision.DelayReason.BACKOFF, null), false, 503,
						null, null, started, Duration.ofMillis(5)),
				new Outcome(early, new RetryDecision.Retry(due, RetryDecision.DelayReason.BACKOFF, null), false, 503,
						null, null, beforeTheEpoch, Duration.ofMillis(5)));
		assertThat(this.store.complete("relay-a", outcomes, List.of())).isEqualTo(2);
		Timestamp startedToTheMicrosecond = Timestamp.from(started.truncatedTo(ChronoUnit.MICROS));
		assertThat(row(retried)).containsEntry("next_attempt_at", Timestamp.from(due));
		assertThat(attemptLog(retried)).singleElement()
			.satisfies((attempt) -> assertThat(attempt).containsEntry("started_at", startedToTheMicrosecond));
		assertThat(attemptLog(early)).singleElement()
			.satisfies((attempt) -> assertThat(attempt).containsEntry("started_at",
					Timestamp.from(beforeTheEpoch.truncatedTo(ChronoUnit.MICROS))));
	}

	@Test
	void writesTheOutcomesOfARunOnlyForTheRelayThatHoldsItsHeadsLease() {
		List<UUID> ids = List.of(insert("k"), insert("k"), insert("k"));
		assertThat(this.store
			.round("relay-a", List.of(), List.of(), true, Map.of("api", 10), 3, false, Duration.ofMinutes(1))
			.claimed()).hasSize(3);
		expireLease(ids.get(0));
		assertThat(this.store.recoverExpiredLeases()).isOne();
		assertThat(this.store
			.round("relay-b", List.of(), List.of(), true, Map.of("api", 10), 3, false, Duration.ofMinutes(1))
			.claimed()
			.stream()
			.map(Claim::id)).containsExactlyElementsOf(ids);
		// relay-a lost the head's lease: none of its run's outcomes is written.
		assertThat(this.store.complete("relay-a", ids.stream().map(this::delivered).toList(), List.of())).isZero();
		assertThat(ids).allSatisfy((id) -> assertThat(row(id)).containsEntry("delivered_at", null));
		assertThat(this.store.complete("relay-b", ids.stream().map(this::delivered).toList(), List.of())).isEqualTo(3);
		assertThat(ids).allSatisfy((id) -> assertThat(row(id)).containsEntry("status", "DELIVERED"));
	}

	private Outcome delivered(UUID id) {
		return new Outcome(id, new RetryDecision.Delivered(), true, 200, null, null, Instant.now(),
				Duration.ofMillis(5));
	}

	@Test
	void endsARunBeforeAMessageOfAnotherDestinationAndBeforeAnOlderArrival() {
		UUID head = insert("k");
		UUID next = insert("k");
		UUID elsewhere = insert("k", "mail");
		insert("k");
		assertThat(this.store
			.round("relay-a", List.of(), List.of(), true, Map.of("api", 10, "mail", 10), 16, false,
					Duration.ofMinutes(1))
			.claimed()
			.stream()
			.map(Claim::id)).containsExactly(head, next);
		assertThat(row(elsewhere)).containsEntry("status", "PENDING");
		UUID late = insert("j");
		UUID waiting = insert("j");
		// An older arrival that committed after the head was made goes after the head
		// and before the messages behind it.
		this.jdbc.sql("UPDATE retry_outbox_message SET new_arrival = false, is_head = (id = ?) WHERE id IN (?, ?)")
			.params(waiting, late, waiting)
			.update();
		this.jdbc.sql("UPDATE retry_outbox_message SET new_arrival = true WHERE id = ?").param(late).update();
		UUID after = insert("j");
		this.jdbc.sql("UPDATE retry_outbox_message SET new_arrival = false WHERE id = ?").param(after).update();
		assertThat(this.store.claim("relay-a", Map.of("api", 10), 16, Duration.ofMinutes(1)).stream().map(Claim::id))
			.containsExactly(waiting, late, after);
	}

	@Test
	void keepsTheHeadOfARunWhoseRelayDiedAndItsKeysOrderAfterTheLeaseExpired() {
		List<UUID> ids = List.of(insert("k"), insert("k"), insert("k"));
		assertThat(this.store
			.round("relay-a", List.of(), List.of(), true, Map.of("api", 10), 16, false, Duration.ofMinutes(1))
			.claimed()).hasSize(3);
		ids.forEach(this::expireLease);
		// Only the head was leased; the rest of its run waited as it was.
		assertThat(this.store.recoverExpiredLeases()).isOne();
		assertThat(row(ids.get(0))).containsEntry("is_head", true).containsEntry("status", "PENDING");
		assertThat(row(ids.get(1))).containsEntry("is_head", false).containsEntry("status", "PENDING");
		assertThat(this.store
			.round("relay-b", List.of(), List.of(), true, Map.of("api", 10), 16, false, Duration.ofMinutes(1))
			.claimed()
			.stream()
			.map(Claim::id)).containsExactlyElementsOf(ids);
	}

	@Test
	void writesARunsOutcomesAndGivesItsUnsentRestBackTogetherSoTheKeyIsNeverOvertaken() {
		List<UUID> ids = List.of(insert("k"), insert("k"), insert("k"), insert("k"));
		assertThat(this.store
			.round("relay-a", List.of(), List.of(), true, Map.of("api", 10), 3, false, Duration.ofMinutes(1))
			.claimed()).hasSize(3);
		// While the run is out, its head holds the key: nothing is promoted past it.
		assertThat(this.store
			.round("relay-b", List.of(), List.of(), true, Map.of("api", 10), 3, false, Duration.ofMinutes(1))
			.claimed()).isEmpty();
		Outcome first = new Outcome(ids.get(0), new RetryDecision.Delivered(), true, 200, null, null, Instant.now(),
				Duration.ofMillis(5));
		OutboxStore.Round round = this.store.round("relay-a", List.of(first), List.of(ids.get(1), ids.get(2)), true,
				Map.of("api", 10), 3, false, Duration.ofMinutes(1));
		assertThat(round.written()).isOne();
		assertThat(round.claimed().stream().map(Claim::id)).containsExactly(ids.get(1), ids.get(2), ids.get(3));
		assertThat(row(ids.get(1))).containsEntry("attempts", 1).containsEntry("is_head", true);
		assertThat(row(ids.get(2))).containsEntry("attempts", 0).containsEntry("is_head", false);
		assertThat(attemptLog(ids.get(1))).isEmpty();
	}

	private UUID insert() {
		UUID id = UUID.randomUUID();
		this.keys.insert(new NewMessage(id, "api", "POST", "/charges", "{}", null, null, null, id.toString()));
		return id;
	}

	// Counts every update of a message row: each is a new row version, with an entry in
	// every index whose condition it meets.
	private void countRowVersions() {
		this.jdbc.sql("CREATE TABLE row_version (id uuid NOT NULL)").update();
		this.jdbc.sql("""
				CREATE FUNCTION count_row_version() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN
					INSERT INTO row_version VALUES (NEW.id);
					RETURN NEW;
				END $$""").update();
		this.jdbc.sql("""
				CREATE TRIGGER count_row_version AFTER UPDATE ON retry_outbox_message
				FOR EACH ROW EXECUTE FUNCTION count_row_version()""").update();
	}

	private int rowVersions(UUID id) {
		return this.jdbc.sql("SELECT count(*) FROM row_version WHERE id = ?").param(id).query(Integer.class).single();
	}

	@Test
	void aRoundSendsThePlannerSettingsAndItsCommitWithItsStatementsAndPlansThemUnderTheSettings() {
		// One connection, as a relay's pooled one, whose statements are recorded as the
		// driver is given them, and whether the driver still had a transaction to commit
		// when it was told to.
		List<String> prepared = new ArrayList<>();
		List<TransactionState> atCommit = new ArrayList<>();
		Connection connection = recording(DataSourceUtils.getConnection(this.dataSource), prepared, atCommit);
		SingleConnectionDataSource single = new SingleConnectionDataSource(connection, true);
		JdbcOutboxStore store = storeOn(single);
		for (int i = 0; i < 8; i++) {
			insert();
		}
		List<Claim> claimed = store.claim("relay-a", Map.of("api", 1), 1, Duration.ofMinutes(1));
		for (int round = 0; round < 7; round++) {
			assertThat(claimed).hasSize(1);
			prepared.clear();
			claimed = store
				.round("relay-a", List.of(delivered(claimed.get(0).id(), 200)), List.of(), false, Map.of("api", 1), 1,
						false, Duration.ofMinutes(1))
				.claimed();
			// The outcomes' statement and the claim's, each with the settings, the
			// claim's with the commit: no statement, and so no round trip, of the
			// settings' own, and none for the commit.
			assertThat(prepared).hasSize(2)
				.allSatisfy((sql) -> assertThat(sql).startsWith("SELECT set_config('plan_cache_mode'")
					.contains("retry_outbox_message"));
			assertThat(prepared.get(1)).endsWith(";\nCOMMIT");
		}
		// The claim's transaction, then the rounds'.
		assertThat(atCommit).containsExactly(TransactionState.OPEN, TransactionState.IDLE, TransactionState.IDLE,
				TransactionState.IDLE, TransactionState.IDLE, TransactionState.IDLE, TransactionState.IDLE,
				TransactionState.IDLE);
		assertThat(this.jdbc.sql("SELECT count(*) FROM retry_outbox_message WHERE status = 'DELIVERED'")
			.query(Integer.class)
			.single()).isEqualTo(7);
		// The driver prepared the round's statements on the server; bound after the
		// settings, they were never planned for their parameters.
		assertThat(roundPlans(single)).hasSize(2)
			.allSatisfy((plan) -> assertThat(plan).containsEntry("custom_plans", 0L)
				.hasEntrySatisfying("generic_plans", (count) -> assertThat((Long) count).isPositive()));
		single.destroy();
	}

	@Test
	void aRoundPlansItsStatementsOnceOnAConnectionThatHasNotRunThemNotOnEachOfItsFirstRounds() {
		// A connection new to the round's statements, as the pool's next one is to a
		// relay whose poll thread the pool handed another.
		Connection connection = DataSourceUtils.getConnection(this.dataSource);
		SingleConnectionDataSource single = new SingleConnectionDataSource(connection, true);
		JdbcOutboxStore store = storeOn(single);
		UUID first = insert("k");
		insert("k");
		List<Claim> claimed = store
			.round("relay-a", List.of(), List.of(), true, Map.of("api", 1), 1, false, Duration.ofMinutes(1))
			.claimed();
		assertThat(claimed).singleElement().satisfies((claim) -> assertThat(claim.id()).isEqualTo(first));
		Outcome delivered = new Outcome(first, new RetryDecision.Delivered(), true, 200, null, null, Instant.now(),
				Duration.ofMillis(5));
		assertThat(store
			.round("relay-a", List.of(delivered), List.of(), true, Map.of("api", 1), 1, false, Duration.ofMinutes(1))
			.claimed()).hasSize(1);
		// Each a statement of the server's from its first round on, planned once and then
		// reused: sent unnamed, each of the first four rounds on a connection parsed and
		// planned both again, up to 20 ms each on a busy machine in the shared bench.
		assertThat(roundPlans(single)).hasSize(2)
			.allSatisfy(
					(plan) -> assertThat(plan).containsEntry("custom_plans", 0L).containsEntry("generic_plans", 2L));
		single.destroy();
	}

	@Test
	void aRoundLeavesItsStatementsUnpreparedOnAConnectionThatPreparesNoneOnTheServer() {
		// As behind a pooler that cannot keep a connection's prepared statements.
		String url = TestDatabase.createDatabase();
		DataSource unprepared = new DriverManagerDataSource(
				url + (url.contains("?") ? "&" : "?") + "prepareThreshold=0");
		new OutboxSchemaInitializer(unprepared, null).afterPropertiesSet();
		SingleConnectionDataSource single = new SingleConnectionDataSource(DataSourceUtils.getConnection(unprepared),
				true);
		OrderingKeys keys = new OrderingKeys(single, OutboxTables.in(null));
		JdbcOutboxStore store = storeOn(single, keys);
		UUID id = UUID.randomUUID();
		keys.insert(new NewMessage(id, "api", "POST", "/charges", "{}", null, null, "k", id.toString()));
		for (int round = 0; round < 6; round++) {
			store.round("relay-a", List.of(), List.of(), true, Map.of("api", 1), 1, false, Duration.ofMinutes(1));
		}
		assertThat(JdbcClient.create(single)
			.sql("SELECT status FROM retry_outbox_message WHERE id = ?")
			.param(id)
			.query(String.class)
			.single()).isEqualTo("IN_FLIGHT");
		assertThat(
				JdbcClient.create(single).sql("SELECT count(*) FROM pg_prepared_statements").query(Long.class).single())
			.isZero();
		single.destroy();
	}

	@Test
	void aRoundInATransactionOfTheCallersLeavesItsCommitToTheCaller() {
		UUID id = insert();
		assertThat(this.store.claim("relay-a", Map.of("api", 10), 1, Duration.ofMinutes(1))).hasSize(1);
		UUID next = insert();
		new TransactionTemplate(new DataSourceTransactionManager(this.dataSource)).executeWithoutResult((status) -> {
			status.setRollbackOnly();
			assertThat(this.store
				.round("relay-a", List.of(delivered(id, 200)), List.of(), false, Map.of("api", 10), 1, false,
						Duration.ofMinutes(1))
				.claimed()).singleElement().satisfies((claim) -> assertThat(claim.id()).isEqualTo(next));
		});
		assertThat(row(id)).containsEntry("status", "IN_FLIGHT").containsEntry("delivered_at", null);
		assertThat(row(next)).containsEntry("status", "PENDING").containsEntry("lease_owner", null);
		assertThat(attemptLog(id)).isEmpty();
	}

	private static JdbcOutboxStore storeOn(DataSource dataSource) {
		return storeOn(dataSource, new OrderingKeys(dataSource, OutboxTables.in(null)));
	}

	private static JdbcOutboxStore storeOn(DataSource dataSource, OrderingKeys keys) {
		return new JdbcOutboxStore(dataSource, OutboxTables.in(null), JsonMapper.shared(), keys,
				JdbcOutboxComponents.AttemptLog.DEFAULTS, Instant::now);
	}

	// The plans of the round's two statements that the connection holds on the server.
	private static List<Map<String, Object>> roundPlans(DataSource connection) {
		return JdbcClient.create(connection).sql("""
				SELECT generic_plans, custom_plans FROM pg_prepared_statements
				WHERE statement LIKE '%INSERT INTO retry_outbox_attempt%' OR statement LIKE '%WITH claimed AS%'
				""").query().listOfRows();
	}

	private static Connection recording(Connection connection, List<String> prepared, List<TransactionState> atCommit) {
		return (Connection) Proxy.newProxyInstance(JdbcOutboxStoreTests.class.getClassLoader(),
				new Class<?>[] { Connection.class }, (proxy, method, args) -> {
					if (method.getName().equals("prepareStatement")) {
						prepared.add((String) args[0]);
					}
					if (method.getName().equals("commit")) {
						atCommit.add(connection.unwrap(BaseConnection.class).getTransactionState());
					}
					try {
						return method.invoke(connection, args);
					}
					catch (InvocationTargetException ex) {
						throw ex.getCause();
					}
				});
	}

	// Rather than waiting for the lease to run out.
	private void expireLease(UUID id) {
		this.jdbc.sql("UPDATE retry_outbox_message SET lease_until = now() - interval '1 second' WHERE id = ?")
			.param(id)
			.update();
	}

	private UUID insert(String key) {
		return insert(key, "api");
	}

	private UUID insert(String key, String destination) {
		UUID id = UUID.randomUUID();
		this.keys.insert(new NewMessage(id, destination, "POST", "/charges", "{}", null, null, key, id.toString()));
		return id;
	}

	private Map<String, Object> row(UUID id) {
		return this.jdbc.sql("SELECT * FROM retry_outbox_message WHERE id = ?").param(id).query().singleRow();
	}

	private List<Map<String, Object>> attemptLog(UUID id) {
		return this.jdbc.sql("SELECT * FROM retry_outbox_attempt WHERE message_id = ? ORDER BY id")
			.param(id)
			.query()
			.listOfRows();
	}

	private static Outcome delivered(UUID id, int status) {
		return new Outcome(id, new RetryDecision.Delivered(), false, status, null, null, Instant.now(),
				Duration.ofMillis(5));
	}

	private static Outcome dead(UUID id, int status) {
		return new Outcome(id, new RetryDecision.Dead(DeadReason.TERMINAL_STATUS, "HTTP " + status, null), false,
				status, "HTTP " + status, null, Instant.now(), Duration.ofMillis(5));
	}

}
