package io.retryoutbox.support;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link BackgroundWorker}.
 */
class BackgroundWorkerTests {

	private static final String PREFIX = "background-worker-test-";

	private final BackgroundWorker worker = new BackgroundWorker(PREFIX);

	@AfterEach
	void stopWorker() {
		this.worker.stop(Duration.ZERO);
	}

	private static List<Thread> threads() {
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((thread) -> thread.getName().startsWith(PREFIX) && thread.isAlive())
			.toList();
	}

	@Test
	void noThreadExistsBeforeStartAndNothingIsAccepted() {
		assertThat(this.worker.isStarted()).isFalse();
		assertThat(this.worker.submit(() -> {
		})).isFalse();
		assertThat(this.worker.loop(() -> {
		})).isFalse();
		assertThatIllegalStateException()
			.isThrownBy(() -> this.worker.repeat(Duration.ZERO, Duration.ofSeconds(1), () -> {
			}));
		assertThat(threads()).isEmpty();
	}

	@Test
	void runsTasksOnOneNamedDaemonThreadOnceStarted() {
		AtomicReference<Thread> ran = new AtomicReference<>();
		this.worker.start();
		assertThat(this.worker.submit(() -> ran.set(Thread.currentThread()))).isTrue();
		await().atMost(Duration.ofSeconds(5)).until(() -> ran.get() != null);
		assertThat(ran.get().getName()).startsWith(PREFIX);
		assertThat(ran.get().isDaemon()).isTrue();
		assertThat(threads()).hasSize(1);
	}

	@Test
	void runsOnAThreadThatKeepsTheJvmAliveWhenAskedTo() {
		BackgroundWorker worker = new BackgroundWorker(PREFIX, false);
		AtomicReference<Thread> ran = new AtomicReference<>();
		worker.start();
		try {
			worker.submit(() -> ran.set(Thread.currentThread()));
			await().atMost(Duration.ofSeconds(5)).until(() -> ran.get() != null);
			assertThat(ran.get().isDaemon()).isFalse();
		}
		finally {
			worker.stop(Duration.ZERO);
		}
	}

	@Test
	void repeatsAPeriodicTaskAfterItsInitialDelay() {
		AtomicInteger runs = new AtomicInteger();
		this.worker.start();
		long start = System.nanoTime();
		this.worker.repeat(Duration.ofMillis(200), Duration.ofMillis(10), runs::incrementAndGet);
		await().atMost(Duration.ofSeconds(5)).until(() -> runs.get() >= 1);
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(200));
		await().atMost(Duration.ofSeconds(5)).until(() -> runs.get() >= 3);
		assertThat(this.worker.hasFailed()).isFalse();
	}

	@Test
	void reportsAPeriodicTaskThatThrewAsDeadAndDoesNotRunItAgain() {
		AtomicInteger runs = new AtomicInteger();
		this.worker.start();
		this.worker.repeat(Duration.ZERO, Duration.ofMillis(10), () -> {
			if (runs.incrementAndGet() == 3) {
				throw new LinkageError("simulated fatal error");
			}
		});
		await().atMost(Duration.ofSeconds(5)).until(this.worker::hasFailed);
		assertThat(runs.get()).isEqualTo(3);
		assertThat(this.worker.submit(() -> {
		})).as("the worker itself still runs tasks").isTrue();
	}

	@Test
	void doesNotReportAPeriodicTaskEndedByStopAsDead() {
		AtomicInteger runs = new AtomicInteger();
		this.worker.start();
		this.worker.repeat(Duration.ZERO, Duration.ofMillis(10), runs::incrementAndGet);
		await().atMost(Duration.ofSeconds(5)).until(() -> runs.get() >= 2);
		assertThat(this.worker.stop(Duration.ofSeconds(5))).isTrue();
		assertThat(this.worker.hasFailed()).isFalse();
	}

	@Test
	void stopInterruptsALoopTaskAtOnceAndJoinsItWithinTheDeadline() {
		CountDownLatch looping = new CountDownLatch(1);
		AtomicBoolean interrupted = new AtomicBoolean();
		this.worker.start();
		this.worker.loop(() -> {
			looping.countDown();
			try {
				new CountDownLatch(1).await();
			}
			catch (InterruptedException ex) {
				interrupted.set(true);
			}
		});
		await().atMost(Duration.ofSeconds(5)).until(() -> looping.getCount() == 0);
		long start = System.nanoTime();
		assertThat(this.worker.stop(Duration.ofSeconds(10))).isTrue();
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
		assertThat(interrupted).isTrue();
		assertThat(threads()).isEmpty();
		assertThat(this.worker.isStarted()).isFalse();
	}

	@Test
	void stopLetsTheRunningTaskFinishWithinTheDeadline() {
		CountDownLatch running = new CountDownLatch(1);
		AtomicBoolean finished = new AtomicBoolean();
		AtomicBoolean interrupted = new AtomicBoolean();
		this.worker.start();
		this.worker.submit(() -> {
			running.countDown();
			long end = System.nanoTime() + Duration.ofMillis(300).toNanos();
			while (System.nanoTime() < end) {
				if (Thread.currentThread().isInterrupted()) {
					interrupted.set(true);
					return;
				}
				Thread.onSpinWait();
			}
			finished.set(true);
		});
		await().atMost(Duration.ofSeconds(5)).until(() -> running.getCount() == 0);
		assertThat(this.worker.stop(Duration.ofSeconds(10))).isTrue();
		assertThat(finished).isTrue();
		assertThat(interrupted).isFalse();
	}

	@Test
	void stopInterruptsTheRunningTaskAtTheDeadline() {
		CountDownLatch running = new CountDownLatch(1);
		AtomicBoolean interrupted = new AtomicBoolean();
		this.worker.start();
		this.worker.submit(() -> {
			running.countDown();
			try {
				new CountDownLatch(1).await();
			}
			catch (InterruptedException ex) {
				interrupted.set(true);
			}
		});
		await().atMost(Duration.ofSeconds(5)).until(() -> running.getCount() == 0);
		long start = System.nanoTime();
		assertThat(this.worker.stop(Duration.ofMillis(200))).isFalse();
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(200));
		await().atMost(Duration.ofSeconds(5)).untilTrue(interrupted);
		await().atMost(Duration.ofSeconds(5)).until(() -> threads().isEmpty());
	}

	@Test
	void dropsADelayedTaskThatIsNotDueWhenItStops() {
		AtomicBoolean ran = new AtomicBoolean();
		this.worker.start();
		assertThat(this.worker.schedule(Duration.ofMillis(300), () -> ran.set(true))).isTrue();
		assertThat(this.worker.stop(Duration.ofSeconds(5))).isTrue();
		assertThat(this.worker.submit(() -> ran.set(true))).isFalse();
		await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(1)).untilFalse(ran);
	}

	@Test
	void canBeStartedAgainAfterItStopped() {
		AtomicInteger runs = new AtomicInteger();
		this.worker.start();
		this.worker.submit(runs::incrementAndGet);
		await().atMost(Duration.ofSeconds(5)).until(() -> runs.get() == 1);
		this.worker.stop(Duration.ofSeconds(5));
		this.worker.start();
		assertThat(this.worker.submit(runs::incrementAndGet)).isTrue();
		await().atMost(Duration.ofSeconds(5)).until(() -> runs.get() == 2);
	}

}
