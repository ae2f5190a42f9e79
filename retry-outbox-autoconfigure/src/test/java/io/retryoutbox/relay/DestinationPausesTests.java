package io.retryoutbox.relay;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import io.retryoutbox.DeliveryOutcome;
import org.junit.jupiter.api.Test;

import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.http.HttpHeaders;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How a relay's flows follow the pauses other instances wrote, on a store held in memory.
 */
class DestinationPausesTests {

	private static final Duration POLL = Duration.ofMillis(1);

	private final InMemoryPauseStore store = new InMemoryPauseStore();

	private final DestinationPauses pauses = new DestinationPauses(this.store, Duration.ofHours(24));

	private final DestinationFlow flow = new DestinationFlow("api", RelayDestination.Flow.DEFAULTS);

	private final Map<String, DestinationFlow> flows = Map.of("api", this.flow);

	DestinationPausesTests() {
		this.flow.listen(this.pauses.listener("api", "relay-1"));
	}

	@Test
	void pausesAFlowWhileAnotherInstancesPauseLastsAndOpensItOnceThatPauseEnds() {
		this.pauses.sync(this.flows, POLL);
		this.store.pause("api", Duration.ofMinutes(5), PauseReason.RETRY_AFTER, "HTTP 503 Retry-After 300s", "relay-2");
		this.pauses.sync(this.flows, Duration.ZERO);
		assertThat(this.flow.state()).isEqualTo(DestinationState.PAUSED);
		assertThat(this.flow.pauseLeft()).isBetween(Duration.ofMinutes(4), Duration.ofMinutes(5));
		assertThat(this.pauses.current("api")).satisfies((pause) -> {
			assertThat(pause.pausedBy()).isEqualTo("relay-2");
			assertThat(pause.detail()).isEqualTo("HTTP 503 Retry-After 300s");
		});
		this.store.end("api");
		this.pauses.sync(this.flows, Duration.ZERO);
		assertThat(this.flow.state()).isEqualTo(DestinationState.OPEN);
		assertThat(this.pauses.current("api")).isNull();
	}

	@Test
	void writesItsOwnPauseAndWritesItAgainAfterAFailedWrite() {
		this.pauses.sync(this.flows, Duration.ZERO);
		this.flow.release(this.flow.acquire(), retryAfter(429, "60"));
		assertThat(this.pauses.current("api")).satisfies((pause) -> {
			assertThat(pause.reason()).isEqualTo(PauseReason.RETRY_AFTER);
			assertThat(pause.pausedBy()).isEqualTo("relay-1");
		});
		this.store.failNext.set(1);
		this.pauses.sync(this.flows, Duration.ZERO);
		assertThat(this.flow.state()).isEqualTo(DestinationState.PAUSED);
		assertThat(this.store.open()).isEmpty();
		this.pauses.sync(this.flows, Duration.ZERO);
		assertThat(this.store.open()).singleElement()
			.satisfies((pause) -> assertThat(pause.detail()).isEqualTo("HTTP 429 Retry-After 60s"));
		assertThat(this.flow.state()).isEqualTo(DestinationState.PAUSED);
	}

	@Test
	void resumesAtOnceHereAndEndsThePauseForTheOthers() {
		this.store.pause("api", Duration.ofMinutes(5), PauseReason.CIRCUIT, "10 consecutive transient failures",
				"relay-2");
		this.pauses.sync(this.flows, Duration.ZERO);
		assertThat(this.flow.state()).isEqualTo(DestinationState.PAUSED);
		assertThat(this.pauses.resume("api", this.flow)).isTrue();
		assertThat(this.flow.state()).isEqualTo(DestinationState.OPEN);
		assertThat(this.store.open()).isEmpty();
		this.pauses.sync(this.flows, Duration.ZERO);
		assertThat(this.flow.state()).isEqualTo(DestinationState.OPEN);
		assertThat(this.pauses.resume("api", this.flow)).isFalse();
	}

	@Test
	void countsThePausesOfAMessagesLifeAndWhatIsLeftOfTheCurrentOne() {
		Instant enqueued = Instant.now();
		this.store.pause("api", Duration.ofMinutes(5), PauseReason.CIRCUIT, "10 consecutive transient failures",
				"relay-2");
		this.pauses.sync(this.flows, Duration.ZERO);
		Duration pausedFor = this.pauses.pausedFor("api", enqueued, this.flow);
		assertThat(pausedFor).isBetween(Duration.ofMinutes(4), Duration.ofMinutes(5).plusSeconds(1));
		assertThat(this.pauses.pausedFor("api", Instant.now().plusSeconds(1), this.flow))
			.isLessThanOrEqualTo(this.flow.pauseLeft().plusMillis(1));
	}

	@Test
	void keepsPausingOnItsOwnWhileTheStoreFails() {
		this.store.failNext.set(Integer.MAX_VALUE);
		this.pauses.sync(this.flows, Duration.ZERO);
		this.flow.release(this.flow.acquire(), retryAfter(503, "30"));
		this.pauses.sync(this.flows, Duration.ZERO);
		assertThat(this.flow.state()).isEqualTo(DestinationState.PAUSED);
		this.store.failNext.set(0);
		this.pauses.sync(this.flows, Duration.ZERO);
		assertThat(this.store.open()).hasSize(1);
	}

	private static DeliveryOutcome retryAfter(int status, String seconds) {
		HttpHeaders headers = new HttpHeaders();
		headers.set(HttpHeaders.RETRY_AFTER, seconds);
		return new DeliveryOutcome.Response(status, headers, new byte[0]);
	}

	/**
	 * Pauses in a list, timed by this JVM's clock as the database would time them.
	 */
	static final class InMemoryPauseStore implements PauseStore {

		private final List<DestinationPause> pauses = new ArrayList<>();

		final AtomicInteger failNext = new AtomicInteger();

		@Override
		public synchronized void pause(String destination, Duration pause, PauseReason reason, String detail,
				String pausedBy) {
			failIfAsked();
			Instant now = Instant.now();
			DestinationPause open = openOf(destination);
			if (open == null) {
				this.pauses
					.add(new DestinationPause(destination, now, null, now.plus(pause), reason, detail, pausedBy));
			}
			else if (now.plus(pause).isAfter(open.pausedUntil())) {
				this.pauses.set(this.pauses.indexOf(open), new DestinationPause(destination, open.startedAt(), null,
						now.plus(pause), reason, detail, pausedBy));
			}
		}

		@Override
		public synchronized boolean endIfOver(String destination) {
			failIfAsked();
			DestinationPause open = openOf(destination);
			return open != null && !open.pausedUntil().isAfter(Instant.now()) && end(destination);
		}

		@Override
		public synchronized boolean end(String destination) {
			DestinationPause open = openOf(destination);
			if (open == null) {
				return false;
			}
			this.pauses.set(this.pauses.indexOf(open), new DestinationPause(destination, open.startedAt(),
					Instant.now(), open.pausedUntil(), open.reason(), open.detail(), open.pausedBy()));
			return true;
		}

		@Override
		public synchronized int prune(String destination, Instant endedBefore) {
			int before = this.pauses.size();
			this.pauses.removeIf((pause) -> pause.destination().equals(destination) && pause.endedAt() != null
					&& !pause.endedAt().isAfter(endedBefore));
			return before - this.pauses.size();
		}

		@Override
		public synchronized Snapshot read(Instant endedAfter) {
			failIfAsked();
			return new Snapshot(Instant.now(),
					this.pauses.stream()
						.filter((pause) -> pause.endedAt() == null || pause.endedAt().isAfter(endedAfter))
						.toList());
		}

		synchronized List<DestinationPause> open() {
			return this.pauses.stream().filter((pause) -> pause.endedAt() == null).toList();
		}

		private DestinationPause openOf(String destination) {
			return this.pauses.stream()
				.filter((pause) -> pause.destination().equals(destination) && pause.endedAt() == null)
				.findFirst()
				.orElse(null);
		}

		private void failIfAsked() {
			if (this.failNext.getAndUpdate((n) -> Math.max(0, n - 1)) > 0) {
				throw new DataAccessResourceFailureException("database away");
			}
		}

	}

}
