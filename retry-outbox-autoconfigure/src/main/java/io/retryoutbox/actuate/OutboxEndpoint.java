package io.retryoutbox.actuate;

import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;

import io.retryoutbox.message.MessageFilter;
import io.retryoutbox.message.MessageStatus;
import io.retryoutbox.message.OutboxReadModel;
import io.retryoutbox.message.OutboxRepair;
import io.retryoutbox.message.OutboxRepair.BulkResult;
import io.retryoutbox.message.OutboxStats;
import io.retryoutbox.support.SecretValues;
import io.retryoutbox.message.StoredAttempt;
import io.retryoutbox.message.StoredMessage;
import io.retryoutbox.relay.DestinationPause;
import io.retryoutbox.relay.DestinationState;
import io.retryoutbox.relay.OutboxRelay;
import io.retryoutbox.relay.PauseReason;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

/**
 * The {@code outbox} endpoint: what is in the outbox, and the repair of dead messages.
 * <ul>
 * <li>{@code GET /actuator/outbox}: counts by status and destination, oldest pending age,
 * lag, parked keys, and each destination's flow on this instance: its state and, while
 * paused, until when and why;</li>
 * <li>{@code GET /actuator/outbox/messages?status=&destination=&orderingKey=&from=&to=&before=&limit=}:
 * a page of messages, newest first, dead ones unless another status is asked for;</li>
 * <li>{@code GET /actuator/outbox/messages/{id}}: one message with its attempt log;</li>
 * <li>{@code POST /actuator/outbox/replay} and {@code POST /actuator/outbox/discard} with
 * a JSON body of either {@code id} or a filter ({@code destination}, {@code deadReason},
 * {@code from}, {@code to}) and a {@code limit}: replay or delete dead messages;</li>
 * <li>{@code POST /actuator/outbox/resume} with a JSON body of {@code destination}: ends
 * the destination's pause on every instance.</li>
 * </ul>
 * Its default access is read-only: the write operations must be allowed with
 * {@code management.endpoint.outbox.access=unrestricted}.
 */
@Endpoint(id = "outbox", defaultAccess = Access.READ_ONLY)
public class OutboxEndpoint {

	/**
	 * The number of messages in a page unless another limit is asked for.
	 */
	public static final int DEFAULT_PAGE_SIZE = 50;

	/**
	 * The largest number of messages in a page.
	 */
	public static final int MAX_PAGE_SIZE = 500;

	/**
	 * The number of messages a bulk operation touches unless another limit is asked for.
	 */
	public static final int DEFAULT_BULK_LIMIT = 1000;

	/**
	 * The largest number of messages one bulk operation touches.
	 */
	public static final int MAX_BULK_LIMIT = 100_000;

	private static final int PARKED_KEYS_SHOWN = 100;

	private static final String MESSAGES = "messages";

	private final OutboxReadModel readModel;

	private final OutboxRepair repair;

	private final Show showValues;

	private final Set<String> roles;

	private final @Nullable OutboxRelay relay;

	/**
	 * Creates an endpoint.
	 * @param readModel reads the outbox
	 * @param repair replays and discards dead messages
	 * @param relay this instance's relay, woken after a replay and asked for its
	 * destinations' flows, or {@code null} on an instance that only enqueues
	 * @param showValues when secret header values are shown
	 * @param roles the roles that may see them when {@code showValues} is
	 * {@link Show#WHEN_AUTHORIZED}; any authenticated user if empty
	 */
	public OutboxEndpoint(OutboxReadModel readModel, OutboxRepair repair, @Nullable OutboxRelay relay, Show showValues,
			Set<String> roles) {
		this.readModel = readModel;
		this.repair = repair;
		this.relay = relay;
		this.showValues = showValues;
		this.roles = Set.copyOf(roles);
	}

	/**
	 * Summarizes the outbox.
	 * @return the summary
	 */
	@ReadOperation
	public OutboxSummary summary() {
		OutboxStats stats = this.readModel.stats();
		Map<String, Map<MessageStatus, Long>> destinations = this.readModel.countsByDestination();
		Map<MessageStatus, Long> statuses = new EnumMap<>(MessageStatus.class);
		for (MessageStatus status : MessageStatus.values()) {
			statuses.put(status, 0L);
		}
		destinations.values()
			.forEach((counts) -> counts.forEach((status, count) -> statuses.merge(status, count, Long::sum)));
		return new OutboxSummary(statuses, destinations, seconds(stats.oldestPendingAge()), seconds(stats.lag()),
				stats.parkedKeys(), this.readModel.parkedKeys(PARKED_KEYS_SHOWN), stats.unknownDestination(), flows());
	}

	private Map<String, FlowDescriptor> flows() {
		Map<String, FlowDescriptor> flows = new TreeMap<>();
		if (this.relay != null) {
			for (String destination : this.relay.getDestinations()) {
				DestinationPause pause = this.relay.getDestinationPause(destination);
				flows.put(destination,
						new FlowDescriptor(this.relay.getDestinationState(destination),
								(pause != null) ? pause.pausedUntil() : null, (pause != null) ? pause.reason() : null,
								(pause != null) ? pause.detail() : null, (pause != null) ? pause.pausedBy() : null,
								(pause != null) ? pause.startedAt() : null, this.relay.getFlowLimit(destination),
								this.relay.getInFlight(destination)));
			}
		}
		return flows;
	}

	/**
	 * Lists messages, newest first.
	 * @param messages the literal {@code messages}
	 * @param status the status, {@code DEAD} if not given
	 * @param destination the destination, any if not given
	 * @param orderingKey the ordering key, any if not given
	 * @param from the earliest enqueue time, inclusive
	 * @param to the latest enqueue time, exclusive
	 * @param before the id of the last message of the previous page
	 * @param limit the largest number of messages returned
	 * @param securityContext the caller, who may see secret header values or not
	 * @return the page, or {@code null} (404) for another path
	 */
	@ReadOperation
	public @Nullable MessagePage messages(@Selector String messages, @Nullable String status,
			@Nullable String destination, @Nullable String orderingKey, @Nullable OffsetDateTime from,
			@Nullable OffsetDateTime to, @Nullable UUID before, @Nullable Integer limit,
			SecurityContext securityContext) {
		if (!MESSAGES.equals(messages)) {
			return null;
		}
		MessageStatus wanted = status(status);
		int size = limit(limit, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
		MessageFilter filter = new MessageFilter(wanted, destination, orderingKey, null, instant(from), instant(to));
		boolean show = isShown(securityContext);
		List<MessageDescriptor> page = this.readModel.messages(filter, before, size)
			.stream()
			.map((message) -> describe(message, show, null))
			.toList();
		UUID next = (page.size() == size) ? page.get(page.size() - 1).id() : null;
		return new MessagePage(page, next);
	}

	/**
	 * Shows one message with its attempt log.
	 * @param messages the literal {@code messages}
	 * @param id the message id
	 * @param securityContext the caller, who may see secret header values or not
	 * @return the message, or {@code null} (404) if there is none
	 */
	@ReadOperation
	public @Nullable MessageDescriptor message(@Selector String messages, @Selector UUID id,
			SecurityContext securityContext) {
		if (!MESSAGES.equals(messages)) {
			return null;
		}
		return this.readModel.message(id)
			.map((message) -> describe(message, isShown(securityContext), this.readModel.attempts(id)))
			.orElse(null);
	}

	/**
	 * Replays or discards dead messages: the one with {@code id}, or every one that
	 * matches the filter, up to {@code limit}; or resumes a paused destination.
	 * @param action {@code replay}, {@code discard} or {@code resume}
	 * @param id the message id, to act on one message
	 * @param destination the destination of the messages to act on, or the destination to
	 * resume
	 * @param deadReason why they are dead, e.g. {@code TERMINAL_STATUS}
	 * @param from the earliest enqueue time, inclusive
	 * @param to the latest enqueue time, exclusive
	 * @param limit the largest number of messages to act on
	 * @param securityContext the caller, recorded as the replay's actor
	 * @return what was done
	 */
	@WriteOperation
	public OperationResult operate(@Selector String action, @Nullable UUID id, @Nullable String destination,
			@Nullable String deadReason, @Nullable OffsetDateTime from, @Nullable OffsetDateTime to,
			@Nullable Integer limit, SecurityContext securityContext) {
		if ("resume".equals(action)) {
			return resume(destination);
		}
		boolean replay = switch (action) {
			case "replay" -> true;
			case "discard" -> false;
			default -> throw new InvalidEndpointRequestException("Unknown action '" + action + "'",
					"action must be replay, discard or resume");
		};
		OperationResult result;
		if (id != null) {
			boolean done = replay ? this.repair.replay(id, actor(securityContext)) : this.repair.discard(id);
			result = new OperationResult(action, done ? 1 : 0, true);
		}
		else {
			MessageFilter filter = new MessageFilter(null, destination, null, deadReason, instant(from), instant(to));
			int max = limit(limit, DEFAULT_BULK_LIMIT, MAX_BULK_LIMIT);
			BulkResult bulk = replay ? this.repair.replay(filter, max, actor(securityContext))
					: this.repair.discard(filter, max);
			result = new OperationResult(action, bulk.count(), bulk.complete());
		}
		if (replay && result.count() > 0 && this.relay != null) {
			this.relay.wakeUp();
		}
		return result;
	}

	/**
	 * Ends a destination's pause here at once and on the other instances at their next
	 * read of the shared pauses, without waiting for a probe.
	 */
	private OperationResult resume(@Nullable String destination) {
		if (destination == null) {
			throw new InvalidEndpointRequestException("No destination to resume", "resume needs a destination");
		}
		if (this.relay == null) {
			throw new InvalidEndpointRequestException("This instance runs no relay",
					"resume a destination on an instance that runs a relay");
		}
		if (!this.relay.getDestinations().contains(destination)) {
			throw new InvalidEndpointRequestException("Unknown destination '" + destination + "'",
					"destination must be one of " + new TreeSet<>(this.relay.getDestinations()));
		}
		return new OperationResult("resume", this.relay.resume(destination) ? 1 : 0, true);
	}

	private MessageDescriptor describe(StoredMessage message, boolean show, @Nullable List<StoredAttempt> attempts) {
		return new MessageDescriptor(message.id(), message.destination(), message.method(), message.path(),
				headers(message.headers(), show), message.contentType(), message.bodySize(), message.orderingKey(),
				message.idempotencyKey(), message.status(), message.attempts(), message.createdAt(),
				message.nextAttemptAt(), message.lastAttemptAt(), message.lastStatusCode(), message.lastErrorCode(),
				message.lastError(), message.deadReason(), message.deliveredAt(), message.traceParent(), attempts);
	}

	private static Map<String, List<String>> headers(Map<String, List<String>> headers, boolean show) {
		Map<String, List<String>> shown = new LinkedHashMap<>();
		headers.forEach((name, values) -> shown.put(name, (show || !SecretValues.isSecretName(name)) ? values
				: values.stream().map((value) -> SecretValues.MASK).toList()));
		return shown;
	}

	private boolean isShown(SecurityContext securityContext) {
		return this.showValues.isShown(securityContext, this.roles);
	}

	private static String actor(SecurityContext securityContext) {
		return (securityContext.getPrincipal() != null) ? securityContext.getPrincipal().getName() : "anonymous";
	}

	private static int limit(@Nullable Integer limit, int defaultLimit, int max) {
		if (limit == null) {
			return defaultLimit;
		}
		if (limit < 1 || limit > max) {
			throw new InvalidEndpointRequestException("Invalid limit " + limit, "limit must be between 1 and " + max);
		}
		return limit;
	}

	private static @Nullable Instant instant(@Nullable OffsetDateTime time) {
		return (time != null) ? time.toInstant() : null;
	}

	private static MessageStatus status(@Nullable String status) {
		if (status == null) {
			return MessageStatus.DEAD;
		}
		try {
			return MessageStatus.valueOf(status.toUpperCase(Locale.ROOT));
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidEndpointRequestException("Unknown status '" + status + "'",
					"status must be one of " + Arrays.toString(MessageStatus.values()));
		}
	}

	private static @Nullable Double seconds(@Nullable Duration duration) {
		return (duration != null) ? duration.toMillis() / 1000.0 : null;
	}

	/**
	 * A summary of the outbox.
	 *
	 * @param statuses the number of messages by status
	 * @param destinations the number of messages by destination, then by status
	 * @param oldestPendingAgeSeconds how long ago the oldest unfinished message was
	 * enqueued
	 * @param lagSeconds how long the oldest due message has been waiting
	 * @param parkedKeys the number of ordering keys held up by a dead message
	 * @param parkedKeySample some of those keys
	 * @param unknownDestination the number of pending messages for a destination this
	 * instance does not configure
	 * @param flows the flow of each destination this instance's relay sends to, none on
	 * an instance that only enqueues
	 */
	public record OutboxSummary(Map<MessageStatus, Long> statuses, Map<String, Map<MessageStatus, Long>> destinations,
			@Nullable Double oldestPendingAgeSeconds, @Nullable Double lagSeconds, long parkedKeys,
			List<String> parkedKeySample, long unknownDestination, Map<String, FlowDescriptor> flows) {

	}

	/**
	 * The flow of one destination on this instance; a pause is shared by every instance.
	 *
	 * @param state whether it takes requests ({@code OPEN}), waits ({@code PAUSED}) or
	 * sends one probe at a time ({@code PROBING})
	 * @param pausedUntil when the next probe may go, while paused or probing
	 * @param reason why it was paused: {@code RETRY_AFTER} or {@code CIRCUIT}
	 * @param detail what the destination answered, e.g. {@code HTTP 503 Retry-After 30s}
	 * @param pausedBy the relay instance that paused it, or extended the pause last
	 * @param pausedSince when the pause began
	 * @param limit how many of its requests may be in flight on this instance
	 * @param inFlight its requests in flight on this instance
	 */
	public record FlowDescriptor(DestinationState state, @Nullable Instant pausedUntil, @Nullable PauseReason reason,
			@Nullable String detail, @Nullable String pausedBy, @Nullable Instant pausedSince, int limit,
			int inFlight) {

	}

	/**
	 * A page of messages.
	 *
	 * @param messages the messages, newest first
	 * @param next the {@code before} value of the next page, or {@code null} for the last
	 * page
	 */
	public record MessagePage(List<MessageDescriptor> messages, @Nullable UUID next) {

	}

	/**
	 * A message, with secret header values masked unless they may be shown.
	 *
	 * @param id the message id
	 * @param destination the destination
	 * @param method the HTTP method
	 * @param path the path
	 * @param headers the request headers
	 * @param contentType the body's content type
	 * @param bodySize the body's size in bytes (the body itself is never shown)
	 * @param orderingKey the ordering key
	 * @param idempotencyKey the idempotency key
	 * @param status the status
	 * @param attempts the number of attempts made
	 * @param createdAt when the message was enqueued or last replayed
	 * @param nextAttemptAt when a pending message is due
	 * @param lastAttemptAt when the last attempt started
	 * @param lastStatusCode the status code of the last attempt
	 * @param lastErrorCode the error code of the last attempt
	 * @param lastError the failure of the last attempt
	 * @param deadReason why the message is dead
	 * @param deliveredAt when the message was delivered
	 * @param traceParent the traceparent of the enqueuing request
	 * @param attemptLog the attempt log, oldest first, on the view of one message only
	 */
	public record MessageDescriptor(UUID id, String destination, String method, String path,
			Map<String, List<String>> headers, @Nullable String contentType, long bodySize,
			@Nullable String orderingKey, String idempotencyKey, MessageStatus status, int attempts, Instant createdAt,
			Instant nextAttemptAt, @Nullable Instant lastAttemptAt, @Nullable Integer lastStatusCode,
			@Nullable String lastErrorCode, @Nullable String lastError, @Nullable String deadReason,
			@Nullable Instant deliveredAt, @Nullable String traceParent, @Nullable List<StoredAttempt> attemptLog) {

	}

	/**
	 * What a replay, discard or resume did.
	 *
	 * @param action {@code replay}, {@code discard} or {@code resume}
	 * @param count the number of messages replayed or discarded; for a resume, 1 if the
	 * destination was paused, else 0
	 * @param complete whether every matching message was; {@code false} when the limit or
	 * the time budget of one request stopped it first, so that the same request should be
	 * sent again
	 */
	public record OperationResult(String action, int count, boolean complete) {

	}

}
