package io.retryoutbox.jdbc;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

import javax.sql.DataSource;

import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * Reads the trace context stored with messages at enqueue, for a whole batch in one
 * query.
 */
public final class JdbcTraceContexts {

	private static final String SELECT = """
			SELECT id, trace_parent, trace_state FROM %s WHERE id = ANY(?) AND trace_parent IS NOT NULL
			""";

	private final JdbcClient jdbc;

	private final String select;

	public JdbcTraceContexts(DataSource dataSource, OutboxTables tables) {
		this.jdbc = JdbcClient.create(dataSource);
		this.select = SELECT.formatted(tables.message());
	}

	/**
	 * Reads the propagation fields ({@code traceparent}, {@code tracestate}) of messages.
	 * @param ids the message ids
	 * @return the fields by message id, for the messages that have them
	 */
	public Map<UUID, Map<String, String>> find(Collection<UUID> ids) {
		Map<UUID, Map<String, String>> found = new HashMap<>();
		if (ids.isEmpty()) {
			return found;
		}
		this.jdbc.sql(this.select).param(ids.toArray(new UUID[0])).query((rs) -> {
			Map<String, String> fields = new HashMap<>();
			fields.put(EnqueueObserver.TRACEPARENT, rs.getString("trace_parent"));
			String state = rs.getString("trace_state");
			if (state != null) {
				fields.put(EnqueueObserver.TRACESTATE, state);
			}
			found.put(rs.getObject("id", UUID.class), fields);
		});
		return found;
	}

}
