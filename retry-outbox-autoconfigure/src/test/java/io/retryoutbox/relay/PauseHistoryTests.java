package io.retryoutbox.relay;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How much of a message's life its destination's pauses cover.
 */
class PauseHistoryTests {

	private static final Instant T = Instant.parse("2026-03-01T12:00:00Z");

	private static DestinationPause pause(int startMinute, Integer endMinute) {
		return new DestinationPause("api", minute(startMinute), (endMinute != null) ? minute(endMinute) : null,
				minute(startMinute + 1), PauseReason.CIRCUIT, "10 consecutive transient failures", "relay-1");
	}

	private static Instant minute(int minute) {
		return T.plus(Duration.ofMinutes(minute));
	}

	@Test
	void countsOnlyThePartOfEachPauseWithinTheSpan() {
		PauseHistory history = PauseHistory.EMPTY.with(List.of(pause(10, 20), pause(30, 40), pause(50, 60)));
		assertThat(history.pausedBetween(minute(0), minute(100))).isEqualTo(Duration.ofMinutes(30));
		assertThat(history.pausedBetween(minute(15), minute(55))).isEqualTo(Duration.ofMinutes(20));
		assertThat(history.pausedBetween(minute(20), minute(30))).isZero();
		assertThat(history.pausedBetween(minute(32), minute(35))).isEqualTo(Duration.ofMinutes(3));
		assertThat(history.pausedBetween(minute(70), minute(80))).isZero();
		assertThat(history.pausedBetween(minute(80), minute(70))).isZero();
	}

	@Test
	void countsAnOpenPauseUpToTheEndOfTheSpan() {
		PauseHistory history = PauseHistory.EMPTY.with(List.of(pause(10, 20), pause(30, null)));
		assertThat(history.pausedBetween(minute(0), minute(45))).isEqualTo(Duration.ofMinutes(25));
		assertThat(history.pausedBetween(minute(35), minute(360))).isEqualTo(Duration.ofMinutes(325));
	}

	@Test
	void countsOverlappingPausesOnce() {
		PauseHistory history = PauseHistory.EMPTY.with(List.of(pause(10, 30), pause(20, 25), pause(28, 40)));
		assertThat(history.pausedBetween(minute(0), minute(60))).isEqualTo(Duration.ofMinutes(30));
	}

	@Test
	void replacesAPauseKnownByItsStartOnceItEnded() {
		PauseHistory open = PauseHistory.EMPTY.with(List.of(pause(10, null)));
		PauseHistory ended = open.with(List.of(pause(10, 20)));
		assertThat(open.pausedBetween(minute(0), minute(60))).isEqualTo(Duration.ofMinutes(50));
		assertThat(ended.pausedBetween(minute(0), minute(60))).isEqualTo(Duration.ofMinutes(10));
	}

	@Test
	void prunesOnlyPausesFollowedByMoreUnpausedTimeThanTheLongestDeadline() {
		PauseHistory history = PauseHistory.EMPTY.with(List.of(pause(0, 10), pause(20, 300), pause(310, 320)));
		// After the pause that ended at 10: 30 unpaused minutes up to 330, after the one
		// that ended at 300, 20.
		assertThat(history.prunable(minute(330), Duration.ofMinutes(30))).isNull();
		Instant prunable = history.prunable(minute(330), Duration.ofMinutes(29));
		assertThat(prunable).isEqualTo(minute(10));
		PauseHistory pruned = history.prunedTo(prunable);
		assertThat(pruned.pausedBetween(minute(0), minute(330))).isEqualTo(Duration.ofMinutes(290));
		assertThat(history.prunable(minute(400), Duration.ofMinutes(29))).isEqualTo(minute(320));
		assertThat(history.prunedTo(minute(320)).isEmpty()).isTrue();
	}

}
