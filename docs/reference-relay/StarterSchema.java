package bench.ideal;

import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

import bench.common.BenchPeer;
import bench.common.Msg;
import bench.common.SinkClient;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The reference relay's loops and enqueue on the starter's message table ({@code ideal.starter-schema=true};
 * the table is created beforehand from the starter's migrations): the starter's row, indexes, claim
 * and status updates, and its planner settings in each relay transaction, without its relay. Unkeyed,
 * no attempt log. It tells the cost of the starter's schema and statements apart from its Java. The
 * insert is the starter's unkeyed one and the claim its claim for one destination (as of
 * {@code 2342da0}); keep them in step when those change.
 */
final class StarterSchema {

	private static final String INSERT = """
			INSERT INTO retry_outbox_message (id, destination, method, path, headers, body, content_type, ordering_key,
				idempotency_key, trace_parent, trace_state)
			VALUES (?::uuid, ?, ?, ?, ?::jsonb, ?::bytea, ?, ?, ?, ?, ?)""";

	private static final String SETTINGS = """
			SELECT set_config('plan_cache_mode', 'force_generic_plan', true),
				set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true)""";

	private static final String CLAIM = """
			UPDATE retry_outbox_message m
			SET status = 'IN_FLIGHT', lease_owner = 'ideal', lease_until = now() + interval '60 seconds',
				attempts = m.attempts + 1, last_attempt_at = now()
			WHERE m.id = ANY (ARRAY(
				SELECT x.id FROM retry_outbox_message x
				WHERE x.status = 'PENDING' AND x.is_head AND x.destination = 'sink' AND x.next_attempt_at <= now()
				ORDER BY x.next_attempt_at LIMIT ? FOR UPDATE SKIP LOCKED))
			RETURNING m.id, m.body""";

	private static final String DONE = """
			UPDATE retry_outbox_message SET status = 'DELIVERED', delivered_at = now(), lease_owner = NULL,
				lease_until = NULL, last_status_code = 200
			WHERE id = ANY (?::uuid[]) AND status = 'IN_FLIGHT'""";

	private static final AtomicLong LAST = new AtomicLong();

	private StarterSchema() {
	}

	static BenchPeer peer(JdbcTemplate jdbc, TransactionTemplate tx, SinkClient sink, int loops, int batch, int concurrency) {
		IdealApp.startLoops(loops, concurrency, sink, () -> tx.execute(s -> {
			jdbc.query(SETTINGS, rs -> { });
			return jdbc.query(CLAIM, (rs, n) -> new Object[] { new String(rs.getBytes(2), StandardCharsets.UTF_8), rs.getString(1) }, batch);
		}), (ids) -> tx.executeWithoutResult(s -> {
			jdbc.query(SETTINGS, rs -> { });
			IdealApp.updateByIds(jdbc, DONE, "text", ids);
		}));
		return new BenchPeer() {
			@Override
			public void enqueue(Msg msg) {
				UUID id = next();
				jdbc.update(con -> {
					var ps = con.prepareStatement(INSERT);
					ps.setObject(1, id);
					ps.setString(2, "sink");
					ps.setString(3, "POST");
					ps.setString(4, "/msg");
					ps.setString(5, "{}");
					ps.setBytes(6, msg.json().getBytes(StandardCharsets.UTF_8));
					ps.setString(7, "application/json");
					ps.setString(8, null);
					ps.setString(9, id.toString());
					ps.setString(10, null);
					ps.setString(11, null);
					return ps;
				});
			}
		};
	}

	// Time-ordered, as the starter's ids, so that the primary key is appended to.
	private static UUID next() {
		long millis = System.currentTimeMillis();
		long n = LAST.updateAndGet(p -> ((p >>> 12) < millis) ? (millis << 12) : p + 1);
		long msb = ((n >>> 12) << 16) | 0x7000L | (n & 0xFFFL);
		long lsb = (ThreadLocalRandom.current().nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
		return new UUID(msb, lsb);
	}

}
