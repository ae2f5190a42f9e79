package io.retryoutbox.relay;

import java.net.ConnectException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntPredicate;

import com.netflix.concurrency.limits.Limiter;
import io.retryoutbox.DeliveryAttempt;
import io.retryoutbox.DeliveryOutcome;
import io.retryoutbox.RetryDecision;
import io.retryoutbox.retry.DefaultRetryPolicy;
import io.retryoutbox.retry.RetrySettings;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;

import org.springframework.http.HttpHeaders;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The adaptive limit of one destination, driven by a simulated clock: every round sends
 * as many requests as the limit allows, and each takes 20 ms.
 */
class DestinationFlowTests {

	private static final long TWENTY_MS = 20_000_000L;

	private static final double NO_RATE = Double.POSITIVE_INFINITY;

	private final AtomicLong now = new AtomicLong();

	private DestinationFlow flow(boolean adaptive, int maxConcurrency) {
		return new DestinationFlow("api",
				new RelayDestination.Flow(adaptive, maxConcurrency, NO_RATE, true, Duration.ofMinutes(10), 10),
				this.now::get);
	}

	/**
	 * Runs rounds of requests; request number {@code n} (counted over all rounds) is
	 * answered 503 when {@code overloaded} says so, else 200.
	 */
	private void run(DestinationFlow flow, int rounds, IntPredicate overloaded) {
		int sent = 0;
		for (int round = 0; round < rounds; round++) {
			List<Limiter.Listener> permits = new ArrayList<>();
			for (int i = flow.available(); i > 0; i--) {
				permits.add(flow.acquire());
			}
			this.now.addAndGet(TWENTY_MS);
			for (Limiter.Listener permit : permits) {
				int status = overloaded.test(sent++) ? 503 : 200;
				flow.release(permit, new DeliveryOutcome.Response(status, HttpHeaders.EMPTY, new byte[0]));
			}
		}
	}

	@Test
	void startsAtSixtyFourInFlightOrAtMaxConcurrencyIfThatIsLower() {
		assertThat(flow(true, 256).available()).isEqualTo(64);
		assertThat(flow(true, 8).available()).isEqualTo(8);
	}

	@Test
	void growsWellOverSixteenInFlightForAHealthyDownstreamWhoseLatencyStaysAtItsFloor() {
		DestinationFlow flow = flow(true, 256);
		run(flow, 200, (n) -> false);
		assertThat(flow.limit()).isGreaterThan(2 * DestinationFlow.INITIAL_LIMIT);
		assertThat(flow.limit()).isLessThanOrEqualTo(256);
	}

	@Test
	void keepsFewerInFlightForADownstreamThatAnswers503ToAThirdOfTheRequests() {
		DestinationFlow healthy = flow(true, 256);
		run(healthy, 200, (n) -> false);
		DestinationFlow overloaded = flow(true, 256);
		run(overloaded, 200, (n) -> n % 3 == 0);
		assertThat(overloaded.limit()).isLessThan(16).isLessThan(healthy.limit());
	}

	/**
	 * Runs rounds of requests, each round's answers spread evenly from {@code fromMs} to
	 * {@code toMs} in the order the requests were sent.
	 */
	private void runSpread(DestinationFlow flow, int rounds, long fromMs, long toMs) {
		for (int round = 0; round < rounds; round++) {
			List<Limiter.Listener> permits = new ArrayList<>();
			for (int i = flow.available(); i > 0; i--) {
				permits.add(flow.acquire());
			}
			long start = this.now.get();
			for (int i = 0; i < permits.size(); i++) {
				this.now.set(start + 1_000_000L * fromMs + 1_000_000L * (toMs - fromMs) * i / permits.size());
				permits.get(i).onSuccess();
			}
		}
	}

	/**
	 * As a 0 ms downstream answers on a busy machine: each round's answers spread from 1
	 * to 24 ms by the relay's own scheduling, not by a queue downstream.
	 */
	@Test
	void keepsGrowingWhenAnswersSpreadBetweenOneAndTwentyFourMilliseconds() {
		DestinationFlow flow = flow(true, 256);
		runSpread(flow, 200, 1, 24);
		assertThat(flow.limit()).isGreaterThan(2 * DestinationFlow.INITIAL_LIMIT);
	}

	/**
	 * As the relay's burst of requests is answered on a saturated machine: whatever is
	 * sent last waits longest in the relay's own client, so each round's answers take
	 * from 30 to 100 ms in the order they were sent, and the later half, the only one
	 * with more than half the limit in flight when sent, is the slower half. No queue
	 * builds downstream: every round takes the same time.
	 */
	@Test
	void keepsGrowingWhenTheLastOfEachBurstIsAnsweredSlowestByABusyMachine() {
		DestinationFlow flow = flow(true, 256);
		runSpread(flow, 300, 30, 100);
		assertThat(flow.limit()).isGreaterThan(2 * DestinationFlow.INITIAL_LIMIT);
	}

	/**
	 * As on a machine that stalls for a moment (a pause of the JVM, the cores taken by
	 * other work): every answer of one round comes back late at once. The limit has had
	 * no round trip to see what a cut does, so it gives up about half at most (its last
	 * cut may take it a step under), as a TCP window does in one round trip, and grows
	 * back.
	 */
	@Test
	void givesUpAboutHalfAtMostToOneRoundThatAStallMadeSlow() {
		DestinationFlow flow = flow(true, 256);
		run(flow, 100, (n) -> false);
		int before = flow.limit();
		List<Limiter.Listener> permits = new ArrayList<>();
		for (int i = flow.available(); i > 0; i--) {
			permits.add(flow.acquire());
		}
		this.now.addAndGet(TWENTY_MS * 10);
		permits.forEach(Limiter.Listener::onSuccess);
		assertThat(flow.limit()).isGreaterThanOrEqualTo(before * 45 / 100);
		run(flow, 100, (n) -> false);
		assertThat(flow.limit()).isGreaterThanOrEqualTo(before);
	}

	/**
	 * As a 20 ms downstream is answered on a machine short of CPU: each permit is held
	 * four times as long as the destination took, by the relay's own work before the
	 * request goes out and after its answer comes back. Told the destination's own time,
	 * the limit holds; told only the permit's, it shrinks, as for a queue downstream.
	 */
	@Test
	void holdsItsLimitWhileTheDestinationsOwnTimeStaysFlatThoughTheRelaysOwnWorkGrows() {
		DestinationFlow toldRoundTrips = flow(true, 256);
		DestinationFlow toldPermitTimes = flow(true, 256);
		run(toldRoundTrips, 100, (n) -> false);
		run(toldPermitTimes, 100, (n) -> false);
		int settled = toldRoundTrips.limit();
		int lowest = settled;
		for (int round = 0; round < 50; round++) {
			List<Limiter.Listener> roundTrips = new ArrayList<>();
			List<Limiter.Listener> permitTimes = new ArrayList<>();
			for (int i = toldRoundTrips.available(); i > 0; i--) {
				roundTrips.add(toldRoundTrips.acquire());
			}
			for (int i = toldPermitTimes.available(); i > 0; i--) {
				permitTimes.add(toldPermitTimes.acquire());
			}
			this.now.addAndGet(4 * TWENTY_MS);
			roundTrips.forEach((permit) -> toldRoundTrips.release(permit, response(200, null), TWENTY_MS));
			permitTimes.forEach((permit) -> toldPermitTimes.release(permit, response(200, null)));
			assertThat(toldRoundTrips.limit()).isGreaterThanOrEqualTo(settled);
			lowest = Math.min(lowest, toldPermitTimes.limit());
		}
		assertThat(lowest).isLessThan(settled / 2);
	}

	@Test
	void shrinksWhenLatencyRises() {
		DestinationFlow flow = flow(true, 256);
		run(flow, 100, (n) -> false);
		int settled = flow.limit();
		int lowest = settled;
		for (int round = 0; round < 20; round++) {
			List<Limiter.Listener> permits = new ArrayList<>();
			for (int i = flow.available(); i > 0; i--) {
				permits.add(flow.acquire());
			}
			// Each round as slow as the ten before: a queue builds downstream.
			this.now.addAndGet(TWENTY_MS * 10);
			permits.forEach(Limiter.Listener::onSuccess);
			lowest = Math.min(lowest, flow.limit());
		}
		assertThat(lowest).isLessThan(settled / 2);
	}

	/**
	 * A destination whose latency is 20 ms up to 24 requests in flight and 10 ms more for
	 * each request above, with a backlog that fills whatever the limit allows: after ten
	 * seconds the limit stays between half and twice the knee.
	 */
	@Test
	void settlesNearTheKneeOfADestinationWhoseLatencyRisesAboveIt() {
		DestinationFlow flow = flow(true, 256);
		record Answer(long at, Limiter.Listener permit) {
		}
		PriorityQueue<Answer> answers = new PriorityQueue<>(Comparator.comparingLong(Answer::at));
		int lowest = Integer.MAX_VALUE;
		int highest = 0;
		while (this.now.get() < Duration.ofSeconds(20).toNanos()) {
			for (int i = flow.available(); i > 0; i--) {
				long latency = TWENTY_MS + TWENTY_MS / 2 * Math.max(0, answers.size() + 1 - 24);
				answers.add(new Answer(this.now.get() + latency, flow.acquire()));
			}
			Answer next = answers.poll();
			this.now.set(next.at());
			flow.release(next.permit(), response(200, null));
			if (this.now.get() > Duration.ofSeconds(10).toNanos()) {
				lowest = Math.min(lowest, flow.limit());
				highest = Math.max(highest, flow.limit());
			}
		}
		assertThat(lowest).isGreaterThanOrEqualTo(12);
		assertThat(highest).isLessThanOrEqualTo(48);
	}

	@Test
	void countsATimeoutAsOverloadAndARefusedConnectionAsNeither() {
		DestinationFlow timeouts = flow(true, 256);
		DestinationFlow refusals = flow(true, 256);
		for (int round = 0; round < 50; round++) {
			for (DestinationFlow flow : List.of(timeouts, refusals)) {
				List<Limiter.Listener> permits = new ArrayList<>();
				for (int i = flow.available(); i > 0; i--) {
					permits.add(flow.acquire());
				}
				Throwable cause = (flow == timeouts) ? new TimeoutException() : new ConnectException("refused");
				permits.forEach((permit) -> flow.release(permit, new DeliveryOutcome.Failure(cause)));
			}
			this.now.addAndGet(TWENTY_MS);
		}
		assertThat(timeouts.limit()).isLessThan(16);
		assertThat(refusals.limit()).isEqualTo(DestinationFlow.INITIAL_LIMIT);
	}

	@Test
	void pausesTheWholeDestinationOnRetryAfterThenSendsOneProbeThenOpensUp() {
		DestinationFlow flow = flow(true, 256);
		Limiter.Listener first = flow.acquire();
		Limiter.Listener second = flow.acquire();
		flow.release(first, response(503, "30"));
		assertThat(flow.state()).isEqualTo(DestinationState.PAUSED);
		assertThat(flow.available()).isZero();
		flow.release(second, response(200, null));
		this.now.addAndGet(Duration.ofSeconds(29).toNanos());
		assertThat(flow.available()).isZero();
		this.now.addAndGet(Duration.ofSeconds(1).toNanos());
		assertThat(flow.state()).isEqualTo(DestinationState.PROBING);
		assertThat(flow.available()).isOne();
		Limiter.Listener probe = flow.acquire();
		assertThat(flow.available()).isZero();
		flow.release(probe, response(200, null));
		assertThat(flow.state()).isEqualTo(DestinationState.OPEN);
		assertThat(flow.available()).isGreaterThan(1);
	}

	@Test
	void pausesAgainWhenTheProbeIsToldToWaitAndCapsThePause() {
		DestinationFlow flow = new DestinationFlow("api",
				new RelayDestination.Flow(true, 256, NO_RATE, true, Duration.ofSeconds(60), 10), this.now::get);
		flow.release(flow.acquire(), response(429, "86400"));
		this.now.addAndGet(Duration.ofSeconds(60).toNanos());
		assertThat(flow.state()).isEqualTo(DestinationState.PROBING);
		flow.release(flow.acquire(), response(429, "5"));
		assertThat(flow.state()).isEqualTo(DestinationState.PAUSED);
		this.now.addAndGet(Duration.ofSeconds(5).toNanos());
		assertThat(flow.state()).isEqualTo(DestinationState.PROBING);
	}

	@Test
	void doesNotPauseWithoutRetryAfterOrWhenPausingIsOff() {
		DestinationFlow flow = flow(true, 256);
		flow.release(flow.acquire(), response(503, null));
		flow.release(flow.acquire(), response(500, "30"));
		assertThat(flow.state()).isEqualTo(DestinationState.OPEN);
		DestinationFlow off = new DestinationFlow("api",
				new RelayDestination.Flow(true, 256, NO_RATE, false, Duration.ofMinutes(10), 10), this.now::get);
		off.release(off.acquire(), response(503, "30"));
		assertThat(off.state()).isEqualTo(DestinationState.OPEN);
	}

	@Test
	void opensTheCircuitAfterTenConsecutiveTransientFailuresAndProbesAtADoublingInterval() {
		DestinationFlow flow = flow(true, 256);
		for (int i = 0; i < 9; i++) {
			flow.release(flow.acquire(), response(500, null));
		}
		flow.release(flow.acquire(), response(200, null));
		for (int i = 0; i < 9; i++) {
			flow.release(flow.acquire(), new DeliveryOutcome.Failure(new ConnectException("refused")));
		}
		assertThat(flow.state()).isEqualTo(DestinationState.OPEN);
		flow.release(flow.acquire(), response(502, null));
		assertThat(flow.state()).isEqualTo(DestinationState.PAUSED);
		long[] intervals = { 1, 2, 4, 8 };
		for (long seconds : intervals) {
			this.now.addAndGet(Duration.ofSeconds(seconds).toNanos() - 1);
			assertThat(flow.available()).isZero();
			this.now.addAndGet(1);
			assertThat(flow.available()).isOne();
			flow.release(flow.acquire(), new DeliveryOutcome.Failure(new ConnectException("refused")));
		}
		this.now.addAndGet(Duration.ofSeconds(16).toNanos());
		flow.release(flow.acquire(), response(404, null));
		assertThat(flow.state()).isEqualTo(DestinationState.OPEN);
		assertThat(flow.available()).isGreaterThan(1);
	}

	@Test
	void tellsItsListenerOfItsOwnPausesWhyAndOfTheProbeThatEndsOne() {
		DestinationFlow flow = flow(true, 256);
		List<String> heard = new ArrayList<>();
		flow.listen(new DestinationFlow.Listener() {

			@Override
			public void paused(Duration pause, PauseReason reason, String detail) {
				heard.add(reason + " " + pause + ": " + detail);
			}

			@Override
			public void reopened() {
				heard.add("reopened");
			}

		});
		flow.release(flow.acquire(), response(503, "30"));
		this.now.addAndGet(Duration.ofSeconds(30).toNanos());
		flow.release(flow.acquire(), response(200, null));
		for (int i = 0; i < 10; i++) {
			flow.release(flow.acquire(), response(502, null));
		}
		this.now.addAndGet(Duration.ofSeconds(1).toNanos());
		flow.release(flow.acquire(), new DeliveryOutcome.Failure(new ConnectException("refused")));
		assertThat(heard).containsExactly("RETRY_AFTER PT30S: HTTP 503 Retry-After 30s", "reopened",
				"CIRCUIT PT1S: 10 consecutive transient failures, the last HTTP 502",
				"CIRCUIT PT2S: probe failed: ConnectException");
	}

	@Test
	void adoptsAnotherInstancesPauseThenProbesAndKeepsALongerOneOfItsOwn() {
		DestinationFlow flow = flow(true, 256);
		flow.adopt(Duration.ofSeconds(5));
		assertThat(flow.state()).isEqualTo(DestinationState.PAUSED);
		assertThat(flow.pauseLeft()).isEqualTo(Duration.ofSeconds(5));
		this.now.addAndGet(Duration.ofSeconds(5).toNanos());
		assertThat(flow.state()).isEqualTo(DestinationState.PROBING);
		assertThat(flow.available()).isOne();
		flow.release(flow.acquire(), response(429, "60"));
		flow.adopt(Duration.ofSeconds(10));
		assertThat(flow.pauseLeft()).isEqualTo(Duration.ofSeconds(60));
		flow.reopen();
		assertThat(flow.state()).isEqualTo(DestinationState.OPEN);
		assertThat(flow.pauseLeft()).isZero();
		assertThat(flow.available()).isGreaterThan(1);
	}

	@Test
	void neverOpensTheCircuitWhenItsThresholdIsZero() {
		DestinationFlow flow = new DestinationFlow("api",
				new RelayDestination.Flow(true, 256, NO_RATE, true, Duration.ofMinutes(10), 0), this.now::get);
		for (int i = 0; i < 100; i++) {
			flow.release(flow.acquire(), response(500, null));
		}
		assertThat(flow.state()).isEqualTo(DestinationState.OPEN);
	}

	/**
	 * The circuit counts a status as a failure exactly when the default policy retries
	 * it, so that neither treats as passing what the other treats as final. 409 is left
	 * out: the policy decides it by the error code in its body, the circuit never counts
	 * it.
	 */
	@Test
	void countsTowardsTheCircuitExactlyTheStatusesTheDefaultPolicyRetries() {
		DefaultRetryPolicy policy = new DefaultRetryPolicy(RetrySettings.DEFAULTS);
		DeliveryAttempt attempt = new DeliveryAttempt(UUID.randomUUID(), "api", 1, Instant.now());
		SoftAssertions softly = new SoftAssertions();
		for (int status = 0; status < 1000; status++) {
			if (status == 409) {
				continue;
			}
			DestinationFlow flow = new DestinationFlow("api",
					new RelayDestination.Flow(true, 256, NO_RATE, false, Duration.ofMinutes(10), 1), this.now::get);
			DeliveryOutcome outcome = response(status, null);
			flow.release(flow.acquire(), outcome);
			softly.assertThat(flow.state() == DestinationState.PAUSED)
				.as("circuit counts %d", status)
				.isEqualTo(policy.decide(attempt, outcome) instanceof RetryDecision.Retry);
		}
		softly.assertAll();
	}

	private static DeliveryOutcome response(int status, String retryAfter) {
		HttpHeaders headers = new HttpHeaders();
		if (retryAfter != null) {
			headers.set(HttpHeaders.RETRY_AFTER, retryAfter);
		}
		return new DeliveryOutcome.Response(status, headers, new byte[0]);
	}

	@Test
	void staysAtMaxConcurrencyWhenNotAdaptive() {
		DestinationFlow flow = new DestinationFlow("api",
				new RelayDestination.Flow(false, 8, NO_RATE, true, Duration.ofMinutes(10), 0), this.now::get);
		run(flow, 50, (n) -> true);
		assertThat(flow.limit()).isEqualTo(8);
		assertThat(flow.available()).isEqualTo(8);
	}

	/**
	 * Answers arrive on several threads at once, and each may change the limit; the
	 * limiter must still grant exactly as many permits as the limit says.
	 */
	@Test
	void grantsAsManyPermitsAsTheLimitAfterAnswersArriveOnManyThreadsAtOnce() throws Exception {
		DestinationFlow flow = new DestinationFlow("api",
				new RelayDestination.Flow(true, 256, NO_RATE, false, Duration.ofMinutes(10), 0));
		ExecutorService threads = Executors.newFixedThreadPool(8);
		try {
			List<Future<?>> done = new ArrayList<>();
			for (int thread = 0; thread < 8; thread++) {
				done.add(threads.submit(() -> {
					for (int i = 0; i < 50_000; i++) {
						// Every fifth answer is an overload, so the limit goes up and
						// down.
						flow.release(flow.acquire(), response((i % 5 == 0) ? 503 : 200, null));
					}
				}));
			}
			for (Future<?> thread : done) {
				thread.get(30, TimeUnit.SECONDS);
			}
		}
		finally {
			threads.shutdownNow();
		}
		assertThat(flow.inFlight()).isZero();
		int limit = flow.limit();
		for (int i = 0; i < limit; i++) {
			flow.acquire();
		}
		assertThat(flow.inFlight()).as("permits granted of a limit of %d", limit).isEqualTo(limit);
	}

	@Test
	void sendsAClaimedRequestEvenWhenTheLimitShrankSinceTheClaim() {
		DestinationFlow flow = flow(false, 1);
		Limiter.Listener first = flow.acquire();
		Limiter.Listener second = flow.acquire();
		assertThat(flow.inFlight()).isOne();
		second.onSuccess();
		first.onSuccess();
		assertThat(flow.inFlight()).isZero();
	}

}
