package io.retryoutbox.jdbc;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;

import io.retryoutbox.message.ClaimedMessage;
import io.retryoutbox.relay.DirectDispatch;

import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * What a transaction that enqueued or replayed messages leaves for once it commits, in
 * one synchronization per transaction and owner of the keys: first the keys of its
 * arrivals are noted for the next admission, which would not see them before the commit,
 * then the messages it inserted leased are handed to the relay, then those it inserted
 * right behind a known message are offered to the relay's runs, then the relays are
 * woken, told only of the keys whose arrivals no run took. Without a transaction to wait
 * for, each is done at once.
 * <p>
 * One synchronization, not one for the keys and one for the relay, and none where nothing
 * waits for the commit: each one a transaction carries is work in every commit, and on an
 * instance without a relay, leaving the commit alone took the enqueue's median cost in
 * the shared benchmark's cost runs from 1.23x to 1.11x a plain insert
 * (docs/benchmarks.md, thirtieth session).
 */
final class CommitWork implements TransactionSynchronization {

	private final OrderingKeys keys;

	private final boolean atOnce;

	private final Set<String> arrivals = new LinkedHashSet<>();

	// The keys of arrivals that no run of this instance took, for the relay to read what
	// arrived behind its runs.
	private final Set<String> unfollowed = new LinkedHashSet<>();

	private final List<Follower> followers = new ArrayList<>();

	private final List<Leased> leased = new ArrayList<>();

	private final List<JdbcOutboxComponents.RelayWakeUp> wakeUps = new ArrayList<>(1);

	private CommitWork(OrderingKeys keys, boolean atOnce) {
		this.keys = keys;
		this.atOnce = atOnce;
	}

	/**
	 * The work the caller's transaction leaves for once it commits, registered with the
	 * transaction the first time it is asked for; without a transaction that can tell its
	 * commit (none, or one without synchronization, whose writes have committed or will
	 * without telling), work that is done at once.
	 * @param keys the owner of the keys the work notes
	 * @param inTransaction whether a transaction is active
	 * @return the work
	 */
	static CommitWork of(OrderingKeys keys, boolean inTransaction) {
		if (!inTransaction || !TransactionSynchronizationManager.isSynchronizationActive()) {
			return new CommitWork(keys, true);
		}
		// Looked up among the transaction's own synchronizations, not bound as a
		// resource: those are suspended with their transaction, so a REQUIRES_NEW one
		// inside it keeps its work apart.
		for (TransactionSynchronization synchronization : TransactionSynchronizationManager.getSynchronizations()) {
			if (synchronization instanceof CommitWork work && work.keys == keys) {
				return work;
			}
		}
		CommitWork work = new CommitWork(keys, false);
		TransactionSynchronizationManager.registerSynchronization(work);
		return work;
	}

	/**
	 * Notes an arrival's key once the transaction commits.
	 * @param key the key
	 */
	void arrived(String key) {
		this.arrivals.add(key);
		this.unfollowed.add(key);
		if (this.atOnce) {
			this.keys.noteArrivals(List.of(key));
		}
	}

	/**
	 * Notes an arrival's key once the transaction commits, as {@link #arrived} does, and
	 * offers the message to the relay's run of its key, which takes it if it ends with
	 * {@code behind}.
	 * @param key the key
	 * @param message the message, as a claim would have read it
	 * @param behind the message of the key it was inserted behind
	 * @param ahead how many messages of the key were behind the key's head then
	 * @param relay what reaches the relay of this instance
	 */
	void follow(String key, ClaimedMessage message, UUID behind, int ahead, JdbcOutboxComponents.RelayWakeUp relay) {
		this.arrivals.add(key);
		if (this.atOnce) {
			this.keys.noteArrivals(List.of(key));
			follow(new Follower(key, message, behind, ahead, relay));
		}
		else {
			this.followers.add(new Follower(key, message, behind, ahead, relay));
		}
	}

	private void follow(Follower follower) {
		if (!follower.relay().follow(follower.message(), follower.behind(), follower.ahead())) {
			this.unfollowed.add(follower.key());
		}
	}

	/**
	 * Hands a message inserted leased to the relay once the transaction commits; if it
	 * does not, the relay's slot goes back.
	 * @param message the message
	 * @param dispatch the relay that reserved the slot
	 */
	void handOver(ClaimedMessage message, DirectDispatch dispatch) {
		if (this.atOnce) {
			dispatch.handOver(message);
		}
		else {
			this.leased.add(new Leased(message, dispatch));
		}
	}

	/**
	 * Wakes the relays once the transaction commits.
	 * @param wakeUp what wakes them
	 */
	void wakeUp(JdbcOutboxComponents.RelayWakeUp wakeUp) {
		if (this.atOnce) {
			wake(wakeUp);
		}
		else if (!this.wakeUps.contains(wakeUp)) {
			this.wakeUps.add(wakeUp);
		}
	}

	@Override
	public void afterCommit() {
		if (!this.arrivals.isEmpty()) {
			this.keys.noteArrivals(this.arrivals);
		}
		this.leased.forEach((leased) -> leased.dispatch().handOver(leased.message()));
		this.leased.clear();
		this.followers.forEach(this::follow);
		this.followers.clear();
		this.wakeUps.forEach(this::wake);
	}

	private void wake(JdbcOutboxComponents.RelayWakeUp wakeUp) {
		if (!this.unfollowed.isEmpty()) {
			wakeUp.arrived(this.unfollowed);
		}
		wakeUp.wakeUp();
	}

	@Override
	public void afterCompletion(int status) {
		// Rolled back (or unknown): the slots go back; a leased row that did commit is
		// taken over once its lease expires.
		this.leased.forEach((leased) -> leased.dispatch().cancel(leased.message().destination()));
	}

	private record Leased(ClaimedMessage message, DirectDispatch dispatch) {

	}

	private record Follower(String key, ClaimedMessage message, UUID behind, int ahead,
			JdbcOutboxComponents.RelayWakeUp relay) {

	}

}
