package io.retryoutbox.relay;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

import io.retryoutbox.DeliveryOutcome;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.http.HttpHeaders;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The rate of one destination, driven by a simulated clock.
 */
class DestinationFlowRateTests {

	private static final long SECOND = Duration.ofSeconds(1).toNanos();

	private static final DeliveryOutcome OK = new DeliveryOutcome.Response(200, HttpHeaders.EMPTY, new byte[0]);

	private final AtomicLong now = new AtomicLong();

	private DestinationFlow flow(double maxRate) {
		return new DestinationFlow("api",
				new RelayDestination.Flow(false, 256, maxRate, true, Duration.ofMinutes(10), 10), this.now::get);
	}

	@Test
	void offersNoMoreThanTheTokensAvailableNowAndSaysWhenTheNextIsDue() {
		DestinationFlow flow = flow(10);
		assertThat(flow.available()).isOne();
		assertThat(flow.untilRatePermits()).isZero();
		flow.release(flow.acquire(), OK);
		assertThat(flow.available()).isZero();
		assertThat(flow.untilRatePermits()).isEqualTo(Duration.ofMillis(101));
		this.now.addAndGet(Duration.ofMillis(101).toNanos() - 1);
		assertThat(flow.available()).isZero();
		this.now.addAndGet(1);
		assertThat(flow.available()).isOne();
	}

	@Test
	void offersASmallBurstFromTwentyPerSecondAndNeverMoreThanTheConcurrencyLeavesFree() {
		assertThat(flow(19.9).available()).isOne();
		assertThat(flow(20).available()).isEqualTo(2);
		assertThat(flow(100).available()).isEqualTo(3);
		assertThat(flow(1000).available()).isEqualTo(21);
		DestinationFlow flow = new DestinationFlow("api",
				new RelayDestination.Flow(false, 8, 1000, true, Duration.ofMinutes(10), 10), this.now::get);
		assertThat(flow.available()).isEqualTo(8);
	}

	@Test
	void hasNoRateWithoutMaxRate() {
		DestinationFlow flow = flow(Double.POSITIVE_INFINITY);
		assertThat(flow.available()).isEqualTo(256);
		for (int i = 0; i < 1000; i++) {
			flow.release(flow.acquire(), OK);
		}
		assertThat(flow.available()).isEqualTo(256);
		assertThat(flow.untilRatePermits()).isZero();
	}

	@Test
	void takesTheTokenOfAClaimedRequestEvenWhenNoneIsLeftAndPaysItBackFromTheNext() {
		DestinationFlow flow = flow(10);
		flow.release(flow.acquire(), OK);
		flow.release(flow.acquire(), OK);
		this.now.addAndGet(Duration.ofMillis(101).toNanos());
		assertThat(flow.available()).isZero();
		this.now.addAndGet(Duration.ofMillis(101).toNanos());
		assertThat(flow.available()).isOne();
	}

	/**
	 * A relay with a backlog: it takes what the flow offers, then comes back when the
	 * next token is due, up to 5 ms late, and once pauses for two seconds, so that the
	 * bucket fills up. Every window of one second and 10 ms (a margin for the way to the
	 * downstream), starting at any request, holds at most the rate's whole part, and the
	 * relay still gets at least 90% of it.
	 */
	@ParameterizedTest
	@ValueSource(doubles = { 1, 2.5, 7, 20, 49, 50, 100, 333, 1000 })
	void startsAtMostTheRateInEveryOneSecondWindowAndNinetyPercentOfIt(double maxRate) {
		DestinationFlow flow = flow(maxRate);
		Random random = new Random(42);
		List<Long> starts = new ArrayList<>();
		long busy = 0;
		while (this.now.get() < 12 * SECOND) {
			for (int i = flow.available(); i > 0; i--) {
				flow.release(flow.acquire(), OK);
				starts.add(this.now.get());
			}
			boolean idle = this.now.get() >= 5 * SECOND && this.now.get() < 7 * SECOND;
			long step = idle ? 2 * SECOND
					: flow.untilRatePermits().toNanos() + random.nextLong(Duration.ofMillis(5).toNanos());
			busy += idle ? 0 : step;
			this.now.addAndGet(step);
		}
		long perSecond = (long) Math.floor(maxRate);
		for (int i = 0; i < starts.size(); i++) {
			long windowEnd = starts.get(i) + SECOND + Duration.ofMillis(10).toNanos();
			assertThat(starts.subList(i, starts.size()).stream().filter((start) -> start < windowEnd).count())
				.as("requests in the second from %d ns", starts.get(i))
				.isLessThanOrEqualTo(perSecond);
		}
		assertThat(starts.size()).isGreaterThanOrEqualTo((int) (0.9 * perSecond * busy / SECOND));
	}

	@Test
	void spacesRequestsBelowOnePerSecond() {
		DestinationFlow flow = flow(0.4);
		flow.release(flow.acquire(), OK);
		assertThat(flow.untilRatePermits()).isEqualTo(Duration.ofMillis(2510));
		this.now.addAndGet(Duration.ofMillis(2509).toNanos());
		assertThat(flow.available()).isZero();
		this.now.addAndGet(Duration.ofMillis(1).toNanos());
		assertThat(flow.available()).isOne();
	}

	@Test
	void refusesARateThatIsNotPositive() {
		for (double maxRate : new double[] { 0, -1, Double.NaN, Double.NEGATIVE_INFINITY, 2e9 }) {
			assertThatIllegalArgumentException()
				.isThrownBy(() -> new RelayDestination.Flow(true, 256, maxRate, true, Duration.ofMinutes(10), 10))
				.withMessageStartingWith("flow.max-rate must be positive and at most 1000000000, was ");
		}
	}

}
