package io.retryoutbox.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * Tells the relays of other instances that messages were committed, with a PostgreSQL
 * {@code NOTIFY} sent after the enqueuing transaction committed, from a connection of its
 * own.
 * <p>
 * PostgreSQL serializes the commits of all transactions that issued a {@code NOTIFY}, so
 * a notification inside every business transaction would cap the application's write
 * throughput. Requests are coalesced instead: at most one notification per
 * {@code minInterval}, however many transactions committed.
 */
public final class PostgresNotifier implements DisposableBean {

	private static final Log logger = LogFactory.getLog(PostgresNotifier.class);

	private final DataSource dataSource;

	private final String channel;

	private final long minIntervalNanos;

	private final AtomicBoolean scheduled = new AtomicBoolean();

	private final ScheduledThreadPoolExecutor executor;

	private volatile long lastSent;

	public PostgresNotifier(DataSource dataSource, String channel, Duration minInterval) {
		this.dataSource = dataSource;
		this.channel = channel;
		this.minIntervalNanos = minInterval.toNanos();
		CustomizableThreadFactory threads = new CustomizableThreadFactory("retry-outbox-notify-");
		threads.setDaemon(true);
		this.executor = new ScheduledThreadPoolExecutor(1, threads);
		this.lastSent = System.nanoTime() - this.minIntervalNanos;
	}

	/**
	 * Asks for a notification to be sent soon; returns at once.
	 */
	public void requestNotify() {
		if (this.scheduled.compareAndSet(false, true)) {
			long wait = Math.max(0, this.lastSent + this.minIntervalNanos - System.nanoTime());
			try {
				this.executor.schedule(this::send, wait, TimeUnit.NANOSECONDS);
			}
			catch (RuntimeException ex) {
				this.scheduled.set(false);
			}
		}
	}

	private void send() {
		this.scheduled.set(false);
		this.lastSent = System.nanoTime();
		try (Connection connection = this.dataSource.getConnection();
				PreparedStatement statement = connection.prepareStatement("SELECT pg_notify(?, '')")) {
			statement.setString(1, this.channel);
			statement.execute();
			if (!connection.getAutoCommit()) {
				connection.commit();
			}
		}
		catch (SQLException ex) {
			logger.debug("Could not notify other relays; they will find the messages at their next poll", ex);
		}
	}

	@Override
	public void destroy() {
		this.executor.shutdownNow();
	}

}
