package io.retryoutbox;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Date;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import io.netty.channel.ChannelOption;
import io.netty.handler.codec.DateFormatter;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.resources.LoopResources;

/**
 * The downstream of the chaos soak: a real HTTP server that answers every attempt as a
 * {@link Plan} decides from the seed, the message's sequence number (the last segment of
 * its path) and how many attempts of it arrived before, and records per
 * {@code Idempotency-Key} every arrival, what it was answered and which ones it
 * processed.
 * <p>
 * Reactor Netty rather than MockWebServer: an answer is chosen once the request's headers
 * have been read (MockWebServer chooses its socket effects before it reads the request),
 * so the connection can be reset before or after the body is read, per message. It runs
 * on event loops of its own, so that a relay context closing in the same JVM cannot stop
 * it.
 */
final class ChaosDownstream implements AutoCloseable {

	static final String IDEMPOTENCY_KEY = "Idempotency-Key";

	private final Plan plan;

	private final Duration lateBy;

	private final LoopResources loops = LoopResources.create("chaos-downstream", 2, true);

	private final DisposableServer server;

	private final Map<String, KeyRecord> records = new ConcurrentHashMap<>();

	private final List<Processing> processings = new ArrayList<>();

	private final Map<Action, AtomicInteger> answers = new EnumMap<>(Action.class);

	private final AtomicInteger withoutKey = new AtomicInteger();

	/**
	 * Starts the downstream.
	 * @param plan how it answers
	 * @param lateBy how long after its arrival a late answer is sent: longer than the
	 * relay's timeout
	 */
	ChaosDownstream(Plan plan, Duration lateBy) {
		this.plan = plan;
		this.lateBy = lateBy;
		for (Action action : Action.values()) {
			this.answers.put(action, new AtomicInteger());
		}
		this.server = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.runOn(this.loops)
			.handle((request, response) -> answer(request, response).onErrorComplete())
			.bindNow();
	}

	String baseUrl() {
		return "http://127.0.0.1:" + this.server.port() + "/";
	}

	private Mono<Void> answer(HttpServerRequest request, HttpServerResponse response) {
		String key = request.requestHeaders().get(IDEMPOTENCY_KEY);
		String path = request.fullPath();
		if (key == null) {
			this.withoutKey.incrementAndGet();
			return send(response, 400, "");
		}
		KeyRecord record = this.records.computeIfAbsent(key, (k) -> new KeyRecord());
		Arrival arrival = record.arrive(path, System.currentTimeMillis(), this.plan);
		this.answers.get(arrival.action()).incrementAndGet();
		Mono<Void> body = request.receive().aggregate().then();
		return switch (arrival.action()) {
			case OK -> body.then(Mono.defer(() -> {
				process(key, path, record);
				return send(response, 200, "{\"status\":\"accepted\"}");
			}));
			case UNAVAILABLE_DELAY_SECONDS -> body.then(retryAfter(response, 503, record, arrival, false));
			case UNAVAILABLE_HTTP_DATE -> body.then(retryAfter(response, 503, record, arrival, true));
			case TOO_MANY_DELAY_SECONDS -> body.then(retryAfter(response, 429, record, arrival, false));
			case TOO_MANY_HTTP_DATE -> body.then(retryAfter(response, 429, record, arrival, true));
			case LOCKED -> body.then(send(response, 409, "{\"error\":{\"code\":\"RESOURCE_LOCKED\"}}"));
			case CONFLICT_WITHOUT_ENVELOPE -> body.then(send(response, 409, "<html>conflict</html>"));
			case SERVER_ERROR -> body.then(send(response, 500, "{\"error\":{\"code\":\"INTERNAL\"}}"));
			case RESET_BEFORE_BODY -> drop(request, true);
			case RESET_AFTER_BODY -> body.then(drop(request, true));
			case NEVER_ANSWER -> untilClosed(request);
			case ANSWER_AFTER_TIMEOUT -> body.then(Mono.defer(() -> {
				process(key, path, record);
				return Mono.delay(this.lateBy).then(send(response, 200, "{\"status\":\"accepted\"}"));
			}));
			case PROCESS_THEN_DROP -> body.then(Mono.defer(() -> {
				process(key, path, record);
				return drop(request, false);
			}));
			case BAD_REQUEST -> body.then(send(response, 400, "{\"error\":{\"code\":\"INVALID_AMOUNT\"}}"));
			case CONFLICT -> body.then(send(response, 409, "{\"error\":{\"code\":\"CONFLICT\"}}"));
		};
	}

	private void process(String key, String path, KeyRecord record) {
		synchronized (this.processings) {
			this.processings.add(new Processing(key, path, record.processed() == 0));
			record.process();
		}
	}

	/**
	 * Answers with a {@code Retry-After} of 1 or 2 seconds, as delay-seconds or as an
	 * HTTP-date (IMF-fixdate, whole seconds, so the date is the floor the policy
	 * computes), and records the floor once the answer was written; its body names the
	 * answer ({@code "answer":<index>}).
	 */
	private Mono<Void> retryAfter(HttpServerResponse response, int status, KeyRecord record, Arrival arrival,
			boolean httpDate) {
		return Mono.defer(() -> {
			long now = System.currentTimeMillis();
			long seconds = arrival.retryAfterSeconds();
			long floor;
			String value;
			if (httpDate) {
				Instant date = Instant.ofEpochMilli(now).plusSeconds(seconds).truncatedTo(ChronoUnit.SECONDS);
				floor = date.toEpochMilli();
				value = DateFormatter.format(Date.from(date));
			}
			else {
				floor = now + seconds * 1000;
				value = Long.toString(seconds);
			}
			response.header("Retry-After", value);
			// The attempt log keeps the start of an error body: the answer's index there
			// shows that a relay received this answer, not just that it was written.
			String body = "{\"error\":{\"code\":\"" + ((status == 429) ? "RATE_LIMITED" : "UNAVAILABLE")
					+ "\"},\"answer\":" + arrival.index() + "}";
			return send(response, status, body).doOnSuccess((done) -> record.gave(arrival, floor));
		});
	}

	private static Mono<Void> send(HttpServerResponse response, int status, String body) {
		byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
		response.status(status).header("Content-Length", Integer.toString(bytes.length));
		if (body.startsWith("{")) {
			response.header("Content-Type", "application/json");
		}
		return response.sendByteArray(Mono.just(bytes)).then();
	}

	/**
	 * Closes the connection without an answer: with a reset (linger 0), or with a plain
	 * close.
	 */
	private static Mono<Void> drop(HttpServerRequest request, boolean reset) {
		return Mono.create((sink) -> request.withConnection((connection) -> {
			connection.onDispose(() -> sink.success());
			if (reset) {
				connection.channel().config().setOption(ChannelOption.SO_LINGER, 0);
			}
			connection.channel().close();
		}));
	}

	/**
	 * Never answers: completes when the relay gives up and closes the connection.
	 */
	private static Mono<Void> untilClosed(HttpServerRequest request) {
		return Mono
			.create((sink) -> request.withConnection((connection) -> connection.onDispose(() -> sink.success())));
	}

	Map<String, KeyRecord> records() {
		return Map.copyOf(this.records);
	}

	List<Processing> processings() {
		synchronized (this.processings) {
			return List.copyOf(this.processings);
		}
	}

	Map<Action, Integer> answers() {
		Map<Action, Integer> answers = new EnumMap<>(Action.class);
		this.answers.forEach((action, count) -> answers.put(action, count.get()));
		return answers;
	}

	int requestsWithoutKey() {
		return this.withoutKey.get();
	}

	@Override
	public void close() {
		this.server.disposeNow();
		this.loops.dispose();
	}

	/**
	 * How the downstream answers an attempt.
	 */
	enum Action {

		/** Processed, 200. */
		OK(false, true),

		/** 503 with {@code Retry-After} in seconds. */
		UNAVAILABLE_DELAY_SECONDS(false, false),

		/** 503 with {@code Retry-After} as an HTTP-date. */
		UNAVAILABLE_HTTP_DATE(false, false),

		/** 429 with {@code Retry-After} in seconds. */
		TOO_MANY_DELAY_SECONDS(false, false),

		/** 429 with {@code Retry-After} as an HTTP-date. */
		TOO_MANY_HTTP_DATE(false, false),

		/** 409 with error code {@code RESOURCE_LOCKED}. */
		LOCKED(false, false),

		/** 409 without an error envelope. */
		CONFLICT_WITHOUT_ENVELOPE(false, false),

		/** 500. */
		SERVER_ERROR(false, false),

		/** The connection reset once the headers were read. */
		RESET_BEFORE_BODY(false, false),

		/** The connection reset once the body was read. */
		RESET_AFTER_BODY(false, false),

		/** Accepted, never answered. */
		NEVER_ANSWER(false, false),

		/** Processed, answered 200 after the relay's timeout. */
		ANSWER_AFTER_TIMEOUT(false, true),

		/** Processed, then the connection closed before an answer. */
		PROCESS_THEN_DROP(false, true),

		/** 400: refused for good. */
		BAD_REQUEST(true, false),

		/** 409 with error code {@code CONFLICT}: refused for good. */
		CONFLICT(true, false);

		private final boolean terminal;

		private final boolean processes;

		Action(boolean terminal, boolean processes) {
			this.terminal = terminal;
			this.processes = processes;
		}

		boolean isTerminal() {
			return this.terminal;
		}

		boolean processes() {
			return this.processes;
		}

		boolean givesRetryAfter() {
			return this == UNAVAILABLE_DELAY_SECONDS || this == UNAVAILABLE_HTTP_DATE || this == TOO_MANY_DELAY_SECONDS
					|| this == TOO_MANY_HTTP_DATE;
		}

	}

	/**
	 * Decides, from the seed alone, the answers to each message: the same seed gives
	 * every message the same answers, attempt by attempt, so that a failure can be
	 * replayed.
	 */
	static final class Plan {

		// Transient faults that leave the request unprocessed, then all of them.
		private static final List<Action> REFUSING = List.of(Action.UNAVAILABLE_DELAY_SECONDS,
				Action.UNAVAILABLE_HTTP_DATE, Action.TOO_MANY_DELAY_SECONDS, Action.TOO_MANY_HTTP_DATE, Action.LOCKED,
				Action.CONFLICT_WITHOUT_ENVELOPE, Action.SERVER_ERROR, Action.RESET_BEFORE_BODY,
				Action.RESET_AFTER_BODY, Action.NEVER_ANSWER);

		private static final List<Action> TRANSIENT = concat(REFUSING,
				List.of(Action.ANSWER_AFTER_TIMEOUT, Action.PROCESS_THEN_DROP));

		// From this attempt on a message that is not refused for good is answered 200,
		// well within the relay's attempt budget.
		private static final int MAX_FAULTS = 5;

		private static final int FAULT_PERCENT = 30;

		private static final int REFUSED_PERCENT = 4;

		// The first messages meet every fault on their first attempt, and two are
		// refused for good, so that each run answers every class.
		private static final int FORCED = 2 * TRANSIENT.size();

		private final long seed;

		Plan(long seed) {
			this.seed = seed;
		}

		/**
		 * How a message is refused for good, if it is.
		 * @param sequence the message's sequence number
		 * @return its terminal answer, or {@code null} if it is delivered in the end
		 */
		@Nullable Action refusal(long sequence) {
			if (sequence == FORCED) {
				return Action.BAD_REQUEST;
			}
			if (sequence == FORCED + 1) {
				return Action.CONFLICT;
			}
			SplittableRandom random = random(sequence, -1);
			if (sequence < FORCED || random.nextInt(100) >= REFUSED_PERCENT) {
				return null;
			}
			return random.nextBoolean() ? Action.BAD_REQUEST : Action.CONFLICT;
		}

		/**
		 * The answer to an attempt.
		 * @param sequence the message's sequence number
		 * @param arrival how many attempts of the message arrived before
		 * @return the answer
		 */
		Action action(long sequence, int arrival) {
			SplittableRandom random = random(sequence, arrival);
			Action refusal = refusal(sequence);
			if (refusal != null) {
				// Refused at its first, second or third attempt, after faults that leave
				// it unprocessed; once refused, always.
				int refusedAt = (sequence == FORCED + 1) ? 1 : random(sequence, -2).nextInt(3);
				return (arrival >= refusedAt) ? refusal : REFUSING.get(random.nextInt(REFUSING.size()));
			}
			if (arrival == 0 && sequence < FORCED) {
				return TRANSIENT.get((int) (sequence % TRANSIENT.size()));
			}
			if (arrival >= MAX_FAULTS || random.nextInt(100) >= FAULT_PERCENT) {
				return Action.OK;
			}
			return TRANSIENT.get(random.nextInt(TRANSIENT.size()));
		}

		long retryAfterSeconds(long sequence, int arrival) {
			return 1 + random(sequence, arrival).nextInt(1000) % 2;
		}

		private SplittableRandom random(long sequence, int arrival) {
			return new SplittableRandom(this.seed ^ (sequence * 0x9E3779B97F4A7C15L) ^ (arrival * 0xC2B2AE3D27D4EB4FL));
		}

		static long sequence(String path) {
			return Long.parseLong(path.substring(path.lastIndexOf('/') + 1));
		}

		private static List<Action> concat(List<Action> first, List<Action> second) {
			List<Action> all = new ArrayList<>(first);
			all.addAll(second);
			return List.copyOf(all);
		}

	}

	/**
	 * What arrived with one idempotency key.
	 */
	static final class KeyRecord {

		private final List<Arrival> arrivals = new ArrayList<>();

		private final List<String> paths = new ArrayList<>();

		private int processed;

		synchronized Arrival arrive(String path, long at, Plan plan) {
			if (!this.paths.contains(path)) {
				this.paths.add(path);
			}
			long sequence = Plan.sequence(path);
			int index = this.arrivals.size();
			Arrival arrival = new Arrival(index, at, plan.action(sequence, index),
					plan.retryAfterSeconds(sequence, index), 0);
			this.arrivals.add(arrival);
			return arrival;
		}

		synchronized void gave(Arrival arrival, long floor) {
			this.arrivals.set(arrival.index(),
					new Arrival(arrival.index(), arrival.at(), arrival.action(), arrival.retryAfterSeconds(), floor));
		}

		synchronized void process() {
			this.processed++;
		}

		synchronized int processed() {
			return this.processed;
		}

		synchronized List<Arrival> arrivals() {
			return List.copyOf(this.arrivals);
		}

		synchronized List<String> paths() {
			return List.copyOf(this.paths);
		}

	}

	/**
	 * One attempt as the downstream saw it.
	 *
	 * @param index how many attempts with its key arrived before
	 * @param at when it arrived, epoch milliseconds
	 * @param action how it was answered
	 * @param retryAfterSeconds the {@code Retry-After} it asks for, if its action gives
	 * one
	 * @param floor the epoch milliseconds before which no later attempt may arrive,
	 * {@code 0} if it gave no {@code Retry-After} (or its answer could not be written)
	 */
	record Arrival(int index, long at, Action action, long retryAfterSeconds, long floor) {

	}

	/**
	 * A processing of a message, in the order the downstream decided them.
	 *
	 * @param key its idempotency key
	 * @param path its path
	 * @param first whether it is the first processing of the key
	 */
	record Processing(String key, String path, boolean first) {

	}

}
