package io.retryoutbox.jdbc;

import org.jspecify.annotations.Nullable;

/**
 * The qualified names of the outbox tables.
 *
 * @param message the message table, e.g. {@code "outbox".retry_outbox_message}
 * @param attempt the attempt log table, e.g. {@code "outbox".retry_outbox_attempt}
 * @param pause the table of destination pauses shared by the relay instances
 */
public record OutboxTables(String message, String attempt, String pause) {

	/**
	 * Names the tables in a schema.
	 * @param schema the schema, or {@code null} for the connection's current schema
	 * @return the table names
	 */
	public static OutboxTables in(@Nullable String schema) {
		String prefix = (schema != null && !schema.isBlank()) ? quote(schema) + "." : "";
		return new OutboxTables(prefix + "retry_outbox_message", prefix + "retry_outbox_attempt",
				prefix + "retry_outbox_pause");
	}

	private static String quote(String identifier) {
		return "\"" + identifier.replace("\"", "\"\"") + "\"";
	}

}
