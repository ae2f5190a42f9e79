package io.retryoutbox.notify;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

import javax.sql.DataSource;

import io.retryoutbox.support.BackgroundWorker;
import io.retryoutbox.support.WorkerLifecycle;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * Listens on a PostgreSQL channel with a dedicated connection and wakes the local relay
 * when another instance committed messages. It reconnects with backoff after failures;
 * the relay's polling remains the fallback whenever notifications are lost.
 */
public final class PostgresWakeupListener extends WorkerLifecycle {

	private static final Log logger = LogFactory.getLog(PostgresWakeupListener.class);

	private static final int RECEIVE_TIMEOUT_MILLIS = 500;

	private static final Duration STOP_TIMEOUT = Duration.ofSeconds(2);

	private final DataSource dataSource;

	private final String channel;

	private final Runnable wakeUp;

	private final long checkIntervalNanos;

	private final int checkTimeoutMillis;

	private volatile boolean running;

	private volatile boolean listening;

	private volatile @Nullable String ignoredPayload;

	private volatile int backendPid;

	public PostgresWakeupListener(DataSource dataSource, String channel, Runnable wakeUp) {
		this(dataSource, channel, wakeUp, Duration.ofSeconds(30), Duration.ofSeconds(10));
	}

	/**
	 * Creates a listener that checks its connection after {@code checkInterval} without a
	 * notification, and gives the database {@code checkTimeout} to answer.
	 * @param dataSource where to listen
	 * @param channel the channel
	 * @param wakeUp what a notification does
	 * @param checkInterval how long the connection may stay silent before it is checked
	 * @param checkTimeout how long a check may wait for the database's answer
	 */
	public PostgresWakeupListener(DataSource dataSource, String channel, Runnable wakeUp, Duration checkInterval,
			Duration checkTimeout) {
		super(new BackgroundWorker("retry-outbox-listen-"), STOP_TIMEOUT);
		this.dataSource = dataSource;
		this.channel = channel;
		this.wakeUp = wakeUp;
		this.checkIntervalNanos = checkInterval.toNanos();
		this.checkTimeoutMillis = Math.toIntExact(checkTimeout.toMillis());
	}

	/**
	 * Sets the payload of notifications not to pass on: those of this instance's own
	 * notifier, whose relay its enqueues wake directly.
	 * @param payload the payload, or {@code null} to pass every notification on
	 */
	public void setIgnoredPayload(@Nullable String payload) {
		this.ignoredPayload = payload;
	}

	/**
	 * The backend process of the connection that listens.
	 * @return its process id, or 0 while no connection listens
	 */
	public int getBackendPid() {
		return this.backendPid;
	}

	/**
	 * Whether the listener currently holds a connection that listens.
	 * @return whether notifications are being received
	 */
	public boolean isListening() {
		return this.listening;
	}

	@Override
	protected void started(BackgroundWorker worker) {
		this.running = true;
		worker.loop(this::run);
	}

	@Override
	protected void stopping() {
		this.running = false;
	}

	private boolean fromElsewhere(PGNotification[] notifications) {
		String ignored = this.ignoredPayload;
		for (PGNotification notification : notifications) {
			if (ignored == null || !ignored.equals(notification.getParameter())) {
				return true;
			}
		}
		return false;
	}

	private void run() {
		long backoff = 100;
		while (this.running) {
			try (Connection connection = this.dataSource.getConnection()) {
				connection.setAutoCommit(true);
				PGConnection pg = connection.unwrap(PGConnection.class);
				try {
					// Counted before it listens: a notification sent in between is
					// missed, and the wake-up below finds what it was for.
					ListenerPresence.enter(connection, this.channel);
					try (Statement statement = connection.createStatement()) {
						statement.execute("LISTEN " + quote(this.channel));
					}
					this.backendPid = pg.getBackendPID();
					this.listening = true;
					backoff = 100;
					// Anything committed while we were not listening is found by this
					// wake-up.
					this.wakeUp.run();
					receive(connection, pg);
				}
				finally {
					this.listening = false;
					this.backendPid = 0;
					leave(connection);
				}
			}
			catch (SQLException | RuntimeException ex) {
				if (!this.running) {
					return;
				}
				logger.warn("Lost the PostgreSQL connection listening on '" + this.channel + "' (" + ex.getMessage()
						+ "); reconnecting in " + Duration.ofMillis(backoff) + ", polling continues meanwhile");
				logger.debug("Listener failure", ex);
				if (!pause(backoff)) {
					return;
				}
				backoff = Math.min(backoff * 2, 30_000);
			}
		}
	}

	private void receive(Connection connection, PGConnection pg) throws SQLException {
		// A connection can go half-open (a dropped NAT entry, a failed-over database):
		// nothing arrives, and nothing says so. A silent connection is checked with a
		// query whose answer must come within the timeout.
		connection.setNetworkTimeout(Runnable::run, this.checkTimeoutMillis);
		long lastHeard = System.nanoTime();
		while (this.running) {
			PGNotification[] notifications = pg.getNotifications(RECEIVE_TIMEOUT_MILLIS);
			if (notifications != null && notifications.length > 0) {
				lastHeard = System.nanoTime();
				if (fromElsewhere(notifications)) {
					this.wakeUp.run();
				}
			}
			else if (System.nanoTime() - lastHeard >= this.checkIntervalNanos) {
				try (Statement check = connection.createStatement()) {
					check.execute("SELECT 1");
				}
				lastHeard = System.nanoTime();
			}
		}
	}

	// The connection goes back to its pool as it came: a pooled connection that still
	// listened would collect every later notification, and one that held the lock would
	// count as a listening relay.
	private void leave(Connection connection) {
		try {
			ListenerPresence.leave(connection, this.channel);
			try (Statement statement = connection.createStatement()) {
				statement.execute("UNLISTEN *");
			}
		}
		catch (SQLException ex) {
			// A broken connection ended its session, and the session's lock and
			// LISTEN with it.
			logger.debug("Could not stop listening on a connection that failed", ex);
		}
	}

	private boolean pause(long millis) {
		try {
			Thread.sleep(millis);
			return true;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	private static String quote(String identifier) {
		return "\"" + identifier.replace("\"", "\"\"") + "\"";
	}

}
