package io.retryoutbox.support;

import java.time.Duration;

import org.springframework.context.SmartLifecycle;

/**
 * A lifecycle whose background work runs on one {@link BackgroundWorker}: the worker
 * starts with the application context, never at construction, and stops with it within a
 * bound. Subclasses say what runs once it started.
 */
public abstract class WorkerLifecycle implements SmartLifecycle {

	private final BackgroundWorker worker;

	private final Duration stopTimeout;

	/**
	 * Creates a lifecycle.
	 * @param worker the worker its background work runs on
	 * @param stopTimeout how long stopping waits for a running task before interrupting
	 * it
	 */
	protected WorkerLifecycle(BackgroundWorker worker, Duration stopTimeout) {
		this.worker = worker;
		this.stopTimeout = stopTimeout;
	}

	/**
	 * The worker, to schedule more work on.
	 * @return the worker
	 */
	protected final BackgroundWorker worker() {
		return this.worker;
	}

	/**
	 * Called once the worker started, to give it its work.
	 * @param worker the started worker
	 */
	protected abstract void started(BackgroundWorker worker);

	/**
	 * Called before the worker stops, e.g. to tell a loop to end.
	 */
	protected void stopping() {
	}

	@Override
	public final synchronized void start() {
		if (this.worker.isStarted()) {
			return;
		}
		this.worker.start();
		started(this.worker);
	}

	@Override
	public final synchronized void stop() {
		stopping();
		this.worker.stop(this.stopTimeout);
	}

	@Override
	public boolean isRunning() {
		return this.worker.isStarted();
	}

}
