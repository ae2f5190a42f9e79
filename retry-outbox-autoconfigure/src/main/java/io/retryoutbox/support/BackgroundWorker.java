package io.retryoutbox.support;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;
import org.springframework.scheduling.support.TaskUtils;

/**
 * The one way the outbox runs background work: a single named thread, a daemon unless
 * asked otherwise, that its owner starts in its own {@code start()} and stops in its own
 * {@code stop()}, never at construction.
 * <p>
 * It runs periodic tasks at a fixed delay, one-shot tasks now or after a delay, and loop
 * tasks that block until they are stopped. Each {@link #start()} creates a fresh
 * scheduler, so an owner can be stopped and started again.
 */
public final class BackgroundWorker {

	private final String threadNamePrefix;

	private final boolean daemon;

	private final List<Future<?>> periodic = new CopyOnWriteArrayList<>();

	private final List<Future<?>> loops = new CopyOnWriteArrayList<>();

	private volatile @Nullable ThreadPoolTaskScheduler scheduler;

	/**
	 * Creates a worker; its thread is created when it first has something to run after
	 * {@link #start()}.
	 * @param threadNamePrefix the prefix of its thread's name, e.g.
	 * {@code retry-outbox-relay-}
	 */
	public BackgroundWorker(String threadNamePrefix) {
		this(threadNamePrefix, true);
	}

	/**
	 * Creates a worker; its thread is created when it first has something to run after
	 * {@link #start()}.
	 * @param threadNamePrefix the prefix of its thread's name, e.g.
	 * {@code retry-outbox-relay-}
	 * @param daemon whether its thread is a daemon; if not, the JVM keeps running while
	 * the worker is started, as it does for a web server
	 */
	public BackgroundWorker(String threadNamePrefix, boolean daemon) {
		this.threadNamePrefix = threadNamePrefix;
		this.daemon = daemon;
	}

	/**
	 * Starts accepting tasks; does nothing if started already.
	 */
	public synchronized void start() {
		if (this.scheduler != null) {
			return;
		}
		ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
		scheduler.setThreadNamePrefix(this.threadNamePrefix);
		scheduler.setDaemon(this.daemon);
		// A one-shot task still waiting for its delay when the worker stops never runs.
		scheduler.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
		scheduler.setRemoveOnCancelPolicy(true);
		// Spring's default swallows what a periodic task throws and runs it again; here
		// the task ends instead, so that its owner can report it with hasFailed().
		scheduler.setErrorHandler(TaskUtils.LOG_AND_PROPAGATE_ERROR_HANDLER);
		scheduler.initialize();
		this.periodic.clear();
		this.loops.clear();
		this.scheduler = scheduler;
	}

	/**
	 * Whether the worker was started and not stopped since.
	 * @return whether it accepts tasks
	 */
	public boolean isStarted() {
		return this.scheduler != null;
	}

	/**
	 * Runs a task periodically, the delay counted from the end of one run to the start of
	 * the next. A task that throws is not run again and {@link #hasFailed()} says so.
	 * @param initialDelay how long after this call the task first runs
	 * @param delay the delay between the end of one run and the start of the next
	 * @param task the task
	 * @throws IllegalStateException if the worker is not started
	 */
	public void repeat(Duration initialDelay, Duration delay, Runnable task) {
		ThreadPoolTaskScheduler scheduler = started();
		this.periodic
			.add(scheduler.scheduleWithFixedDelay(task, scheduler.getClock().instant().plus(initialDelay), delay));
	}

	/**
	 * Runs a task once, as soon as the worker's thread is free.
	 * @param task the task
	 * @return whether the task was accepted; not if the worker is not started
	 */
	public boolean submit(Runnable task) {
		return schedule(Duration.ZERO, task);
	}

	/**
	 * Runs a task once after a delay, unless the worker stops first.
	 * @param delay how long to wait before running the task
	 * @param task the task
	 * @return whether the task was accepted; not if the worker is not started
	 */
	public boolean schedule(Duration delay, Runnable task) {
		ThreadPoolTaskScheduler scheduler = this.scheduler;
		if (scheduler == null) {
			return false;
		}
		try {
			if (delay.isZero() || delay.isNegative()) {
				scheduler.execute(task);
			}
			else {
				scheduler.schedule(task, scheduler.getClock().instant().plus(delay));
			}
			return true;
		}
		catch (RejectedExecutionException ex) {
			// Stopped in the meantime.
			return false;
		}
	}

	/**
	 * Runs a task that keeps the thread until it is stopped, such as a blocking receive
	 * loop. {@link #stop(Duration)} interrupts it at once; the task must end when
	 * interrupted or when its owner's own flag says it stopped.
	 * @param task the task
	 * @return whether the task was accepted; not if the worker is not started
	 */
	public boolean loop(Runnable task) {
		ThreadPoolTaskScheduler scheduler = this.scheduler;
		if (scheduler == null) {
			return false;
		}
		try {
			this.loops.add(scheduler.submit(task));
			return true;
		}
		catch (RejectedExecutionException ex) {
			return false;
		}
	}

	/**
	 * Whether a periodic task ended by throwing, so that it no longer runs although the
	 * worker was not stopped.
	 * @return whether a periodic task died
	 */
	public boolean hasFailed() {
		return this.periodic.stream().anyMatch((task) -> task.isDone() && !task.isCancelled());
	}

	/**
	 * Stops the worker: no task starts any more, loop tasks are interrupted at once, and
	 * a task that is running is given until the timeout to finish before it is
	 * interrupted. Returns when the thread ended or at the timeout, whichever comes
	 * first.
	 * @param timeout how long to wait for the running task
	 * @return whether the thread ended within the timeout
	 */
	public synchronized boolean stop(Duration timeout) {
		ThreadPoolTaskScheduler scheduler = this.scheduler;
		if (scheduler == null) {
			return true;
		}
		this.scheduler = null;
		scheduler.initiateShutdown();
		this.loops.forEach((task) -> task.cancel(true));
		boolean ended = false;
		try {
			ended = scheduler.getScheduledExecutor().awaitTermination(timeout.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		finally {
			scheduler.shutdown();
		}
		return ended;
	}

	private ThreadPoolTaskScheduler started() {
		ThreadPoolTaskScheduler scheduler = this.scheduler;
		if (scheduler == null) {
			throw new IllegalStateException("Background worker '" + this.threadNamePrefix + "' is not started");
		}
		return scheduler;
	}

}
