package io.retryoutbox.support;

import java.time.Duration;

/**
 * Runs a task at a fixed delay on a daemon thread of its own while the application
 * context runs, so background work needs no {@code @EnableScheduling} and never delays
 * the relay.
 */
public abstract class PeriodicLifecycle extends WorkerLifecycle {

	private final Duration initialDelay;

	private final Duration interval;

	/**
	 * Creates a lifecycle.
	 * @param threadNamePrefix the prefix of its thread's name
	 * @param initialDelay how long after start the task first runs
	 * @param interval the delay between the end of one run and the start of the next
	 */
	protected PeriodicLifecycle(String threadNamePrefix, Duration initialDelay, Duration interval) {
		// Nothing is lost by interrupting a run: the task runs again after the next
		// start.
		super(new BackgroundWorker(threadNamePrefix), Duration.ZERO);
		this.initialDelay = initialDelay;
		this.interval = interval;
	}

	/**
	 * Runs the task once; called on the lifecycle's thread, and must not throw.
	 */
	public abstract void run();

	@Override
	protected void started(BackgroundWorker worker) {
		worker.repeat(this.initialDelay, this.interval, this::run);
	}

}
