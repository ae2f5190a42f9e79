package io.retryoutbox.message;

import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * A claimed row whose stored request cannot be read, e.g. headers that are not a JSON
 * object of string lists after a hand edit or a bad migration.
 *
 * @param id the message id
 * @param destination the destination name
 * @param orderingKey the ordering key, or {@code null}
 * @param attempt the number of this attempt, starting at 1
 * @param problem what cannot be read, and why
 */
public record UnreadableMessage(UUID id, String destination, @Nullable String orderingKey, int attempt,
		String problem) implements Claim {

}
