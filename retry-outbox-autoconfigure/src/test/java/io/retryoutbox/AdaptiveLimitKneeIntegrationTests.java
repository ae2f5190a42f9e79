package io.retryoutbox;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import io.retryoutbox.relay.OutboxRelay;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.TestDatabase;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The default adaptive limit, against a destination whose latency is flat up to a knee of
 * concurrent requests and rises with each request above it, settles near the knee.
 */
class AdaptiveLimitKneeIntegrationTests {

	private static final int KNEE = 24;

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private final String jdbcUrl = TestDatabase.createDatabase();

	/**
	 * The band is what was measured with room to spare: after the first seconds the limit
	 * swings around the knee, between about 20 and 40 on a quiet machine, with peaks up
	 * to about 60 on a slower day of the same machine (the first slow answers come back a
	 * round trip late, and the limit shrinks only once an answer takes a fifth longer
	 * than its long-term average). So where it settles is its median over five seconds:
	 * below half the knee it would starve the destination, above twice the knee it would
	 * queue as many requests again in the destination as it serves; and no swing may
	 * reach four times the knee.
	 */
	@Test
	void settlesBetweenHalfAndTwiceTheKneeOfADestinationWhoseLatencyRisesAboveIt() {
		this.destination.dispatcher().otherwise(new KneeLatency(20, 10));
		OutboxContexts.runner(this.jdbcUrl)
			.withPropertyValues("retry-outbox.destinations.knee.base-url=" + this.destination.server().url("/knee"),
					"retry-outbox.destinations.knee.flow.max-concurrency=256", "retry-outbox.relay.shutdown-timeout=0s")
			.run((context) -> {
				OutboxContexts.transactions(context).executeWithoutResult((status) -> {
					for (int i = 0; i < 8000; i++) {
						context.getBean(Outbox.class).send(OutboxRequest.post("knee", "/x").build());
					}
				});
				OutboxRelay relay = context.getBean(OutboxRelay.class);
				// Settling: the limit starts at 64, over the knee, and comes down.
				await().atMost(Duration.ofSeconds(10)).until(() -> delivered(context) >= 1000);
				AtomicInteger mostInFlight = new AtomicInteger();
				List<Integer> limits = new ArrayList<>();
				await().during(Duration.ofSeconds(5))
					.atMost(Duration.ofSeconds(6))
					.pollInterval(Duration.ofMillis(50))
					.until(() -> {
						mostInFlight.accumulateAndGet(relay.getInFlight("knee"), Math::max);
						int limit = relay.getFlowLimit("knee");
						limits.add(limit);
						return limit < 4 * KNEE;
					});
				List<Integer> sorted = limits.stream().sorted().toList();
				assertThat(sorted.get(sorted.size() / 2)).as("median limit of %s", limits)
					.isBetween(KNEE / 2, 2 * KNEE);
				// The limit, not the relay, kept the requests in flight, and the backlog
				// lasted.
				assertThat(mostInFlight).hasValueGreaterThanOrEqualTo(KNEE - 4);
				assertThat(delivered(context)).isLessThan(8000);
			});
	}

	private static long delivered(AssertableApplicationContext context) {
		return OutboxContexts.jdbc(context)
			.sql("SELECT count(*) FROM retry_outbox_message WHERE status = 'DELIVERED'")
			.query(Long.class)
			.single();
	}

	/**
	 * Answers after a latency that is flat up to {@link #KNEE} requests in flight and
	 * rises by a step with each request above it, counted when a request arrives.
	 */
	private static final class KneeLatency implements Function<RecordedRequest, MockResponse> {

		private final long flatMillis;

		private final long stepMillis;

		// When the requests in flight will be answered (System.nanoTime()).
		private final PriorityQueue<Long> answers = new PriorityQueue<>();

		KneeLatency(long flatMillis, long stepMillis) {
			this.flatMillis = flatMillis;
			this.stepMillis = stepMillis;
		}

		@Override
		public synchronized MockResponse apply(RecordedRequest request) {
			long now = System.nanoTime();
			while (!this.answers.isEmpty() && this.answers.peek() <= now) {
				this.answers.poll();
			}
			int inFlight = this.answers.size() + 1;
			long latency = this.flatMillis + this.stepMillis * Math.max(0, inFlight - KNEE);
			this.answers.add(now + TimeUnit.MILLISECONDS.toNanos(latency));
			return new MockResponse.Builder().code(200).headersDelay(latency, TimeUnit.MILLISECONDS).build();
		}

	}

}
