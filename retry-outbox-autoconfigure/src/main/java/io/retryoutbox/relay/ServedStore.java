package io.retryoutbox.relay;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import io.retryoutbox.message.Claim;
import io.retryoutbox.message.Outcome;

/**
 * A store whose calls, from whatever thread makes them, run on the one thread that serves
 * it: the rehearsal's store works in a transaction bound to the thread that opened it,
 * and the relay that rehearses calls it from its own threads.
 */
final class ServedStore implements OutboxStore {

	private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

	private final OutboxStore store;

	private final BlockingQueue<FutureTask<?>> calls = new LinkedBlockingQueue<>();

	private final AtomicInteger written = new AtomicInteger();

	private volatile boolean closed;

	ServedStore(OutboxStore store) {
		this.store = store;
	}

	/**
	 * Runs the calls made meanwhile on this thread, until {@code done} or the deadline.
	 * @param done whether to stop
	 * @param deadline the latest {@link System#nanoTime()} to serve until
	 */
	void serve(BooleanSupplier done, long deadline) {
		try {
			while (!done.getAsBoolean() && deadline - System.nanoTime() > 0) {
				FutureTask<?> call = this.calls.poll(Math.min(POLL_NANOS, deadline - System.nanoTime()),
						TimeUnit.NANOSECONDS);
				if (call != null) {
					call.run();
				}
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * Runs the calls made so far on this thread, without waiting for more.
	 */
	void serveWaiting() {
		for (FutureTask<?> call = this.calls.poll(); call != null; call = this.calls.poll()) {
			call.run();
		}
	}

	/**
	 * Serves no more: a call waiting or made from now on fails.
	 */
	void close() {
		this.closed = true;
		for (FutureTask<?> call = this.calls.poll(); call != null; call = this.calls.poll()) {
			call.cancel(false);
		}
	}

	/**
	 * The outcomes written so far.
	 * @return how many
	 */
	int written() {
		return this.written.get();
	}

	private <T> T call(Callable<T> work) {
		FutureTask<T> call = new FutureTask<>(work);
		this.calls.add(call);
		if (this.closed) {
			call.cancel(false);
		}
		try {
			return call.get();
		}
		catch (ExecutionException ex) {
			if (ex.getCause() instanceof RuntimeException failure) {
				throw failure;
			}
			throw new IllegalStateException(ex.getCause());
		}
		catch (CancellationException ex) {
			throw new IllegalStateException("The rehearsal is over", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while waiting for the rehearsal's store", ex);
		}
	}

	@Override
	public List<Claim> claim(String owner, Map<String, Integer> limits, int runSize, Duration lease) {
		return call(() -> this.store.claim(owner, limits, runSize, lease));
	}

	@Override
	public List<Claim> runsBehind(List<? extends Claim> heads, int runSize) {
		return call(() -> this.store.runsBehind(heads, runSize));
	}

	@Override
	public Round round(String owner, List<Outcome> outcomes, List<UUID> unsent, boolean releaseKeys,
			Map<String, Integer> limits, int runSize, boolean claimOnlyIfPromoted, Duration lease) {
		return call(() -> {
			Round round = this.store.round(owner, outcomes, unsent, releaseKeys, limits, runSize, claimOnlyIfPromoted,
					lease);
			this.written.addAndGet(round.written());
			return round;
		});
	}

	@Override
	public int complete(String owner, List<Outcome> outcomes, List<UUID> unsent) {
		return call(() -> {
			int written = this.store.complete(owner, outcomes, unsent);
			this.written.addAndGet(written);
			return written;
		});
	}

	@Override
	public int releaseKeys() {
		return call(this.store::releaseKeys);
	}

	@Override
	public int recoverExpiredLeases() {
		return call(this.store::recoverExpiredLeases);
	}

	@Override
	public int extendLeases(String owner, List<UUID> ids, Duration lease) {
		return call(() -> this.store.extendLeases(owner, ids, lease));
	}

	@Override
	public int release(String owner, List<UUID> ids) {
		return call(() -> this.store.release(owner, ids));
	}

}
