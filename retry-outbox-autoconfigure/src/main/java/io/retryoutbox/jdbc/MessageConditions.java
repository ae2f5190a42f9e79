package io.retryoutbox.jdbc;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Map;

import io.retryoutbox.message.MessageFilter;
import org.jspecify.annotations.Nullable;

/**
 * A {@link MessageFilter} as SQL conditions on the message table's alias {@code m}, each
 * starting with {@code AND}, with named parameters; shared by listings and repair so that
 * a filter selects the same messages in both.
 */
final class MessageConditions {

	private MessageConditions() {
	}

	static String of(MessageFilter filter, Map<String, Object> params) {
		StringBuilder where = new StringBuilder();
		condition(where, params, "m.status = :status", "status",
				(filter.status() != null) ? filter.status().name() : null);
		condition(where, params, "m.destination = :destination", "destination", filter.destination());
		condition(where, params, "m.ordering_key = :orderingKey", "orderingKey", filter.orderingKey());
		condition(where, params, "m.dead_reason = :deadReason", "deadReason", filter.deadReason());
		condition(where, params, "m.created_at >= :from", "from", timestamp(filter.from()));
		condition(where, params, "m.created_at < :to", "to", timestamp(filter.to()));
		return where.toString();
	}

	private static void condition(StringBuilder where, Map<String, Object> params, String sql, String name,
			@Nullable Object value) {
		if (value != null) {
			where.append(" AND ").append(sql);
			params.put(name, value);
		}
	}

	private static @Nullable OffsetDateTime timestamp(@Nullable Instant instant) {
		return (instant != null) ? instant.atOffset(ZoneOffset.UTC) : null;
	}

}
