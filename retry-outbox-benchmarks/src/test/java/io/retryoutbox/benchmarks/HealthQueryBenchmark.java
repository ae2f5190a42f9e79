package io.retryoutbox.benchmarks;

import io.retryoutbox.message.OutboxReadModel;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One statistics query, the whole of what a health check or a gauge refresh asks of the
 * database, with 10^4 pending messages beside 10^4 retained delivered ones, then beside
 * 10^6: the second must take at most twice the first, as it reads only the unfinished
 * rows. The endpoint's counts by destination, which read every retained row, are measured
 * beside it for comparison and not asserted.
 * <p>
 * Run with {@code ./mvnw -B -Pbenchmark -pl retry-outbox-benchmarks -am verify
 * -Dtest='HealthQueryBenchmark' -Dsurefire.failIfNoSpecifiedTests=false}; figures are
 * printed and appended to {@code target/benchmark-results.txt}.
 */
class HealthQueryBenchmark {

	private static final int WARM_UP = 200;

	private static final int CALLS = 1000;

	private static final int SUMMARY_CALLS = 20;

	@Test
	void oneHealthQueryAtAMillionRetainedDeliveredMessagesTakesAtMostTwiceItsTimeAtTenThousand() {
		OutboxContexts.runner(TestDatabase.createDatabase())
			.withPropertyValues("retry-outbox.destinations.api.base-url=http://localhost:1/",
					"retry-outbox.relay.enabled=false", "retry-outbox.retention.enabled=false")
			.run((context) -> {
				OutboxReadModel admin = context.getBean(OutboxReadModel.class);
				JdbcClient jdbc = OutboxContexts.jdbc(context);
				insertPending(jdbc);
				insertDelivered(jdbc, 0, 10_000);
				double[] small = measure(admin);
				double[] smallSummary = measureSummary(admin);
				insertDelivered(jdbc, 10_000, 1_000_000);
				double[] large = measure(admin);
				double[] largeSummary = measureSummary(admin);
				BenchmarkResults.report("health query, 10^4 pending beside 10^4 delivered", small);
				BenchmarkResults.report("health query, 10^4 pending beside 10^6 delivered", large);
				BenchmarkResults.write(String.format("health query at 10^6 / at 10^4 delivered: x%.2f (p50)",
						BenchmarkResults.percentile(large, 50) / BenchmarkResults.percentile(small, 50)));
				BenchmarkResults.report("endpoint counts by destination, beside 10^4 delivered (not asserted)",
						smallSummary);
				BenchmarkResults.report("endpoint counts by destination, beside 10^6 delivered (not asserted)",
						largeSummary);
				assertThat(admin.stats().pending()).isEqualTo(10_000);
				assertThat(BenchmarkResults.percentile(large, 50))
					.isLessThanOrEqualTo(2 * BenchmarkResults.percentile(small, 50));
			});
	}

	/**
	 * 3,000 unkeyed messages, then 1,000 keys with a head and six followers each.
	 */
	private static void insertPending(JdbcClient jdbc) {
		jdbc.sql("""
				INSERT INTO retry_outbox_message (id, destination, method, path, ordering_key, idempotency_key, status,
					created_at, next_attempt_at, is_head, holds_key)
				SELECT gen_random_uuid(), 'api', 'POST', '/x', CASE WHEN i >= 3000 THEN 'live-' || (i % 1000) END,
					'p' || i, 'PENDING', now() - interval '1 hour' + i * interval '100 milliseconds',
					now() - interval '30 minutes' + i * interval '1 second', i < 4000, i >= 3000
				FROM generate_series(0, 9999) AS i
				""").update();
	}

	private static void insertDelivered(JdbcClient jdbc, int from, int to) {
		jdbc.sql(
				"""
						INSERT INTO retry_outbox_message (id, destination, method, path, ordering_key, idempotency_key, status,
							attempts, created_at, next_attempt_at, delivered_at)
						SELECT gen_random_uuid(), 'api', 'POST', '/x', CASE WHEN i % 2 = 0 THEN 'key-' || (i % 10000) END, 'd' || i,
							'DELIVERED', 1, now() - interval '7 days' + i * interval '500 milliseconds',
							now() - interval '7 days' + i * interval '500 milliseconds',
							now() - interval '7 days' + i * interval '500 milliseconds' + interval '1 second'
						FROM generate_series(?, ?) AS i
						""")
			.params(from, to - 1)
			.update();
		// Both sizes are measured after the same maintenance, not after whatever
		// autovacuum happened to do by then.
		jdbc.sql("VACUUM ANALYZE retry_outbox_message").update();
	}

	private static double[] measure(OutboxReadModel admin) {
		for (int i = 0; i < WARM_UP; i++) {
			admin.stats();
		}
		double[] millis = new double[CALLS];
		for (int i = 0; i < CALLS; i++) {
			long started = System.nanoTime();
			admin.stats();
			millis[i] = (System.nanoTime() - started) / 1e6;
		}
		return millis;
	}

	private static double[] measureSummary(OutboxReadModel admin) {
		admin.countsByDestination();
		double[] millis = new double[SUMMARY_CALLS];
		for (int i = 0; i < SUMMARY_CALLS; i++) {
			long started = System.nanoTime();
			admin.countsByDestination();
			millis[i] = (System.nanoTime() - started) / 1e6;
		}
		return millis;
	}

}
