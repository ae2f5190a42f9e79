package io.retryoutbox.testsupport;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;

/**
 * Answers each request by its path, so that messages sent concurrently get the answers
 * meant for them; a path without an answer gets a 200.
 */
public final class PathDispatcher extends Dispatcher {

	private final Map<String, MockResponse> responses = new ConcurrentHashMap<>();

	private final List<RecordedRequest> requests = new CopyOnWriteArrayList<>();

	private final List<Long> arrivals = new CopyOnWriteArrayList<>();

	/**
	 * Sets the answer to every request for a path.
	 * @param path the path, as the server sees it
	 * @param response the answer
	 * @return this dispatcher
	 */
	public PathDispatcher answer(String path, MockResponse response) {
		this.responses.put(path, response);
		return this;
	}

	/**
	 * The requests received so far.
	 * @return the requests, in order
	 */
	public List<RecordedRequest> requests() {
		return this.requests;
	}

	/**
	 * When the requests received so far arrived.
	 * @return their {@link System#nanoTime()}, in order
	 */
	public List<Long> arrivals() {
		return this.arrivals;
	}

	@Override
	public MockResponse dispatch(RecordedRequest request) {
		this.arrivals.add(System.nanoTime());
		this.requests.add(request);
		return this.responses.getOrDefault(request.getTarget(), new MockResponse.Builder().code(200).build());
	}

}
