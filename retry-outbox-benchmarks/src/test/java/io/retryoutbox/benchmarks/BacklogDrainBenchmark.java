package io.retryoutbox.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.time.Duration;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import javax.management.ListenerNotFoundException;
import javax.management.Notification;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import javax.management.openmbean.CompositeData;

import com.sun.management.GarbageCollectionNotificationInfo;
import com.sun.management.GcInfo;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.TestDatabase;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Drain rate of a large backlog beside a large retained history, against a small one, in
 * a JVM limited to {@code -Xmx256m}: 10^6 pending messages beside 10^7 retained delivered
 * ones must drain at least 0.8x as fast as 10^4 pending messages alone.
 * <p>
 * Rows are written with SQL, not through the outbox: pending unkeyed messages due now,
 * and delivered messages retained (status {@code DELIVERED}, {@code delivered_at} within
 * the default retention of 7 days, holding no key), then {@code VACUUM ANALYZE}. Each
 * scenario has a database of its own and a relay with the default settings, started after
 * the rows are there; it sends to a Reactor Netty server in this JVM that answers 200 at
 * once (a MockWebServer would measure itself). The rate is the messages received over the
 * time from the first to the last one received. A drain of a few thousand messages in a
 * database of its own warms the JVM first and is not measured. The large drain stops as
 * soon as it can no longer reach 0.8x the small one's rate, and fails with the rate it
 * had.
 * <p>
 * The class is tagged {@code xmx256m}: the {@code benchmark} profile runs it only in a
 * Surefire execution of its own with {@code -Xmx256m}, and it asserts the limit from
 * inside. Over the large drain it reports the largest heap used (just before a
 * collection, as every collection reports it) and the largest heap that a collection
 * left; a heap that runs out ends the fork at once.
 * <p>
 * Run with {@code ./mvnw -B -Pbenchmark -pl retry-outbox-benchmarks -am verify
 * -Dtest='BacklogDrainBenchmark' -Dsurefire.failIfNoSpecifiedTests=false}; figures are
 * printed and appended to {@code target/benchmark-results.txt}. At full size it holds a
 * two-core machine for about 5 to 7 minutes: some 75 seconds to load the 10^7 and 10^6
 * rows, then the large drain, which lasts at most 10^6 messages at 0.8x the small drain's
 * rate (about 220 seconds at 5,700/s) since it stops there. Smaller sizes for a quick
 * check: {@code -Dbacklog.warmup=1000 -Dbacklog.small=1000 -Dbacklog.large=10000
 * -Dbacklog.retained=100000}.
 */
@Tag("xmx256m")
class BacklogDrainBenchmark {

	private static final long MAX_HEAP = 256L * 1024 * 1024;

	private static final int WARMUP = Integer.getInteger("backlog.warmup", 5_000);

	private static final int SMALL = Integer.getInteger("backlog.small", 10_000);

	private static final int LARGE = Integer.getInteger("backlog.large", 1_000_000);

	private static final long RETAINED = Long.getLong("backlog.retained", 10_000_000L);

	/**
	 * Rows per INSERT of retained messages.
	 */
	private static final long CHUNK = 2_000_000;

	private static final double MIN_RATIO = 0.8;

	@Test
	void aMillionPendingBesideTenMillionDeliveredDrainAtLeastFourFifthsAsFastAsTenThousandIn256Megabytes() {
		assertThat(Runtime.getRuntime().maxMemory()).as("max heap (run with -Xmx256m)").isLessThanOrEqualTo(MAX_HEAP);
		Receiver receiver = new Receiver();
		DisposableServer server = HttpServer.create().host("127.0.0.1").port(0).handle((request, response) -> {
			receiver.received(request);
			return response.status(200).send();
		}).bindNow();
		try {
			String baseUrl = "http://127.0.0.1:" + server.port() + "/";
			drain(receiver, baseUrl, "warm-up", WARMUP, 0, 0);
			Drain small = drain(receiver, baseUrl, "small", SMALL, 0, 0);
			BenchmarkResults.write(String.format("backlog drain, %s pending, nothing retained: %.0f messages/s (%s)",
					power(SMALL), small.rate(), small));
			Drain large = drain(receiver, baseUrl, "large", LARGE, RETAINED, MIN_RATIO * small.rate());
			BenchmarkResults.write(String.format(
					"backlog drain, %s pending beside %s delivered retained, -Xmx%dm: %.0f messages/s (%s); "
							+ "load of the retained rows %.1fs, of the pending %.1fs, VACUUM ANALYZE %.1fs; "
							+ "peak heap used %.0f MB, largest heap after a collection %.0f MB",
					power(LARGE), power(RETAINED), Runtime.getRuntime().maxMemory() / (1024 * 1024), large.rate(),
					large, large.retainedLoadSeconds(), large.pendingLoadSeconds(), large.vacuumSeconds(),
					large.peakHeapUsed() / 1048576.0, large.peakHeapAfterGc() / 1048576.0));
			BenchmarkResults.write(String.format("backlog drain rate at %s/%s over %s: x%.2f (at least x%.2f asserted)",
					power(LARGE), power(RETAINED), power(SMALL), large.rate() / small.rate(), MIN_RATIO));
			assertThat(receiver.duplicates).hasValue(0);
			assertThat(large.complete()).as("drained before the deadline of x%.2f", MIN_RATIO).isTrue();
			assertThat(large.rate()).isGreaterThanOrEqualTo(MIN_RATIO * small.rate());
		}
		finally {
			server.disposeNow();
		}
	}

	/**
	 * Loads a database and drains it with a relay started afterwards.
	 * @param minimumRate when positive, the drain stops as soon as it can no longer reach
	 * this rate: when the time from the first message received to the last, at this rate,
	 * has passed and messages are still missing (the rate from first to last can then
	 * only be lower), so that a slow drain fails in minutes rather than hours
	 */
	private Drain drain(Receiver receiver, String baseUrl, String name, int pending, long retained,
			double minimumRate) {
		String jdbcUrl = TestDatabase.createDatabase();
		double[] load = new double[3];
		runner(jdbcUrl, baseUrl).withPropertyValues("retry-outbox.relay.enabled=false").run((context) -> {
			JdbcClient jdbc = OutboxContexts.jdbc(context);
			long started = System.nanoTime();
			for (long from = 0; from < retained; from += CHUNK) {
				insertRetained(jdbc, from, Math.min(retained, from + CHUNK), retained);
				System.out.printf("%s: %d of %d retained rows loaded after %.1fs%n", name,
						Math.min(retained, from + CHUNK), retained, (System.nanoTime() - started) / 1e9);
			}
			load[0] = (System.nanoTime() - started) / 1e9;
			started = System.nanoTime();
			insertPending(jdbc, name, pending);
			load[1] = (System.nanoTime() - started) / 1e9;
			started = System.nanoTime();
			// The relay starts on a table in the state that maintenance leaves it, not in
			// the middle of the autovacuum that the load sets off.
			jdbc.sql("VACUUM ANALYZE retry_outbox_message").update();
			load[2] = (System.nanoTime() - started) / 1e9;
			System.out.printf("%s: %d pending rows loaded in %.1fs, VACUUM ANALYZE %.1fs%n", name, pending, load[1],
					load[2]);
		});
		receiver.expect(name, pending);
		boolean[] complete = new boolean[1];
		try (Heap heap = new Heap()) {
			runner(jdbcUrl, baseUrl).run((context) -> {
				JdbcClient jdbc = OutboxContexts.jdbc(context);
				await().atMost(Duration.ofMinutes(5))
					.pollInterval(Duration.ofMillis(20))
					.until(() -> receiver.count() > 0);
				long deadline = (minimumRate > 0) ? (long) ((pending - 1) / minimumRate * 1e9) : Long.MAX_VALUE;
				long[] reported = { System.nanoTime() };
				await().atMost(Duration.ofMinutes(90)).pollInterval(Duration.ofMillis(200)).until(() -> {
					if (System.nanoTime() - reported[0] > 30_000_000_000L) {
						reported[0] = System.nanoTime();
						System.out.printf("%s: %d of %d received after %.0fs, heap after the last collection %.0f MB%n",
								name, receiver.count(), pending, receiver.sinceFirst() / 1e9,
								heap.lastAfterGc() / 1048576.0);
					}
					return receiver.count() >= pending || receiver.sinceFirst() > deadline;
				});
				complete[0] = receiver.count() >= pending;
				if (complete[0]) {
					await().atMost(Duration.ofMinutes(1))
						.pollInterval(Duration.ofMillis(100))
						.until(() -> jdbc
							.sql("SELECT count(*) FROM retry_outbox_message WHERE status IN ('PENDING', 'IN_FLIGHT')")
							.query(Long.class)
							.single() == 0);
					assertThat(jdbc.sql("SELECT count(*) FROM retry_outbox_message WHERE status = 'DEAD'")
						.query(Long.class)
						.single()).isZero();
				}
			});
			Drain drain = new Drain(pending, receiver.count(), complete[0], receiver.seconds(), load[0], load[1],
					load[2], heap.peakUsed(), heap.peakAfterGc());
			System.out.printf("%s: %.0f messages/s (%s)%n", name, drain.rate(), drain);
			return drain;
		}
	}

	private static ApplicationContextRunner runner(String jdbcUrl, String baseUrl) {
		return OutboxContexts.runner(jdbcUrl).withPropertyValues("retry-outbox.destinations.api.base-url=" + baseUrl);
	}

	/**
	 * Delivered rows retained over the last six days, half of them keyed, none holding
	 * its key, with time-ordered ids as the outbox writes them.
	 */
	private static void insertRetained(JdbcClient jdbc, long from, long to, long total) {
		jdbc.sql(
				"""
						INSERT INTO retry_outbox_message (id, destination, method, path, ordering_key, idempotency_key, status,
							attempts, created_at, next_attempt_at, last_attempt_at, last_status_code, delivered_at, is_head,
							holds_key)
						SELECT (lpad(to_hex((extract(epoch FROM t.at) * 1000)::bigint), 12, '0') || '7'
								|| lpad(to_hex(i % 4096), 3, '0') || '8' || lpad(to_hex(i), 15, '0'))::uuid,
							'api', 'POST', '/retained/' || i, CASE WHEN i % 2 = 0 THEN 'key-' || (i % 10000) END, 'r' || i,
							'DELIVERED', 1, t.at, t.at, t.at, 200, t.at + interval '1 second', true, false
						FROM generate_series(?::bigint, ?::bigint) AS i
						CROSS JOIN LATERAL (SELECT now() - interval '6 days 1 hour' + (i::float8 / ?) * interval '6 days' AS at) t
						""")
			.params(from, to - 1, total)
			.update();
	}

	/**
	 * Unkeyed messages created over the last hour, all due now, oldest first.
	 */
	private static void insertPending(JdbcClient jdbc, String name, int count) {
		jdbc.sql("""
				INSERT INTO retry_outbox_message (id, destination, method, path, idempotency_key, created_at,
					next_attempt_at)
				SELECT (lpad(to_hex((extract(epoch FROM t.at) * 1000)::bigint), 12, '0') || '7'
						|| lpad(to_hex(i % 4096), 3, '0') || '9' || lpad(to_hex(i), 15, '0'))::uuid,
					'api', 'POST', '/' || ? || '/' || i, 'p' || i, t.at, t.at
				FROM generate_series(0, ? - 1) AS i
				CROSS JOIN LATERAL (SELECT now() - interval '1 hour' + (i::float8 / ?) * interval '1 hour' AS at) t
				""").params(name, count, count).update();
	}

	private static String power(long count) {
		long power = Math.round(Math.log10(count));
		return (Math.pow(10, power) == count) ? "10^" + power : String.valueOf(count);
	}

	/**
	 * What one scenario measured: the rate over the messages received, all of them when
	 * complete.
	 */
	private record Drain(int messages, long received, boolean complete, double seconds, double retainedLoadSeconds,
			double pendingLoadSeconds, double vacuumSeconds, long peakHeapUsed, long peakHeapAfterGc) {

		double rate() {
			return (this.received - 1) / this.seconds;
		}

		@Override
		public String toString() {
			return this.complete
					? String.format("%d in %.1fs from the first received to the last", this.messages, this.seconds)
					: String.format(
							"stopped when it could no longer reach the rate asserted: %d of %d received "
									+ "in %.1fs from the first received to the last",
							this.received, this.messages, this.seconds);
		}

	}

	/**
	 * Counts the requests of the current scenario, each once by the number at the end of
	 * its path, and times the first and the last.
	 */
	private static final class Receiver {

		private final AtomicLong count = new AtomicLong();

		private final AtomicLong duplicates = new AtomicLong();

		private final AtomicLong first = new AtomicLong();

		private volatile long last;

		private volatile String prefix = "";

		private BitSet seen = new BitSet();

		synchronized void expect(String name, int messages) {
			this.prefix = "/" + name + "/";
			this.seen = new BitSet(messages);
			this.count.set(0);
			this.first.set(0);
		}

		void received(HttpServerRequest request) {
			long now = System.nanoTime();
			String path = request.uri();
			if (!path.startsWith(this.prefix)) {
				return;
			}
			int number = Integer.parseInt(path.substring(this.prefix.length()));
			synchronized (this) {
				if (this.seen.get(number)) {
					this.duplicates.incrementAndGet();
					return;
				}
				this.seen.set(number);
			}
			this.first.compareAndSet(0, now);
			this.last = now;
			this.count.incrementAndGet();
		}

		long count() {
			return this.count.get();
		}

		double seconds() {
			return (this.last - this.first.get()) / 1e9;
		}

		long sinceFirst() {
			return System.nanoTime() - this.first.get();
		}

	}

	/**
	 * Heap use over a drain, from every collection's notification: the heap used just
	 * before a collection (the peak since the one before), and what a collection left.
	 */
	private static final class Heap implements NotificationListener, AutoCloseable {

		private final List<NotificationEmitter> collectors = ManagementFactory.getGarbageCollectorMXBeans()
			.stream()
			.filter(NotificationEmitter.class::isInstance)
			.map(NotificationEmitter.class::cast)
			.toList();

		private final AtomicLong peakUsed = new AtomicLong();

		private final AtomicLong peakAfterGc = new AtomicLong();

		private final AtomicLong lastAfterGc = new AtomicLong();

		Heap() {
			this.collectors.forEach((collector) -> collector.addNotificationListener(this, null, null));
		}

		@Override
		public void handleNotification(Notification notification, Object handback) {
			if (!GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(notification.getType())) {
				return;
			}
			GcInfo info = GarbageCollectionNotificationInfo.from((CompositeData) notification.getUserData())
				.getGcInfo();
			long after = used(info.getMemoryUsageAfterGc());
			this.peakUsed.accumulateAndGet(used(info.getMemoryUsageBeforeGc()), Math::max);
			this.peakAfterGc.accumulateAndGet(after, Math::max);
			this.lastAfterGc.set(after);
		}

		private static long used(Map<String, MemoryUsage> pools) {
			long used = 0;
			for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
				MemoryUsage usage = pools.get(pool.getName());
				if (pool.getType() == MemoryType.HEAP && usage != null) {
					used += usage.getUsed();
				}
			}
			return used;
		}

		/**
		 * The largest heap used: before a collection, or now.
		 */
		long peakUsed() {
			return Math.max(this.peakUsed.get(), ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
		}

		long peakAfterGc() {
			return this.peakAfterGc.get();
		}

		long lastAfterGc() {
			return this.lastAfterGc.get();
		}

		@Override
		public void close() {
			for (NotificationEmitter collector : this.collectors) {
				try {
					collector.removeNotificationListener(this);
				}
				catch (ListenerNotFoundException ex) {
					// not registered: nothing to remove
				}
			}
		}

	}

}
