package io.retryoutbox.sample.order;

import java.util.Optional;
import java.util.UUID;

import javax.sql.DataSource;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

/**
 * Reads the state of outbox messages straight from the starter's table, to show it next
 * to an order.
 */
@Component
public class OutboxMessages {

	private static final String FIND = """
			SELECT id, path, status, attempts, last_status_code, last_error, dead_reason
			FROM retry_outbox_message WHERE id = ?
			""";

	private final JdbcClient jdbc;

	public OutboxMessages(DataSource dataSource) {
		this.jdbc = JdbcClient.create(dataSource);
	}

	/**
	 * Reads the state of a message.
	 * @param id the message id
	 * @return its state, if the message exists
	 */
	public Optional<OutboxMessageState> find(UUID id) {
		return this.jdbc.sql(FIND)
			.param(id)
			.query((rs, row) -> new OutboxMessageState(rs.getObject("id", UUID.class), rs.getString("path"),
					rs.getString("status"), rs.getInt("attempts"), rs.getObject("last_status_code", Integer.class),
					rs.getString("last_error"), rs.getString("dead_reason")))
			.optional();
	}

}
