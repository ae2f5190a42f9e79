package io.retryoutbox.testsupport;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;

/**
 * Answers each request by its path, so that messages sent concurrently get the answers
 * meant for them; a path without an answer gets a 200, unless the test says otherwise.
 * Answers to the next requests whatever their path can be queued, and answers can be held
 * back until the test releases them.
 */
public final class PathDispatcher extends Dispatcher {

	private final Map<String, Deque<MockResponse>> responses = new ConcurrentHashMap<>();

	private final Queue<MockResponse> next = new ConcurrentLinkedQueue<>();

	private final Queue<Received> received = new ConcurrentLinkedQueue<>();

	private volatile Function<RecordedRequest, MockResponse> otherwise = (
			request) -> new MockResponse.Builder().code(200).build();

	private volatile CountDownLatch held = new CountDownLatch(0);

	/**
	 * Sets the answers to the requests for a path, in turn; the last one answers every
	 * further request.
	 * @param path the path, as the server sees it
	 * @param response the answer to the first request
	 * @param then the answers to the next requests
	 * @return this dispatcher
	 */
	public PathDispatcher answer(String path, MockResponse response, MockResponse... then) {
		Deque<MockResponse> answers = new ArrayDeque<>();
		answers.add(response);
		answers.addAll(List.of(then));
		this.responses.put(path, answers);
		return this;
	}

	/**
	 * Sets the answer to the next request, whatever its path, ahead of the answers by
	 * path; answers set this way go to the requests in the order they arrive. The server
	 * sees the next of them before it reads a request, so an answer that acts while the
	 * request is read, such as one with an {@code onRequestBody} effect, is set this way.
	 * @param response the answer
	 * @return this dispatcher
	 */
	public PathDispatcher enqueue(MockResponse response) {
		this.next.add(response);
		return this;
	}

	/**
	 * Sets how a request for a path without an answer is answered, in place of a 200.
	 * @param answer the answer to such a request, called as it arrives
	 * @return this dispatcher
	 */
	public PathDispatcher otherwise(Function<RecordedRequest, MockResponse> answer) {
		this.otherwise = answer;
		return this;
	}

	/**
	 * Holds back the answers to the requests arriving from now on, until
	 * {@link #release()}; they are recorded as they arrive.
	 * @return this dispatcher
	 */
	public PathDispatcher hold() {
		if (this.held.getCount() == 0) {
			this.held = new CountDownLatch(1);
		}
		return this;
	}

	/**
	 * Sends the answers held back, and answers the next requests at once.
	 */
	public void release() {
		this.held.countDown();
	}

	/**
	 * The requests received so far.
	 * @return the requests, in order
	 */
	public List<RecordedRequest> requests() {
		return this.received.stream().map(Received::request).toList();
	}

	/**
	 * The paths of the requests received so far.
	 * @return the paths, in order
	 */
	public List<String> paths() {
		return this.received.stream().map((received) -> received.request().getUrl().encodedPath()).toList();
	}

	/**
	 * When the requests received so far arrived.
	 * @return their {@link System#nanoTime()}, in the order of {@link #requests()}
	 */
	public List<Long> arrivals() {
		return this.received.stream().map(Received::nanoTime).toList();
	}

	@Override
	public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
		this.received.add(new Received(System.nanoTime(), request));
		this.held.await(5, TimeUnit.MINUTES);
		MockResponse next = this.next.poll();
		if (next != null) {
			return next;
		}
		Deque<MockResponse> answers = this.responses.get(request.getTarget());
		if (answers != null) {
			synchronized (answers) {
				return (answers.size() > 1) ? answers.poll() : answers.peek();
			}
		}
		return this.otherwise.apply(request);
	}

	@Override
	public MockResponse peek() {
		MockResponse next = this.next.peek();
		return (next != null) ? next : super.peek();
	}

	private record Received(long nanoTime, RecordedRequest request) {

	}

}
