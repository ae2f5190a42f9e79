package io.retryoutbox.relay;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * A pause of one destination, shared by every relay instance: nothing is sent to it until
 * {@code pausedUntil}, then one probe at a time until a probe gets through.
 *
 * @param destination the destination name
 * @param startedAt when the pause began
 * @param endedAt when a probe got through or an operator resumed the destination, or
 * {@code null} while the pause lasts
 * @param pausedUntil when the next probe may go
 * @param reason why it was paused, the last time it was extended
 * @param detail what the destination answered, e.g. {@code HTTP 503 Retry-After 30s}
 * @param pausedBy the relay instance that paused it, or extended it last
 */
public record DestinationPause(String destination, Instant startedAt, @Nullable Instant endedAt, Instant pausedUntil,
		PauseReason reason, String detail, String pausedBy) {

}
