package io.retryoutbox.retention;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import io.retryoutbox.jdbc.JdbcOutboxRetention;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * Applies the retention of finished messages at a fixed interval, on its own thread, so
 * it needs no {@code @EnableScheduling} and never delays the relay.
 */
public final class OutboxRetentionRunner implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(OutboxRetentionRunner.class);

	private final JdbcOutboxRetention retention;

	private final Duration delivered;

	private final @Nullable Duration dead;

	private final Duration interval;

	private volatile @Nullable ScheduledExecutorService executor;

	/**
	 * Creates a runner.
	 * @param retention deletes the messages
	 * @param delivered how long delivered messages are kept
	 * @param dead how long dead messages are kept, or {@code null} to keep them until
	 * they are replayed or discarded
	 * @param interval how often the retention is applied
	 */
	public OutboxRetentionRunner(JdbcOutboxRetention retention, Duration delivered, @Nullable Duration dead,
			Duration interval) {
		this.retention = retention;
		this.delivered = delivered;
		this.dead = dead;
		this.interval = interval;
	}

	/**
	 * Applies the retention now.
	 */
	public void run() {
		try {
			long delivered = this.retention.deleteDelivered(this.delivered);
			long dead = (this.dead != null) ? this.retention.deleteDead(this.dead) : 0;
			if (delivered + dead > 0) {
				logger.info("Deleted " + delivered + " delivered and " + dead + " dead outbox messages past retention");
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Could not delete outbox messages past retention; trying again in " + this.interval, ex);
		}
	}

	@Override
	public void start() {
		CustomizableThreadFactory threads = new CustomizableThreadFactory("retry-outbox-retention-");
		threads.setDaemon(true);
		ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, threads);
		executor.scheduleWithFixedDelay(this::run, this.interval.toMillis(), this.interval.toMillis(),
				TimeUnit.MILLISECONDS);
		this.executor = executor;
	}

	@Override
	public void stop() {
		ScheduledExecutorService executor = this.executor;
		if (executor != null) {
			executor.shutdownNow();
			this.executor = null;
		}
	}

	@Override
	public boolean isRunning() {
		return this.executor != null;
	}

}
