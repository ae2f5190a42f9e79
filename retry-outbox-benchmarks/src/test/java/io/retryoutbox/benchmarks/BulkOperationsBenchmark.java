package io.retryoutbox.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import io.retryoutbox.Outbox;
import io.retryoutbox.OutboxRequest;
import io.retryoutbox.jdbc.JdbcOutboxComponents;
import io.retryoutbox.message.MessageFilter;
import io.retryoutbox.message.OutboxRepair;
import io.retryoutbox.message.OutboxRepair.BulkResult;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.OutboxRows;
import io.retryoutbox.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;

import org.springframework.context.ApplicationContext;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Replaying and discarding 10^5 dead messages: how long each call takes (the outbox
 * endpoint makes one call per request, which stops after its time budget), and what
 * enqueues that run meanwhile cost, which a table lock would hold up.
 * <p>
 * Run with
 * {@code ./mvnw -B -Pbenchmark -pl retry-outbox-benchmarks -am verify -Dtest='*Benchmark'
 * -Dsurefire.failIfNoSpecifiedTests=false}.
 */
class BulkOperationsBenchmark {

	private static final int DEAD = 100_000;

	private static final MessageFilter DEAD_FOR_API = new MessageFilter(null, "api", null, null, null, null);

	@Test
	void replaysAndDiscardsAHundredThousandDeadMessagesInShortCallsWhileEnqueuesGoOn() {
		OutboxContexts.runner(TestDatabase.createDatabase())
			.withPropertyValues("retry-outbox.destinations.api.base-url=http://localhost:1/",
					"retry-outbox.destinations.other.base-url=http://localhost:1/", "retry-outbox.relay.enabled=false",
					"spring.datasource.hikari.maximum-pool-size=8")
			.run((context) -> {
				OutboxRepair admin = context.getBean(OutboxRepair.class);
				OutboxRows.insertDead(context, "api", DEAD, "ATTEMPTS_EXHAUSTED", Duration.ofHours(1));
				enqueues(context, 500);
				double[] alone = enqueues(context, 2000);
				BenchmarkResults.report("enqueue transaction, nothing else running", alone);
				List<Double> replayCalls = new ArrayList<>();
				double[] duringReplay = enqueuesDuring(context,
						() -> untilComplete(() -> admin.replay(DEAD_FOR_API, DEAD, "benchmark"), replayCalls));
				OutboxRows.insertDead(context, "api", DEAD, "ATTEMPTS_EXHAUSTED", Duration.ofHours(1));
				List<Double> discardCalls = new ArrayList<>();
				double[] duringDiscard = enqueuesDuring(context,
						() -> untilComplete(() -> admin.discard(DEAD_FOR_API, DEAD), discardCalls));
				BenchmarkResults.write(String.format(
						"replay of 10^5 dead messages: %d call(s) of %s s, %.0f rows/s, %.0f ms per chunk of %d",
						replayCalls.size(), seconds(replayCalls), DEAD / sum(replayCalls),
						sum(replayCalls) * 1000 / (DEAD / JdbcOutboxComponents.REPAIR_CHUNK_SIZE),
						JdbcOutboxComponents.REPAIR_CHUNK_SIZE));
				BenchmarkResults.report("enqueue transaction during that replay", duringReplay);
				BenchmarkResults.write(String.format(
						"discard of 10^5 dead messages: %d call(s) of %s s, %.0f rows/s, %.0f ms per chunk of %d",
						discardCalls.size(), seconds(discardCalls), DEAD / sum(discardCalls),
						sum(discardCalls) * 1000 / (DEAD / JdbcOutboxComponents.REPAIR_CHUNK_SIZE),
						JdbcOutboxComponents.REPAIR_CHUNK_SIZE));
				BenchmarkResults.report("enqueue transaction during that discard", duringDiscard);
				assertThat(count(context, "status = 'PENDING' AND attempts = 0")).isEqualTo(DEAD);
				assertThat(count(context, "status = 'DEAD'")).isZero();
				// A call stops after its 20s budget, plus at most the chunk it was in.
				assertThat(replayCalls).allSatisfy((call) -> assertThat(call).isLessThan(25));
				assertThat(discardCalls).allSatisfy((call) -> assertThat(call).isLessThan(25));
				// No table lock: an enqueue never waits for a bulk operation to finish.
				assertThat(BenchmarkResults.percentile(duringReplay, 100)).isLessThan(1000);
				assertThat(BenchmarkResults.percentile(duringDiscard, 100)).isLessThan(1000);
			});
	}

	private static List<Double> untilComplete(Supplier<BulkResult> call, List<Double> seconds) {
		int total = 0;
		BulkResult result;
		do {
			long started = System.nanoTime();
			result = call.get();
			seconds.add((System.nanoTime() - started) / 1e9);
			total += result.count();
		}
		while (!result.complete());
		assertThat(total).isEqualTo(DEAD);
		return seconds;
	}

	/**
	 * Runs {@code work} while another thread enqueues one message per transaction.
	 * @return the enqueue transactions' durations in milliseconds
	 */
	private static double[] enqueuesDuring(ApplicationContext context, Supplier<List<Double>> work) {
		Outbox outbox = context.getBean(Outbox.class);
		TransactionTemplate transactions = OutboxContexts.transactions(context);
		AtomicBoolean done = new AtomicBoolean();
		List<Double> millis = new ArrayList<>();
		Thread enqueuer = new Thread(() -> {
			while (!done.get()) {
				long started = System.nanoTime();
				transactions
					.executeWithoutResult((status) -> outbox.send(OutboxRequest.post("other", "/probe").build()));
				millis.add((System.nanoTime() - started) / 1e6);
			}
		});
		enqueuer.start();
		try {
			work.get();
		}
		finally {
			done.set(true);
			try {
				enqueuer.join();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
		assertThat(millis).isNotEmpty();
		return millis.stream().mapToDouble(Double::doubleValue).toArray();
	}

	private static double[] enqueues(ApplicationContext context, int count) {
		Outbox outbox = context.getBean(Outbox.class);
		TransactionTemplate transactions = OutboxContexts.transactions(context);
		double[] millis = new double[count];
		for (int i = 0; i < count; i++) {
			long started = System.nanoTime();
			transactions.executeWithoutResult((status) -> outbox.send(OutboxRequest.post("other", "/probe").build()));
			millis[i] = (System.nanoTime() - started) / 1e6;
		}
		return millis;
	}

	private static long count(ApplicationContext context, String condition) {
		return OutboxContexts.jdbc(context)
			.sql("SELECT count(*) FROM retry_outbox_message WHERE destination = 'api' AND " + condition)
			.query(Long.class)
			.single();
	}

	private static double sum(List<Double> seconds) {
		return seconds.stream().mapToDouble(Double::doubleValue).sum();
	}

	private static String seconds(List<Double> seconds) {
		return String.join(", ", seconds.stream().map((value) -> String.format("%.1f", value)).toList());
	}

}
