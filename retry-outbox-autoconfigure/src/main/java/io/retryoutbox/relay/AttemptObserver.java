package io.retryoutbox.relay;

import java.util.List;

import io.retryoutbox.message.ClaimedMessage;
import io.retryoutbox.message.Outcome;
import reactor.core.publisher.Mono;

/**
 * Watches the relay's delivery attempts, e.g. to time them or to trace them.
 */
@FunctionalInterface
public interface AttemptObserver {

	/**
	 * An observer that does nothing.
	 */
	AttemptObserver NONE = (message, attempt) -> attempt;

	/**
	 * Wraps one attempt: sending the message and deciding its fate.
	 * @param message the message being attempted
	 * @param attempt the attempt, which emits the completion to record and never errors
	 * @return a publisher that subscribes to {@code attempt} and emits what it emits
	 */
	Mono<Outcome> observe(ClaimedMessage message, Mono<Outcome> attempt);

	/**
	 * Combines observers; the first one wraps the others.
	 * @param observers the observers, in order
	 * @return one observer that applies them all
	 */
	static AttemptObserver of(List<AttemptObserver> observers) {
		if (observers.isEmpty()) {
			return NONE;
		}
		if (observers.size() == 1) {
			return observers.get(0);
		}
		List<AttemptObserver> all = List.copyOf(observers);
		return (message, attempt) -> {
			Mono<Outcome> observed = attempt;
			for (int i = all.size() - 1; i >= 0; i--) {
				observed = all.get(i).observe(message, observed);
			}
			return observed;
		};
	}

}
