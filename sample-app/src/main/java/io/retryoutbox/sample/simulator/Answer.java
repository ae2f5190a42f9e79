package io.retryoutbox.sample.simulator;

import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * What the simulator answers to one request, and how the answer reaches the client.
 *
 * @param status the HTTP status
 * @param headers extra response headers
 * @param body the JSON body
 * @param delivery how the answer is delivered
 */
record Answer(int status, Map<String, String> headers, Object body, Delivery delivery) {

	static Answer of(int status, Object body) {
		return new Answer(status, Map.of(), body, Delivery.AT_ONCE);
	}

	static Answer error(int status, String code) {
		return of(status, Map.of("error", Map.of("code", code)));
	}

	Answer withHeader(String name, String value) {
		Map<String, String> headers = new LinkedHashMap<>(this.headers);
		headers.put(name, value);
		return new Answer(this.status, Map.copyOf(headers), this.body, this.delivery);
	}

	Answer deliveredAs(@Nullable Fault fault) {
		Delivery delivery = (fault == Fault.SLOW) ? Delivery.SLOWLY
				: (fault == Fault.DROPPED) ? Delivery.DROPPED : Delivery.AT_ONCE;
		return new Answer(this.status, this.headers, this.body, delivery);
	}

	boolean isSuccess() {
		return this.status >= 200 && this.status < 300;
	}

	/**
	 * How an answer reaches the client.
	 */
	enum Delivery {

		/** Right away. */
		AT_ONCE,

		/** After the slow delay. */
		SLOWLY,

		/** Not at all: the connection is dropped mid-answer. */
		DROPPED

	}

}
