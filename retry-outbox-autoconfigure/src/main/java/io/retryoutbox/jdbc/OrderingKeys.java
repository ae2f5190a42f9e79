package io.retryoutbox.jdbc;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import javax.sql.DataSource;

import io.retryoutbox.RetryDecision;
import io.retryoutbox.message.Claim;
import io.retryoutbox.message.Outcome;
import io.retryoutbox.support.SecretValues;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.support.DataAccessUtils;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.core.SqlParameterValue;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.util.Assert;

/**
 * The one owner of per-key order: every statement that changes a message's hold on its
 * ordering key ({@code is_head}, {@code holds_key}, {@code releasing},
 * {@code new_arrival}) is here, and so is the advisory lock per key that orders them.
 * <p>
 * The rules: a keyed message holds its key from enqueue (or replay) on, and arrives as
 * neither head nor waiting ({@code new_arrival}), so that the enqueue writes no row but
 * its own; only a key's head may be claimed, and with it the messages behind it, arrived
 * or waiting, in their order, read but not written while the head's lease holds the key;
 * a relay admits the keys its own instance's arrivals came with once they commit, and
 * those a scan finds with arrivals and no head (each poll interval, and after another
 * instance's notification), under the key's lock: the oldest waiting or arrived message
 * becomes the head if nothing holds it as head, and an arrival behind a head is not
 * written until it goes; a finished head drops its hold in its outcome's write if the
 * round locked its key first, else it is marked {@code releasing} and a later release
 * drops it, and either way the key's oldest waiting or arrived message is promoted under
 * the lock; a dead message under {@code on-dead=block} keeps its hold and parks the key
 * until it is replayed or discarded; nothing deletes a message that holds its key. Every
 * path that finishes or removes a message (an outcome, an invalid row, a discard) goes
 * through the same lock, release and promote steps.
 */
final class OrderingKeys {

	// The most keys one admission locks.
	private static final int MAX_KEYS = 1000;

	// The most distinct keys one scan for keys without a head visits.
	private static final int MAX_SCANNED = 10_000;

	// The most keys noted for admission at once; past it, arrivals are found by a scan.
	private static final int MAX_NOTED = 10_000;

	// The most arrivals, and the most waiting messages, of a key that an insert behind a
	// run counts: behind a key with as many, no run takes the message at its commit.
	private static final int MAX_BEHIND_COUNTED = 64;

	/**
	 * The condition under which a finished message may be deleted without touching its
	 * key: it holds none (unkeyed, or released).
	 */
	static final String HOLDS_NO_KEY = "NOT holds_key";

	private static final String INSERT = """
			INSERT INTO {message} (id, destination, method, path, headers, body, content_type, ordering_key,
				idempotency_key, trace_parent, trace_state)
			VALUES (?::uuid, ?, ?, ?, ?::jsonb, ?::bytea, ?, ?, ?, ?, ?)
			""";

	// An arrival, admitted by a relay: the enqueue neither reads nor locks anything of
	// its key, so it costs one row and never waits for a relay or another enqueue.
	private static final String INSERT_KEYED = """
			INSERT INTO {message} (id, destination, method, path, headers, body, content_type, ordering_key,
				idempotency_key, trace_parent, trace_state, is_head, holds_key, new_arrival)
			VALUES (?::uuid, ?, ?, ?, ?::jsonb, ?::bytea, ?, ?, ?, ?, ?, false, true, true)
			""";

	// Tried, as a relay does: direct dispatch decides the head in the enqueuing
	// transaction, so it must see every admission and promotion of the key that ran
	// before, which the lock held until now ensures; an enqueue that does not get it
	// inserts an arrival, which needs no lock, so that enqueues of several keys in any
	// order never deadlock and none waits for another transaction of its key.
	private static final String LOCK_KEY = """
			SELECT pg_try_advisory_xact_lock(hashtext(?), hashtext(?))
			""";

	// Direct dispatch: inserted as claimed by the enqueuing instance's relay, its first
	// attempt counted. The lease runs from the insert (clock_timestamp(), not the
	// transaction's start), so a long business transaction cannot commit it expired.
	private static final String INSERT_LEASED = """
			INSERT INTO {message} (id, destination, method, path, headers, body, content_type, ordering_key,
				idempotency_key, trace_parent, trace_state, status, attempts, last_attempt_at, lease_owner, lease_until)
			VALUES (?::uuid, ?, ?, ?, ?::jsonb, ?::bytea, ?, ?, ?, ?, ?, {IN_FLIGHT}, 1, now(), ?,
				clock_timestamp() + ? * interval '1 millisecond')
			RETURNING created_at
			""";

	// The key's unfinished messages, for an insert of one more: its arrivals and waiting
	// messages and its head (the oldest). "behind" is the last of them, the message the
	// new one arrives right behind, and "ahead" how many are behind the head: a run may
	// take the new one only if it holds exactly those, so that it never takes a message
	// past one that committed after the run's last was taken, which it skipped. Only
	// under read committed: then the inserting statement's snapshot is its own, and every
	// message of the key committed before it is in it; a transaction's older snapshot may
	// miss one. Past MAX_BEHIND_COUNTED of either, no answer.
	private static final String LAST_OF_KEY = """
			arrival AS (
				SELECT a.id, a.seq FROM {message} a WHERE a.ordering_key = ? AND a.new_arrival
				ORDER BY a.seq DESC LIMIT %1$d),
			waiting AS (
				SELECT w.id, w.seq FROM {message} w WHERE w.ordering_key = ? AND w.status = {PENDING}
					AND NOT w.is_head AND NOT w.new_arrival
				ORDER BY w.seq DESC LIMIT %1$d),
			holder AS (
				SELECT h.id FROM {message} h WHERE h.ordering_key = ? AND h.is_head AND h.holds_key LIMIT 1),
			counted AS (
				SELECT (SELECT count(*) FROM arrival)::int AS arrivals, (SELECT count(*) FROM waiting)::int AS waiting),
			last AS (
				SELECT CASE WHEN current_setting('transaction_isolation') = 'read committed'
						AND counted.arrivals < %1$d AND counted.waiting < %1$d THEN
					coalesce((SELECT l.id FROM (SELECT id, seq FROM arrival UNION ALL SELECT id, seq FROM waiting) l
						ORDER BY l.seq DESC LIMIT 1), (SELECT id FROM holder)) END AS behind,
					counted.arrivals + counted.waiting AS ahead
				FROM counted)
			""".formatted(MAX_BEHIND_COUNTED);

	// An arrival as INSERT_KEYED makes it, for a key that a run of this instance's relay
	// holds: it returns the message it arrived behind, so that the run takes it without
	// reading it again if that is the run's last.
	private static final String INSERT_KEYED_BEHIND = "WITH " + LAST_OF_KEY + """
			, inserted AS (
				INSERT INTO {message} (id, destination, method, path, headers, body, content_type, ordering_key,
					idempotency_key, trace_parent, trace_state, is_head, holds_key, new_arrival)
				VALUES (?::uuid, ?, ?, ?, ?::jsonb, ?::bytea, ?, ?, ?, ?, ?, false, true, true)
				RETURNING created_at)
			SELECT (extract(epoch FROM inserted.created_at) * 1000000)::bigint, false, last.behind, last.ahead
			FROM inserted CROSS JOIN last
			""";

	// The same for a keyed message, under the key's lock: leased as its head only if
	// nothing else of the key is unfinished, else an arrival that returns the message it
	// arrived behind, as INSERT_KEYED_BEHIND does.
	private static final String INSERT_KEYED_LEASED = "WITH " + LAST_OF_KEY + """
			, free AS (
				SELECT NOT EXISTS (SELECT 1 FROM holder) AND NOT EXISTS (SELECT 1 FROM arrival)
					AND NOT EXISTS (SELECT 1 FROM waiting) AS head),
			inserted AS (
				INSERT INTO {message} (id, destination, method, path, headers, body, content_type, ordering_key,
					idempotency_key, trace_parent, trace_state, is_head, holds_key, new_arrival, status, attempts,
					last_attempt_at, lease_owner, lease_until)
				SELECT ?::uuid, ?, ?, ?, ?::jsonb, ?::bytea, ?, ?, ?, ?, ?, free.head, true, NOT free.head,
					CASE WHEN free.head THEN {IN_FLIGHT} ELSE {PENDING} END,
					CASE WHEN free.head THEN 1 ELSE 0 END,
					CASE WHEN free.head THEN now() END,
					CASE WHEN free.head THEN ?::text END,
					CASE WHEN free.head THEN clock_timestamp() + ? * interval '1 millisecond' END
				FROM free
				RETURNING created_at, status = {IN_FLIGHT} AS leased)
			SELECT (extract(epoch FROM inserted.created_at) * 1000000)::bigint, inserted.leased,
				CASE WHEN NOT inserted.leased THEN last.behind END, last.ahead
			FROM inserted CROSS JOIN last
			""";

	// The rest of each claimed head's run: the messages behind it, arrived or waiting,
	// oldest first, each of the head's destination; the run ends before the first that is
	// not, so that what follows the head is exactly what promotion would make its
	// successors. The run is read, not written: while its head is leased, it holds the
	// key, and nothing but that head's relay claims, promotes or finishes a message of
	// the key, so the rest stays as it was (its attempts counted, and its row written,
	// once with its outcome). Leasing each message of the run cost it a non-HOT row
	// version and three index entries: in the shared bench, 3.9 of the 16.3 WAL records
	// a keyed message wrote.
	// The run's rows are read by primary key: without statistics the planner read the
	// index of all waiting messages whole in each round, 2,000 entries a round in the
	// bench and 60,000 behind as many waiting messages.
	// The heads are given as %s (a FROM item h of ordering_key, destination, id); a head
	// just promoted in the same statement is still, in its snapshot, an arrival or a
	// waiting message, and is left out of its own run by its id.
	private static final String RUNS = """
			candidate AS (
				SELECT w.id, w.ordering_key, w.seq, w.destination = h.destination AS same
				FROM %s
				CROSS JOIN LATERAL (
					SELECT c.id, c.ordering_key, c.seq, c.destination FROM (
						(SELECT a.id, a.ordering_key, a.seq, a.destination FROM {message} a
							WHERE a.ordering_key = h.ordering_key AND a.new_arrival AND a.id IS DISTINCT FROM h.id
							ORDER BY a.seq LIMIT ?)
						UNION ALL
						(SELECT x.id, x.ordering_key, x.seq, x.destination FROM {message} x
							WHERE x.ordering_key = h.ordering_key AND x.status = {PENDING} AND NOT x.is_head
								AND NOT x.new_arrival AND x.id IS DISTINCT FROM h.id
							ORDER BY x.seq LIMIT ?)) c
					ORDER BY c.seq
					LIMIT ?) w
			), run AS (
				SELECT r.id FROM (
					SELECT c.id, bool_and(c.same) OVER (PARTITION BY c.ordering_key ORDER BY c.seq) AS unbroken
					FROM candidate c) r
				WHERE r.unbroken
			)
			""";

	// A message of a run as a claim reads it, its attempt counted.
	private static final String RUN_COLUMNS = """
			m.id, m.destination, m.method, m.path, m.headers::text AS headers, m.body, m.content_type,
				m.ordering_key, m.idempotency_key, m.attempts + 1 AS attempts, m.created_at, m.trace_parent,
				m.trace_state""";

	static final String CLAIM_RUNS = "WITH "
			+ RUNS.formatted("unnest(?::text[], ?::text[], ?::uuid[]) AS h(ordering_key, destination, id)") + """
					SELECT m.seq, %s
					FROM {message} m
					WHERE m.id = ANY (ARRAY(SELECT id FROM run))
					ORDER BY m.ordering_key, m.seq
					""".formatted(RUN_COLUMNS);

	/**
	 * The keys to admit to, locked, and released; then the new state of each row and, in
	 * the same statement, its attempt log row (unless the log is off, the last
	 * parameter). The keys are those of a released head, of a head whose outcome this
	 * writes (their ids, the first parameter) or of an arrival that may have found no
	 * head (the third: committed since, or found by a scan), each locked unless another
	 * relay holds it: a try-lock never waits, so relays cannot deadlock with each other
	 * or an operator's discard, and a key skipped now is taken at a later pass. The LIMIT
	 * applies before the locks are tried, so no lock is taken for a key left out. The
	 * second parameter says whether to admit at all. One statement, not a lock, a write
	 * and a release: each was a round trip of the poll thread's, which runs the rounds
	 * one after another. Its snapshot is taken before the locks, so a head marked
	 * releasing by a transaction that commits meanwhile still holds its key in the
	 * promotion that follows, which then skips that key, and a later pass releases it. A
	 * released row is never one this writes: a releasing message is finished. A finished
	 * head that gives its key up drops its hold at once if its key is locked here, and
	 * the promotion follows in the same transaction; else it is marked releasing, for the
	 * release of a later pass. A message of a run that keeps its key (retried, or dead
	 * and blocking) becomes its key's head; the rest of its run was never written, and
	 * stays waiting. A row is written only if this relay still holds it: leased to it,
	 * or, for the rest of a run, still waiting behind a head leased to it (the statement
	 * sees the head as it was before the head's own outcome). The attempt of a run's
	 * message is counted here, started when it was sent. Each outcome's row is read by
	 * its primary key, and the status is compared in the "C" collation (the same result
	 * for text equality) so that the lease index, whose condition it would otherwise
	 * match, is not a way to them: without statistics the planner took the owner's leased
	 * rows for a handful and read them all through that index, unnesting the outcomes
	 * once per row (35 ms for 40 outcomes beside 1,000 leased rows). Looking the rows up
	 * by an array of their ids instead, then matching each to its outcome, compared every
	 * row with every outcome: 40% of the update's time for 40 outcomes.
	 */
	static final String FINISH = """
			WITH locked AS MATERIALIZED (
				SELECT COALESCE(array_agg(k.ordering_key), '{}') AS keys FROM (
					SELECT ordering_key FROM (
						SELECT ordering_key FROM {message} WHERE id = ANY (?::uuid[]) AND holds_key
						UNION
						SELECT ordering_key FROM {message} WHERE releasing AND ?
						UNION
						SELECT unnest(?::text[])) u
					ORDER BY ordering_key
					LIMIT 1000) k
				WHERE pg_try_advisory_xact_lock(hashtext(?), hashtext(k.ordering_key))
			), released AS (
				UPDATE {message} r SET releasing = false, holds_key = false
				FROM locked
				WHERE r.releasing AND r.ordering_key = ANY (locked.keys)
			), v AS (
				SELECT t.id, t.status, t.outcome,
					timestamptz 'epoch' + t.next_attempt_us::bigint * interval '1 microsecond' AS next_attempt_at,
					t.status_code, t.error_code, t.error, t.dead_reason, t.releases_key,
					timestamptz 'epoch' + t.started_us::bigint * interval '1 microsecond' AS started_at,
					t.duration_ms, t.delay_ms, t.delay_reason, t.response_snippet
				FROM unnest(?::uuid[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[],
						?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[])
					AS t(id, status, outcome, next_attempt_us, status_code, error_code, error, dead_reason,
						releases_key, started_us, duration_ms, delay_ms, delay_reason, response_snippet)
			), updated AS (
				UPDATE {message} m
				SET status = v.status,
					next_attempt_at = COALESCE(v.next_attempt_at, m.next_attempt_at),
					last_status_code = v.status_code::integer, last_error_code = v.error_code,
					last_error = left(v.error, 2000), dead_reason = v.dead_reason,
					delivered_at = CASE WHEN v.status = {DELIVERED} THEN now() END,
					lease_owner = NULL, lease_until = NULL, new_arrival = false,
					attempts = CASE WHEN m.status = {PENDING} THEN m.attempts + 1 ELSE m.attempts END,
					last_attempt_at = CASE WHEN m.status = {PENDING} THEN COALESCE(v.started_at, now())
						ELSE m.last_attempt_at END,
					is_head = m.is_head OR (m.holds_key AND NOT v.releases_key::boolean),
					releasing = m.holds_key AND v.releases_key::boolean AND NOT m.ordering_key = ANY (locked.keys),
					holds_key = m.holds_key AND NOT (v.releases_key::boolean AND m.ordering_key = ANY (locked.keys))
				FROM locked, v
				WHERE m.id = v.id AND ((m.status = {IN_FLIGHT} COLLATE "C" AND m.lease_owner = ?)
					OR (m.status = {PENDING} COLLATE "C" AND NOT m.is_head AND EXISTS (
						SELECT 1 FROM {message} h WHERE h.ordering_key = m.ordering_key AND h.is_head AND h.holds_key
							AND h.status = {IN_FLIGHT} COLLATE "C" AND h.lease_owner = ?)))
				RETURNING m.id, m.attempts, m.last_attempt_at, v.outcome, v.status_code, v.error_code, v.error,
					v.started_at, v.duration_ms, v.delay_ms, v.delay_reason, v.response_snippet
			), logged AS (
				INSERT INTO {attempt} (message_id, attempt, started_at, duration_ms, outcome, status_code, error_code,
					error, response_snippet, delay_ms, delay_reason)
				SELECT u.id, u.attempts, COALESCE(u.started_at, u.last_attempt_at, now()),
					u.duration_ms::bigint, u.outcome, u.status_code::integer, u.error_code, left(u.error, 2000),
					u.response_snippet, u.delay_ms::bigint, u.delay_reason
				FROM updated u
				WHERE ?
			)
			SELECT (SELECT count(*) FROM updated) AS written, locked.keys FROM locked
			""";

	// The distinct keys of arrivals from the first parameter on, at most the second's
	// number, one index probe each (a skip scan of the arrivals' index), and whether a
	// head holds each.
	static final String ARRIVED_KEYS = """
			WITH RECURSIVE k(k, n) AS (
				(SELECT ordering_key, 1 FROM {message} WHERE new_arrival AND ordering_key >= ?
					ORDER BY ordering_key LIMIT 1)
				UNION ALL
				SELECT (SELECT a.ordering_key FROM {message} a
						WHERE a.new_arrival AND a.ordering_key > k.k ORDER BY a.ordering_key LIMIT 1), k.n + 1
				FROM k WHERE k.k IS NOT NULL AND k.n < ?
			)
			SELECT k.k AS ordering_key,
				NOT EXISTS (SELECT 1 FROM {message} h WHERE h.ordering_key = k.k AND h.is_head AND h.holds_key)
					AS headless
			FROM k
			WHERE k.k IS NOT NULL
			""";

	// An operator's discard waits for the keys instead: its rows are deleted right
	// after, so their release cannot be left for a later pass. In order, so that two
	// discards cannot deadlock.
	private static final String LOCK_KEYS = """
			SELECT count(pg_advisory_xact_lock(hashtext(?), hashtext(k))) FROM (
				SELECT DISTINCT k FROM unnest(?::text[]) AS k ORDER BY k) keys
			""";

	static final String RELEASE = """
			UPDATE {message} SET releasing = false, holds_key = false
			WHERE releasing AND ordering_key = ANY (?::text[])
			""";

	// A statement of its own, so that its snapshot, taken after the keys were locked,
	// sees every enqueue, admission and release that committed before. A key that no
	// head holds gets its oldest waiting or arrived message as head; its other arrivals
	// are left as they are, for runs and later promotions take arrivals as they take
	// waiting messages: writing each as waiting cost a non-HOT row version a message.
	// The new heads are looked up as an array of ids, so that the update reads them by
	// primary key. A new head that is due and whose destination the round may still send
	// to (the outbox clock, then the destinations and counts, as the claim's) is leased
	// in the same update, oldest first: as a head, then a claim, it cost two non-HOT row
	// versions in one transaction, a fifth of a keyed message's writes. The due heads
	// that waited are claimed first, in the same statement (a claim, see
	// JdbcOutboxStore.CLAIM, its destinations none when it claims nothing), and the new
	// heads leased within what it left of each destination's count; the runs behind the
	// heads claimed and leased (RUNS) are read last, from the same snapshot, in which no
	// message of a run is written. One round trip of the poll thread's, not three. The
	// claim's heads were heads before the statement began, the promotion's were not, so
	// no row is written twice.
	static final String PROMOTE = """
			WITH claimed AS (
				%s
			), next AS (
				SELECT (SELECT c.id FROM (
						(SELECT a.id, a.seq FROM {message} a
							WHERE a.ordering_key = k.k AND a.new_arrival ORDER BY a.seq LIMIT 1)
						UNION ALL
						(SELECT w.id, w.seq FROM {message} w
							WHERE w.ordering_key = k.k AND w.status = {PENDING} AND NOT w.is_head AND NOT w.new_arrival
							ORDER BY w.seq LIMIT 1)) c
					ORDER BY c.seq LIMIT 1) AS id
				FROM unnest(?::text[]) AS k(k)
				WHERE NOT EXISTS (SELECT 1 FROM {message} h WHERE h.ordering_key = k.k AND h.is_head AND h.holds_key)
			), heads AS (
				SELECT ARRAY(SELECT id FROM next WHERE id IS NOT NULL) AS ids
			), leased AS MATERIALIZED (
				SELECT ARRAY(
					SELECT r.id FROM (
						SELECT x.id, x.destination, d.n, row_number() OVER (PARTITION BY x.destination ORDER BY x.next_attempt_at, x.seq)
							AS rank
						FROM unnest(heads.ids) AS h(id)
						CROSS JOIN LATERAL (
							SELECT y.id, y.destination, y.next_attempt_at, y.seq FROM {message} y
							WHERE y.id = h.id AND y.next_attempt_at <= greatest(?::timestamptz, now())) x
						JOIN unnest(?::text[], ?::int[]) AS d(destination, n) ON d.destination = x.destination) r
					WHERE r.rank <= r.n - (SELECT count(*) FROM claimed c WHERE c.destination = r.destination)) AS ids
				FROM heads
			), admitted AS (
				UPDATE {message} m SET is_head = true, new_arrival = false,
					status = CASE WHEN m.id = ANY (leased.ids) THEN {IN_FLIGHT} ELSE m.status END,
					lease_owner = CASE WHEN m.id = ANY (leased.ids) THEN ?::text ELSE m.lease_owner END,
					lease_until = CASE WHEN m.id = ANY (leased.ids) THEN now() + ? * interval '1 millisecond'
						ELSE m.lease_until END,
					attempts = m.attempts + CASE WHEN m.id = ANY (leased.ids) THEN 1 ELSE 0 END,
					last_attempt_at = CASE WHEN m.id = ANY (leased.ids) THEN now() ELSE m.last_attempt_at END
				FROM heads, leased
				WHERE m.id = ANY (heads.ids)
				RETURNING m.id = ANY (leased.ids) AS leased, m.id, m.destination, m.method, m.path,
					m.headers::text AS headers, m.body, m.content_type, m.ordering_key, m.idempotency_key, m.attempts,
					m.created_at, m.trace_parent, m.trace_state
			), %s
			SELECT id, destination, method, path, headers, body, content_type, ordering_key, idempotency_key, attempts,
				created_at, trace_parent, trace_state
			FROM (
				SELECT 0 AS part, '' AS k, 0::bigint AS s, id, destination, method, path, headers, body, content_type,
					ordering_key, idempotency_key, attempts, created_at, trace_parent, trace_state
				FROM claimed
				UNION ALL
				SELECT 0, '', 0, id, destination, method, path, headers, body, content_type, ordering_key,
					idempotency_key, attempts, created_at, trace_parent, trace_state
				FROM admitted
				WHERE leased
				UNION ALL
				SELECT 1, m.ordering_key, m.seq, %s
				FROM {message} m
				WHERE m.id = ANY (ARRAY(SELECT id FROM run))) o
			ORDER BY o.part, o.k, o.s
			""";

	// The heads of PROMOTE's runs: those it claimed and those it leased.
	private static final String LEASED_HEADS = """
			(SELECT ordering_key, destination, id FROM claimed WHERE ordering_key IS NOT NULL
				UNION ALL
				SELECT ordering_key, destination, id FROM admitted WHERE leased AND ordering_key IS NOT NULL) AS h""";

	/**
	 * {@link #PROMOTE} with its claim and the runs of the heads it leases.
	 */
	static String claimAndPromoteStatement() {
		return PROMOTE.formatted(JdbcOutboxStore.CLAIM, RUNS.formatted(LEASED_HEADS), RUN_COLUMNS);
	}

	/**
	 * A replayed message keeps its ordering key's order: one that still holds its key (it
	 * parked it, on-dead=block) stays its head; one that had released it (on-dead=skip)
	 * takes it again as an arrival, which a relay admits as the head if nothing else of
	 * the key holds it, or else, being the oldest, as the next to go.
	 */
	private static final String REPLAY = """
			WITH target AS (
				SELECT m.id, m.attempts, m.ordering_key, m.holds_key FROM {message} m
				WHERE m.status = {DEAD} %s
				ORDER BY m.seq
				LIMIT :limit
				FOR UPDATE SKIP LOCKED
			), replayed AS (
				UPDATE {message} m
				SET status = {PENDING}, attempts = 0, next_attempt_at = now(), created_at = now(),
					dead_reason = NULL, last_status_code = NULL, last_error_code = NULL, last_error = NULL,
					lease_owner = NULL, lease_until = NULL, delivered_at = NULL,
					holds_key = m.ordering_key IS NOT NULL, releasing = false,
					is_head = t.ordering_key IS NULL OR t.holds_key,
					new_arrival = t.ordering_key IS NOT NULL AND NOT t.holds_key
				FROM target t
				WHERE m.id = t.id
				RETURNING m.id, t.attempts, CASE WHEN m.new_arrival THEN m.ordering_key END AS arrived_key
			), logged AS (
				INSERT INTO {attempt} (message_id, attempt, started_at, outcome, actor)
				SELECT r.id, r.attempts, now(), {REPLAYED}, :actor FROM replayed r
				WHERE :log
			)
			SELECT arrived_key FROM replayed
			""";

	/**
	 * The first step of a discard: the chosen dead messages that hold their key are
	 * marked releasing, as a finished head is, so that the release gives the key back.
	 */
	private static final String MARK_DISCARDED = """
			UPDATE {message} m SET releasing = m.holds_key
			WHERE m.id IN (
				SELECT id FROM {message} m
				WHERE m.status = {DEAD} %s
				ORDER BY m.seq
				LIMIT :limit
				FOR UPDATE SKIP LOCKED)
			RETURNING m.id, CASE WHEN m.holds_key THEN m.ordering_key END AS held_key
			""";

	// The attempt rows with their message: no foreign key deletes them (V8).
	private static final String DELETE = """
			WITH logs AS (
				DELETE FROM {attempt} WHERE message_id = ANY (?::uuid[])
			)
			DELETE FROM {message} WHERE id = ANY (?::uuid[])
			""";

	private final JdbcClient jdbc;

	// The enqueue's insert sets its parameters itself: through JdbcClient it took twice
	// the client-side time of the bench's plain insert (a parameter list, a value
	// wrapper per null, a cleanup pass), about a tenth of the enqueue's own time in the
	// bench's cost profile. The round's statements, which carry the planner settings,
	// read the second of their results through it (RelayTransactions.query).
	private final JdbcTemplate template;

	private final TransactionTemplate transactions;

	private final OutboxTables tables;

	private final String insert;

	private final String insertKeyed;

	private final String insertLeased;

	private final String insertKeyedLeased;

	private final String insertKeyedBehind;

	private final String finish;

	private final String lockKey;

	private final String claimRuns;

	private final String lockKeys;

	private final String release;

	private final String promote;

	private final String promoteAndCommit;

	private final String readRuns;

	private final String readRunsAndCommit;

	private final String delete;

	private final String arrivedKeys;

	// Where the next scan for keys without a head starts.
	private volatile String scannedTo = "";

	// Keys whose arrivals committed since they were last admitted to, and which may have
	// found no head: an admission locks these, not the key of every arrival, so that an
	// arrival that finds a head is never written before its claim.
	private final Set<String> arrived = ConcurrentHashMap.newKeySet();

	// Whether a relay admits here, so that noted keys are taken; an instance without
	// one notes none.
	private volatile boolean admitting;

	// Whether keys were left unnoted, to be found by a scan instead.
	private volatile boolean overflowed;

	OrderingKeys(DataSource dataSource, OutboxTables tables) {
		this.template = new JdbcTemplate(dataSource);
		this.jdbc = JdbcClient.create(this.template);
		this.transactions = RelayTransactions.create(dataSource);
		this.tables = tables;
		this.insert = Sql.render(INSERT, tables);
		this.insertKeyed = Sql.render(INSERT_KEYED, tables);
		this.insertLeased = Sql.render(INSERT_LEASED, tables);
		this.insertKeyedLeased = Sql.render(INSERT_KEYED_LEASED, tables);
		this.insertKeyedBehind = Sql.render(INSERT_KEYED_BEHIND, tables);
		// Both carry the planner settings, so that either may be the first statement of a
		// round: in a round with both, the second sets them again, a few microseconds of
		// the server's in a round trip it makes anyway.
		this.finish = RelayTransactions.carrying(Sql.render(FINISH, tables));
		this.lockKey = Sql.render(LOCK_KEY, tables);
		this.claimRuns = Sql.render(CLAIM_RUNS, tables);
		this.lockKeys = Sql.render(LOCK_KEYS, tables);
		this.release = Sql.render(RELEASE, tables);
		this.promote = RelayTransactions.carrying(Sql.render(claimAndPromoteStatement(), tables));
		this.promoteAndCommit = RelayTransactions.committing(this.promote);
		this.readRuns = RelayTransactions.carrying(this.claimRuns);
		this.readRunsAndCommit = RelayTransactions.committing(this.readRuns);
		this.delete = Sql.render(DELETE, tables);
		this.arrivedKeys = Sql.render(ARRIVED_KEYS, tables);
	}

	/**
	 * Inserts a message, due now, in the caller's transaction if there is one; a keyed
	 * one takes its key as an arrival, which a relay admits.
	 */
	void insert(NewMessage message) {
		String key = message.orderingKey();
		this.template.update((key != null) ? this.insertKeyed : this.insert,
				(statement) -> setColumns(statement, 1, message));
	}

	// The message's columns in the order of the inserts, from the parameter at first on.
	private static void setColumns(PreparedStatement statement, int first, NewMessage message) throws SQLException {
		statement.setObject(first, message.id());
		statement.setString(first + 1, message.destination());
		statement.setString(first + 2, message.method());
		statement.setString(first + 3, message.path());
		statement.setString(first + 4, message.headersJson());
		statement.setBytes(first + 5, message.body());
		statement.setString(first + 6, message.contentType());
		statement.setString(first + 7, message.orderingKey());
		statement.setString(first + 8, message.idempotencyKey());
		statement.setString(first + 9, message.traceParent());
		statement.setString(first + 10, message.traceState());
	}

	/**
	 * Inserts a message leased to {@code owner}, its first attempt counted, in the
	 * caller's transaction, if it may be sent at once: unkeyed, or heading its key. A
	 * keyed message that waits behind another is inserted pending instead, as
	 * {@link #insert} does, and returns the message it waits behind if the caller's
	 * transaction is read committed; so is one whose key another transaction has locked,
	 * without waiting for it.
	 * @return how the message was inserted
	 */
	Inserted insertLeased(NewMessage message, String owner, Duration lease) {
		List<Object> params = new ArrayList<>(columns(message));
		params.add(owner);
		params.add(lease.toMillis());
		String key = message.orderingKey();
		if (key == null) {
			OffsetDateTime created = this.jdbc.sql(this.insertLeased)
				.params(params)
				.query((rs, row) -> rs.getObject(1, OffsetDateTime.class))
				.single();
			return new Inserted(created.toInstant(), true, null, 0);
		}
		if (!Boolean.TRUE
			.equals(this.jdbc.sql(this.lockKey).params(this.tables.message(), key).query(Boolean.class).single())) {
			insert(message);
			return Inserted.ARRIVAL;
		}
		params.addAll(0, List.of(key, key, key));
		return this.jdbc.sql(this.insertKeyedLeased).params(params).query((rs, row) -> inserted(rs)).single();
	}

	/**
	 * Inserts a keyed message pending, as {@link #insert} does, and returns the message
	 * it arrived behind if the caller's transaction is read committed.
	 * @param message the message, with an ordering key
	 * @return how the message was inserted
	 */
	Inserted insertBehind(NewMessage message) {
		String key = message.orderingKey();
		Assert.notNull(key, "Only a keyed message arrives behind another");
		// Set and read by hand: through JdbcClient's setter and a timestamp's parsing,
		// this insert took 1,396 samples of the shared bench's writers against 978 for
		// INSERT_KEYED (docs/benchmarks.md, forty-first session).
		Inserted inserted = this.template.query(this.insertKeyedBehind, (statement) -> {
			statement.setString(1, key);
			statement.setString(2, key);
			statement.setString(3, key);
			setColumns(statement, 4, message);
		}, (rs) -> rs.next() ? inserted(rs) : null);
		Assert.state(inserted != null, "An insert returns its row");
		return inserted;
	}

	private static Inserted inserted(ResultSet rs) throws SQLException {
		long micros = rs.getLong(1);
		Instant createdAt = Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L),
				Math.floorMod(micros, 1_000_000L) * 1000L);
		return new Inserted(createdAt, rs.getBoolean(2), rs.getObject(3, UUID.class), rs.getInt(4));
	}

	/**
	 * How {@link #insertLeased} inserted a message.
	 *
	 * @param createdAt when the message was created, if it was inserted leased or behind
	 * a known message
	 * @param leased whether it was inserted leased, to be sent at once
	 * @param behind the key's message it was inserted pending behind, if known
	 * @param ahead how many of the key's messages are behind its head, ahead of this one,
	 * if {@code behind} is known
	 */
	record Inserted(Instant createdAt, boolean leased, @Nullable UUID behind, int ahead) {

		/**
		 * Inserted pending, behind a message not known.
		 */
		static final Inserted ARRIVAL = new Inserted(Instant.EPOCH, false, null, 0);

	}

	private static List<Object> columns(NewMessage message) {
		return List.of(message.id(), message.destination(), message.method(), message.path(), message.headersJson(),
				nullable(message.body()), nullable(message.contentType()), nullable(message.orderingKey()),
				message.idempotencyKey(), nullable(message.traceParent()), nullable(message.traceState()));
	}

	/**
	 * Reads again the rest of the runs of heads the caller holds, as {@link #claimRuns}
	 * does, under the relay's planner settings, which a fresh outbox's table without
	 * statistics needs (without them, in the shared bench, these reads scanned the table
	 * in the first seconds of a run, while the relay fell behind).
	 * @param heads heads with an ordering key, leased to the caller
	 * @param runSize the largest number of messages in a run, its head included
	 * @param mapper reads a row of the run, its attempt counted
	 * @param commit whether the statement commits the caller's transaction, which must be
	 * of its own, in the same round trip
	 * @return the runs' messages, by key, each key's in order
	 */
	<T> List<T> readRuns(List<? extends Claim> heads, int runSize, RowMapper<T> mapper, boolean commit) {
		return RelayTransactions.query(this.template, commit ? this.readRunsAndCommit : this.readRuns,
				runParameters(heads, runSize), mapper);
	}

	/**
	 * Reads the rest of the runs of the given heads, just claimed in the caller's
	 * transaction: up to {@code runSize - 1} messages behind each, in the order they must
	 * go. They are not written: the head's lease holds them, and each one's attempt is
	 * counted with its outcome, which {@link #finish} writes only while that lease is
	 * this relay's.
	 * @param heads the claimed heads that have an ordering key
	 * @param runSize the largest number of messages in a run, its head included
	 * @param mapper reads a row of the run, its attempt counted
	 * @return the runs' messages, by key, each key's in order
	 */
	<T> List<T> claimRuns(List<? extends Claim> heads, int runSize, RowMapper<T> mapper) {
		return this.jdbc.sql(this.claimRuns).params(runParameters(heads, runSize)).query(mapper).list();
	}

	private static List<Object> runParameters(List<? extends Claim> heads, int runSize) {
		String[] keys = heads.stream().map(Claim::orderingKey).toArray(String[]::new);
		String[] destinations = heads.stream().map(Claim::destination).toArray(String[]::new);
		String[] ids = heads.stream().map((head) -> head.id().toString()).toArray(String[]::new);
		return List.of(keys, destinations, ids, runSize - 1, runSize - 1, runSize - 1);
	}

	/**
	 * Writes the outcomes of a batch, and their attempt log rows, in one statement; if
	 * {@code admit}, the same statement first locks and releases the keys that
	 * {@link #promote} may then admit to, in the caller's transaction: those of messages
	 * marked releasing, of arrivals, and of the finished heads that give their key up.
	 * Keys another relay holds are left out.
	 * @return the number of rows written, fewer when another relay took a lease over, and
	 * the keys locked
	 */
	Finished finish(String owner, List<Outcome> outcomes, JdbcOutboxComponents.AttemptLog attemptLog, boolean admit) {
		FinishedRows rows = FinishedRows.of(outcomes, attemptLog, admit);
		List<String> candidates = admit ? takeArrived() : List.of();
		List<Object> params = new ArrayList<>(rows.columns().length + 7);
		params.add(rows.releasing());
		params.add(admit);
		params.add(strings(candidates));
		params.add(this.tables.message());
		for (String[] column : rows.columns()) {
			params.add(column);
		}
		params.add(owner);
		params.add(owner);
		params.add(attemptLog.enabled());
		Finished finished = DataAccessUtils.requiredSingleResult(RelayTransactions.query(this.template, this.finish,
				params,
				(rs, row) -> new Finished(rs.getInt("written"), List.of((String[]) rs.getArray("keys").getArray()))));
		if (!candidates.isEmpty()) {
			Set<String> taken = new HashSet<>(candidates);
			taken.retainAll(finished.lockedKeys());
			for (String key : candidates) {
				if (!taken.contains(key)) {
					this.arrived.add(key);
				}
			}
			giveBackUnlessCommitted(taken);
		}
		return finished;
	}

	private static String[] strings(List<String> list) {
		String[] strings = new String[list.size()];
		for (int i = 0; i < strings.length; i++) {
			strings[i] = list.get(i);
		}
		return strings;
	}

	/**
	 * What {@link #finish} wrote and locked.
	 *
	 * @param written the number of rows written
	 * @param lockedKeys the keys locked and released, for {@link #promote}
	 */
	record Finished(int written, List<String> lockedKeys) {

		static final Finished NOTHING = new Finished(0, List.of());

	}

	/**
	 * The stored snippet of an error body: never of a 2xx response, masked, and cut to
	 * the configured size.
	 */
	private static @Nullable String snippet(Outcome outcome, JdbcOutboxComponents.AttemptLog attemptLog) {
		Integer status = outcome.statusCode();
		byte[] body = outcome.errorBody();
		if (!attemptLog.enabled() || body == null || status == null || (status >= 200 && status < 300)) {
			return null;
		}
		return SecretValues.snippet(body, attemptLog.responseSnippetSize());
	}

	/**
	 * Whether the key of a message that arrived pending is to be noted for the next
	 * admission once its transaction commits ({@link CommitWork#arrived}): only while a
	 * relay here admits. Without one, its first round, or another instance's scan, finds
	 * the keys.
	 * @return whether arrivals are noted
	 */
	boolean notesArrivals() {
		return this.admitting;
	}

	/**
	 * Finds the keys that have arrivals but no head, whatever enqueued them (another
	 * instance, or a transaction whose after-commit step did not run), for the next
	 * admission: one index probe per distinct key, not one per arrival.
	 * @return the number of keys found
	 */
	int findHeadlessKeys() {
		List<String> visited = new ArrayList<>();
		List<String> found = new ArrayList<>();
		this.transactions.executeWithoutResult(
				(status) -> this.jdbc.sql(this.arrivedKeys).params(this.scannedTo, MAX_SCANNED).query((rs) -> {
					String key = rs.getString("ordering_key");
					visited.add(key);
					if (rs.getBoolean("headless")) {
						found.add(key);
					}
				}));
		// A scan that stopped at its bound goes on from there next time, so that every
		// key is reached however many there are.
		this.scannedTo = (visited.size() < MAX_SCANNED) ? "" : visited.get(visited.size() - 1);
		noteArrivals(found);
		return found.size();
	}

	/**
	 * Releases the keys of messages marked releasing and admits arrivals of every key,
	 * promoting each key's next message, except keys that another relay holds right now;
	 * those are left for a later call.
	 * @return the number of keys released or admitted to
	 */
	int releaseKeys(JdbcOutboxComponents.AttemptLog attemptLog) {
		findHeadlessKeys();
		Integer released = this.transactions.execute((status) -> {
			List<String> locked = finish("", List.of(), attemptLog, true).lockedKeys();
			promote(locked, Lease.NONE);
			return locked.size();
		});
		return (released != null) ? released : 0;
	}

	/**
	 * Notes keys for the next admission: the keys of arrivals whose transaction
	 * committed, or that a scan found without a head.
	 * @param keys the keys
	 */
	void noteArrivals(Collection<String> keys) {
		if (this.arrived.size() + keys.size() > MAX_NOTED) {
			this.overflowed = true;
			return;
		}
		this.arrived.addAll(keys);
	}

	private List<String> takeArrived() {
		if (!this.admitting) {
			// The first admission here: what arrived before it was not noted.
			this.admitting = true;
			this.overflowed = true;
		}
		if (this.overflowed) {
			this.overflowed = false;
			findHeadlessKeys();
		}
		List<String> taken = new ArrayList<>();
		Iterator<String> keys = this.arrived.iterator();
		while (keys.hasNext() && taken.size() < MAX_KEYS) {
			String key = keys.next();
			if (this.arrived.remove(key)) {
				taken.add(key);
			}
		}
		return taken;
	}

	// A key taken for an admission that rolls back must be admitted again.
	private void giveBackUnlessCommitted(Set<String> keys) {
		if (keys.isEmpty() || !TransactionSynchronizationManager.isSynchronizationActive()) {
			return;
		}
		TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

			@Override
			public void afterCompletion(int status) {
				if (status != STATUS_COMMITTED) {
					OrderingKeys.this.arrived.addAll(keys);
				}
			}

		});
	}

	/**
	 * Admits, for keys {@link #finish} locked and released in the current transaction:
	 * each key that no head holds gets its oldest waiting or arrived message as head, and
	 * the other arrivals wait. The new heads that are due are leased, up to each
	 * destination's count.
	 * @param keys the keys locked
	 * @param lease how many new heads of each destination may be leased, and to whom
	 * @return the new heads leased
	 */
	List<Claim> promote(List<String> keys, Lease lease) {
		return keys.isEmpty() ? List.of() : claimAndPromote(keys, lease, false, 1);
	}

	/**
	 * Claims the due heads, oldest first, up to each destination's count, then admits as
	 * {@link #promote} does, leasing new heads within what the claim left of each count,
	 * and reads the rest of the runs of the keyed heads claimed or leased, as
	 * {@link #claimRuns} does.
	 * @param keys the keys locked
	 * @param lease how many heads of each destination may be leased, and to whom
	 * @param claimDueHeads whether to claim the heads that were due before
	 * @param runSize the largest number of messages in a run, its head included
	 * @return the heads claimed and the new heads leased, then the runs' messages, by
	 * key, each key's in order
	 */
	List<Claim> claimAndPromote(List<String> keys, Lease lease, boolean claimDueHeads, int runSize) {
		return claimAndPromote(keys, lease, claimDueHeads, runSize, false);
	}

	/**
	 * As {@link #claimAndPromote(List, Lease, boolean, int)}, and if {@code commit}, the
	 * statement commits the caller's transaction, which must be of its own, in the same
	 * round trip; the driver then has no commit left to send.
	 */
	List<Claim> claimAndPromote(List<String> keys, Lease lease, boolean claimDueHeads, int runSize, boolean commit) {
		String[] destinations = lease.limits().keySet().toArray(String[]::new);
		Integer[] counts = lease.limits().values().toArray(Integer[]::new);
		long millis = lease.duration().toMillis();
		int rest = Math.max(0, runSize - 1);
		return RelayTransactions.query(this.template, commit ? this.promoteAndCommit : this.promote,
				List.of(lease.owner(), millis, claimDueHeads ? destinations : new String[0],
						claimDueHeads ? counts : new Integer[0], lease.now(), keys.toArray(String[]::new), lease.now(),
						destinations, counts, lease.owner(), millis, rest, rest, rest),
				lease.mapper());
	}

	/**
	 * Makes dead messages {@code PENDING} again, due now, with a fresh budget, retaking
	 * their keys.
	 * @param conditions more SQL conditions on {@code m}, each starting with {@code AND}
	 * @param params their named parameters
	 * @param limit the largest number of messages replayed
	 * @param actor who replays them
	 * @param log whether the replay is written to the attempt log
	 * @return the number of messages replayed
	 */
	int replay(String conditions, Map<String, Object> params, int limit, String actor, boolean log) {
		Map<String, Object> all = new LinkedHashMap<>(params);
		all.put("limit", limit);
		all.put("actor", actor);
		all.put("log", log);
		List<String> replayed = new ArrayList<>();
		this.jdbc.sql(Sql.render(REPLAY.formatted(conditions), this.tables)).params(all).query((rs) -> {
			replayed.add(rs.getString("arrived_key"));
		});
		List<String> keys = replayed.stream().filter(Objects::nonNull).distinct().toList();
		if (!keys.isEmpty() && notesArrivals()) {
			CommitWork work = CommitWork.of(this, TransactionSynchronizationManager.isActualTransactionActive());
			keys.forEach(work::arrived);
		}
		return replayed.size();
	}

	/**
	 * Deletes dead messages, and their attempt logs, releasing the keys they hold: mark,
	 * release and promote as for a finished head, then delete.
	 * @param conditions more SQL conditions on {@code m}, each starting with {@code AND}
	 * @param params their named parameters
	 * @param limit the largest number of messages deleted
	 * @return the number of messages deleted
	 */
	int discard(String conditions, Map<String, Object> params, int limit) {
		Map<String, Object> all = new LinkedHashMap<>(params);
		all.put("limit", limit);
		String mark = Sql.render(MARK_DISCARDED.formatted(conditions), this.tables);
		Integer discarded = this.transactions.execute((status) -> {
			List<UUID> ids = new ArrayList<>();
			Set<String> keys = new LinkedHashSet<>();
			this.jdbc.sql(mark).params(all).query((rs) -> {
				ids.add(rs.getObject("id", UUID.class));
				String key = rs.getString("held_key");
				if (key != null) {
					keys.add(key);
				}
			});
			if (!keys.isEmpty()) {
				this.jdbc.sql(this.lockKeys)
					.params(this.tables.message(), keys.toArray(String[]::new))
					.query(Long.class)
					.single();
				this.jdbc.sql(this.release).param(keys.toArray(String[]::new)).update();
				promote(List.copyOf(keys), Lease.NONE);
			}
			if (!ids.isEmpty()) {
				String[] deleted = ids.stream().map(UUID::toString).toArray(String[]::new);
				this.jdbc.sql(this.delete).params(deleted, deleted).update();
			}
			return ids.size();
		});
		return (discarded != null) ? discarded : 0;
	}

	/**
	 * What a release may lease, as a claim would.
	 *
	 * @param limits the largest number of new heads leased for each destination
	 * @param owner the relay instance
	 * @param duration how long the lease holds
	 * @param now the outbox clock's time, by which a message is due as for a claim
	 * @param mapper reads a leased row
	 */
	record Lease(Map<String, Integer> limits, String owner, Duration duration, OffsetDateTime now,
			RowMapper<Claim> mapper) {

		static final Lease NONE = new Lease(Map.of(), "", Duration.ZERO,
				OffsetDateTime.ofInstant(Instant.EPOCH, ZoneOffset.UTC), (rs, row) -> {
					throw new IllegalStateException("A release without destinations leases nothing");
				});

	}

	private static Object nullable(@Nullable Object value) {
		return (value != null) ? value : new SqlParameterValue(Types.NULL, null);
	}

	/**
	 * The outcomes of a batch as the text columns of {@link #FINISH}, one array a column,
	 * and the ids of those that give their key up, if the batch admits. Built in loops of
	 * their own, not streams: this runs in every round, and its compiled code was thrown
	 * away and compiled again after type checks that streams and toArray had inlined into
	 * finish failed (docs/benchmarks.md, forty-sixth session).
	 */
	private record FinishedRows(String[][] columns, String[] releasing) {

		static FinishedRows of(List<Outcome> outcomes, JdbcOutboxComponents.AttemptLog attemptLog, boolean admit) {
			int size = outcomes.size();
			String[][] columns = new String[14][size];
			List<String> releasing = new ArrayList<>();
			for (int i = 0; i < size; i++) {
				Outcome outcome = outcomes.get(i);
				String[] row = row(outcome, snippet(outcome, attemptLog));
				for (int column = 0; column < row.length; column++) {
					columns[column][i] = row[column];
				}
				if (admit && outcome.releasesKey()) {
					releasing.add(row[0]);
				}
			}
			return new FinishedRows(columns, strings(releasing));
		}

		private static String[] row(Outcome outcome, @Nullable String snippet) {
			RetryDecision decision = outcome.decision();
			String deadReason = (decision instanceof RetryDecision.Dead dead) ? dead.reason().name() : null;
			RetryDecision.Retry retry = (decision instanceof RetryDecision.Retry r) ? r : null;
			return new String[] { outcome.id().toString(), outcome.status().name(), outcome.attemptOutcome().name(),
					(retry != null) ? micros(retry.nextAttemptAt()) : null, text(outcome.statusCode()),
					outcome.errorCode(), outcome.error(), deadReason, Boolean.toString(outcome.releasesKey()),
					micros(outcome.startedAt()), Long.toString(outcome.duration().toMillis()),
					(outcome.delay() != null) ? Long.toString(outcome.delay().toMillis()) : null,
					(retry != null) ? retry.delayReason().name() : null, snippet };
		}

		// An instant as microseconds since the epoch, which the statement turns back into
		// a timestamp: Instant.toString's formatter was the relay's largest compilation
		// but one in the shared bench, and ran for every outcome.
		private static String micros(Instant instant) {
			return Long.toString(
					Math.addExact(Math.multiplyExact(instant.getEpochSecond(), 1_000_000L), instant.getNano() / 1_000));
		}

		private static @Nullable String text(@Nullable Object value) {
			return (value != null) ? value.toString() : null;
		}

	}

}
