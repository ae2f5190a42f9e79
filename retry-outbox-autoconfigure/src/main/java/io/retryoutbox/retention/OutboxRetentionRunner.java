package io.retryoutbox.retention;

import java.time.Duration;

import io.retryoutbox.support.PeriodicLifecycle;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Applies the retention of finished messages at a fixed interval, on its own thread.
 */
public final class OutboxRetentionRunner extends PeriodicLifecycle {

	private static final Log logger = LogFactory.getLog(OutboxRetentionRunner.class);

	private final OutboxRetention retention;

	private final Duration delivered;

	private final @Nullable Duration dead;

	private final Duration interval;

	/**
	 * Creates a runner.
	 * @param retention deletes the messages
	 * @param delivered how long delivered messages are kept
	 * @param dead how long dead messages are kept, or {@code null} to keep them until
	 * they are replayed or discarded
	 * @param interval how often the retention is applied
	 */
	public OutboxRetentionRunner(OutboxRetention retention, Duration delivered, @Nullable Duration dead,
			Duration interval) {
		super("retry-outbox-retention-", interval, interval);
		this.retention = retention;
		this.delivered = delivered;
		this.dead = dead;
		this.interval = interval;
	}

	/**
	 * Applies the retention now.
	 */
	@Override
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

}
