package io.retryoutbox.notify;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * Which relays listen on a channel: each listening connection holds a shared advisory
 * lock of the channel for as long as it listens, and a notifier looks the holders up in
 * {@code pg_locks}. The lock goes with the session, so a listener that crashed or lost
 * its connection stops counting without saying so.
 */
final class ListenerPresence {

	// The first half of the lock's key; the channel's hash is the second.
	private static final String NAMESPACE = "retry-outbox listener";

	private static final String ENTER = """
			SELECT pg_advisory_lock_shared(hashtext(?), hashtext(?))
			""";

	private static final String LEAVE = """
			SELECT pg_advisory_unlock_shared(hashtext(?), hashtext(?))
			""";

	// Advisory locks are per database; a two-key lock shows its keys as classid and objid
	// with objsubid 2.
	private static final String OTHERS = """
			SELECT EXISTS (
				SELECT 1 FROM pg_locks
				WHERE locktype = 'advisory' AND granted AND objsubid = 2
					AND classid = hashtext(?)::oid AND objid = hashtext(?)::oid
					AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
					AND pid <> ?)
			""";

	private ListenerPresence() {
	}

	/**
	 * Marks the connection's session as listening on the channel.
	 * @param connection the listening connection
	 * @param channel the channel
	 * @throws SQLException if the lock cannot be taken
	 */
	static void enter(Connection connection, String channel) throws SQLException {
		run(connection, ENTER, channel);
	}

	/**
	 * Ends the mark, before the connection goes back to its pool.
	 * @param connection the listening connection
	 * @param channel the channel
	 * @throws SQLException if the lock cannot be released
	 */
	static void leave(Connection connection, String channel) throws SQLException {
		run(connection, LEAVE, channel);
	}

	/**
	 * Whether a session other than the given one listens on the channel.
	 * @param connection any connection to the database
	 * @param channel the channel
	 * @param ownListener the backend process of this instance's own listener, or 0
	 * @return whether another instance's relay listens
	 * @throws SQLException if the lookup fails
	 */
	static boolean othersListen(Connection connection, String channel, int ownListener) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement(OTHERS)) {
			statement.setString(1, NAMESPACE);
			statement.setString(2, channel);
			statement.setInt(3, ownListener);
			try (ResultSet result = statement.executeQuery()) {
				return result.next() && result.getBoolean(1);
			}
		}
	}

	private static void run(Connection connection, String sql, String channel) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement(sql)) {
			statement.setString(1, NAMESPACE);
			statement.setString(2, channel);
			statement.execute();
		}
	}

}
