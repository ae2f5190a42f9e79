package io.retryoutbox.relay;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import com.netflix.concurrency.limits.Limiter;
import io.retryoutbox.RetryPolicy;
import io.retryoutbox.message.Claim;
import io.retryoutbox.message.ClaimedMessage;
import io.retryoutbox.message.MessageStatus;
import io.retryoutbox.message.Outcome;
import io.retryoutbox.message.UnreadableMessage;
import io.retryoutbox.support.BackgroundWorker;
import io.retryoutbox.support.HttpRequestRules;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.SignalType;

import org.springframework.context.SmartLifecycle;
import org.springframework.util.Assert;

/**
 * Claims due outbox messages, sends them and records what the {@link RetryPolicy}
 * decided.
 * <p>
 * It owns its background threads (a poller and a lease keeper, see
 * {@link BackgroundWorker}), so it needs no {@code @EnableScheduling}. Messages are
 * claimed whenever a sending slot is free and their outcomes are written in batches as
 * they arrive, so one slow request never holds up the others. A retry is a new due time
 * on the row, never a sleeping thread, so stopping never waits for a backoff.
 */
public final class OutboxRelay implements SmartLifecycle, DirectDispatch {

	private static final Log logger = LogFactory.getLog(OutboxRelay.class);

	private static final Duration LINGER = Duration.ofMillis(5);

	// How long arrivals behind runs are gathered before one read looks for them all: in
	// the shared bench, a read at every arrival cost a twentieth of the rate at 0 ms
	// (docs/benchmarks.md, thirty-sixth session).
	private static final Duration GROW_LINGER = Duration.ofMillis(10);

	// How often another instance's enqueues may make the relay scan for keys without a
	// head, at most.
	private static final Duration ELSEWHERE_SCAN_INTERVAL = Duration.ofMillis(100);

	private final OutboxStore store;

	private final DestinationPauses pauses;

	private final HttpDispatcher dispatcher;

	private final RelayExchange exchange;

	private final DecisionRecorder recorder;

	private final Settings settings;

	private final AttemptObserver observer;

	private final String owner = ManagementFactory.getRuntimeMXBean().getName() + "/"
			+ UUID.randomUUID().toString().substring(0, 8);

	// A poll is scheduled that a wake-up brought, at the earliest the round interval
	// after the last poll started: the one numbered wakeGeneration, due at wakeAt
	// (System.nanoTime()). An earlier wake-up replaces it, and a replaced one does
	// nothing when it comes.
	private final AtomicBoolean wakePending = new AtomicBoolean();

	private final Object wakeLock = new Object();

	private long wakeGeneration;

	private volatile long wakeAt;

	// A poll is submitted that waits for no round interval, to claim again after a full
	// batch.
	private final AtomicBoolean nowPending = new AtomicBoolean();

	// Sending what direct dispatch handed over is submitted to the poll thread.
	private final AtomicBoolean handOverPending = new AtomicBoolean();

	// When the last poll started (System.nanoTime()).
	private volatile long polledAt = System.nanoTime();

	// Whether another instance enqueued since the last scan for keys without a head.
	private final AtomicBoolean enqueuedElsewhere = new AtomicBoolean();

	// Whether something may have become due since the last claim: an enqueue that
	// inserted a message pending, a notification, a backlog, the poll interval.
	private final AtomicBoolean claimWanted = new AtomicBoolean(true);

	private final Semaphore slots;

	private final Map<String, DestinationFlow> flows;

	// What ended runs left to write: each run's outcomes and unsent messages as one
	// element, so that a round writes them together.
	private final Queue<Finished> completed = new ConcurrentLinkedQueue<>();

	// Runs that ended, whose outcomes a round has yet to take: a keyed one may go on
	// until then with a message of its key that this instance enqueues (chain).
	private final Queue<Run> answered = new ConcurrentLinkedQueue<>();

	// Runs that delivered all their messages and keep their key for the run linger, so
	// that the key's next message from this instance goes on the same run instead of
	// waiting for a round to write, release and claim; only the poll thread (or a stop,
	// once it ended) reads and changes it.
	private final Set<Run> lingering = ConcurrentHashMap.newKeySet();

	// When the first of them may be taken (System.nanoTime()), while there are any.
	private long lingerEnds;

	// The keyed runs this relay sends or has not yet written, by key.
	private final Map<String, Run> runsByKey = new ConcurrentHashMap<>();

	// Keys of runs that messages enqueued here arrived behind, for the chainer to read.
	private final Set<String> growing = ConcurrentHashMap.newKeySet();

	private final AtomicBoolean growPending = new AtomicBoolean();

	// Its own thread, so that reading what arrived behind a run waits for no round.
	private final BackgroundWorker chainer = new BackgroundWorker("retry-outbox-chain-");

	// Messages inserted leased to this relay whose transaction committed, waiting for a
	// slot and a permit of their destination.
	private final Queue<ClaimedMessage> handedOver = new ConcurrentLinkedQueue<>();

	// Slots promised to direct dispatch and not yet taken: reserved by an enqueue whose
	// transaction has not ended, or handed over and waiting. Claims leave them free.
	private final AtomicInteger promised = new AtomicInteger();

	// The same by destination, so that a claim leaves each destination's promised
	// permits free for the messages promised them.
	private final Map<String, AtomicInteger> promisedTo = new HashMap<>();

	// What the claim under way may take, from when its poll starts working out its
	// limits until what it claimed has started; null while none is. A reservation made
	// after the limits were worked out was not left out of them, so its hand-over leaves
	// them to the claim.
	private volatile @Nullable Claiming claiming;

	// Destinations whose last claim took all it asked for, so that more of their
	// messages may be due. Only the poller's thread uses it.
	private final Set<String> backlogged = new HashSet<>();

	// Destinations with more due messages than their last claim could take, short of a
	// whole batch, because their flow limit or the relay's slots were busy: a run's end
	// that frees enough of their permits brings the next claim at once.
	private final Set<String> cutShort = ConcurrentHashMap.newKeySet();

	// When the poll that waits for a destination's rate is due (System.nanoTime()); in
	// the past when none is scheduled.
	private volatile long ratePollAt;

	// Leased messages this relay is sending or has an unwritten outcome for: only these
	// have their lease extended, so a message whose outcome is lost is taken over after
	// its lease.
	private final Set<UUID> held = ConcurrentHashMap.newKeySet();

	// Not a daemon, so that an application that only relays (no web server) keeps
	// running.
	private final BackgroundWorker poller = new BackgroundWorker("retry-outbox-relay-", false);

	private final Queue<MonoSink<Void>> runsToContinue = new ConcurrentLinkedQueue<>();

	// Segments of runs that messages enqueued here resumed, to start on the run thread.
	private final Queue<Runnable> segmentsToStart = new ConcurrentLinkedQueue<>();

	// Where a run's next message starts: a thread of its own, so that it waits for
	// neither a round on the poll thread nor another connection's event loop.
	private final BackgroundWorker runThread = new BackgroundWorker("retry-outbox-run-");

	// Its own thread, so that leases are extended while a poll or the shutdown waits.
	private final BackgroundWorker leaseKeeper = new BackgroundWorker("retry-outbox-lease-");

	private volatile Disposable.Composite sending = Disposables.composite();

	private volatile boolean running;

	// A test drains the relay on its own thread: runs go on as when it is running.
	private volatile boolean draining;

	// Wake-ups before the first poll are ignored, so that start-delay holds.
	private volatile boolean polled;

	private boolean autoStartup = true;

	private WarmUp warmUp = WarmUp.NONE;

	// The default policy only: a warm-up outcome reaches no code of the application.
	private final RetryPolicy fallback;

	private final String idempotencyKeyHeader;

	private boolean warmedUp;

	private volatile long lastRecovery;

	private volatile @Nullable RuntimeException lastPollError;

	/**
	 * Creates a relay whose attempts are watched.
	 * @param store where messages are claimed and completed
	 * @param pauses where destination pauses are shared with the other instances
	 * @param policy decides the fate of each attempt
	 * @param fallback decides in place of {@code policy} when it throws, as for a
	 * transient failure: the default policy with the configured settings
	 * @param exchange sends the requests; it must not retry by itself
	 * @param destinations the destinations by name
	 * @param idempotencyKeyHeader the header that carries each message's idempotency key
	 * @param settings how the relay claims and paces its work
	 * @param observer watches each attempt, e.g. for metrics and traces
	 */
	public OutboxRelay(OutboxStore store, DestinationPauses pauses, RetryPolicy policy, RetryPolicy fallback,
			RelayExchange exchange, Map<String, RelayDestination> destinations, String idempotencyKeyHeader,
			Settings settings, AttemptObserver observer) {
		this.observer = observer;
		this.store = store;
		this.pauses = pauses;
		this.exchange = exchange;
		this.dispatcher = new HttpDispatcher(exchange, destinations, idempotencyKeyHeader, settings.errorBodyLimit());
		Map<String, OnDead> onDead = new HashMap<>();
		destinations.forEach((name, destination) -> onDead.put(name, destination.onDead()));
		this.recorder = new DecisionRecorder(policy, fallback, onDead);
		this.fallback = fallback;
		this.idempotencyKeyHeader = idempotencyKeyHeader;
		this.settings = settings;
		this.slots = new Semaphore(settings.concurrency());
		Map<String, DestinationFlow> flows = new LinkedHashMap<>();
		destinations.forEach((name, destination) -> {
			DestinationFlow flow = new DestinationFlow(name, destination.flow());
			flow.listen(pauses.listener(name, this.owner));
			flows.put(name, flow);
			this.promisedTo.put(name, new AtomicInteger());
		});
		this.flows = Collections.unmodifiableMap(flows);
	}

	/**
	 * The destinations this relay sends to.
	 * @return their names
	 */
	public Set<String> getDestinations() {
		return this.flows.keySet();
	}

	/**
	 * The current flow limit of a destination: how many of its requests may be in flight.
	 * @param destination the destination name
	 * @return the limit
	 */
	public int getFlowLimit(String destination) {
		return flow(destination).limit();
	}

	/**
	 * The requests to a destination in flight now.
	 * @param destination the destination name
	 * @return how many
	 */
	public int getInFlight(String destination) {
		return flow(destination).inFlight();
	}

	/**
	 * Whether a destination takes requests on this instance, or waits out a
	 * {@code Retry-After} or an open circuit.
	 * @param destination the destination name
	 * @return the state
	 */
	public DestinationState getDestinationState(String destination) {
		return flow(destination).state();
	}

	/**
	 * The current pause of a destination, shared by every instance: until when and why.
	 * @param destination the destination name
	 * @return the pause, or {@code null} while the destination is open on this instance
	 */
	public @Nullable DestinationPause getDestinationPause(String destination) {
		return (flow(destination).state() != DestinationState.OPEN) ? this.pauses.current(destination) : null;
	}

	/**
	 * Ends the pause of a destination: here at once, without a probe, and on the other
	 * instances when they next read the shared pauses.
	 * @param destination the destination name
	 * @return whether it was paused
	 */
	public boolean resume(String destination) {
		boolean resumed = this.pauses.resume(destination, flow(destination));
		wakeUp();
		return resumed;
	}

	@Override
	public @Nullable String reserve(String destination) {
		DestinationFlow flow = this.flows.get(destination);
		if (!this.running || !this.polled || flow == null || flow.state() != DestinationState.OPEN) {
			return null;
		}
		// Checked after taking, so that enqueues racing for the last slot cannot all win.
		int promisedToFlow = this.promisedTo.get(destination).incrementAndGet();
		if (this.promised.incrementAndGet() > this.slots.availablePermits() || promisedToFlow > flow.available()) {
			unpromise(destination);
			return null;
		}
		return this.owner;
	}

	@Override
	public Duration leaseTimeout() {
		return this.settings.leaseTimeout();
	}

	@Override
	public void handOver(ClaimedMessage message) {
		if (!this.running) {
			// Stopped after the reservation: its leases were released before this row
			// committed, so it waits for its lease to expire, for any relay to take.
			unpromise(message.destination());
			return;
		}
		this.held.add(message.id());
		DestinationFlow flow = this.flows.get(message.destination());
		// Started here, on the permit and slot its reservation kept from every claim
		// since, taken before the promise goes back so that a claim meanwhile counts them
		// busy rather than free; the send itself starts on the run thread. Left to the
		// poll thread, it waited for the round under way (docs/benchmarks.md,
		// forty-third session).
		Claiming claim = this.claiming;
		if (flow.available() > Claiming.permits(claim, message.destination())
				&& this.slots.availablePermits() > Claiming.slots(claim) && this.slots.tryAcquire()) {
			Run run = new Run(List.of(message));
			begin(run, flow);
			unpromise(message.destination());
			startOnRunThread(() -> sendSegment(run, 0, sendFrom(run, run.first(), flow), flow));
			return;
		}
		this.handedOver.add(message);
		// Left waiting for a slot or a permit (a claim worked out its limits before the
		// reservation), it goes at a later poll.
		if (this.handOverPending.compareAndSet(false, true) && !this.poller.submit(this::sendHandedOverNow)) {
			this.handOverPending.set(false);
		}
	}

	private void sendHandedOverNow() {
		this.handOverPending.set(false);
		if (this.running) {
			sendHandedOver();
		}
	}

	private void pollNow() {
		if (this.running && this.polled && this.nowPending.compareAndSet(false, true)
				&& !this.poller.submit(() -> poll(this.nowPending))) {
			this.nowPending.set(false);
		}
	}

	@Override
	public void cancel(String destination) {
		unpromise(destination);
	}

	private void unpromise(String destination) {
		this.promised.decrementAndGet();
		this.promisedTo.get(destination).decrementAndGet();
	}

	private DestinationFlow flow(String destination) {
		DestinationFlow flow = this.flows.get(destination);
		Assert.notNull(flow, () -> "Unknown destination '" + destination + "'");
		return flow;
	}

	/**
	 * The id this relay writes as lease owner.
	 * @return the owner id
	 */
	public String getOwner() {
		return this.owner;
	}

	/**
	 * Whether the relay is polling, was stopped, or stopped polling unexpectedly.
	 * @return the state
	 */
	public State getState() {
		if (!this.running) {
			return State.STOPPED;
		}
		if (this.poller.hasFailed()) {
			return State.FAILED;
		}
		return this.polled ? State.RUNNING : State.STARTING;
	}

	/**
	 * The failure of the last poll, cleared by the next poll that succeeds.
	 * @return the failure, or {@code null} if the last poll succeeded
	 */
	public @Nullable RuntimeException getLastPollError() {
		return this.lastPollError;
	}

	/**
	 * Looks for due messages now instead of at the next poll, or, if the last poll
	 * started less than {@code min-round-interval} ago, once that has passed. Calls that
	 * arrive while a wake-up is pending are coalesced.
	 */
	public void wakeUp() {
		this.claimWanted.set(true);
		schedulePoll(0);
	}

	/**
	 * Lets the runs this relay is sending, or has not yet had written, for the given
	 * ordering keys take the messages that arrived behind them in a transaction that
	 * committed on this instance, read as stored: each is sent once the one before it is
	 * delivered, without waiting for a round to write the head's outcome, release its key
	 * and claim the next. A run takes them only while it holds exactly the messages that
	 * are behind its head, all delivered so far, and up to {@code run-size} in all.
	 * @param keys the keys that got messages
	 */
	public void arrived(Collection<String> keys) {
		if (!this.running || this.settings.runSize() <= 1) {
			return;
		}
		boolean wanted = false;
		for (String key : keys) {
			if (this.runsByKey.containsKey(key)) {
				this.growing.add(key);
				wanted = true;
			}
		}
		if (wanted && this.growPending.compareAndSet(false, true)
				&& !this.chainer.schedule(GROW_LINGER, this::growRuns)) {
			this.growPending.set(false);
		}
	}

	/**
	 * Reads what arrived behind the runs noted by {@link #arrived} and adds it to them;
	 * one that had ended goes on in a new segment if a slot is free.
	 */
	private void growRuns() {
		this.growPending.set(false);
		List<Run> runs = new ArrayList<>();
		for (Iterator<String> keys = this.growing.iterator(); keys.hasNext();) {
			Run run = this.runsByKey.get(keys.next());
			keys.remove();
			if (run != null && run.mayGrow(this.settings.runSize())) {
				runs.add(run);
			}
		}
		if (runs.isEmpty() || !this.running) {
			return;
		}
		List<Claim> behind;
		try {
			behind = this.store.runsBehind(runs.stream().map(Run::first).toList(), this.settings.runSize());
		}
		catch (RuntimeException ex) {
			// The messages wait for a round, as without this.
			logger.debug("Could not read the messages behind the outbox runs in flight", ex);
			return;
		}
		Map<String, List<Claim>> byKey = new HashMap<>();
		behind.forEach((claim) -> byKey.computeIfAbsent(claim.orderingKey(), (key) -> new ArrayList<>()).add(claim));
		for (Run run : runs) {
			grow(run, byKey.getOrDefault(run.key(), List.of()));
		}
	}

	/**
	 * Whether a run of this relay holds the ordering key and may take more of its
	 * messages, so that an enqueue of one may offer it to the run with {@link #follow}.
	 * @param key the ordering key
	 * @return whether such a run is under way
	 */
	public boolean hasRun(String key) {
		return this.running && this.settings.runSize() > 1 && this.runsByKey.containsKey(key);
	}

	/**
	 * Offers a message inserted pending behind another of its ordering key, once its
	 * transaction committed, to this relay's run of that key: a run that may grow, holds
	 * {@code behind} as its last message and exactly {@code ahead} messages behind its
	 * head takes it, to send once that one is delivered, as it would take it read again
	 * from the table ({@link #arrived}). A run that holds fewer skipped one that
	 * committed after it took its last, which must go first.
	 * @param message the message, as a claim would have read it
	 * @param behind the message of its key that it was inserted right behind
	 * @param ahead how many messages of its key were behind the key's head then
	 * @return whether a run took it; if not, it waits to be read or claimed
	 */
	public boolean follow(ClaimedMessage message, UUID behind, int ahead) {
		String key = message.orderingKey();
		if (!this.running || this.settings.runSize() <= 1 || key == null) {
			return false;
		}
		Run run = this.runsByKey.get(key);
		if (run == null || !run.first().destination().equals(message.destination())) {
			return false;
		}
		DestinationFlow flow = this.flows.get(message.destination());
		int resumed;
		boolean slot;
		// As grow does, without a read to compare: the run must end with the message
		// this one was inserted behind. Only the send's start is left to the run thread,
		// so that the committing thread goes back to its application at once.
		synchronized (run) {
			if (!mayTake(run, flow) || !run.endsWith(behind, ahead, this.settings.runSize())) {
				return false;
			}
			slot = run.hasEnded() && flow.continuesRun() && this.slots.tryAcquire();
			this.held.add(message.id());
			resumed = run.append(List.of(message), slot);
			if (resumed == Run.REFUSED) {
				this.held.remove(message.id());
			}
		}
		return afterGrowth(run, flow, resumed, slot);
	}

	/**
	 * Whether a run may take more messages now. One that ended may not while its
	 * destination's limit is taken: going on, it would take a permit ahead of other keys'
	 * heads that wait for one. One still sending may while its destination is open, even
	 * with the limit taken: it sends them one after another in its one request's place,
	 * up to run-size messages as a claimed run does, so it adds nothing in flight;
	 * refused, they waited for a round although the limit had only been cut by a busy
	 * machine's latency.
	 */
	private static boolean mayTake(Run run, DestinationFlow flow) {
		return run.hasEnded() ? flow.available() > 0 : flow.continuesRun();
	}

	/**
	 * What a run that took more messages does next: goes on if it had ended, on the run
	 * thread, with the slot taken for it; else gives that slot back.
	 * @return whether the run took them
	 */
	private boolean afterGrowth(Run run, DestinationFlow flow, int resumed, boolean slot) {
		if (resumed <= Run.APPENDED) {
			if (slot) {
				this.slots.release();
			}
			return resumed == Run.APPENDED;
		}
		flow.startRun();
		startOnRunThread(() -> sendSegment(run, resumed, sendFrom(run, run.get(resumed), flow), flow));
		return true;
	}

	/**
	 * Starts a segment of a run on the run thread, or here if it stopped: then the stop
	 * has started what it found, and nothing starts it but this thread.
	 */
	private void startOnRunThread(Runnable segment) {
		this.segmentsToStart.add(segment);
		if (!this.runThread.submit(this::continueRuns)) {
			continueRuns();
		}
	}

	/**
	 * Adds what was read behind a run's head to the run, if it still ends where that read
	 * begins.
	 * @return whether the run took the messages it did not hold
	 */
	private boolean grow(Run run, List<Claim> behind) {
		DestinationFlow flow = this.flows.get(run.first().destination());
		int resumed;
		boolean slot;
		// Under the run's lock: a message that this instance enqueued may grow it while
		// the chainer does, and only the one whose extension holds may keep its ids.
		synchronized (run) {
			List<UUID> fresh = run.newIds(behind);
			if (fresh.isEmpty() || !this.running || !mayTake(run, flow)) {
				return false;
			}
			// Used only by a run that had ended: it goes on with a slot of its own.
			slot = run.hasEnded() && flow.continuesRun() && this.slots.tryAcquire();
			this.held.addAll(fresh);
			resumed = run.extend(behind, slot);
			if (resumed == Run.REFUSED) {
				fresh.forEach(this.held::remove);
			}
		}
		return afterGrowth(run, flow, resumed, slot);
	}

	/**
	 * Looks for due messages now, as {@link #wakeUp()} does, after another instance
	 * enqueued: this instance's own enqueues tell the relay the ordering keys they
	 * arrived with, another's keyed messages that found no head are looked for, at most
	 * every 100 ms.
	 */
	public void wakeUpForOtherInstance() {
		this.enqueuedElsewhere.set(true);
		wakeUp();
	}

	/**
	 * Polls after the given delay, or later if the round interval has not passed since
	 * the last poll started: a busy relay then writes, releases and claims in fewer,
	 * larger rounds, each of which costs the database about as much as a small one.
	 * Wake-ups while a poll is scheduled are coalesced, unless they want it sooner (an
	 * enqueue after an answer's delayed poll); only the scheduled poll ends the
	 * coalescing, so that one is ever due. Scheduled, not waited for, so that nothing
	 * sleeps in the poll thread and a stop drops the poll at once.
	 */
	private void schedulePoll(long atLeastNanos) {
		if (!this.running || !this.polled) {
			return;
		}
		if (this.wakePending.get() && this.wakeAt - wakeAt(atLeastNanos, System.nanoTime()) <= 0) {
			return;
		}
		synchronized (this.wakeLock) {
			// Again under the lock: a poll that started since notes its start first.
			long now = System.nanoTime();
			long at = wakeAt(atLeastNanos, now);
			if (this.wakePending.get() && this.wakeAt - at <= 0) {
				return;
			}
			long generation = ++this.wakeGeneration;
			this.wakeAt = at;
			this.wakePending.set(true);
			if (!this.poller.schedule(Duration.ofNanos(at - now), () -> wakePoll(generation))) {
				this.wakePending.set(false);
			}
		}
	}

	private long wakeAt(long atLeastNanos, long now) {
		return now
				+ Math.max(0, Math.max(atLeastNanos, this.polledAt + this.settings.minRoundInterval().toNanos() - now));
	}

	private void wakePoll(long generation) {
		synchronized (this.wakeLock) {
			if (generation != this.wakeGeneration) {
				return;
			}
			// Before the wake-ups that come during this poll may schedule the next one.
			this.polledAt = System.nanoTime();
			this.wakePending.set(false);
		}
		poll();
	}

	/**
	 * Sets whether the application context starts the relay when it starts; if not, the
	 * relay starts when {@link #start()} is called, e.g. once the application is ready.
	 * @param autoStartup whether the context starts the relay
	 */
	public void setAutoStartup(boolean autoStartup) {
		this.autoStartup = autoStartup;
	}

	@Override
	public boolean isAutoStartup() {
		return this.autoStartup;
	}

	/**
	 * Sets what the relay does the first time it starts, before it takes messages.
	 * @param warmUp the warm-up, {@link WarmUp#NONE} for none
	 */
	public void setWarmUp(WarmUp warmUp) {
		Assert.notNull(warmUp, "warmUp must not be null");
		this.warmUp = warmUp;
	}

	/**
	 * How this relay hands its requests to HTTP.
	 * @return the exchange
	 */
	public RelayExchange getExchange() {
		return this.exchange;
	}

	/**
	 * What the relay does the first time it starts, before it takes messages.
	 * @return the warm-up
	 */
	public WarmUp getWarmUp() {
		return this.warmUp;
	}

	@Override
	public synchronized void start() {
		if (this.running) {
			return;
		}
		if (!this.warmedUp) {
			this.warmedUp = true;
			warmUp();
		}
		this.sending = Disposables.composite();
		this.polled = false;
		// A poll still scheduled when the relay stopped never ran.
		this.wakePending.set(false);
		this.nowPending.set(false);
		this.handOverPending.set(false);
		this.ratePollAt = System.nanoTime();
		this.growPending.set(false);
		this.poller.start();
		this.runThread.start();
		this.chainer.start();
		this.leaseKeeper.start();
		this.running = true;
		this.poller.repeat(this.settings.startDelay(), this.settings.pollInterval(), () -> {
			this.claimWanted.set(true);
			poll();
		});
		Duration extendEvery = Duration.ofMillis(Math.max(1, this.settings.leaseTimeout().toMillis() / 3));
		this.leaseKeeper.repeat(extendEvery, extendEvery, this::extendLeases);
	}

	private void warmUp() {
		if (this.warmUp.requests() == 0) {
			return;
		}
		long started = System.nanoTime();
		try {
			RelayWarmUp.Result result = new RelayWarmUp(this.warmUp, this.idempotencyKeyHeader, this.settings,
					this.fallback, this.store, this.owner)
				.run(!this.flows.containsKey(RelayWarmUp.DESTINATION));
			logger
				.info("Outbox relay warmed up with " + result.answered() + " requests to a local server of its own in "
						+ Duration.ofNanos(System.nanoTime() - started).toMillis() + " ms, " + result.rehearsed()
						+ " of them rehearsing its rounds and " + result.enqueued()
						+ " its enqueues on temporary copies of the outbox tables");
		}
		catch (RuntimeException ex) {
			logger.info("Outbox relay warm-up ended early; the relay starts all the same", ex);
		}
	}

	@Override
	public synchronized void stop() {
		this.running = false;
		if (!this.poller.isStarted()) {
			return;
		}
		try {
			long deadline = System.nanoTime() + this.settings.shutdownTimeout().toNanos();
			// First, so that no run goes on once the slots are counted.
			this.chainer.stop(this.settings.shutdownTimeout());
			// A poll under way may finish before the deadline; then it is interrupted.
			this.poller.stop(this.settings.shutdownTimeout());
			this.runThread.stop(Duration.ZERO);
			continueRuns();
			// Let in-flight requests finish: every slot back means nothing is in flight.
			int concurrency = this.settings.concurrency();
			if (this.slots.tryAcquire(concurrency, deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) {
				this.slots.release(concurrency);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		finally {
			int unanswered = this.sending.size();
			this.sending.dispose();
			if (unanswered > 0) {
				logger.info(unanswered + " outbox requests were unanswered at the shutdown timeout; their messages, "
						+ "and those after them of their ordering keys, are given back and will be sent again");
			}
			this.leaseKeeper.stop(Duration.ZERO);
			try {
				writeCompleted();
			}
			catch (RuntimeException ex) {
				logger.warn("Could not record the outcomes of the last outbox messages at shutdown; they will be "
						+ "sent again with the same idempotency key", ex);
			}
			releaseLeases();
			// Released above if their transaction had committed; else their lease
			// expires.
			for (ClaimedMessage message = this.handedOver.poll(); message != null; message = this.handedOver.poll()) {
				unpromise(message.destination());
			}
		}
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	/**
	 * Relays on the calling thread until nothing is due and nothing is in flight, for a
	 * test that moves the {@link io.retryoutbox.OutboxClock} itself: each round writes
	 * the outcomes that arrived, releases finished keys, claims what is due and sends it,
	 * as a poll does, then waits for the answers. The relay must not be running, so that
	 * no background poll competes with the rounds. A paused destination sends nothing, as
	 * in a poll; a destination's rate is waited for.
	 * @param timeout how long it may take in all
	 * @return the number of messages claimed
	 * @throws IllegalStateException if the relay is running, or it did not settle within
	 * the timeout
	 */
	public synchronized int drain(Duration timeout) {
		Assert.state(!this.running, "The outbox relay is running in the background; set "
				+ "retry-outbox.relay.auto-startup=false (or stop it) before draining it");
		long deadline = System.nanoTime() + timeout.toNanos();
		if (this.sending.isDisposed()) {
			this.sending = Disposables.composite();
		}
		this.draining = true;
		try {
			return drainUntilIdle(deadline, timeout);
		}
		finally {
			this.draining = false;
		}
	}

	private int drainUntilIdle(long deadline, Duration timeout) {
		int claimed = 0;
		// Keys whose arrivals no admission here has seen, e.g. another instance's.
		this.store.releaseKeys();
		while (true) {
			if (System.nanoTime() - deadline >= 0) {
				throw new IllegalStateException("The outbox relay did not settle within " + timeout
						+ ": messages were still due after " + claimed + " claims");
			}
			this.pauses.sync(this.flows, this.settings.pollInterval());
			Map<String, Integer> limits = claimLimits();
			Finished finished = drainCompleted();
			OutboxStore.Round round;
			try {
				try {
					round = this.store.round(this.owner, finished.outcomes(), finished.unsent(), true, limits,
							this.settings.runSize(), false, this.settings.leaseTimeout());
				}
				catch (RuntimeException ex) {
					this.completed.add(finished);
					throw ex;
				}
				written(finished, round.written());
				send(round.claimed(), limits);
			}
			finally {
				this.claiming = null;
			}
			claimed += round.claimed().size();
			awaitAnswers(deadline, timeout);
			boolean idle = finished.isEmpty() && round.claimed().isEmpty() && round.keysReleased() == 0
					&& this.completed.isEmpty() && this.answered.isEmpty();
			if (idle && !awaitRate(deadline)) {
				return claimed;
			}
		}
	}

	private void awaitAnswers(long deadline, Duration timeout) {
		int concurrency = this.settings.concurrency();
		try {
			boolean answered = this.slots.tryAcquire(concurrency, deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
			Assert.state(answered, () -> "The outbox relay did not settle within " + timeout + ": "
					+ (concurrency - this.slots.availablePermits()) + " requests still in flight");
			this.slots.release(concurrency);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while draining the outbox relay", ex);
		}
	}

	/**
	 * Waits until an open destination that its rate holds back may send again, since it
	 * may have due messages, within the deadline; the rate is timed in real time, so this
	 * wait is real too.
	 * @return whether it waited
	 */
	private boolean awaitRate(long deadline) {
		long wait = 0;
		for (DestinationFlow flow : this.flows.values()) {
			if (flow.state() == DestinationState.OPEN && flow.available() == 0) {
				wait = Math.max(wait, flow.untilRatePermits().toNanos());
			}
		}
		if (wait == 0) {
			return false;
		}
		try {
			TimeUnit.NANOSECONDS.sleep(Math.min(wait, Math.max(0, deadline - System.nanoTime())));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while draining the outbox relay", ex);
		}
		return true;
	}

	/**
	 * Gives back the messages still unanswered. One whose outcome is known but could not
	 * be written keeps its lease: given back, it would go out again at once, before a
	 * {@code Retry-After} it was told or although it was refused for good; after its
	 * lease it goes out again with the same idempotency key.
	 */
	private void releaseLeases() {
		Set<UUID> unwritten = new HashSet<>();
		this.completed.forEach((finished) -> finished.outcomes().forEach((outcome) -> unwritten.add(outcome.id())));
		List<UUID> unanswered = this.held.stream().filter((id) -> !unwritten.contains(id)).toList();
		if (!unwritten.isEmpty()) {
			logger.warn(unwritten.size() + " outbox messages keep their lease at shutdown: their outcome could not be "
					+ "recorded; they are sent again, with the same idempotency key, once it expires");
		}
		try {
			int released = unanswered.isEmpty() ? 0 : this.store.release(this.owner, unanswered);
			if (released > 0) {
				logger.info("Released " + released + " in-flight outbox messages at shutdown; they will be sent again");
			}
			this.held.clear();
		}
		catch (RuntimeException ex) {
			logger.warn("Could not release in-flight outbox messages at shutdown; they become due again when their "
					+ "lease expires", ex);
		}
	}

	private void extendLeases() {
		if (this.held.isEmpty()) {
			return;
		}
		try {
			this.store.extendLeases(this.owner, List.copyOf(this.held), this.settings.leaseTimeout());
		}
		catch (RuntimeException ex) {
			logger.warn("Could not extend the leases of in-flight outbox messages", ex);
		}
	}

	private void poll(AtomicBoolean scheduled) {
		this.polledAt = System.nanoTime();
		scheduled.set(false);
		poll();
	}

	private void poll() {
		this.polled = true;
		this.polledAt = System.nanoTime();
		try {
			// Before the outcomes are taken: if this fails, they stay queued. Also once
			// per poll interval: keys an enqueue held at the last pass, or whose release
			// a crashed relay left behind.
			boolean recovered = periodicRecovery();
			this.pauses.sync(this.flows, this.settings.pollInterval());
			sendHandedOver();
			Finished finished = drainCompleted(this.running);
			// Only when something may be due, else only if a released key got a new
			// head: a poll that writes outcomes or sends what direct dispatch handed
			// over would claim nothing.
			boolean claim = this.running
					&& (this.claimWanted.getAndSet(false) || recovered || !this.backlogged.isEmpty());
			// A claim is wanted after an enqueue, whose keyed message waits to be
			// admitted.
			boolean releaseKeys = recovered || claim || finished.outcomes().stream().anyMatch(Outcome::releasesKey);
			boolean mayClaim = claim || (this.running && releaseKeys);
			Map<String, Integer> limits = mayClaim ? claimLimits() : Map.of();
			if (mayClaim && limits.isEmpty()) {
				// No slot or permit free now: the poll a completion brings claims.
				this.claimWanted.set(true);
			}
			OutboxStore.Round round;
			Set<String> full;
			try {
				try {
					round = this.store.round(this.owner, finished.outcomes(), finished.unsent(), releaseKeys, limits,
							this.settings.runSize(), !claim, this.settings.leaseTimeout());
				}
				catch (RuntimeException ex) {
					this.completed.add(finished);
					this.claimWanted.compareAndSet(false, claim);
					throw ex;
				}
				written(finished, round.written());
				full = send(round.claimed(), limits);
			}
			finally {
				this.claiming = null;
			}
			if (this.lastPollError != null) {
				logger.info("Outbox relay polls again after a failure");
				this.lastPollError = null;
			}
			pollAgain(limits, full);
			pollWhenLingerEnds();
		}
		catch (RuntimeException ex) {
			// Spring's transaction manager wraps even an Error from getConnection:
			// that is no outage to poll through, and the relay must show it stopped.
			Error fatal = fatalCause(ex);
			if (fatal != null) {
				throw fatal;
			}
			// Once per outage, not once per poll interval while the database is away.
			if (this.lastPollError == null) {
				logger.warn("Outbox relay poll failed; retrying every " + this.settings.pollInterval()
						+ " until it succeeds", ex);
			}
			else {
				logger.debug("Outbox relay poll failed again", ex);
			}
			this.lastPollError = ex;
		}
	}

	private static @Nullable Error fatalCause(Throwable ex) {
		for (Throwable cause = ex.getCause(); cause != null && cause != ex; cause = cause.getCause()) {
			if (cause instanceof Error error) {
				return error;
			}
		}
		return null;
	}

	private Finished drainCompleted() {
		return drainCompleted(false);
	}

	/**
	 * Takes the outcomes to write: those of runs that ended, but for the runs that may
	 * still linger, if {@code linger}.
	 */
	private Finished drainCompleted(boolean linger) {
		List<Outcome> outcomes = new ArrayList<>();
		List<UUID> unsent = new ArrayList<>();
		for (Finished finished = this.completed.poll(); finished != null; finished = this.completed.poll()) {
			outcomes.addAll(finished.outcomes());
			unsent.addAll(finished.unsent());
		}
		List<Run> ended = new ArrayList<>(this.lingering);
		this.lingering.clear();
		for (Run run = this.answered.poll(); run != null; run = this.answered.poll()) {
			ended.add(run);
		}
		long now = System.nanoTime();
		long lingerNanos = linger ? this.settings.runLinger().toNanos() : 0;
		long firstLeft = Long.MAX_VALUE;
		for (Run run : ended) {
			long left = run.lingersFor(now, lingerNanos, this.settings.runSize());
			if (left > 0) {
				this.lingering.add(run);
				firstLeft = Math.min(firstLeft, left);
				continue;
			}
			// None if it went on after it ended, or was taken already.
			Finished finished = run.take();
			if (finished != null) {
				forget(run);
				outcomes.addAll(finished.outcomes());
				unsent.addAll(finished.unsent());
			}
		}
		if (firstLeft != Long.MAX_VALUE) {
			this.lingerEnds = now + firstLeft;
		}
		return new Finished(outcomes, unsent);
	}

	/**
	 * Polls when the first run that lingers may be taken, so that its outcomes are
	 * written then even if nothing else wakes the relay; at once (within the round
	 * interval) if its linger ended while this poll's round ran.
	 */
	private void pollWhenLingerEnds() {
		if (!this.lingering.isEmpty()) {
			schedulePoll(Math.max(0, this.lingerEnds - System.nanoTime()));
		}
	}

	/**
	 * Writes the outcomes that arrived since the last call, on their own, e.g. at
	 * shutdown.
	 */
	private void writeCompleted() {
		Finished finished = drainCompleted();
		if (finished.isEmpty()) {
			return;
		}
		try {
			written(finished, this.store.complete(this.owner, finished.outcomes(), finished.unsent()));
		}
		catch (RuntimeException ex) {
			this.completed.add(finished);
			throw ex;
		}
	}

	private void written(Finished finished, int written) {
		finished.outcomes().forEach((outcome) -> this.held.remove(outcome.id()));
		finished.unsent().forEach(this.held::remove);
		if (written < finished.outcomes().size()) {
			logger.warn((finished.outcomes().size() - written) + " outbox messages were taken over by another relay "
					+ "after their lease expired; their outcome here was not recorded");
		}
	}

	/**
	 * Makes messages whose lease expired claimable again, and finds keys whose arrivals
	 * no admission here has seen, once per poll interval, or sooner after another
	 * instance enqueued.
	 * @return whether it ran
	 */
	private boolean periodicRecovery() {
		long now = System.nanoTime();
		long since = now - this.lastRecovery;
		if (since < this.settings.pollInterval().toNanos()) {
			if (!this.enqueuedElsewhere.get()) {
				return false;
			}
			long wait = ELSEWHERE_SCAN_INTERVAL.toNanos() - since;
			if (wait > 0) {
				wakeUpAfter(Duration.ofNanos(wait));
				return false;
			}
		}
		this.enqueuedElsewhere.set(false);
		this.lastRecovery = now;
		int recovered = this.store.recoverExpiredLeases();
		if (recovered > 0) {
			logger.info("Recovered " + recovered + " outbox messages whose lease expired");
		}
		return true;
	}

	/**
	 * How many messages to claim for each destination: what its flow lets it send now,
	 * within the relay's free slots and the batch size, so that no lease runs out on a
	 * message that waits for a permit and a slow destination never takes a fast one's
	 * slots.
	 */
	private Map<String, Integer> claimLimits() {
		this.claiming = Claiming.UNKNOWN;
		int free = Math.min(Math.max(0, this.slots.availablePermits() - this.promised.get()),
				this.settings.batchSize());
		Map<String, Integer> limits = new LinkedHashMap<>();
		for (Map.Entry<String, DestinationFlow> flow : this.flows.entrySet()) {
			int limit = Math.min(free,
					Math.max(0, flow.getValue().available() - this.promisedTo.get(flow.getKey()).get()));
			if (limit > 0) {
				limits.put(flow.getKey(), limit);
				free -= limit;
			}
			else if (flow.getValue().state() != DestinationState.PAUSED) {
				// It may have due messages that wait for a slot or permit: claim for it
				// at the next poll, which its next completion brings.
				this.backlogged.add(flow.getKey());
			}
		}
		this.claiming = new Claiming(limits, limits.values().stream().mapToInt(Integer::intValue).sum());
		return limits;
	}

	/**
	 * Polls again at once if a destination's claim was a whole batch; after the round
	 * interval if a claim was full otherwise and the destination may send more now, or
	 * outcomes are waiting; else, if a destination with more due messages waits for its
	 * rate, when its next request may start. Otherwise the poll interval, a completion or
	 * an enqueue brings the next poll.
	 */
	private void pollAgain(Map<String, Integer> limits, Set<String> full) {
		for (String destination : limits.keySet()) {
			if (full.contains(destination)) {
				this.backlogged.add(destination);
			}
			else {
				this.backlogged.remove(destination);
			}
		}
		for (String destination : this.flows.keySet()) {
			Integer limit = limits.get(destination);
			if (this.backlogged.contains(destination) && (limit == null || limit < this.settings.batchSize())) {
				this.cutShort.add(destination);
			}
			else {
				this.cutShort.remove(destination);
			}
		}
		boolean moreWork = false;
		// A round that claimed a whole batch for a destination, e.g. in a backlog, is as
		// large as rounds get: the next one need not wait for the round interval. Nor
		// need the claim of a destination whose claim was cut short and whose answers
		// came before this round ended: no completion is left to bring it.
		boolean claimAtOnce = this.cutShort.stream().anyMatch(this::freedEnough);
		long rateWait = Long.MAX_VALUE;
		for (String destination : this.backlogged) {
			long wait = this.flows.get(destination).untilRatePermits().toNanos();
			if (wait == 0) {
				// Also one this poll could not claim for that may send now: its permit or
				// token came after the claim limits were taken, and no completion may
				// follow to bring the next poll.
				moreWork |= full.contains(destination)
						|| (!limits.containsKey(destination) && this.flows.get(destination).available() > 0);
				claimAtOnce |= full.contains(destination) && limits.get(destination) >= this.settings.batchSize();
			}
			else {
				rateWait = Math.min(rateWait, wait);
			}
		}
		if (claimAtOnce) {
			this.claimWanted.set(true);
			pollNow();
		}
		else if (moreWork) {
			wakeUp();
		}
		else if (!this.completed.isEmpty() || !this.answered.isEmpty()) {
			wakeUpSoon();
		}
		else if (rateWait != Long.MAX_VALUE) {
			wakeUpAfter(Duration.ofNanos(rateWait));
		}
	}

	/**
	 * Wakes the relay after a delay, unless a wake-up is already due by then.
	 */
	private void wakeUpAfter(Duration delay) {
		long now = System.nanoTime();
		long at = now + delay.toNanos();
		long scheduled = this.ratePollAt;
		if (scheduled - now > 0 && scheduled - at <= 0) {
			return;
		}
		if (this.poller.schedule(delay, this::wakeUp)) {
			this.ratePollAt = at;
		}
	}

	/**
	 * Starts sending what was claimed, each run on one slot; a head that cannot be read
	 * or sent is finished as dead at once, on its own, and the rest of its run given
	 * back.
	 * @return the destinations whose claim was full, so that more of their messages may
	 * be due
	 */
	private Set<String> send(List<Claim> batch, Map<String, Integer> limits) {
		Map<String, Integer> claimed = new HashMap<>();
		for (List<Claim> run : runs(batch)) {
			Claim head = run.get(0);
			claimed.merge(head.destination(), 1, Integer::sum);
			run.forEach((claim) -> this.held.add(claim.id()));
			String problem = problem(head);
			if (problem != null) {
				this.completed.add(new Finished(List.of(this.recorder.invalid(head, problem)), unsent(run, 1)));
				continue;
			}
			this.slots.acquireUninterruptibly();
			start(new Run(run), this.flows.get(head.destination()));
		}
		Set<String> full = new HashSet<>();
		limits.forEach((destination, limit) -> {
			if (claimed.getOrDefault(destination, 0) >= limit) {
				full.add(destination);
			}
		});
		return full;
	}

	/**
	 * Starts sending the messages handed over by direct dispatch whose destination has a
	 * permit now; the others wait for a later poll, their leases kept.
	 */
	private void sendHandedOver() {
		List<ClaimedMessage> waiting = new ArrayList<>();
		for (ClaimedMessage message = this.handedOver.poll(); message != null; message = this.handedOver.poll()) {
			DestinationFlow flow = this.flows.get(message.destination());
			if (flow.available() > 0 && this.slots.tryAcquire()) {
				unpromise(message.destination());
				start(new Run(List.of(message)), flow);
			}
			else {
				waiting.add(message);
			}
		}
		this.handedOver.addAll(waiting);
	}

	/**
	 * The claimed rows as runs, in the order claimed: each head (a message without a key
	 * is a run of one), then the rest of its key's run, which the store returns after all
	 * heads.
	 */
	private static Collection<List<Claim>> runs(List<Claim> batch) {
		Map<Object, List<Claim>> runs = new LinkedHashMap<>();
		for (Claim claim : batch) {
			Object run = (claim.orderingKey() != null) ? claim.orderingKey() : claim.id();
			runs.computeIfAbsent(run, (key) -> new ArrayList<>(1)).add(claim);
		}
		return runs.values();
	}

	private static List<UUID> unsent(List<? extends Claim> run, int sent) {
		return run.subList(sent, run.size()).stream().map(Claim::id).toList();
	}

	private void begin(Run run, DestinationFlow flow) {
		String key = run.key();
		if (key != null) {
			this.runsByKey.put(key, run);
		}
		flow.startRun();
	}

	private void start(Run run, DestinationFlow flow) {
		begin(run, flow);
		sendSegment(run, 0, sendFrom(run, run.first(), flow), flow);
	}

	/**
	 * Sends a run from one of its messages on, until it ends. Completed here, once,
	 * whether it ended or a stop past its shutdown timeout cancelled it: what the run was
	 * told is written all the same, and only the rest is given back, so that a message
	 * delivered before the one still unanswered is not sent again.
	 */
	private void sendSegment(Run run, int from, Mono<Void> sending, DestinationFlow flow) {
		track(sending.doFinally((signal) -> {
			flow.endRun();
			if (signal != SignalType.ON_ERROR) {
				completed(run, from);
			}
		}), (ex) -> failed(run, ex));
	}

	/**
	 * Sends a run's message and, once it is delivered, the next, while the destination
	 * takes more and the next can be sent: the key's order needs nothing but the answer
	 * before it, so no round separates them. Anything else ends the run; its unsent rest
	 * is given back with its outcomes.
	 */
	private Mono<Void> sendFrom(Run run, ClaimedMessage message, DestinationFlow flow) {
		Limiter.Listener permit = flow.acquire();
		return this.observer.observe(message, attempt(message, flow, permit))
			.doOnError((ex) -> permit.onIgnore())
			.doOnCancel(permit::onIgnore)
			.flatMap((outcome) -> {
				if (!run.add(outcome)) {
					return Mono.empty();
				}
				boolean goesOn = outcome.status() == MessageStatus.DELIVERED && (this.running || this.draining)
						&& flow.continuesRun();
				ClaimedMessage next = run.next(goesOn);
				return (next != null) ? onRunThread().then(Mono.defer(() -> sendFrom(run, next, flow))) : Mono.empty();
			});
	}

	/**
	 * Completes on the relay's run thread, or at once if it no longer takes tasks. Not on
	 * the event loop that got the answer before it: that cost the loops about twice their
	 * CPU in the shared bench (4.8-6.1 core-seconds a run against 2.5-3.2), for no less
	 * latency. Not on the poll thread either, where it waited for the round under way: at
	 * 20 ms the rounds kept that thread busy nearly all the time (docs/benchmarks.md,
	 * twenty-sixth session), and a round that waited for the database held up every run.
	 */
	private Mono<Void> onRunThread() {
		return Mono.create((sink) -> {
			this.runsToContinue.add(sink);
			if (!this.runThread.submit(this::continueRuns)) {
				continueRuns();
			}
		});
	}

	/**
	 * Lets the runs waiting for the run thread go on; also at stop, on the stopping
	 * thread, for those whose task the stopped run thread dropped, so that no run waits
	 * for ever and its outcomes are written.
	 */
	private void continueRuns() {
		for (MonoSink<Void> run = this.runsToContinue.poll(); run != null; run = this.runsToContinue.poll()) {
			run.success();
		}
		for (Runnable segment = this.segmentsToStart.poll(); segment != null; segment = this.segmentsToStart.poll()) {
			segment.run();
		}
	}

	/**
	 * Subscribes to one run, held in {@link #sending} only while it runs, so that
	 * stopping can cancel it and nothing is kept once it is over (every attempt was kept
	 * until the relay stopped: 550 bytes a message, out of a 256 MB heap after about
	 * 450,000).
	 */
	private void track(Mono<Void> run, Consumer<Throwable> onError) {
		Disposable.Composite sending = this.sending;
		AtomicReference<@Nullable Disposable> self = new AtomicReference<>();
		Disposable subscription = run.doFinally((signal) -> {
			Disposable done = self.get();
			if (done != null) {
				sending.remove(done);
			}
		}).subscribe(null, onError);
		self.set(subscription);
		sending.add(subscription);
		if (subscription.isDisposed()) {
			sending.remove(subscription);
		}
	}

	/**
	 * The runs in flight that stopping would cancel.
	 * @return how many
	 */
	int trackedAttempts() {
		return this.sending.size();
	}

	private static @Nullable String problem(Claim claim) {
		if (claim instanceof UnreadableMessage unreadable) {
			return unreadable.problem();
		}
		ClaimedMessage message = (ClaimedMessage) claim;
		try {
			HttpRequestRules.check(message.method(), message.path(), message.headers());
			return null;
		}
		catch (IllegalArgumentException ex) {
			return ex.getMessage();
		}
	}

	private Mono<Outcome> attempt(ClaimedMessage message, DestinationFlow flow, Limiter.Listener permit) {
		return Mono.defer(() -> {
			Instant startedAt = Instant.now();
			long start = System.nanoTime();
			RoundTrip roundTrip = new RoundTrip();
			return this.dispatcher.send(message).contextWrite(RoundTrip.into(roundTrip)).map((outcome) -> {
				flow.release(permit, outcome, roundTrip.nanos());
				Duration pausedFor = this.pauses.pausedFor(message.destination(), message.createdAt(), flow);
				return this.recorder.record(message, outcome, pausedFor, startedAt, start);
			});
		});
	}

	private void completed(Run run, int from) {
		run.end(from);
		this.answered.add(run);
		this.slots.release();
		String destination = run.first().destination();
		if (this.cutShort.contains(destination) && freedEnough(destination)) {
			this.claimWanted.set(true);
			pollNow();
		}
		else {
			wakeUpSoon();
		}
	}

	/**
	 * Whether a destination whose claim was cut short may now send at least half of what
	 * its limit allows, within a batch: a claim that large is worth a round of its own,
	 * without waiting for the round interval, so that a backlog the limit holds back
	 * drains as fast as its answers come.
	 */
	private boolean freedEnough(String destination) {
		DestinationFlow flow = this.flows.get(destination);
		int free = Math.min(flow.available() - this.promisedTo.get(destination).get(),
				this.slots.availablePermits() - this.promised.get());
		return free >= Math.max(1, Math.min(flow.limit(), this.settings.batchSize()) / 2);
	}

	/**
	 * Polls after {@link #LINGER} at the earliest, so that answers arriving close
	 * together are written in one round.
	 */
	private void wakeUpSoon() {
		schedulePoll(LINGER.toNanos());
	}

	private void failed(Run run, Throwable ex) {
		// The dispatcher never errors; if something else did, the lease brings the
		// messages back.
		List<Claim> messages = run.close();
		forget(run);
		logger.error("Unexpected failure while sending outbox message " + messages.get(0).id()
				+ ((messages.size() > 1) ? " and the " + (messages.size() - 1) + " after it of its ordering key" : ""),
				ex);
		messages.forEach((claim) -> this.held.remove(claim.id()));
		this.slots.release();
	}

	private void forget(Run run) {
		String key = run.key();
		if (key != null) {
			this.runsByKey.remove(key, run);
		}
	}

	/**
	 * What a claim under way may take: at most {@code limits} messages of each
	 * destination, {@code total} in all, each with a slot and a permit.
	 */
	private record Claiming(Map<String, Integer> limits, int total) {

		// While its limits are worked out: any free slot or permit.
		static final Claiming UNKNOWN = new Claiming(Map.of(), Integer.MAX_VALUE);

		static int permits(@Nullable Claiming claiming, String destination) {
			if (claiming == null) {
				return 0;
			}
			return (claiming == UNKNOWN) ? Integer.MAX_VALUE : claiming.limits().getOrDefault(destination, 0);
		}

		static int slots(@Nullable Claiming claiming) {
			return (claiming != null) ? claiming.total() : 0;
		}

	}

	/**
	 * A run's messages, sent one after another, each once the one before was delivered,
	 * and their outcomes as they arrive. A keyed run takes more messages of its key that
	 * this instance enqueues ({@link OutboxRelay#arrived}) while it goes on, or after it
	 * ended with all delivered, until a round takes its outcomes; then it goes on in a
	 * new segment.
	 */
	private static final class Run {

		static final int REFUSED = -1;

		static final int APPENDED = 0;

		// Final, so that it is read without the lock while the list grows.
		private final ClaimedMessage head;

		private final List<Claim> messages;

		private final List<Outcome> outcomes;

		private State state = State.SENDING;

		// Whether it ended because all its messages were delivered, so that it may go on.
		private boolean resumable;

		// Where the segment being sent started: an older segment's end is no end of a run
		// that went on.
		private int segment;

		private long endedAt;

		Run(List<? extends Claim> messages) {
			this.head = (ClaimedMessage) messages.get(0);
			this.messages = new ArrayList<>(messages);
			this.outcomes = new ArrayList<>(messages.size());
		}

		@Nullable String key() {
			return this.head.orderingKey();
		}

		ClaimedMessage first() {
			return this.head;
		}

		/**
		 * Adds an outcome, unless the run ended: one that arrives after a stop cancelled
		 * the run is left out, and its message given back as unanswered.
		 */
		synchronized boolean add(Outcome outcome) {
			if (this.state != State.SENDING) {
				return false;
			}
			this.outcomes.add(outcome);
			return true;
		}

		/**
		 * The message to send after the one just answered, or {@code null} if the run
		 * ends here.
		 * @param goesOn whether the answer and the destination let the run go on
		 */
		synchronized @Nullable ClaimedMessage next(boolean goesOn) {
			int next = this.outcomes.size();
			if (goesOn && next < this.messages.size() && problem(this.messages.get(next)) == null) {
				return (ClaimedMessage) this.messages.get(next);
			}
			this.state = State.ENDED;
			this.resumable = goesOn && next == this.messages.size();
			this.endedAt = System.nanoTime();
			return null;
		}

		/**
		 * Ends the segment that started at {@code from}, if it is still the one sent and
		 * did not end by itself: cancelled, it may not go on.
		 */
		synchronized void end(int from) {
			if (from == this.segment && this.state == State.SENDING) {
				this.state = State.ENDED;
				this.resumable = false;
			}
		}

		synchronized ClaimedMessage get(int index) {
			return (ClaimedMessage) this.messages.get(index);
		}

		/**
		 * How much longer it may wait for more messages of its key before a round takes
		 * it: some of {@code linger} if it is keyed, ended with all its messages
		 * delivered and has room for more, else none.
		 * @return the time left in nanoseconds, zero if none
		 */
		synchronized long lingersFor(long now, long linger, int runSize) {
			if (this.state != State.ENDED || !this.resumable || this.messages.size() >= runSize
					|| this.head.orderingKey() == null) {
				return 0;
			}
			return Math.max(0, linger - (now - this.endedAt));
		}

		synchronized boolean hasEnded() {
			return this.state == State.ENDED;
		}

		/**
		 * Whether it may take more messages: it has room, and it sends or ended with all
		 * its messages delivered.
		 */
		synchronized boolean mayGrow(int runSize) {
			return this.messages.size() < runSize
					&& (this.state == State.SENDING || (this.state == State.ENDED && this.resumable));
		}

		/**
		 * Whether it may grow, holds {@code ahead} messages behind its head and its last
		 * is {@code behind}.
		 */
		synchronized boolean endsWith(UUID behind, int ahead, int runSize) {
			return mayGrow(runSize) && this.messages.size() - 1 == ahead
					&& this.messages.get(this.messages.size() - 1).id().equals(behind);
		}

		/**
		 * The ids of the messages read behind its head that it does not hold yet.
		 */
		synchronized List<UUID> newIds(List<Claim> behind) {
			Set<UUID> held = new HashSet<>();
			this.messages.forEach((message) -> held.add(message.id()));
			return behind.stream().map(Claim::id).filter((id) -> !held.contains(id)).toList();
		}

		/**
		 * Adds the messages read behind its head that come after its own, if what it
		 * holds behind its head is exactly where that read begins, so that none is
		 * skipped or sent out of order.
		 * @param behind the messages behind its head, as read again, in order
		 * @param mayResume whether a run that ended may go on (it has a slot)
		 * @return {@link #REFUSED}, {@link #APPENDED} to a run still sending, or the
		 * index to send from in a new segment of a run that had ended
		 */
		synchronized int extend(List<Claim> behind, boolean mayResume) {
			int held = this.messages.size() - 1;
			if (behind.size() <= held) {
				return REFUSED;
			}
			for (int i = 0; i < held; i++) {
				if (!behind.get(i).id().equals(this.messages.get(i + 1).id())) {
					return REFUSED;
				}
			}
			return append(behind.subList(held, behind.size()), mayResume);
		}

		/**
		 * Adds messages that come right after its last, if it sends or may go on.
		 * @param more the messages, in order
		 * @param mayResume whether a run that ended may go on (it has a slot)
		 * @return {@link #REFUSED}, {@link #APPENDED} to a run still sending, or the
		 * index to send from in a new segment of a run that had ended
		 */
		synchronized int append(List<? extends Claim> more, boolean mayResume) {
			boolean open = this.state == State.SENDING
					|| (this.state == State.ENDED && this.resumable && mayResume && problem(more.get(0)) == null);
			if (!open) {
				return REFUSED;
			}
			int from = this.messages.size();
			this.messages.addAll(more);
			if (this.state == State.SENDING) {
				return APPENDED;
			}
			this.state = State.SENDING;
			this.resumable = false;
			this.segment = from;
			return from;
		}

		/**
		 * Takes the outcomes to write, once the run ended and only once.
		 * @return them and the messages to give back, or {@code null} if the run goes on
		 * or was taken
		 */
		synchronized @Nullable Finished take() {
			if (this.state != State.ENDED) {
				return null;
			}
			this.state = State.TAKEN;
			return new Finished(List.copyOf(this.outcomes), unsent(this.messages, this.outcomes.size()));
		}

		/**
		 * Ends the run for good, with nothing to write.
		 * @return its messages
		 */
		synchronized List<Claim> close() {
			this.state = State.TAKEN;
			return List.copyOf(this.messages);
		}

		private enum State {

			SENDING, ENDED, TAKEN

		}

	}

	/**
	 * Outcomes to write and claimed messages to give back unsent, together.
	 */
	private record Finished(List<Outcome> outcomes, List<UUID> unsent) {

		boolean isEmpty() {
			return this.outcomes.isEmpty() && this.unsent.isEmpty();
		}

	}

	/**
	 * What the relay is doing.
	 */
	public enum State {

		/** Started, waiting for its start delay to pass before it first polls. */
		STARTING,

		/** Polling for due messages. */
		RUNNING,

		/** Not started, or stopped with the application. */
		STOPPED,

		/** Stopped polling although nobody stopped it. */
		FAILED

	}

	/**
	 * What the relay does the first time it starts, before it takes messages: it sends
	 * {@code requests} requests through its HTTP connector to a server of its own on the
	 * loopback interface and writes their outcomes as for messages that do not exist, so
	 * that its first messages are not sent by cold code. Nothing of it reaches a
	 * destination or a message row; only the default retry policy sees the outcomes.
	 *
	 * @param exchange sends the requests: the relay's connector, without the
	 * application's filters and observation, so that they see none of them
	 * @param requests how many requests, {@code 0} for no warm-up
	 * @param timeout the longest the warm-up sends for
	 */
	public record WarmUp(@Nullable RelayExchange exchange, int requests, Duration timeout) {

		/**
		 * No warm-up.
		 */
		public static final WarmUp NONE = new WarmUp(null, 0, Duration.ZERO);

		public WarmUp {
			Assert.isTrue(requests >= 0, () -> "warm-up.requests must not be negative, was " + requests);
			Assert.isTrue(requests == 0 || (!timeout.isNegative() && !timeout.isZero()),
					() -> "warm-up.timeout must be positive, was " + timeout);
			Assert.isTrue(requests == 0 || exchange != null, "A warm-up with requests needs an exchange");
		}

	}

	/**
	 * How the relay claims and paces its work.
	 *
	 * @param pollInterval how often to look for due messages when nothing woke the relay
	 * @param batchSize the largest number of messages claimed at once
	 * @param concurrency the largest number of requests in flight at once
	 * @param leaseTimeout how long a claim holds before another relay may take it over
	 * @param shutdownTimeout how long stopping waits for in-flight requests
	 * @param startDelay how long after start the relay first looks for due messages
	 * @param errorBodyLimit the largest part of an error response's body read to classify
	 * it, in bytes
	 * @param runSize the largest number of messages of one ordering key claimed together
	 * and sent one after another, each once the one before was delivered
	 * @param minRoundInterval the least time from the start of one poll to the start of
	 * the next that a wake-up brings (an enqueue, an answer), so that a busy relay claims
	 * and writes outcomes in batches; zero polls as soon as something wakes the relay
	 * @param runLinger how long a run of an ordering key that delivered all its messages
	 * keeps the key before a round writes its outcomes, so that a message this instance
	 * enqueues for the key in that time goes on the same run; zero lets the next round
	 * take it
	 */
	public record Settings(Duration pollInterval, int batchSize, int concurrency, Duration leaseTimeout,
			Duration shutdownTimeout, Duration startDelay, int errorBodyLimit, int runSize, Duration minRoundInterval,
			Duration runLinger) {

		/**
		 * Settings that read at most 4 KB of an error response's body, send each message
		 * of a key from a claim of its own, and poll as soon as something wakes the
		 * relay.
		 * @param pollInterval how often to look for due messages when nothing woke the
		 * relay
		 * @param batchSize the largest number of messages claimed at once
		 * @param concurrency the largest number of requests in flight at once
		 * @param leaseTimeout how long a claim holds before another relay may take it
		 * over
		 * @param shutdownTimeout how long stopping waits for in-flight requests
		 * @param startDelay how long after start the relay first looks for due messages
		 */
		public Settings(Duration pollInterval, int batchSize, int concurrency, Duration leaseTimeout,
				Duration shutdownTimeout, Duration startDelay) {
			this(pollInterval, batchSize, concurrency, leaseTimeout, shutdownTimeout, startDelay, 4096, 1,
					Duration.ZERO, Duration.ZERO);
		}

		public Settings {
			Assert.isTrue(!pollInterval.isNegative() && !pollInterval.isZero(),
					() -> "poll-interval must be positive, was " + pollInterval);
			Assert.isTrue(batchSize > 0, () -> "batch-size must be positive, was " + batchSize);
			Assert.isTrue(concurrency > 0, () -> "concurrency must be positive, was " + concurrency);
			Assert.isTrue(!leaseTimeout.isNegative() && !leaseTimeout.isZero(),
					() -> "lease-timeout must be positive, was " + leaseTimeout);
			Assert.isTrue(!shutdownTimeout.isNegative(),
					() -> "shutdown-timeout must not be negative, was " + shutdownTimeout);
			Assert.isTrue(!startDelay.isNegative(), () -> "start-delay must not be negative, was " + startDelay);
			Assert.isTrue(errorBodyLimit >= 0, () -> "error-body-limit must not be negative, was " + errorBodyLimit);
			Assert.isTrue(runSize > 0, () -> "run-size must be positive, was " + runSize);
			Assert.isTrue(!minRoundInterval.isNegative(),
					() -> "min-round-interval must not be negative, was " + minRoundInterval);
			Assert.isTrue(minRoundInterval.compareTo(pollInterval) < 0, () -> "min-round-interval (" + minRoundInterval
					+ ") must be shorter than poll-interval (" + pollInterval + ")");
			Assert.isTrue(!runLinger.isNegative(), () -> "run-linger must not be negative, was " + runLinger);
		}

	}

}
