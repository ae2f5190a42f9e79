package bench.ideal;

import java.sql.Array;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Supplier;

import bench.common.BenchApp;
import bench.common.BenchPeer;
import bench.common.Msg;
import bench.common.SinkClient;
import reactor.core.publisher.Flux;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

/** The least a relay can do: the ceilings' claim and complete, and their HTTP, while the writers write. */
@SpringBootApplication(scanBasePackages = "bench")
public class IdealApp {

	private static final String CLAIM = """
			update bench_ideal_outbox t set claimed_at = now()
			from (select id from bench_ideal_outbox where claimed_at is null order by id limit ? for update skip locked) c
			where t.id = c.id returning t.id, t.payload""";

	/**
	 * Starts the relay's loops: each claims a batch (rows of payload and id), posts it at most
	 * {@code concurrency} at a time, then marks it done by its ids, and claims again, 2 ms later if
	 * the claim was empty.
	 */
	static void startLoops(int loops, int concurrency, SinkClient sink, Supplier<List<Object[]>> claim,
			Consumer<List<Object>> done) {
		for (int i = 0; i < loops; i++) {
			Thread t = new Thread(() -> {
				while (true) {
					List<Object[]> claimed = claim.get();
					if (claimed.isEmpty()) {
						try { Thread.sleep(2); } catch (InterruptedException ex) { return; }
						continue;
					}
					Flux.fromIterable(claimed).flatMap(row -> sink.postAsync((String) row[0]), concurrency).blockLast();
					done.accept(claimed.stream().map(r -> r[1]).toList());
				}
			}, "ideal-relay-" + i);
			t.setDaemon(true);
			t.start();
		}
	}

	static void updateByIds(JdbcTemplate jdbc, String sql, String type, List<Object> ids) {
		jdbc.update(con -> {
			var ps = con.prepareStatement(sql);
			Array array = con.createArrayOf(type, ids.toArray());
			ps.setArray(1, array);
			return ps;
		});
	}

	public static void main(String[] args) {
		BenchApp.run(IdealApp.class, args);
	}

	@Bean
	BenchPeer idealPeer(JdbcTemplate jdbc, TransactionTemplate tx, @Value("${bench.sink-url:http://127.0.0.1:18080}") String sinkUrl,
			@Value("${ideal.loops:2}") int loops, @Value("${ideal.batch:100}") int batch,
			@Value("${ideal.concurrency:64}") int concurrency,
			@Value("${ideal.starter-schema:false}") boolean starterSchema, @Value("${ideal.handoff:none}") String handoff,
			@Value("${ideal.handoff-webclient:false}") boolean handoffWebClient,
			@Value("${ideal.handoff-hop:false}") boolean handoffHop,
			@Value("${ideal.handoff-warm-up:true}") boolean handoffWarmUp) {
		jdbc.execute("create table if not exists bench_ideal_outbox (id bigserial primary key, payload text not null, claimed_at timestamptz, done_at timestamptz)");
		jdbc.execute("create index if not exists bench_ideal_unclaimed on bench_ideal_outbox (id) where claimed_at is null");
		SinkClient sink = new SinkClient(sinkUrl);
		if (!handoff.equals("none")) {
			return Handoff.peer(jdbc, tx, sinkUrl, sink, handoff.equals("keyed"), handoffWebClient, handoffHop,
					handoffWarmUp);
		}
		if (starterSchema) {
			return StarterSchema.peer(jdbc, tx, sink, loops, batch, concurrency);
		}
		startLoops(loops, concurrency, sink,
				() -> tx.execute(s -> jdbc.query(CLAIM, (rs, n) -> new Object[] { rs.getString(2), rs.getLong(1) }, batch)),
				(ids) -> tx.executeWithoutResult(s -> updateByIds(jdbc, "update bench_ideal_outbox set done_at = now() where id = any(?)", "bigint", ids)));
		return new BenchPeer() {
			@Override
			public void enqueue(Msg msg) {
				jdbc.update("insert into bench_ideal_outbox (payload) values (?)", msg.json());
			}
		};
	}

}
