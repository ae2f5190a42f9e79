package io.retryoutbox.relay;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/**
 * The pauses of a relay's destinations, shared with every other instance through a
 * {@link PauseStore}: the one place that decides, from a destination's own flow and the
 * pauses the others wrote, whether it is paused here, and how long it was paused during a
 * message's life.
 * <p>
 * A flow's own pause, and the probe that ends it, are written by the poller, never on the
 * thread that read the answer, and several in one poll interval are written as one. The
 * store is read at most once per poll interval, and after each write: an open pause
 * pauses the flow here too until its end, then a probe goes, as after a pause of its own;
 * a pause that ended (a probe got through on some instance, or an operator resumed the
 * destination) opens the flow here at once.
 */
public final class DestinationPauses {

	private static final Log logger = LogFactory.getLog(DestinationPauses.class);

	// Pauses that end while a read is under way (their transaction commits after it) are
	// read again by the later reads.
	private static final Duration READ_OVERLAP = Duration.ofMinutes(1);

	private final PauseStore store;

	private final Duration history;

	private final Map<String, Local> locals = new ConcurrentHashMap<>();

	private volatile Map<String, PauseHistory> histories = Map.of();

	private volatile Map<String, DestinationPause> open = Map.of();

	// The database's clock less this one's, as of the last read: pauses are timed by
	// the database.
	private volatile Duration clockOffset = Duration.ZERO;

	private Instant readFrom = Instant.EPOCH;

	private long lastRead;

	private boolean hasRead;

	private boolean failing;

	/**
	 * Creates the shared pauses of a relay.
	 * @param store where the instances share them
	 * @param history how long an ended pause still counts: the longest delivery deadline
	 * (a message enqueued before a pause followed by more unpaused time than that is past
	 * its deadline, whatever the pause gives back)
	 */
	public DestinationPauses(PauseStore store, Duration history) {
		Assert.notNull(store, "'store' must not be null");
		Assert.isTrue(!history.isNegative(), () -> "the pause history must not be negative, was " + history);
		this.store = store;
		this.history = history;
	}

	/**
	 * The listener of one destination's flow: it notes the flow's own pauses and
	 * reopenings for the next {@link #sync}.
	 */
	DestinationFlow.Listener listener(String destination, String owner) {
		Local local = this.locals.computeIfAbsent(destination, (name) -> new Local());
		return new DestinationFlow.Listener() {

			@Override
			public void paused(Duration pause, PauseReason reason, String detail) {
				Instant now = now();
				local.changed(
						new Change(new DestinationPause(destination, now, null, now.plus(pause), reason, detail, owner),
								System.nanoTime() + pause.toNanos()));
			}

			@Override
			public void reopened() {
				local.changed(Change.REOPENED);
			}

		};
	}

	/**
	 * Writes the flows' own pauses and reopenings, then, if it wrote or a poll interval
	 * passed since the last read, reads the shared pauses and applies them to the flows.
	 * A failure is logged, not thrown: each instance then pauses on its own, as without
	 * sharing, until the store answers again.
	 * @param flows the flows by destination
	 * @param interval the poll interval
	 */
	synchronized void sync(Map<String, DestinationFlow> flows, Duration interval) {
		long now = System.nanoTime();
		// While the store fails, once per poll interval rather than once per poll.
		if (this.failing && now - this.lastRead < interval.toNanos()) {
			return;
		}
		try {
			Map<String, Long> seen = new HashMap<>();
			this.locals.forEach((destination, local) -> seen.put(destination, local.changes.get()));
			boolean wrote = write();
			if (!wrote && this.hasRead && now - this.lastRead < interval.toNanos()) {
				return;
			}
			this.lastRead = now;
			PauseStore.Snapshot snapshot = this.store.read(this.readFrom);
			this.hasRead = true;
			apply(snapshot, flows, seen);
			if (this.failing) {
				logger.info("Destination pauses are shared with the other instances again");
				this.failing = false;
			}
		}
		catch (RuntimeException ex) {
			this.lastRead = now;
			if (!this.failing) {
				logger.warn("Could not share destination pauses with the other instances; each pauses on its own "
						+ "until this succeeds", ex);
			}
			else {
				logger.debug("Could not share destination pauses again", ex);
			}
			this.failing = true;
		}
	}

	private boolean write() {
		boolean wrote = false;
		for (Map.Entry<String, Local> entry : this.locals.entrySet()) {
			Change change = entry.getValue().pending.getAndSet(null);
			if (change == null) {
				continue;
			}
			try {
				write(entry.getKey(), change);
				wrote = true;
			}
			catch (RuntimeException ex) {
				// Unless a newer change came meanwhile, this one is written next time.
				entry.getValue().pending.compareAndSet(null, change);
				throw ex;
			}
		}
		return wrote;
	}

	private void write(String destination, Change change) {
		DestinationPause pause = change.pause();
		if (pause != null) {
			Duration left = Duration.ofNanos(Math.max(0, change.untilNanos() - System.nanoTime()));
			this.store.pause(destination, left, pause.reason(), pause.detail(), pause.pausedBy());
			return;
		}
		if (this.store.endIfOver(destination)) {
			prune(destination);
		}
	}

	/**
	 * Deletes the pauses no message can count any more, when one ends: the table holds
	 * only what the deadlines need, and is touched only when a pause begins or ends.
	 */
	private void prune(String destination) {
		Instant prunable = this.histories.getOrDefault(destination, PauseHistory.EMPTY).prunable(now(), this.history);
		if (prunable != null) {
			this.store.prune(destination, prunable);
		}
	}

	private void apply(PauseStore.Snapshot snapshot, Map<String, DestinationFlow> flows, Map<String, Long> seen) {
		this.clockOffset = Duration.between(Instant.now(), snapshot.now());
		this.readFrom = snapshot.now().minus(READ_OVERLAP);
		Map<String, List<DestinationPause>> read = snapshot.pauses()
			.stream()
			.collect(Collectors.groupingBy(DestinationPause::destination));
		Map<String, PauseHistory> histories = new HashMap<>(this.histories);
		read.forEach((destination, pauses) -> histories.put(destination,
				histories.getOrDefault(destination, PauseHistory.EMPTY).with(pauses)));
		histories.replaceAll((destination, history) -> {
			Instant prunable = history.prunable(snapshot.now(), this.history);
			return (prunable != null) ? history.prunedTo(prunable) : history;
		});
		histories.values().removeIf(PauseHistory::isEmpty);
		Map<String, DestinationPause> open = new HashMap<>();
		snapshot.pauses()
			.stream()
			.filter((pause) -> pause.endedAt() == null)
			.forEach((pause) -> open.put(pause.destination(), pause));
		Map<String, DestinationPause> wasOpen = this.open;
		this.histories = Map.copyOf(histories);
		this.open = Map.copyOf(open);
		flows.forEach((destination, flow) -> {
			Local local = this.locals.get(destination);
			if (local != null && local.changes.get() != seen.getOrDefault(destination, 0L)) {
				// It paused or reopened here since the write: the next sync writes that
				// first.
				return;
			}
			DestinationPause pause = open.get(destination);
			DestinationState state = flow.state();
			if (pause != null) {
				Duration left = Duration.between(snapshot.now(), pause.pausedUntil());
				flow.adopt(left.isNegative() ? Duration.ZERO : left);
				if (state == DestinationState.OPEN) {
					logger.info("Destination '" + destination + "' is paused until " + pause.pausedUntil() + " by "
							+ pause.pausedBy() + ": " + pause.reason() + " (" + pause.detail() + ")");
				}
			}
			else if (state != DestinationState.OPEN && wasOpen.containsKey(destination)) {
				// Only a pause seen open before: one of its own not written yet stays.
				flow.reopen();
				logger.info("Destination '" + destination + "' opens up again: its pause ended on another instance "
						+ "or was resumed");
			}
		});
	}

	/**
	 * How long a destination was paused since {@code since}, up to the end of its current
	 * pause if it is paused now, since no message is sent before that.
	 * @param destination the destination name
	 * @param since e.g. when a message was enqueued
	 * @param flow its flow on this instance
	 * @return the paused time
	 */
	Duration pausedFor(String destination, Instant since, DestinationFlow flow) {
		PauseHistory history = this.histories.getOrDefault(destination, PauseHistory.EMPTY);
		return history.pausedBetween(since, now()).plus(flow.pauseLeft());
	}

	/**
	 * The current pause of a destination as this instance knows it: read from the store,
	 * or its own one not written yet.
	 * @param destination the destination name
	 * @return the pause, or {@code null} if it knows none
	 */
	@Nullable DestinationPause current(String destination) {
		DestinationPause open = this.open.get(destination);
		if (open != null) {
			return open;
		}
		Local local = this.locals.get(destination);
		Change change = (local != null) ? local.pending.get() : null;
		return (change != null) ? change.pause() : null;
	}

	/**
	 * Ends the pause of a destination on every instance (at their next read) and opens
	 * its flow here at once.
	 * @param destination the destination name
	 * @param flow its flow on this instance
	 * @return whether it was paused
	 */
	synchronized boolean resume(String destination, DestinationFlow flow) {
		boolean paused = flow.state() != DestinationState.OPEN;
		Local local = this.locals.get(destination);
		if (local != null) {
			local.changed(null);
		}
		boolean ended = this.store.end(destination);
		if (ended) {
			prune(destination);
		}
		flow.reopen();
		Map<String, DestinationPause> open = new HashMap<>(this.open);
		open.remove(destination);
		this.open = Map.copyOf(open);
		logger.info("Destination '" + destination + "' was resumed by an operator");
		return ended || paused;
	}

	private Instant now() {
		return Instant.now().plus(this.clockOffset);
	}

	/**
	 * A flow's own pause, or its reopening ({@code pause} null), to be written.
	 */
	private record Change(@Nullable DestinationPause pause, long untilNanos) {

		static final Change REOPENED = new Change(null, 0);

	}

	/**
	 * What a destination's flow did here: its latest change not written yet, and a count
	 * of changes, which tells a read that raced with one to leave the flow alone.
	 */
	private static final class Local {

		private final AtomicReference<@Nullable Change> pending = new AtomicReference<>();

		private final AtomicLong changes = new AtomicLong();

		void changed(@Nullable Change change) {
			this.pending.set(change);
			this.changes.incrementAndGet();
		}

	}

}
