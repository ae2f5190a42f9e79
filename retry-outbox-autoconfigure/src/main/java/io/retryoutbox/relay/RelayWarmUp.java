package io.retryoutbox.relay;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.retryoutbox.DeliveryOutcome;
import io.retryoutbox.message.Claim;
import io.retryoutbox.message.ClaimedMessage;
import io.retryoutbox.message.Outcome;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * The relay's own path, run before it takes messages: requests through its HTTP connector
 * to a server of its own on the loopback interface, their outcomes decided by the default
 * policy and written in rounds as the relay writes them, for messages that do not exist,
 * so that nothing of it reaches a destination or a message row. A relay started cold sent
 * its first seconds of messages through classes still loading and code still interpreted,
 * while the JIT compilers took much of the machine; in the shared bench a backlog of
 * seconds built behind the first messages (docs/benchmarks.md, twenty-fourth session).
 */
final class RelayWarmUp {

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

	RelayWarmUp(OutboxRelay.WarmUp warmUp, String idempotencyKeyHeader, OutboxRelay.Settings settings,
			DecisionRecorder recorder, OutboxStore store, String owner) {
		this.warmUp = warmUp;
		this.idempotencyKeyHeader = idempotencyKeyHeader;
		this.settings = settings;
		this.recorder = recorder;
		this.store = store;
		this.owner = owner;
	}

	/**
	 * Sends the warm-up's requests, at most until its timeout, and writes their outcomes.
	 * @param mayClaim whether its rounds may claim for {@link #DESTINATION}, which is
	 * safe while the relay has no destination of that name: such a claim finds nothing
	 * @return the number of requests answered
	 */
	int run(boolean mayClaim) {
		WebClient webClient = this.warmUp.webClient();
		if (webClient == null || this.warmUp.requests() == 0) {
			return 0;
		}
		DisposableServer server = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.handle((request, response) -> request.receive().then(response.send()))
			.bindNow();
		try {
			RelayDestination destination = new RelayDestination(URI.create("http://127.0.0.1:" + server.port()),
					this.warmUp.timeout(), Map.of(), OnDead.SKIP, RelayDestination.Flow.DEFAULTS);
			HttpDispatcher dispatcher = new HttpDispatcher(webClient, Map.of(DESTINATION, destination),
					this.idempotencyKeyHeader, this.settings.errorBodyLimit());
			List<Outcome> outcomes = Flux.range(0, this.warmUp.requests())
				.flatMap((i) -> attempt(dispatcher, i), Math.min(IN_FLIGHT, this.settings.concurrency()))
				.take(this.warmUp.timeout())
				.collectList()
				.block();
			if (outcomes == null) {
				return 0;
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
			return outcomes.size();
		}
		finally {
			server.disposeNow();
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

}
