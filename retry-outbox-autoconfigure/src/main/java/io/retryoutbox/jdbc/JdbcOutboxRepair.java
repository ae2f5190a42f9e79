package io.retryoutbox.jdbc;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

import io.retryoutbox.message.MessageFilter;
import io.retryoutbox.message.OutboxRepair;

import org.springframework.util.Assert;

/**
 * Replays and discards dead messages through {@link OrderingKeys}, which keeps their
 * keys' order. Bulk operations work in chunks of
 * {@link JdbcOutboxComponents#REPAIR_CHUNK_SIZE} rows, each its own short statement that
 * skips locked rows, so a large replay neither holds long locks nor blocks the relay.
 */
final class JdbcOutboxRepair implements OutboxRepair {

	private static final int CHUNK_SIZE = JdbcOutboxComponents.REPAIR_CHUNK_SIZE;

	private static final String BY_ID = "AND m.id = :id";

	private final OrderingKeys keys;

	private final boolean attemptLog;

	private final Duration timeBudget;

	JdbcOutboxRepair(OrderingKeys keys, boolean attemptLog, Duration timeBudget) {
		this.keys = keys;
		this.attemptLog = attemptLog;
		this.timeBudget = timeBudget;
	}

	@Override
	public boolean replay(UUID id, String actor) {
		return this.keys.replay(BY_ID, Map.of("id", id), 1, actor, this.attemptLog) == 1;
	}

	@Override
	public BulkResult replay(MessageFilter filter, int limit, String actor) {
		Map<String, Object> params = new LinkedHashMap<>();
		String conditions = MessageConditions.of(withoutStatus(filter), params);
		return inChunks(limit, (chunk) -> this.keys.replay(conditions, params, chunk, actor, this.attemptLog));
	}

	@Override
	public boolean discard(UUID id) {
		return this.keys.discard(BY_ID, Map.of("id", id), 1) == 1;
	}

	@Override
	public BulkResult discard(MessageFilter filter, int limit) {
		Map<String, Object> params = new LinkedHashMap<>();
		String conditions = MessageConditions.of(withoutStatus(filter), params);
		return inChunks(limit, (chunk) -> this.keys.discard(conditions, params, chunk));
	}

	private BulkResult inChunks(int limit, Chunk chunk) {
		Assert.isTrue(limit > 0, () -> "limit must be positive, was " + limit);
		long deadline = System.nanoTime() + this.timeBudget.toNanos();
		int done = 0;
		while (done < limit) {
			int size = Math.min(CHUNK_SIZE, limit - done);
			int count = chunk.apply(size);
			done += count;
			if (count < size) {
				return new BulkResult(done, true);
			}
			if (System.nanoTime() - deadline > 0) {
				break;
			}
		}
		return new BulkResult(done, false);
	}

	private static MessageFilter withoutStatus(MessageFilter filter) {
		return new MessageFilter(null, filter.destination(), filter.orderingKey(), filter.deadReason(), filter.from(),
				filter.to());
	}

	@FunctionalInterface
	private interface Chunk {

		int apply(int size);

	}

}
