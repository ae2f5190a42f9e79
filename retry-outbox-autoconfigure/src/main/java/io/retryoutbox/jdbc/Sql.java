package io.retryoutbox.jdbc;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.retryoutbox.message.AttemptOutcome;
import io.retryoutbox.message.MessageStatus;

/**
 * Renders a statement template once, when its class is built: {@code {message}},
 * {@code {attempt}} and {@code {pause}} become the qualified table names, and
 * {@code {PENDING}}, {@code {RETRY}} and the other names of {@link MessageStatus} and
 * {@link AttemptOutcome} become SQL literals. Statuses are thus written from the enums,
 * while the statement stays readable and the planner still sees literals that match the
 * partial indexes; a misspelt placeholder fails at startup, not on some later call.
 */
final class Sql {

	private static final Pattern PLACEHOLDER = Pattern.compile("\\{([A-Za-z_]+)}");

	private Sql() {
	}

	static String render(String template, OutboxTables tables) {
		Matcher matcher = PLACEHOLDER.matcher(template);
		StringBuilder sql = new StringBuilder();
		while (matcher.find()) {
			matcher.appendReplacement(sql, Matcher.quoteReplacement(value(matcher.group(1), tables, template)));
		}
		matcher.appendTail(sql);
		return sql.toString();
	}

	private static String value(String name, OutboxTables tables, String template) {
		switch (name) {
			case "message":
				return tables.message();
			case "attempt":
				return tables.attempt();
			case "pause":
				return tables.pause();
			default:
		}
		for (MessageStatus status : MessageStatus.values()) {
			if (status.name().equals(name)) {
				return "'" + status.name() + "'";
			}
		}
		for (AttemptOutcome outcome : AttemptOutcome.values()) {
			if (outcome.name().equals(name)) {
				return "'" + outcome.name() + "'";
			}
		}
		throw new IllegalArgumentException("Unknown placeholder {" + name + "} in " + template);
	}

}
