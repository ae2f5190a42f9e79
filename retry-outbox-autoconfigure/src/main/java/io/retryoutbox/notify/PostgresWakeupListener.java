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

	private volatile boolean running;

	private volatile boolean listening;

	public PostgresWakeupListener(DataSource dataSource, String channel, Runnable wakeUp) {
		super(new BackgroundWorker("retry-outbox-listen-"), STOP_TIMEOUT);
		this.dataSource = dataSource;
		this.channel = channel;
		this.wakeUp = wakeUp;
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

	private void run() {
		long backoff = 100;
		while (this.running) {
			try (Connection connection = this.dataSource.getConnection()) {
				connection.setAutoCommit(true);
				try (Statement statement = connection.createStatement()) {
					statement.execute("LISTEN " + quote(this.channel));
				}
				this.listening = true;
				backoff = 100;
				// Anything committed while we were not listening is found by this
				// wake-up.
				this.wakeUp.run();
				PGConnection pg = connection.unwrap(PGConnection.class);
				while (this.running) {
					PGNotification[] notifications = pg.getNotifications(RECEIVE_TIMEOUT_MILLIS);
					if (notifications != null && notifications.length > 0) {
						this.wakeUp.run();
					}
				}
			}
			catch (SQLException | RuntimeException ex) {
				this.listening = false;
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
			finally {
				this.listening = false;
			}
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
