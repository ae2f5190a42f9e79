package bench.ideal;

import java.sql.Array;
import java.util.List;

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

	public static void main(String[] args) {
		BenchApp.run(IdealApp.class, args);
	}

	@Bean
	BenchPeer idealPeer(JdbcTemplate jdbc, TransactionTemplate tx, @Value("${bench.sink-url:http://127.0.0.1:18080}") String sinkUrl,
			@Value("${ideal.loops:2}") int loops, @Value("${ideal.batch:100}") int batch,
			@Value("${ideal.concurrency:64}") int concurrency,
			@Value("${ideal.starter-schema:false}") boolean starterSchema) {
		jdbc.execute("create table if not exists bench_ideal_outbox (id bigserial primary key, payload text not null, claimed_at timestamptz, done_at timestamptz)");
		jdbc.execute("create index if not exists bench_ideal_unclaimed on bench_ideal_outbox (id) where claimed_at is null");
		SinkClient sink = new SinkClient(sinkUrl);
		if (starterSchema) {
			return StarterSchema.peer(jdbc, tx, sink, loops, batch, concurrency);
		}
		for (int i = 0; i < loops; i++) {
			Thread t = new Thread(() -> {
				while (true) {
					List<Object[]> claimed = tx.execute(s -> jdbc.query(CLAIM, (rs, n) -> new Object[] { rs.getString(2), rs.getLong(1) }, batch));
					if (claimed.isEmpty()) {
						try { Thread.sleep(2); } catch (InterruptedException ex) { return; }
						continue;
					}
					Flux.fromIterable(claimed).flatMap(row -> sink.postAsync((String) row[0]), concurrency).blockLast();
					tx.executeWithoutResult(s -> jdbc.update(con -> {
						var ps = con.prepareStatement("update bench_ideal_outbox set done_at = now() where id = any(?)");
						Array array = con.createArrayOf("bigint", claimed.stream().map(r -> r[1]).toArray());
						ps.setArray(1, array);
						return ps;
					}));
				}
			}, "ideal-relay-" + i);
			t.setDaemon(true);
			t.start();
		}
		return new BenchPeer() {
			@Override
			public void enqueue(Msg msg) {
				jdbc.update("insert into bench_ideal_outbox (payload) values (?)", msg.json());
			}
		};
	}

}
