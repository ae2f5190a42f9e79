package io.retryoutbox.autoconfigure;

import java.net.URI;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.retryoutbox.relay.OnDead;
import io.retryoutbox.retry.RetrySettings;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.convert.DurationUnit;
import org.springframework.util.unit.DataSize;

/**
 * Configuration properties for retry-outbox.
 */
@ConfigurationProperties("retry-outbox")
public class RetryOutboxProperties {

	/**
	 * Whether to enable the outbox.
	 */
	private boolean enabled = true;

	/**
	 * Whether enqueueing requires an active transaction.
	 */
	private boolean requireTransaction = true;

	/**
	 * Largest request body that may be enqueued.
	 */
	private DataSize maxBodySize = DataSize.ofMegabytes(1);

	/**
	 * Name of the header that carries the message id as idempotency key on every attempt.
	 */
	private String idempotencyKeyHeader = "Idempotency-Key";

	/**
	 * Downstream HTTP APIs by name.
	 */
	private final Map<String, Destination> destinations = new LinkedHashMap<>();

	private final Jdbc jdbc = new Jdbc();

	private final Relay relay = new Relay();

	private final Retry retry = new Retry();

	private final Ordering ordering = new Ordering();

	private final AttemptLog attemptLog = new AttemptLog();

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public boolean isRequireTransaction() {
		return this.requireTransaction;
	}

	public void setRequireTransaction(boolean requireTransaction) {
		this.requireTransaction = requireTransaction;
	}

	public DataSize getMaxBodySize() {
		return this.maxBodySize;
	}

	public void setMaxBodySize(DataSize maxBodySize) {
		this.maxBodySize = maxBodySize;
	}

	public String getIdempotencyKeyHeader() {
		return this.idempotencyKeyHeader;
	}

	public void setIdempotencyKeyHeader(String idempotencyKeyHeader) {
		this.idempotencyKeyHeader = idempotencyKeyHeader;
	}

	public Map<String, Destination> getDestinations() {
		return this.destinations;
	}

	public Jdbc getJdbc() {
		return this.jdbc;
	}

	public Relay getRelay() {
		return this.relay;
	}

	public Retry getRetry() {
		return this.retry;
	}

	public Ordering getOrdering() {
		return this.ordering;
	}

	/**
	 * Per-key ordering settings.
	 */
	public static class Ordering {

		/**
		 * What a dead message does to the later messages of its ordering key: skip lets
		 * them proceed, block parks the key until the dead message is replayed or
		 * discarded.
		 */
		private OnDead onDead = OnDead.SKIP;

		public OnDead getOnDead() {
			return this.onDead;
		}

		public void setOnDead(OnDead onDead) {
			this.onDead = onDead;
		}

	}

	/**
	 * Per-key ordering settings of one destination.
	 */
	public static class OrderingOverrides {

		/**
		 * What a dead message of this destination does to the later messages of its
		 * ordering key; overrides retry-outbox.ordering.on-dead.
		 */
		private @Nullable OnDead onDead;

		public @Nullable OnDead getOnDead() {
			return this.onDead;
		}

		public void setOnDead(@Nullable OnDead onDead) {
			this.onDead = onDead;
		}

	}

	public AttemptLog getAttemptLog() {
		return this.attemptLog;
	}

	/**
	 * Attempt log settings.
	 */
	public static class AttemptLog {

		/**
		 * Whether to log every attempt in the retry_outbox_attempt table.
		 */
		private boolean enabled = true;

		/**
		 * Largest part of an error response body kept in the attempt log; secrets in it
		 * are masked, and 2xx bodies are never kept.
		 */
		private DataSize responseSnippetSize = DataSize.ofKilobytes(1);

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public DataSize getResponseSnippetSize() {
			return this.responseSnippetSize;
		}

		public void setResponseSnippetSize(DataSize responseSnippetSize) {
			this.responseSnippetSize = responseSnippetSize;
		}

	}

	/**
	 * Storage settings.
	 */
	public static class Jdbc {

		/**
		 * Schema of the outbox tables; the connection's current schema when not set.
		 */
		private @Nullable String schema;

		/**
		 * Whether to create and upgrade the outbox tables with the starter's own Flyway
		 * migrations.
		 */
		private boolean initializeSchema = true;

		public @Nullable String getSchema() {
			return this.schema;
		}

		public void setSchema(@Nullable String schema) {
			this.schema = schema;
		}

		public boolean isInitializeSchema() {
			return this.initializeSchema;
		}

		public void setInitializeSchema(boolean initializeSchema) {
			this.initializeSchema = initializeSchema;
		}

	}

	/**
	 * Relay settings.
	 */
	public static class Relay {

		/**
		 * Whether this instance runs a relay; without one it only enqueues.
		 */
		private boolean enabled = true;

		/**
		 * How often the relay looks for due messages when nothing woke it.
		 */
		@DurationUnit(ChronoUnit.MILLIS)
		private Duration pollInterval = Duration.ofSeconds(1);

		/**
		 * Largest number of messages claimed in one batch.
		 */
		private int batchSize = 100;

		/**
		 * Largest number of requests in flight at once, all destinations together; each
		 * destination's own flow limit applies within it.
		 */
		private int concurrency = 256;

		/**
		 * Largest number of messages of one ordering key claimed together and sent one
		 * after another, each as soon as the one before was delivered; 1 sends each
		 * message of a key from a claim of its own.
		 */
		private int runSize = 8;

		/**
		 * Shortest time from the start of one relay round (outcomes written, keys
		 * released, due messages claimed) to the start of the next one that an enqueue or
		 * an answer brings, so that a busy relay works in fewer, larger batches; zero
		 * starts a round as soon as something wakes the relay.
		 */
		@DurationUnit(ChronoUnit.MILLIS)
		private Duration minRoundInterval = Duration.ofMillis(20);

		/**
		 * How long a run of an ordering key that delivered all its messages keeps the key
		 * before a round writes its outcomes, so that a message this instance enqueues
		 * for the key in that time is sent as soon as it commits, on the same run; zero
		 * lets the next round take the run.
		 */
		@DurationUnit(ChronoUnit.MILLIS)
		private Duration runLinger = Duration.ofMillis(100);

		/**
		 * How long a claimed message stays leased to this instance before another may
		 * take it over.
		 */
		private Duration leaseTimeout = Duration.ofMinutes(1);

		/**
		 * How long a graceful stop waits for in-flight requests before releasing their
		 * messages.
		 */
		private Duration shutdownTimeout = Duration.ofSeconds(30);

		/**
		 * Whether the relay starts once the application is ready (ApplicationReadyEvent)
		 * rather than with the application context, so that it sends nothing while
		 * application runners still run.
		 */
		private boolean waitForReady = true;

		/**
		 * Whether the relay starts with the application; when false it sends nothing
		 * until it is started, e.g. while a test drives it with OutboxRelay.drain.
		 */
		private boolean autoStartup = true;

		/**
		 * How long after it starts the relay first looks for due messages.
		 */
		private Duration startDelay = Duration.ZERO;

		/**
		 * Largest part of an error response's body read to classify it (its error code);
		 * the rest is dropped unread.
		 */
		private DataSize errorBodyLimit = DataSize.ofKilobytes(4);

		/**
		 * Whether enqueues wake the relays of other instances through PostgreSQL
		 * LISTEN/NOTIFY.
		 */
		private boolean notify = true;

		/**
		 * PostgreSQL notification channel that wakes the relays.
		 */
		private String notifyChannel = "retry_outbox";

		/**
		 * Shortest time between two notifications sent by this instance; enqueues in
		 * between share one.
		 */
		@DurationUnit(ChronoUnit.MILLIS)
		private Duration notifyMinInterval = Duration.ofMillis(10);

		/**
		 * Whether a message enqueued while this instance's relay has a free slot for its
		 * destination, or right behind a run of its ordering key there, is sent by that
		 * relay as soon as its transaction commits, without being claimed or read, as it
		 * was enqueued.
		 */
		private boolean directDispatch = true;

		private final WarmUp warmUp = new WarmUp();

		public WarmUp getWarmUp() {
			return this.warmUp;
		}

		public boolean isDirectDispatch() {
			return this.directDispatch;
		}

		public void setDirectDispatch(boolean directDispatch) {
			this.directDispatch = directDispatch;
		}

		public Duration getNotifyMinInterval() {
			return this.notifyMinInterval;
		}

		public void setNotifyMinInterval(Duration notifyMinInterval) {
			this.notifyMinInterval = notifyMinInterval;
		}

		public boolean isWaitForReady() {
			return this.waitForReady;
		}

		public void setWaitForReady(boolean waitForReady) {
			this.waitForReady = waitForReady;
		}

		public boolean isAutoStartup() {
			return this.autoStartup;
		}

		public void setAutoStartup(boolean autoStartup) {
			this.autoStartup = autoStartup;
		}

		public Duration getStartDelay() {
			return this.startDelay;
		}

		public void setStartDelay(Duration startDelay) {
			this.startDelay = startDelay;
		}

		public DataSize getErrorBodyLimit() {
			return this.errorBodyLimit;
		}

		public void setErrorBodyLimit(DataSize errorBodyLimit) {
			this.errorBodyLimit = errorBodyLimit;
		}

		public boolean isNotify() {
			return this.notify;
		}

		public void setNotify(boolean notify) {
			this.notify = notify;
		}

		public String getNotifyChannel() {
			return this.notifyChannel;
		}

		public void setNotifyChannel(String notifyChannel) {
			this.notifyChannel = notifyChannel;
		}

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public Duration getPollInterval() {
			return this.pollInterval;
		}

		public void setPollInterval(Duration pollInterval) {
			this.pollInterval = pollInterval;
		}

		public int getBatchSize() {
			return this.batchSize;
		}

		public void setBatchSize(int batchSize) {
			this.batchSize = batchSize;
		}

		public int getRunSize() {
			return this.runSize;
		}

		public void setRunSize(int runSize) {
			this.runSize = runSize;
		}

		public int getConcurrency() {
			return this.concurrency;
		}

		public void setConcurrency(int concurrency) {
			this.concurrency = concurrency;
		}

		public Duration getMinRoundInterval() {
			return this.minRoundInterval;
		}

		public void setMinRoundInterval(Duration minRoundInterval) {
			this.minRoundInterval = minRoundInterval;
		}

		public Duration getRunLinger() {
			return this.runLinger;
		}

		public void setRunLinger(Duration runLinger) {
			this.runLinger = runLinger;
		}

		public Duration getLeaseTimeout() {
			return this.leaseTimeout;
		}

		public void setLeaseTimeout(Duration leaseTimeout) {
			this.leaseTimeout = leaseTimeout;
		}

		public Duration getShutdownTimeout() {
			return this.shutdownTimeout;
		}

		public void setShutdownTimeout(Duration shutdownTimeout) {
			this.shutdownTimeout = shutdownTimeout;
		}

	}

	/**
	 * What the relay does the first time it starts, before it takes messages.
	 */
	public static class WarmUp {

		/**
		 * Whether the relay, the first time it starts, sends requests to a local server
		 * of its own, most of them for keyed messages that it enqueues, and a relay of
		 * its own claims and finishes, on temporary copies of the outbox tables in a
		 * transaction that is rolled back, so that its first messages are not sent by
		 * cold code; nothing of it reaches a destination or a message row.
		 */
		private boolean enabled = true;

		/**
		 * Number of requests the warm-up sends, a quarter of them rehearsing the relay's
		 * rounds and half its enqueues.
		 */
		private int requests = 10000;

		/**
		 * Longest time the warm-up sends for; the relay then starts with what was done.
		 */
		private Duration timeout = Duration.ofSeconds(10);

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public int getRequests() {
			return this.requests;
		}

		public void setRequests(int requests) {
			this.requests = requests;
		}

		public Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

	}

	/**
	 * Settings of the default retry policy: under {@code retry-outbox.retry} for every
	 * destination, and under {@code retry-outbox.destinations.<name>.retry} for one,
	 * where each setting that is set overrides the global one. A setting set nowhere
	 * takes its default from {@link RetrySettings#DEFAULTS}.
	 */
	public static class Retry {

		/**
		 * Delay before the second attempt, the start of the backoff ramp.
		 */
		private @Nullable Duration delay;

		/**
		 * Factor the backoff ramp grows by per attempt.
		 */
		private @Nullable Double multiplier;

		/**
		 * Cap on the backoff ramp; jitter is added above it.
		 */
		private @Nullable Duration maxDelay;

		/**
		 * Cap on the delay a Retry-After response header may ask for.
		 */
		private @Nullable Duration retryAfterMax;

		/**
		 * Largest share of the wait added on top of it at random, never subtracted.
		 */
		private @Nullable Double jitter;

		/**
		 * Number of attempts after which a transient failure makes the message dead.
		 */
		private @Nullable Integer maxAttempts;

		/**
		 * Total delivery deadline, counted from enqueue.
		 */
		private @Nullable Duration timeout;

		/**
		 * JSON pointers into an error body where the error code is looked for, in order.
		 */
		private @Nullable List<String> errorCodePointers;

		/**
		 * Error codes of a 409 response that are retried.
		 */
		private @Nullable Set<String> transientErrorCodes;

		/**
		 * Error codes of a 409 response that make the message dead.
		 */
		private @Nullable Set<String> terminalErrorCodes;

		/**
		 * Whether a 409 response without a known error code is retried.
		 */
		private @Nullable Boolean retryConflictWithoutCode;

		public @Nullable Duration getDelay() {
			return this.delay;
		}

		public void setDelay(@Nullable Duration delay) {
			this.delay = delay;
		}

		public @Nullable Double getMultiplier() {
			return this.multiplier;
		}

		public void setMultiplier(@Nullable Double multiplier) {
			this.multiplier = multiplier;
		}

		public @Nullable Duration getMaxDelay() {
			return this.maxDelay;
		}

		public void setMaxDelay(@Nullable Duration maxDelay) {
			this.maxDelay = maxDelay;
		}

		public @Nullable Duration getRetryAfterMax() {
			return this.retryAfterMax;
		}

		public void setRetryAfterMax(@Nullable Duration retryAfterMax) {
			this.retryAfterMax = retryAfterMax;
		}

		public @Nullable Double getJitter() {
			return this.jitter;
		}

		public void setJitter(@Nullable Double jitter) {
			this.jitter = jitter;
		}

		public @Nullable Integer getMaxAttempts() {
			return this.maxAttempts;
		}

		public void setMaxAttempts(@Nullable Integer maxAttempts) {
			this.maxAttempts = maxAttempts;
		}

		public @Nullable Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(@Nullable Duration timeout) {
			this.timeout = timeout;
		}

		public @Nullable List<String> getErrorCodePointers() {
			return this.errorCodePointers;
		}

		public void setErrorCodePointers(@Nullable List<String> errorCodePointers) {
			this.errorCodePointers = errorCodePointers;
		}

		public @Nullable Set<String> getTransientErrorCodes() {
			return this.transientErrorCodes;
		}

		public void setTransientErrorCodes(@Nullable Set<String> transientErrorCodes) {
			this.transientErrorCodes = transientErrorCodes;
		}

		public @Nullable Set<String> getTerminalErrorCodes() {
			return this.terminalErrorCodes;
		}

		public void setTerminalErrorCodes(@Nullable Set<String> terminalErrorCodes) {
			this.terminalErrorCodes = terminalErrorCodes;
		}

		public @Nullable Boolean getRetryConflictWithoutCode() {
			return this.retryConflictWithoutCode;
		}

		public void setRetryConflictWithoutCode(@Nullable Boolean retryConflictWithoutCode) {
			this.retryConflictWithoutCode = retryConflictWithoutCode;
		}

		/**
		 * Returns the settings that result from these over the inherited ones: each
		 * setting that is set here wins, each one that is not is inherited.
		 * @param inherited the settings of the level above,
		 * {@link RetrySettings#DEFAULTS} for the global ones
		 * @return the merged settings
		 */
		RetrySettings over(RetrySettings inherited) {
			return new RetrySettings(or(this.delay, inherited.delay()), or(this.multiplier, inherited.multiplier()),
					or(this.maxDelay, inherited.maxDelay()), or(this.retryAfterMax, inherited.retryAfterMax()),
					or(this.jitter, inherited.jitter()), or(this.maxAttempts, inherited.maxAttempts()),
					or(this.timeout, inherited.timeout()), or(this.errorCodePointers, inherited.errorCodePointers()),
					or(this.transientErrorCodes, inherited.transientErrorCodes()),
					or(this.terminalErrorCodes, inherited.terminalErrorCodes()),
					or(this.retryConflictWithoutCode, inherited.retryConflictWithoutCode()));
		}

		private static <T> T or(@Nullable T value, T inherited) {
			return (value != null) ? value : inherited;
		}

	}

	/**
	 * A downstream HTTP API.
	 */
	public static class Destination {

		/**
		 * Base URL that request paths are resolved against, e.g.
		 * https://payments.internal/api.
		 */
		private @Nullable URI baseUrl;

		/**
		 * Deadline of one attempt, from connecting to reading the whole response.
		 */
		private Duration timeout = Duration.ofSeconds(10);

		/**
		 * Headers added to every request to this destination.
		 */
		private Map<String, String> headers = new LinkedHashMap<>();

		private final Retry retry = new Retry();

		private final OrderingOverrides ordering = new OrderingOverrides();

		private final Flow flow = new Flow();

		private final Signing signing = new Signing();

		public Signing getSigning() {
			return this.signing;
		}

		public OrderingOverrides getOrdering() {
			return this.ordering;
		}

		public Flow getFlow() {
			return this.flow;
		}

		public @Nullable URI getBaseUrl() {
			return this.baseUrl;
		}

		public void setBaseUrl(@Nullable URI baseUrl) {
			this.baseUrl = baseUrl;
		}

		public Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

		public Map<String, String> getHeaders() {
			return this.headers;
		}

		public void setHeaders(Map<String, String> headers) {
			this.headers = headers;
		}

		public Retry getRetry() {
			return this.retry;
		}

	}

	/**
	 * Standard Webhooks signing of one destination's requests.
	 */
	public static class Signing {

		/**
		 * Secrets (whsec_ followed by the base64 of a 24 to 64 byte key) that sign every
		 * request with webhook-id, webhook-timestamp and webhook-signature, one signature
		 * per secret; several during a rotation, none for unsigned requests.
		 */
		private List<String> secrets = new ArrayList<>();

		public List<String> getSecrets() {
			return this.secrets;
		}

		public void setSecrets(List<String> secrets) {
			this.secrets = secrets;
		}

	}

	/**
	 * How many requests one destination may have in flight and send per second.
	 */
	public static class Flow {

		/**
		 * Whether the destination's limit adapts: it grows while latency stays near its
		 * floor and shrinks on rising latency, 429, 503 and timeouts; if not, it is
		 * max-concurrency.
		 */
		private boolean adaptive = true;

		/**
		 * Largest number of requests to the destination in flight on this instance.
		 */
		private int maxConcurrency = 256;

		/**
		 * Largest number of requests per second sent to the destination from this
		 * instance, e.g. 20, or 0.5 for one every 2s; no limit when not set.
		 */
		private @Nullable Double maxRate;

		/**
		 * Whether a 429 or 503 with Retry-After pauses the whole destination until then
		 * (at most retry.retry-after-max), after which one probe goes before it opens up
		 * again; other destinations keep flowing.
		 */
		private boolean pauseOnRetryAfter = true;

		private final Circuit circuit = new Circuit();

		public Circuit getCircuit() {
			return this.circuit;
		}

		public boolean isPauseOnRetryAfter() {
			return this.pauseOnRetryAfter;
		}

		public void setPauseOnRetryAfter(boolean pauseOnRetryAfter) {
			this.pauseOnRetryAfter = pauseOnRetryAfter;
		}

		public boolean isAdaptive() {
			return this.adaptive;
		}

		public void setAdaptive(boolean adaptive) {
			this.adaptive = adaptive;
		}

		public int getMaxConcurrency() {
			return this.maxConcurrency;
		}

		public void setMaxConcurrency(int maxConcurrency) {
			this.maxConcurrency = maxConcurrency;
		}

		public @Nullable Double getMaxRate() {
			return this.maxRate;
		}

		public void setMaxRate(@Nullable Double maxRate) {
			this.maxRate = maxRate;
		}

	}

	/**
	 * When a destination that keeps failing is paused and probed.
	 */
	public static class Circuit {

		/**
		 * Number of consecutive transient failures (connection errors, timeouts, 408,
		 * 425, 429, 500, 502, 503, 504) after which the destination is paused and probed
		 * one request at a time, at an interval that doubles from 1s up to
		 * retry.retry-after-max, until a probe gets through; 0 turns the circuit off.
		 */
		private int failureThreshold = 10;

		public int getFailureThreshold() {
			return this.failureThreshold;
		}

		public void setFailureThreshold(int failureThreshold) {
			this.failureThreshold = failureThreshold;
		}

	}

}
