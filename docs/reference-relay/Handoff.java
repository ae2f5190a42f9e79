package bench.ideal;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLongArray;

import bench.common.BenchPeer;
import bench.common.Msg;
import bench.common.SinkClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * A bound on latency, not a relay ({@code --ideal.handoff=keyed|unkeyed}): the row is inserted in
 * the business transaction as the reference relay inserts it, and after commit the writer hands the
 * message to memory, where it is sent at once, or, keyed, once the key's message before it has
 * been answered; a thread marks the answered rows done every 10 ms. Nothing is claimed, polled or
 * leased, and a crash loses what is in memory. Requests go through Reactor Netty's
 * {@code HttpClient} itself (a pool of 256, as the bench's), or with
 * {@code --ideal.handoff-webclient=true} through the bench's {@code SinkClient}. A key's next message
 * is sent from the event loop that got the answer, or with {@code --ideal.handoff-hop=true} from one
 * thread of its own, as the starter's runs are. Before the writers start, it sends 5,000 requests
 * through the same client to a loopback server of its own, 64 at a time, as the starter's warm-up
 * did until it doubled them ({@code --ideal.handoff-warm-up=false} skips them).
 */
final class Handoff {

	private static final ThreadLocal<Long> ROW = new ThreadLocal<>();

	private final HttpClient http;

	private final HttpClient toSink;

	private final SinkClient sink;

	private final boolean webClient;

	private final boolean keyed;

	private final Executor next;

	private final Map<String, Key> keys = new ConcurrentHashMap<>();

	private final ConcurrentLinkedQueue<Long> answered = new ConcurrentLinkedQueue<>();

	private static final int MAX_MS = 10_000;

	private final AtomicLongArray roundTrips = new AtomicLongArray(MAX_MS + 1);

	private Handoff(String sinkUrl, SinkClient sink, boolean webClient, boolean keyed, Executor next) {
		this.http = HttpClient
			.create(ConnectionProvider.builder("handoff").maxConnections(256).pendingAcquireMaxCount(-1).build())
			.headers(headers -> headers.set("Content-Type", "application/json"));
		this.toSink = this.http.baseUrl(sinkUrl);
		this.sink = sink;
		this.webClient = webClient;
		this.keyed = keyed;
		this.next = next;
	}

	static BenchPeer peer(JdbcTemplate jdbc, TransactionTemplate tx, String sinkUrl, SinkClient sink, boolean keyed,
			boolean webClient, boolean hop, boolean warmUp) {
		Handoff handoff = new Handoff(sinkUrl, sink, webClient, keyed,
				hop ? Executors.newSingleThreadExecutor() : Runnable::run);
		if (warmUp) {
			handoff.warmUp();
		}
		Runtime.getRuntime().addShutdownHook(new Thread(handoff::printRoundTrips));
		Thread done = new Thread(() -> {
			while (true) {
				List<Object> ids = new ArrayList<>();
				for (Long id; (id = handoff.answered.poll()) != null;) {
					ids.add(id);
				}
				if (!ids.isEmpty()) {
					tx.executeWithoutResult(s -> IdealApp.updateByIds(jdbc,
							"update bench_ideal_outbox set claimed_at = now(), done_at = now() where id = any(?)", "bigint",
							ids));
				}
				try {
					Thread.sleep(10);
				}
				catch (InterruptedException ex) {
					return;
				}
			}
		}, "ideal-handoff-done");
		done.setDaemon(true);
		done.start();
		return new BenchPeer() {

			@Override
			public void enqueue(Msg msg) {
				ROW.set(jdbc.queryForObject("insert into bench_ideal_outbox (payload) values (?) returning id", Long.class,
						msg.json()));
			}

			@Override
			public void afterCommit(Msg msg) {
				handoff.offer(new Pending(ROW.get(), msg.key(), msg.json()));
			}

		};
	}

	private void offer(Pending pending) {
		if (!this.keyed) {
			send(pending, null);
			return;
		}
		Key key = this.keys.computeIfAbsent(pending.key(), k -> new Key());
		synchronized (key) {
			if (key.inFlight) {
				key.waiting.add(pending);
				return;
			}
			key.inFlight = true;
		}
		send(pending, key);
	}

	private void send(Pending pending, Key key) {
		long start = System.nanoTime();
		Runnable answered = () -> {
			this.roundTrips.incrementAndGet((int) Math.min(MAX_MS, (System.nanoTime() - start) / 1_000_000));
			answered(pending, key);
		};
		post(pending.json()).subscribe(null, ex -> answered.run(), answered);
	}

	/** Prints the requests' round trips so far, from subscription to answer, to standard out. */
	void printRoundTrips() {
		long count = 0;
		for (int i = 0; i <= MAX_MS; i++) {
			count += this.roundTrips.get(i);
		}
		StringBuilder line = new StringBuilder("handoff round trips (ms): " + count + " requests");
		double[] quantiles = { 0.1, 0.5, 0.9, 0.99 };
		long seen = 0;
		int q = 0;
		for (int i = 0; i <= MAX_MS && q < quantiles.length; i++) {
			seen += this.roundTrips.get(i);
			for (; q < quantiles.length && seen >= quantiles[q] * count; q++) {
				line.append(", p").append((int) (quantiles[q] * 100)).append(' ').append(i);
			}
		}
		System.out.println(line);
	}

	private void warmUp() {
		DisposableServer server = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.route(routes -> routes.post("/msg",
					(request, response) -> request.receive().then(Mono.from(response.status(200).send()))))
			.bindNow();
		try {
			String url = "http://127.0.0.1:" + server.port();
			HttpClient local = this.http.baseUrl(url);
			SinkClient localSink = new SinkClient(url);
			String json = Msg.of(0, 100, 200).json();
			Flux.range(0, 5000)
				.flatMap(i -> this.webClient ? localSink.postAsync(json) : post(local, json), 64)
				.blockLast(Duration.ofSeconds(30));
		}
		finally {
			server.disposeNow();
		}
	}

	private Mono<Void> post(String json) {
		if (this.webClient) {
			return this.sink.postAsync(json);
		}
		return post(this.toSink, json);
	}

	private static Mono<Void> post(HttpClient http, String json) {
		byte[] body = json.getBytes(StandardCharsets.UTF_8);
		return http.post()
			.uri("/msg")
			.send((request, out) -> out.sendByteArray(Mono.just(body)))
			.responseSingle((response, content) -> content.then())
			.then();
	}

	private void answered(Pending pending, Key key) {
		this.answered.add(pending.row());
		if (key == null) {
			return;
		}
		Pending following;
		synchronized (key) {
			following = key.waiting.poll();
			if (following == null) {
				key.inFlight = false;
				return;
			}
		}
		this.next.execute(() -> send(following, key));
	}

	private record Pending(long row, String key, String json) {
	}

	private static final class Key {

		final ArrayDeque<Pending> waiting = new ArrayDeque<>();

		boolean inFlight;

	}

}
