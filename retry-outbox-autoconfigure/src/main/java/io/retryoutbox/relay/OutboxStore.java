package io.retryoutbox.relay;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

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
	 * @param owner the relay instance
	 * @param limits the largest number of messages to claim by destination, for the
	 * destinations the relay can send to
	 * @param lease how long the claim holds
	 * @return the claimed rows, each readable or not
	 */
	List<Claim> claim(String owner, Map<String, Integer> limits, Duration lease);

	/**
	 * One poll's work in one transaction, so that it costs one commit: writes the
	 * outcomes, releases the keys whose heads finished (if asked) and promotes their next
	 * messages, then claims, so that a key's next message can be claimed in the same
	 * round as its head's outcome is written.
	 * @param owner the relay instance
	 * @param outcomes the outcomes to write, possibly none
	 * @param releaseKeys whether to release keys
	 * @param limits the largest number of messages to claim by destination, possibly none
	 * @param claimOnlyIfPromoted whether to claim only if releasing the keys gave one a
	 * new head, the one way a message can have become due since the last claim when
	 * nothing else says so
	 * @param lease how long a claim holds
	 * @return what was done
	 */
	Round round(String owner, List<Outcome> outcomes, boolean releaseKeys, Map<String, Integer> limits,
			boolean claimOnlyIfPromoted, Duration lease);

	/**
	 * Writes the outcomes of a batch, and their attempt log rows. A row whose lease was
	 * taken over by another owner is left alone.
	 * @param owner the relay instance that holds the leases
	 * @param outcomes the outcomes
	 * @return the number of rows written; fewer than given when another relay took a
	 * lease over
	 */
	int complete(String owner, List<Outcome> outcomes);

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
