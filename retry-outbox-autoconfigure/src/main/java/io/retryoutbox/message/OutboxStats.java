package io.retryoutbox.message;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * The figures that tell whether the outbox keeps up, read in one cheap query.
 *
 * @param pending the number of messages waiting for an attempt
 * @param inFlight the number of messages leased by a relay
 * @param dead the number of dead messages
 * @param oldestPendingAge how long ago the oldest unfinished ({@code PENDING} or
 * {@code IN_FLIGHT}) message was enqueued, or {@code null} if there is none
 * @param lag how long the oldest claimable message (a due head or unkeyed message for a
 * destination this instance knows and that is not paused) has been due,
 * {@link Duration#ZERO} if none is due
 * @param parkedKeys the number of ordering keys held up by a dead message
 * @param unknownDestination the number of {@code PENDING} messages for a destination this
 * instance does not configure, which its relay leaves alone
 */
public record OutboxStats(long pending, long inFlight, long dead, @Nullable Duration oldestPendingAge, Duration lag,
		long parkedKeys, long unknownDestination) {

}
