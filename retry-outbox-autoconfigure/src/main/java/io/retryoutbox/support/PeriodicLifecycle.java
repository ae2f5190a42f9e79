package io.retryoutbox.support;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * Runs a task at a fixed delay on a daemon thread of its own while the application
 * context runs, so background work needs no {@code @EnableScheduling} and never delays
 * the relay.
 */
public abstract class PeriodicLifecycle implements SmartLifecycle {

	private final String threadNamePrefix;

	private final Duration initialDelay;

	private final Duration interval;

	private volatile @Nullable ScheduledExecutorService executor;

	/**
	 * Creates a lifecycle.
	 * @param threadNamePrefix the prefix of its thread's name
	 * @param initialDelay how long after start the task first runs
	 * @param interval the delay between the end of one run and the start of the next
	 */
	protected PeriodicLifecycle(String threadNamePrefix, Duration initialDelay, Duration interval) {
		this.threadNamePrefix = threadNamePrefix;
		this.initialDelay = initialDelay;
		this.interval = interval;
	}

	/**
	 * Runs the task once; called on the lifecycle's thread, and must not throw.
	 */
	public abstract void run();

	@Override
	public void start() {
		CustomizableThreadFactory threads = new CustomizableThreadFactory(this.threadNamePrefix);
		threads.setDaemon(true);
		ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, threads);
		executor.scheduleWithFixedDelay(this::run, this.initialDelay.toMillis(), this.interval.toMillis(),
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
