package io.retryoutbox.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.retryoutbox.Outbox;
import io.retryoutbox.OutboxRequest;
import io.retryoutbox.notify.PostgresWakeupListener;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.TestDatabase;
import mockwebserver3.MockResponse;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Commit-to-first-attempt latency on an idle relay, on the enqueuing instance and on
 * another one; enqueue cost with and without cross-instance notification; relay
 * throughput.
 * <p>
 * Run with
 * {@code ./mvnw -B -Pbenchmark -pl retry-outbox-benchmarks -am verify -Dtest='*Benchmark'
 * -Dsurefire.failIfNoSpecifiedTests=false}; figures are printed and appended to
 * {@code target/benchmark-results.txt}.
 */
class DeliveryLatencyBenchmark {

	private static final int WARMUP = 50;

	private static final int SAMPLES = 300;

	private final Map<String, Long> arrivals = new ConcurrentHashMap<>();

	private final AtomicInteger duplicates = new AtomicInteger();

	private volatile long responseDelayMillis;

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private final String jdbcUrl = TestDatabase.createDatabase();

	@BeforeEach
	void recordFirstArrivals() {
		this.destination.dispatcher().otherwise((request) -> {
			if (this.arrivals.putIfAbsent(request.getUrl().encodedPath(), System.nanoTime()) != null) {
				this.duplicates.incrementAndGet();
			}
			return new MockResponse.Builder().code(200)
				.headersDelay(this.responseDelayMillis, TimeUnit.MILLISECONDS)
				.build();
		});
	}

	private ApplicationContextRunner runner() {
		return OutboxContexts.runner(this.jdbcUrl)
			.withPropertyValues("retry-outbox.destinations.api.base-url=" + this.destination.server().url("/"),
					"spring.datasource.hikari.maximum-pool-size=8");
	}

	// Each message commits right after the one before arrived, so right after a round:
	// with
	// no round interval, what is measured is the relay's own path from a commit to the
	// attempt.
	@Test
	void commitToFirstAttemptLatencyOnTheLocalAndOnAnotherInstance() {
		ApplicationContextRunner runner = runner().withPropertyValues("retry-outbox.relay.min-round-interval=0");
		OutboxContexts.withInstances(List.of(runner, runner.withPropertyValues("retry-outbox.relay.enabled=false")),
				(instances) -> {
					ConfigurableApplicationContext relay = instances.get(0);
					ConfigurableApplicationContext enqueueOnly = instances.get(1);
					await().until(() -> relay.getBean(PostgresWakeupListener.class).isListening());
					double[] local = measure(relay, "local");
					double[] remote = measure(enqueueOnly, "remote");
					BenchmarkResults.report("commit-to-first-attempt, local instance", local);
					BenchmarkResults.report("commit-to-first-attempt, other instance (LISTEN/NOTIFY)", remote);
					assertThat(BenchmarkResults.percentile(local, 50)).isLessThan(20);
					assertThat(BenchmarkResults.percentile(local, 99)).isLessThan(100);
					assertThat(BenchmarkResults.percentile(remote, 50)).isLessThan(20);
					assertThat(BenchmarkResults.percentile(remote, 99)).isLessThan(100);
				});
	}

	// The same with the default round interval (20 ms), each message committed right
	// after a round: direct dispatch sends it at its commit, without waiting for the
	// next.
	@Test
	void commitToFirstAttemptLatencyRightAfterARoundWithTheDefaultRoundInterval() {
		runner().run((relay) -> {
			double[] local = measure(relay, "paced");
			BenchmarkResults.report("commit-to-first-attempt, local instance, right after a round, default interval",
					local);
			assertThat(BenchmarkResults.percentile(local, 99)).isLessThan(100);
		});
	}

	private double[] measure(ConfigurableApplicationContext instance, String name) {
		Outbox outbox = instance.getBean(Outbox.class);
		TransactionTemplate transactions = OutboxContexts.transactions(instance);
		double[] millis = new double[SAMPLES];
		for (int i = -WARMUP; i < SAMPLES; i++) {
			String path = "/" + name + "/" + i;
			transactions.executeWithoutResult((status) -> outbox.send(OutboxRequest.post("api", path).build()));
			long committed = System.nanoTime();
			await().atMost(Duration.ofSeconds(5))
				.pollInterval(Duration.ofMillis(1))
				.until(() -> this.arrivals.containsKey(path));
			if (i >= 0) {
				millis[i] = (this.arrivals.get(path) - committed) / 1_000_000.0;
			}
		}
		return millis;
	}

	@Test
	void enqueueCostIsTheSameWithAndWithoutCrossInstanceNotification() {
		double[] withNotify = enqueueCost(runner().withPropertyValues("retry-outbox.relay.enabled=false"));
		double[] withoutNotify = enqueueCost(
				runner().withPropertyValues("retry-outbox.relay.enabled=false", "retry-outbox.relay.notify=false"));
		BenchmarkResults.report("enqueue transaction (1 message), notify on", withNotify);
		BenchmarkResults.report("enqueue transaction (1 message), notify off", withoutNotify);
		assertThat(BenchmarkResults.percentile(withNotify, 50))
			.isLessThan(BenchmarkResults.percentile(withoutNotify, 50) * 1.25 + 0.2);
	}

	private double[] enqueueCost(ApplicationContextRunner runner) {
		double[][] result = new double[1][];
		runner.run((context) -> {
			Outbox outbox = context.getBean(Outbox.class);
			TransactionTemplate transactions = OutboxContexts.transactions(context);
			int samples = 3000;
			double[] millis = new double[samples];
			for (int i = -500; i < samples; i++) {
				long started = System.nanoTime();
				transactions.executeWithoutResult((status) -> outbox.send(OutboxRequest.post("api", "/cost").build()));
				if (i >= 0) {
					millis[i] = (System.nanoTime() - started) / 1_000_000.0;
				}
			}
			result[0] = millis;
		});
		return result[0];
	}

	@Test
	void relayThroughputOfOneInstance() {
		int messages = 20_000;
		runner().withPropertyValues("retry-outbox.relay.enabled=false").run((context) -> {
			Outbox outbox = context.getBean(Outbox.class);
			TransactionTemplate transactions = OutboxContexts.transactions(context);
			for (int i = 0; i < messages; i += 500) {
				int from = i;
				transactions.executeWithoutResult((status) -> {
					for (int j = from; j < from + 500; j++) {
						outbox.send(OutboxRequest.post("api", "/t/" + j).build());
					}
				});
			}
		});
		runner().withPropertyValues("retry-outbox.relay.concurrency=64", "retry-outbox.relay.batch-size=200")
			.run((context) -> {
				long started = System.nanoTime();
				await().atMost(Duration.ofMinutes(5))
					.pollInterval(Duration.ofMillis(50))
					.until(() -> this.arrivals.size() >= messages && OutboxContexts.jdbc(context)
						.sql("SELECT count(*) FROM retry_outbox_message WHERE status <> 'DELIVERED'")
						.query(Long.class)
						.single() == 0);
				double seconds = (System.nanoTime() - started) / 1e9;
				double rate = messages / seconds;
				BenchmarkResults.write(String.format(
						"relay throughput, one instance, local HTTP server: %.0f messages/s (%d in %.1fs)", rate,
						messages, seconds));
				assertThat(rate).isGreaterThan(500);
			});
	}

	@Test
	void throughputGrowsWithInstancesWhileTheDownstreamKeepsUp() {
		this.responseDelayMillis = 20;
		double one = drainRate(1, 3000);
		double two = drainRate(2, 3000);
		BenchmarkResults.write(
				String.format(
						"relay throughput, 20 ms downstream, flow.max-concurrency 8 per instance: 1 instance %.0f/s, "
								+ "2 instances %.0f/s (x%.2f), %d duplicates",
						one, two, two / one, this.duplicates.get()));
		assertThat(two).isGreaterThanOrEqualTo(one * 1.8);
		assertThat(this.duplicates).hasValue(0);
	}

	private double drainRate(int instanceCount, int messages) {
		String prefix = "/scale" + instanceCount + "/";
		double[] rate = new double[1];
		runner().withPropertyValues("retry-outbox.relay.enabled=false").run((context) -> {
			Outbox outbox = context.getBean(Outbox.class);
			OutboxContexts.transactions(context).executeWithoutResult((status) -> {
				for (int i = 0; i < messages; i++) {
					outbox.send(OutboxRequest.post("api", prefix + i).build());
				}
			});
		});
		List<ApplicationContextRunner> runners = new ArrayList<>();
		for (int i = 0; i < instanceCount; i++) {
			runners.add(runner().withPropertyValues("retry-outbox.destinations.api.flow.max-concurrency=8",
					"retry-outbox.relay.start-delay=2s"));
		}
		OutboxContexts.withInstances(runners, (instances) -> {
			await().atMost(Duration.ofSeconds(30)).until(() -> arrivalsWith(prefix) > 0);
			long started = System.nanoTime();
			int first = arrivalsWith(prefix);
			await().atMost(Duration.ofMinutes(3))
				.pollInterval(Duration.ofMillis(20))
				.until(() -> arrivalsWith(prefix) >= messages);
			rate[0] = (messages - first) / ((System.nanoTime() - started) / 1e9);
		});
		return rate[0];
	}

	private int arrivalsWith(String prefix) {
		return (int) this.arrivals.keySet().stream().filter((path) -> path.startsWith(prefix)).count();
	}

}
