package io.retryoutbox.direct;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * Tells the waits between attempts of direct calls that the application stops, so that
 * they end at once instead of holding up the shutdown; a reactive wait and a blocked
 * thread alike. It can be started again, as a lifecycle can.
 */
final class StopSignal {

	private volatile Stop current = new Stop();

	Mono<Void> whenStopped() {
		return Mono.defer(() -> this.current.sink.asMono());
	}

	boolean isStopped() {
		return this.current.latch.getCount() == 0;
	}

	void stop() {
		Stop stop = this.current;
		stop.latch.countDown();
		stop.sink.tryEmitEmpty();
	}

	void reset() {
		if (isStopped()) {
			this.current = new Stop();
		}
	}

	/**
	 * Waits on this thread.
	 * @param delay how long to wait
	 * @return {@code true} if the delay passed, {@code false} if the application stopped
	 * first
	 * @throws InterruptedException if the thread is interrupted meanwhile
	 */
	boolean await(Duration delay) throws InterruptedException {
		return !this.current.latch.await(delay.toNanos(), TimeUnit.NANOSECONDS);
	}

	private static final class Stop {

		private final CountDownLatch latch = new CountDownLatch(1);

		private final Sinks.Empty<Void> sink = Sinks.empty();

	}

}
