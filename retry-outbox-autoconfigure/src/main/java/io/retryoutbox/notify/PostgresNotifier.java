package io.retryoutbox.notify;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntSupplier;

import javax.sql.DataSource;

import io.retryoutbox.support.BackgroundWorker;
import io.retryoutbox.support.WorkerLifecycle;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Tells the relays of other instances that messages were committed, with a PostgreSQL
 * {@code NOTIFY} sent after the enqueuing transaction committed, from a connection of its
 * own.
 * <p>
 * PostgreSQL serializes the commits of all transactions that issued a {@code NOTIFY}, so
 * a notification inside every business transaction would cap the application's write
 * throughput. Requests are coalesced instead: at most one notification per
 * {@code minInterval}, however many transactions committed. And only while another
 * instance's relay listens: a single instance, or one whose peers have no relay, sends
 * none, since its own relay is woken directly and the round trips would only cost the
 * database.
 * <p>
 * Its thread starts with the application context; a notification asked for before then is
 * sent once it started.
 */
public final class PostgresNotifier extends WorkerLifecycle {

	private static final Log logger = LogFactory.getLog(PostgresNotifier.class);

	// How long a lookup of the other instances' listeners is trusted: a relay that starts
	// listening is first notified at most this much later, and meanwhile its own poll
	// finds what was committed.
	private static final Duration PRESENCE_CHECK_INTERVAL = Duration.ofSeconds(1);

	private final DataSource dataSource;

	private final String channel;

	private final long minIntervalNanos;

	private final long presenceCheckNanos;

	private final AtomicBoolean scheduled = new AtomicBoolean();

	private final AtomicLong handled = new AtomicLong();

	private volatile IntSupplier ownListener = () -> 0;

	// Written by the worker only; read by the enqueuing threads too. The time is written
	// last, so that a thread that sees it sees the result it stamps.
	private volatile boolean othersListen;

	private volatile long presenceCheckedAt;

	private final String payload = UUID.randomUUID().toString();

	private volatile long lastSent;

	public PostgresNotifier(DataSource dataSource, String channel, Duration minInterval) {
		this(dataSource, channel, minInterval, PRESENCE_CHECK_INTERVAL);
	}

	PostgresNotifier(DataSource dataSource, String channel, Duration minInterval, Duration presenceCheckInterval) {
		super(new BackgroundWorker("retry-outbox-notify-"), Duration.ZERO);
		this.dataSource = dataSource;
		this.channel = channel;
		this.minIntervalNanos = minInterval.toNanos();
		this.presenceCheckNanos = presenceCheckInterval.toNanos();
		long now = System.nanoTime();
		this.lastSent = now - this.minIntervalNanos;
		this.presenceCheckedAt = now - this.presenceCheckNanos;
	}

	/**
	 * What this notifier's notifications carry, so that a listener of the same instance
	 * can tell them from another instance's.
	 * @return the payload
	 */
	public String getPayload() {
		return this.payload;
	}

	/**
	 * Sets the listener of this notifier's own instance, which does not count as another
	 * instance's.
	 * @param backendPid the backend process of its listening connection, 0 while it has
	 * none
	 */
	public void setOwnListener(IntSupplier backendPid) {
		this.ownListener = backendPid;
	}

	/**
	 * Whether a notification asked for now would be sent, or would first look whether
	 * another instance listens. While neither, {@link #requestNotify()} does nothing.
	 * @return whether a notification is wanted
	 */
	public boolean isWanted() {
		return this.othersListen || System.nanoTime() - this.presenceCheckedAt >= this.presenceCheckNanos;
	}

	/**
	 * Asks for a notification to be sent soon; returns at once.
	 */
	public void requestNotify() {
		// Alone at the last lookup, which is still trusted: no notification, and no task
		// for the worker, whose wake-up every few milliseconds would cost more than the
		// check.
		if (!isWanted()) {
			this.handled.incrementAndGet();
			return;
		}
		if (this.scheduled.compareAndSet(false, true)) {
			long wait = Math.max(0, this.lastSent + this.minIntervalNanos - System.nanoTime());
			// Not started: the request stays pending and start() sends it.
			worker().schedule(Duration.ofNanos(wait), this::send);
		}
	}

	private void send() {
		this.scheduled.set(false);
		long now = System.nanoTime();
		this.lastSent = now;
		boolean check = now - this.presenceCheckedAt >= this.presenceCheckNanos;
		if (check || this.othersListen) {
			try (Connection connection = this.dataSource.getConnection()) {
				if (check) {
					this.othersListen = ListenerPresence.othersListen(connection, this.channel,
							this.ownListener.getAsInt());
					this.presenceCheckedAt = now;
				}
				if (this.othersListen) {
					sendNotification(connection);
				}
				if (!connection.getAutoCommit()) {
					connection.commit();
				}
			}
			catch (SQLException ex) {
				logger.debug("Could not notify other relays; they will find the messages at their next poll", ex);
			}
		}
		this.handled.incrementAndGet();
	}

	private void sendNotification(Connection connection) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement("SELECT pg_notify(?, ?)")) {
			statement.setString(1, this.channel);
			statement.setString(2, this.payload);
			statement.execute();
		}
	}

	/**
	 * How many requested notifications were handled, sent or not.
	 */
	long handled() {
		return this.handled.get();
	}

	@Override
	protected void started(BackgroundWorker worker) {
		if (this.scheduled.get()) {
			worker.submit(this::send);
		}
	}

	/**
	 * Starts first and stops last, as late as the destroy callback it replaces, so that
	 * messages enqueued while other components stop still notify.
	 * @return the lowest phase
	 */
	@Override
	public int getPhase() {
		return Integer.MIN_VALUE;
	}

}
