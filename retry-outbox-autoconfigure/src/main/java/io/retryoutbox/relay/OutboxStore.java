package io.retryoutbox.relay;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;

import io.retryoutbox.Outbox;
import io.retryoutbox.message.Claim;
import io.retryoutbox.message.Outcome;

/**
 * What the relay needs of the outbox table: claims under a lease, outcomes, key releases
 * and lease upkeep. Each call is one short transaction.
 */
public interface OutboxStore {

	/**
	 * Claims up to {@code limit} due messages for {@code owner}, leasing them for
	 * {@code lease}, and counts the attempt. Messages for other destinations are left
	 * alone: an instance that does not know a destination (it was removed from its
	 * configuration, or a newer version added it) must not spend their attempts.
	 * <p>
	 * With a {@code runSize} above one, each claimed head of an ordering key brings the
	 * messages that wait behind it, in the order the key would promote them, up to the
	 * run size in all: its run, to be sent one after another, each only once the one
	 * before was delivered. A run stops at the first waiting message of another
	 * destination. Heads come first in the result, then the rest of each run in order.
	 * The rest of a run is held by its head's lease: a store may leave it as it is until
	 * its outcomes are written, each attempt counted then.
	 * @param owner the relay instance
	 * @param limits the largest number of heads to claim by destination, for the
	 * destinations the relay can send to
	 * @param runSize the largest number of messages of one key claimed together
	 * @param lease how long the claim holds
	 * @return the claimed rows, each readable or not
	 */
	List<Claim> claim(String owner, Map<String, Integer> limits, int runSize, Duration lease);

	/**
	 * Reads again the rest of the runs of heads that {@code owner} holds, as
	 * {@link #claim} read them: the messages behind each head, in the order the key would
	 * promote them, up to the run size in all, so that a run may take those that arrived
	 * since. Nothing is written: the head's lease holds them.
	 * @param heads heads with an ordering key, leased to the caller
	 * @param runSize the largest number of messages of one key in a run, its head
	 * included
	 * @return the messages behind the heads, each key's in order; none from a store that
	 * cannot read them
	 */
	default List<Claim> runsBehind(List<? extends Claim> heads, int runSize) {
		return List.of();
	}

	/**
	 * One poll's work in one transaction, so that it costs one commit: writes the
	 * outcomes, claims the due heads, then releases the keys whose heads finished (if
	 * asked), promotes their next messages and claims those of the new heads that are
	 * due, within what the claim left of each destination's limit, so that a key's next
	 * message can be claimed in the same round as its head's outcome is written.
	 * @param owner the relay instance
	 * @param outcomes the outcomes to write, possibly none
	 * @param unsent messages of runs that were claimed but not sent, given back as
	 * {@link #release} does, in the same transaction as their runs' outcomes
	 * @param releaseKeys whether to release keys
	 * @param limits the largest number of heads to claim by destination, possibly none
	 * @param runSize the largest number of messages of one key claimed together, see
	 * {@link #claim}
	 * @param claimOnlyIfPromoted whether to claim only the new heads that releasing the
	 * keys gave, the one way a message can have become due since the last claim when
	 * nothing else says so
	 * @param lease how long a claim holds
	 * @return what was done
	 */
	Round round(String owner, List<Outcome> outcomes, List<UUID> unsent, boolean releaseKeys,
			Map<String, Integer> limits, int runSize, boolean claimOnlyIfPromoted, Duration lease);

	/**
	 * Writes the outcomes of a batch, and their attempt log rows, and gives back the
	 * unsent messages of their runs, in one transaction. A row whose lease was taken over
	 * by another owner is left alone.
	 * @param owner the relay instance that holds the leases
	 * @param outcomes the outcomes
	 * @param unsent messages of runs that were claimed but not sent
	 * @return the number of outcomes written; fewer than given when another relay took a
	 * lease over
	 */
	int complete(String owner, List<Outcome> outcomes, List<UUID> unsent);

	/**
	 * Lets the next message of every ordering key whose head finished go, except keys
	 * that an enqueuing transaction holds right now; those are left for a later call.
	 * @return the number of keys released
	 */
	int releaseKeys();

	/**
	 * Makes messages whose lease expired claimable again, e.g. after their relay died.
	 * @return the number of messages recovered
	 */
	int recoverExpiredLeases();

	/**
	 * Extends the leases of messages that {@code owner} still holds, so that a slow but
	 * alive relay keeps what it is sending.
	 * @param owner the relay instance
	 * @param ids the messages it is still working on
	 * @param lease the new lease, from now
	 * @return the number of leases extended
	 */
	int extendLeases(String owner, List<UUID> ids, Duration lease);

	/**
	 * Gives back messages leased to {@code owner} without counting the attempt, e.g. the
	 * ones still unanswered at shutdown.
	 * @param owner the relay instance
	 * @param ids the messages
	 * @return the number of messages released
	 */
	int release(String owner, List<UUID> ids);

	/**
	 * Rehearses the relay's database path, for its warm-up, where nothing of it can be
	 * seen or kept: in one transaction that is always rolled back, enqueues {@code keys}
	 * ordering keys of {@code perKey} messages each for {@code destination} into copies
	 * of the outbox tables that only this transaction sees, and hands {@code rounds} a
	 * store of the same statements on those copies, joined to the transaction, and an
	 * outbox that enqueues to them.
	 * @param destination the destination of the rehearsed messages
	 * @param keys the number of ordering keys
	 * @param perKey the number of messages of each key
	 * @param rounds what to do with the rehearsal; a store that cannot rehearse does
	 * nothing
	 */
	default void rehearse(String destination, int keys, int perKey, Consumer<Rehearsal> rounds) {
	}

	/**
	 * A rehearsal's store and enqueues, valid only on the thread that {@link #rehearse}
	 * runs on and while it does.
	 */
	interface Rehearsal {

		/**
		 * The store of the rehearsal's copies.
		 * @return the store
		 */
		OutboxStore store();

		/**
		 * An outbox that enqueues for the rehearsal's destination to its copies, as the
		 * application's outbox enqueues for {@code relay}'s instance. Its enqueues are in
		 * the rehearsal's one transaction, which never commits: what the application's
		 * would leave for their commit, notes, offers to runs, hand-overs and wake-ups of
		 * {@code relay}, is done at once.
		 * @param relay the relay of the rehearsal
		 * @return the outbox
		 */
		Outbox outbox(OutboxRelay relay);

	}

	/**
	 * What one {@link #round round} did.
	 *
	 * @param written the number of outcomes written; fewer than given when another relay
	 * took a lease over
	 * @param keysReleased the number of keys released
	 * @param claimed the claimed rows
	 */
	record Round(int written, int keysReleased, List<Claim> claimed) {

	}

}
