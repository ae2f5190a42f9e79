package io.retryoutbox.benchmarks;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import io.retryoutbox.Outbox;
import io.retryoutbox.OutboxRequest;
import io.retryoutbox.notify.PostgresNotifier;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Enqueue throughput and latency of 8 threads that each commit one message per
 * transaction, with cross-instance notification on and off. PostgreSQL serializes the
 * commits of all transactions that issued a {@code NOTIFY}, which only shows when
 * transactions commit concurrently; the notification is sent after commit, coalesced, so
 * the enqueuing transactions should not feel it.
 * <p>
 * Both instances run on one database with the relay off, and take short turns (off, on,
 * on, off, off, on, ...), so that a busy machine and the growing table weigh on both
 * alike. Another connection listens on the channel, as another instance's relay would.
 * Notify on must keep at least 80% of the throughput with notify off: on a 2-core machine
 * shared with other builds, seven runs measured 84% to 98%, and three with notify off on
 * both sides 96% to 109%.
 * <p>
 * Run with {@code ./mvnw -B -Pbenchmark -pl retry-outbox-benchmarks -am verify
 * -Dtest='ConcurrentEnqueueBenchmark' -Dsurefire.failIfNoSpecifiedTests=false}; figures
 * are printed and appended to {@code target/benchmark-results.txt}.
 */
class ConcurrentEnqueueBenchmark {

	private static final int THREADS = 8;

	/**
	 * Measured turns of each configuration, in the order off, on, on, off, off, on, ...
	 */
	private static final int TURNS = 8;

	/**
	 * Transactions per thread in each turn: 8 x 2,000 for each configuration.
	 */
	private static final int PER_TURN = 250;

	/**
	 * Turns of each configuration before the measured ones, so that the JIT compiler has
	 * done most of its work; turns still get a little faster over a run, which the
	 * alternating order evens out.
	 */
	private static final int WARMUP_TURNS = 8;

	private static final String CHANNEL = "retry_outbox";

	@Test
	void enqueueThroughputOfEightThreadsIsTheSameWithAndWithoutCrossInstanceNotification() throws SQLException {
		String jdbcUrl = TestDatabase.createDatabase();
		ApplicationContextRunner runner = OutboxContexts.runner(jdbcUrl)
			.withPropertyValues("retry-outbox.destinations.api.base-url=http://localhost:1/",
					"retry-outbox.relay.enabled=false", "retry-outbox.relay.notify-channel=" + CHANNEL,
					"spring.datasource.hikari.maximum-pool-size=12", "spring.datasource.hikari.minimum-idle=12");
		try (Connection listener = DriverManager.getConnection(jdbcUrl)) {
			listen(listener);
			OutboxContexts.withInstances(List.of(runner, runner.withPropertyValues("retry-outbox.relay.notify=false")),
					(instances) -> {
						ConfigurableApplicationContext notifyOn = instances.get(0);
						ConfigurableApplicationContext notifyOff = instances.get(1);
						assertThat(notifyOn.getBeanProvider(PostgresNotifier.class).getIfAvailable()).isNotNull();
						assertThat(notifyOff.getBeanProvider(PostgresNotifier.class).getIfAvailable()).isNull();
						for (int warmup = 0; warmup < WARMUP_TURNS; warmup++) {
							run(notifyOff, PER_TURN);
							run(notifyOn, PER_TURN);
						}
						drain(listener);
						List<Turn> on = new ArrayList<>();
						List<Turn> off = new ArrayList<>();
						for (int turn = 0; turn < TURNS; turn++) {
							// off, on, on, off, off, on, ...
							boolean notifyFirst = turn % 2 == 1;
							for (boolean notify : new boolean[] { notifyFirst, !notifyFirst }) {
								if (notify) {
									on.add(run(notifyOn, PER_TURN));
								}
								else {
									off.add(run(notifyOff, PER_TURN));
								}
							}
						}
						// Only the instance with notification on has a notifier.
						int notifications = drain(listener);
						Turn allOn = report("notify on", on);
						Turn allOff = report("notify off", off);
						BenchmarkResults.write(
								String.format("NOTIFY received by a listener during the %d notify-on transactions: %d",
										allOn.count(), notifications));
						BenchmarkResults
							.write(String.format("enqueue throughput, %d threads, notify on / notify off: %.2f",
									THREADS, allOn.perSecond() / allOff.perSecond()));
						assertThat(notifications).isPositive();
						assertThat(allOn.perSecond()).isGreaterThan(allOff.perSecond() * 0.8);
					});
		}
	}

	/**
	 * Enqueues {@code perThread} messages from each of {@link #THREADS} threads, one per
	 * transaction, all threads starting together.
	 */
	private static Turn run(ConfigurableApplicationContext context, int perThread) {
		Outbox outbox = context.getBean(Outbox.class);
		TransactionTemplate transactions = OutboxContexts.transactions(context);
		ExecutorService executor = Executors.newFixedThreadPool(THREADS);
		try {
			CountDownLatch ready = new CountDownLatch(THREADS);
			CountDownLatch start = new CountDownLatch(1);
			List<Future<double[]>> threads = new ArrayList<>();
			for (int t = 0; t < THREADS; t++) {
				String path = "/concurrent/" + t;
				threads.add(executor.submit(() -> {
					double[] millis = new double[perThread];
					ready.countDown();
					start.await();
					for (int i = 0; i < perThread; i++) {
						long started = System.nanoTime();
						transactions
							.executeWithoutResult((status) -> outbox.send(OutboxRequest.post("api", path).build()));
						millis[i] = (System.nanoTime() - started) / 1e6;
					}
					return millis;
				}));
			}
			ready.await();
			long started = System.nanoTime();
			start.countDown();
			List<double[]> results = new ArrayList<>();
			for (Future<double[]> thread : threads) {
				results.add(thread.get());
			}
			double seconds = (System.nanoTime() - started) / 1e9;
			return new Turn(results.stream().flatMapToDouble(Arrays::stream).toArray(), seconds);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		catch (ExecutionException ex) {
			throw new IllegalStateException(ex.getCause());
		}
		finally {
			executor.shutdownNow();
		}
	}

	private static Turn report(String name, List<Turn> turns) {
		Turn all = turns.stream().reduce(Turn::and).orElseThrow();
		BenchmarkResults.write(String.format(
				"enqueue throughput, %d threads, 1 message per transaction, %s: %.0f transactions/s "
						+ "(%d in %.1fs; turns %s/s)",
				THREADS, name, all.perSecond(), all.count(), all.seconds(),
				String.join(", ", turns.stream().map((turn) -> String.format("%.0f", turn.perSecond())).toList())));
		BenchmarkResults.report(String.format("enqueue transaction, %d threads, %s", THREADS, name), all.millis());
		return all;
	}

	private static void listen(Connection connection) throws SQLException {
		try (Statement statement = connection.createStatement()) {
			statement.execute("LISTEN " + CHANNEL);
		}
	}

	/**
	 * Counts the notifications that arrived since the last call. One sent after the last
	 * commit may still be on its way, so this waits until none has come for a second.
	 */
	private static int drain(Connection connection) {
		try {
			PGConnection pg = connection.unwrap(PGConnection.class);
			int count = 0;
			PGNotification[] notifications;
			while ((notifications = pg.getNotifications(1000)) != null && notifications.length > 0) {
				count += notifications.length;
			}
			return count;
		}
		catch (SQLException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private record Turn(double[] millis, double seconds) {

		int count() {
			return this.millis.length;
		}

		double perSecond() {
			return count() / this.seconds;
		}

		Turn and(Turn other) {
			double[] both = Arrays.copyOf(this.millis, this.millis.length + other.millis.length);
			System.arraycopy(other.millis, 0, both, this.millis.length, other.millis.length);
			return new Turn(both, this.seconds + other.seconds);
		}

	}

}
