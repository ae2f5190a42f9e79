package io.retryoutbox.relay;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import io.retryoutbox.DeliveryOutcome;
import io.retryoutbox.Outbox;
import io.retryoutbox.OutboxRequest;
import io.retryoutbox.RetryPolicy;
import io.retryoutbox.message.Claim;
import io.retryoutbox.message.ClaimedMessage;
import io.retryoutbox.message.Outcome;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

import org.springframework.core.NestedExceptionUtils;
import org.springframework.http.MediaType;

/**
 * The relay's own path, run before it takes messages: requests through its HTTP connector
 * to a server of its own on the loopback interface, their outcomes decided by the default
 * policy and written in rounds as the relay writes them, for messages that do not exist,
 * so that nothing of it reaches a destination or a message row; then the rest as keyed
 * messages, a third inserted for a relay of its own to claim, send and finish, and two
 * thirds enqueued as the application enqueues them, on temporary copies of the outbox
 * tables in a transaction that is rolled back. A relay started cold sent its first
 * seconds of messages through classes still loading and code still interpreted, while the
 * JIT compilers took much of the machine; in the shared bench a backlog of seconds built
 * behind the first messages (docs/benchmarks.md, twenty-fourth and twenty-seventh
 * sessions).
 */
final class RelayWarmUp {

	private static final Log logger = LogFactory.getLog(RelayWarmUp.class);

	static final String DESTINATION = "retry-outbox-warm-up";

	private static final int IN_FLIGHT = 64;

	private static final int KEYS = 100;

	private static final byte[] BODY = ("{\"warm-up\":\"" + ".".repeat(180) + "\"}").getBytes(StandardCharsets.UTF_8);

	private static final Map<String, List<String>> HEADERS = Map.of("X-Retry-Outbox-Warm-Up", List.of("true"));

	private final OutboxRelay.WarmUp warmUp;

	private final String idempotencyKeyHeader;

	private final OutboxRelay.Settings settings;

	private final DecisionRecorder recorder;

	private final OutboxStore store;

	private final String owner;

	private final RetryPolicy fallback;

	RelayWarmUp(OutboxRelay.WarmUp warmUp, String idempotencyKeyHeader, OutboxRelay.Settings settings,
			RetryPolicy fallback, OutboxStore store, String owner) {
		this.warmUp = warmUp;
		this.idempotencyKeyHeader = idempotencyKeyHeader;
		this.settings = settings;
		this.recorder = new DecisionRecorder(fallback, fallback, Map.of());
		this.store = store;
		this.owner = owner;
		this.fallback = fallback;
	}

	/**
	 * Sends the warm-up's requests, at most until its timeout, and writes their outcomes;
	 * then rehearses the relay's whole path, if the store can.
	 * @param mayClaim whether its rounds may claim for {@link #DESTINATION}, which is
	 * safe while the relay has no destination of that name: such a claim finds nothing
	 * @return what it did
	 */
	Result run(boolean mayClaim) {
		RelayExchange exchange = this.warmUp.exchange();
		if (exchange == null || this.warmUp.requests() == 0) {
			return new Result(0, 0, 0);
		}
		long deadline = System.nanoTime() + this.warmUp.timeout().toNanos();
		int perKey = Math.max(1, this.warmUp.requests() / 4 / KEYS);
		int enqueues = Math.max(0, Math.min(this.warmUp.requests() / 2, this.warmUp.requests() - KEYS * perKey));
		DisposableServer server = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.handle((request, response) -> request.receive().then(response.send()))
			.bindNow();
		try {
			RelayDestination destination = new RelayDestination(URI.create("http://127.0.0.1:" + server.port()),
					this.warmUp.timeout(), Map.of(), OnDead.SKIP, RelayDestination.Flow.DEFAULTS);
			HttpDispatcher dispatcher = new HttpDispatcher(exchange, Map.of(DESTINATION, destination),
					this.idempotencyKeyHeader, this.settings.errorBodyLimit());
			List<Outcome> outcomes = Flux.range(0, Math.max(0, this.warmUp.requests() - KEYS * perKey - enqueues))
				.flatMap((i) -> attempt(dispatcher, i), Math.min(IN_FLIGHT, this.settings.concurrency()))
				.take(this.warmUp.timeout())
				.collectList()
				.block();
			if (outcomes == null) {
				return new Result(0, 0, 0);
			}
			Map<String, Integer> limits = mayClaim ? Map.of(DESTINATION, this.settings.batchSize()) : Map.of();
			for (int from = 0; from < outcomes.size(); from += this.settings.batchSize()) {
				List<Outcome> batch = outcomes.subList(from,
						Math.min(outcomes.size(), from + this.settings.batchSize()));
				// Without releasing keys: that would admit the application's waiting
				// messages, work for the relay's first poll, not for its warm-up.
				List<Claim> claimed = this.store
					.round(this.owner, batch, List.of(), false, limits, this.settings.runSize(), false,
							this.settings.leaseTimeout())
					.claimed();
				if (!claimed.isEmpty()) {
					this.store.release(this.owner, claimed.stream().map(Claim::id).toList());
				}
			}
			Rehearsed rehearsed = rehearse(exchange, destination, perKey, enqueues, deadline);
			return new Result(outcomes.size() + rehearsed.claimed() + rehearsed.enqueued(), rehearsed.claimed(),
					rehearsed.enqueued());
		}
		finally {
			server.disposeNow();
		}
	}

	/**
	 * Rehearses with a relay of its own, on the same code as the relay's: the rounds of
	 * keyed messages (admission, claims with runs, outcomes, releases and promotions) on
	 * copies of the outbox tables that only the store's rolled-back transaction sees,
	 * each message sent, a run's one after another, to the local server; then enqueues
	 * through the application's path, whose messages go on runs, are handed over or are
	 * claimed. The direct requests above warm the connector and the dispatcher, but not
	 * the relay's own rounds and sending, which in the shared bench took the first real
	 * messages tens of milliseconds each (docs/benchmarks.md, twenty-seventh session);
	 * nor the enqueue's paths, which most messages take and which warmed through the
	 * first seconds of the bench's writers (forty-fourth session).
	 * @return the messages the rehearsal delivered, claimed and enqueued
	 */
	private Rehearsed rehearse(RelayExchange exchange, RelayDestination destination, int perKey, int enqueues,
			long deadline) {
		AtomicInteger claimed = new AtomicInteger();
		AtomicInteger enqueued = new AtomicInteger();
		try {
			rehearseOnCopies(exchange, destination, perKey, enqueues, deadline, claimed, enqueued);
		}
		catch (RuntimeException ex) {
			// E.g. a role that may not create temporary tables: the warm-up above holds.
			logger.info("The outbox relay's warm-up did not rehearse its rounds on temporary copies of the outbox "
					+ "tables: " + NestedExceptionUtils.getMostSpecificCause(ex).getMessage());
			logger.debug("The outbox relay's rehearsal failed", ex);
		}
		return new Rehearsed(claimed.get(), enqueued.get());
	}

	private void rehearseOnCopies(RelayExchange exchange, RelayDestination destination, int perKey, int enqueues,
			long deadline, AtomicInteger claimed, AtomicInteger enqueued) {
		this.store.rehearse(DESTINATION, KEYS, perKey, (rehearsal) -> {
			ServedStore served = new ServedStore(rehearsal.store());
			OutboxRelay relay = new OutboxRelay(served, new DestinationPauses(new NoPauses(), Duration.ofMinutes(1)),
					this.fallback, this.fallback, exchange, Map.of(DESTINATION, destination), this.idempotencyKeyHeader,
					new OutboxRelay.Settings(this.settings.pollInterval(), this.settings.batchSize(),
							this.settings.concurrency(), this.settings.leaseTimeout(), this.settings.shutdownTimeout(),
							Duration.ZERO, this.settings.errorBodyLimit(), this.settings.runSize(), Duration.ZERO,
							Duration.ZERO),
					AttemptObserver.NONE);
			relay.start();
			try {
				served.serve(() -> served.written() >= KEYS * perKey, deadline);
				if (served.written() >= KEYS * perKey) {
					enqueue(rehearsal.outbox(relay), served, enqueues, deadline, enqueued);
					served.serve(() -> served.written() >= KEYS * perKey + enqueued.get(), deadline);
				}
			}
			finally {
				// Stopped on a thread of its own: stopping writes the last outcomes,
				// through the store this thread serves.
				Thread stopping = new Thread(relay::stop, "retry-outbox-rehearsal-stop");
				stopping.setDaemon(true);
				stopping.start();
				served.serve(() -> !stopping.isAlive(),
						System.nanoTime() + this.settings.shutdownTimeout().plusSeconds(1).toNanos());
				served.close();
				// The claimed messages were all written before the first enqueue.
				int written = served.written();
				enqueued.set(Math.max(0, Math.min(enqueued.get(), written - KEYS * perKey)));
				claimed.set(written - enqueued.get());
			}
		});
	}

	/**
	 * Enqueues as a writer does, one message at a time over the keys, each followed by
	 * the relay's store calls made meanwhile: runs under way take some, others are handed
	 * over or claimed.
	 */
	private void enqueue(Outbox outbox, ServedStore served, int enqueues, long deadline, AtomicInteger enqueued) {
		for (int i = 0; i < enqueues && deadline - System.nanoTime() > 0; i++) {
			outbox.send(OutboxRequest.post(DESTINATION, "/rehearsal")
				.body(BODY, MediaType.APPLICATION_JSON)
				.orderingKey("rehearsal-" + (i % KEYS))
				.build());
			enqueued.incrementAndGet();
			served.serveWaiting();
		}
	}

	private Mono<Outcome> attempt(HttpDispatcher dispatcher, int index) {
		UUID id = UUID.randomUUID();
		ClaimedMessage message = new ClaimedMessage(id, DESTINATION, "POST", "/warm-up", HEADERS, BODY,
				MediaType.APPLICATION_JSON_VALUE, "warm-up-" + (index % KEYS), id.toString(), 1, Instant.now(),
				Map.of());
		Instant startedAt = Instant.now();
		long start = System.nanoTime();
		return dispatcher.send(message).handle((outcome, sink) -> {
			if (outcome instanceof DeliveryOutcome.Response response && response.statusCode() == 200) {
				sink.next(this.recorder.record(message, outcome, Duration.ZERO, startedAt, start));
			}
			else {
				sink.error(new IllegalStateException("A warm-up request to the relay's own local server failed: "
						+ ((outcome instanceof DeliveryOutcome.Failure failure) ? failure.cause() : outcome)));
			}
		});
	}

	/**
	 * What a warm-up did.
	 *
	 * @param answered the requests answered, the rehearsal's included
	 * @param rehearsed the messages the rehearsal claimed and delivered
	 * @param enqueued the messages the rehearsal enqueued and delivered
	 */
	record Result(int answered, int rehearsed, int enqueued) {

	}

	private record Rehearsed(int claimed, int enqueued) {

	}

	/**
	 * No destination of the rehearsal pauses: its local server answers every request.
	 */
	private static final class NoPauses implements PauseStore {

		@Override
		public void pause(String destination, Duration pause, PauseReason reason, String detail, String pausedBy) {
		}

		@Override
		public boolean endIfOver(String destination) {
			return false;
		}

		@Override
		public boolean end(String destination) {
			return false;
		}

		@Override
		public int prune(String destination, Instant endedBefore) {
			return 0;
		}

		@Override
		public Snapshot read(Instant endedAfter) {
			return new Snapshot(Instant.now(), List.of());
		}

	}

}
