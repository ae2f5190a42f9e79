package io.retryoutbox.relay;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.jspecify.annotations.Nullable;

/**
 * The pauses of one destination, as intervals, and how much of a span of time they cover:
 * the time a message waited for nothing but its destination, which its delivery deadline
 * does not count. Immutable, so the relay's sending threads read it while the poller
 * replaces it.
 */
final class PauseHistory {

	static final PauseHistory EMPTY = new PauseHistory(List.of());

	// By start; an open interval (end null) runs up to whatever time is asked about.
	private final List<Interval> intervals;

	private PauseHistory(List<Interval> intervals) {
		this.intervals = intervals;
	}

	/**
	 * This history with {@code pauses} merged in: a pause already known by its start is
	 * replaced, e.g. once it ended.
	 * @param pauses the pauses read
	 * @return the merged history
	 */
	PauseHistory with(Collection<DestinationPause> pauses) {
		if (pauses.isEmpty()) {
			return this;
		}
		Map<Instant, Interval> merged = new TreeMap<>();
		this.intervals.forEach((interval) -> merged.put(interval.start(), interval));
		pauses.forEach((pause) -> merged.put(pause.startedAt(), new Interval(pause.startedAt(), pause.endedAt())));
		return new PauseHistory(List.copyOf(merged.values()));
	}

	/**
	 * How much of {@code [from, to]} the pauses cover; overlapping pauses count once.
	 * @param from the start of the span, e.g. when a message was enqueued
	 * @param to the end of the span, e.g. now
	 * @return the paused time within the span
	 */
	Duration pausedBetween(Instant from, Instant to) {
		Duration paused = Duration.ZERO;
		Instant covered = from;
		for (Interval interval : this.intervals) {
			Instant start = max(interval.start(), covered);
			Instant end = (interval.end() != null) ? min(interval.end(), to) : to;
			if (start.isBefore(end)) {
				paused = paused.plus(Duration.between(start, end));
				covered = end;
			}
		}
		return paused;
	}

	/**
	 * The latest end of a pause that no message can count any more: one followed by more
	 * than {@code horizon} of time unpaused, since a message enqueued before it has spent
	 * more than its deadline since, whatever the pause gives back.
	 * @param now the current time
	 * @param horizon the longest delivery deadline
	 * @return the end, or {@code null} if every pause may still count
	 */
	@Nullable Instant prunable(Instant now, Duration horizon) {
		List<Interval> ended = new ArrayList<>(this.intervals.stream().filter((i) -> i.end() != null).toList());
		ended.sort(Comparator.comparing(Interval::end).reversed());
		for (Interval interval : ended) {
			Duration unpaused = Duration.between(interval.end(), now).minus(pausedBetween(interval.end(), now));
			if (unpaused.compareTo(horizon) > 0) {
				return interval.end();
			}
		}
		return null;
	}

	/**
	 * This history without the pauses that ended at or before {@code end}.
	 * @param end the latest end dropped
	 * @return the pruned history
	 */
	PauseHistory prunedTo(Instant end) {
		return new PauseHistory(this.intervals.stream()
			.filter((interval) -> interval.end() == null || interval.end().isAfter(end))
			.toList());
	}

	/**
	 * Whether no pause is known.
	 * @return whether the history is empty
	 */
	boolean isEmpty() {
		return this.intervals.isEmpty();
	}

	private static Instant max(Instant a, Instant b) {
		return a.isAfter(b) ? a : b;
	}

	private static Instant min(Instant a, Instant b) {
		return a.isBefore(b) ? a : b;
	}

	private record Interval(Instant start, @Nullable Instant end) {

	}

}
