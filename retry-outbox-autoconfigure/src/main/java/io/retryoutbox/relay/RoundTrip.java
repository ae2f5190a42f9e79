package io.retryoutbox.relay;

import java.util.function.Function;

import org.jspecify.annotations.Nullable;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * When a request went out to its destination and when the head of its answer came back,
 * as the HTTP client that sent it saw them: the destination's time, without the relay's
 * own before and after, which on a busy machine took as long as a 20 ms destination
 * itself (docs/benchmarks.md, forty-second session). Noted by a sender that can tell,
 * through the Reactor context of the attempt.
 */
final class RoundTrip {

	private volatile long sentAt;

	private volatile long answeredAt;

	private volatile boolean sent;

	private volatile boolean answered;

	/**
	 * Puts a round trip into the context of an attempt, for its sender to note.
	 * @param roundTrip the round trip
	 * @return what adds it to a context
	 */
	static Function<Context, Context> into(RoundTrip roundTrip) {
		return (context) -> context.put(RoundTrip.class, roundTrip);
	}

	/**
	 * The round trip an attempt's context holds, if any.
	 * @param context the context
	 * @return the round trip, or {@code null}
	 */
	static @Nullable RoundTrip in(ContextView context) {
		return context.getOrDefault(RoundTrip.class, null);
	}

	/**
	 * Notes that the request goes out now; again if it is sent again on a new connection.
	 */
	void sent() {
		this.answered = false;
		this.sentAt = System.nanoTime();
		this.sent = true;
	}

	/**
	 * Notes that the head of the answer came back now.
	 */
	void answered() {
		this.answeredAt = System.nanoTime();
		this.answered = true;
	}

	/**
	 * How long the destination took, if the sender noted both ends.
	 * @return the time in nanoseconds, or {@code -1} if it is not known
	 */
	long nanos() {
		if (!this.sent || !this.answered) {
			return -1;
		}
		return Math.max(0, this.answeredAt - this.sentAt);
	}

}
