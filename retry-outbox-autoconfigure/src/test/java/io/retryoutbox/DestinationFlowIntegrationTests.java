package io.retryoutbox;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.retryoutbox.actuate.OutboxHealthIndicator;
import io.retryoutbox.actuate.autoconfigure.OutboxHealthContributorAutoConfiguration;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.TestDatabase;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Each destination is claimed for by its own flow limit, so a slow one never takes the
 * relay's slots from a fast one.
 */
class DestinationFlowIntegrationTests {

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private final String jdbcUrl = TestDatabase.createDatabase();

	@Test
	void aDestinationThatTakesThreeSecondsWithTwoHundredQueuedMessagesDoesNotDelayAFastOne() {
		this.destination.dispatcher()
			.answer("/slow/x", new MockResponse.Builder().code(200).headersDelay(3, TimeUnit.SECONDS).build())
			.answer("/fast/x", new MockResponse.Builder().code(200).build());
		OutboxContexts.runner(this.jdbcUrl)
			.withPropertyValues("retry-outbox.destinations.slow.base-url=" + this.destination.server().url("/slow"),
					"retry-outbox.destinations.slow.timeout=10s",
					"retry-outbox.destinations.fast.base-url=" + this.destination.server().url("/fast"),
					"retry-outbox.relay.poll-interval=100ms", "retry-outbox.relay.shutdown-timeout=0s")
			.run((context) -> {
				OutboxContexts.transactions(context).executeWithoutResult((status) -> {
					for (int i = 0; i < 200; i++) {
						context.getBean(Outbox.class).send(OutboxRequest.post("slow", "/x").build());
					}
				});
				// Read as the first claim shows, before its answers (three seconds away)
				// can grow the limit: it claimed only what its limit, 64 at the start,
				// lets it send now, so no lease runs out waiting.
				long claimed = await().atMost(Duration.ofSeconds(10))
					.until(() -> inFlight(context, "slow"), (n) -> n > 0);
				assertThat(claimed).isLessThanOrEqualTo(64);
				UUID fast = OutboxContexts.transactions(context)
					.execute((status) -> context.getBean(Outbox.class).send(OutboxRequest.post("fast", "/x").build()));
				await().atMost(Duration.ofSeconds(2))
					.untilAsserted(
							() -> assertThat(OutboxContexts.row(context, fast)).containsEntry("status", "DELIVERED"));
			});
	}

	@Test
	void pausesADestinationThatSaysRetryAfterWhileAnotherIsServedAndSpendsNoAttemptsOfItsWaitingMessages() {
		// The first request, whichever message it carries, is told to wait. Without
		// direct dispatch: a message it inserts leased counts its attempt at once, and
		// waits for the one permit if a claim that worked out its limits before the
		// reservation took it first, its attempt counted through the pause.
		this.destination.dispatcher()
			.enqueue(new MockResponse.Builder().code(503).setHeader("Retry-After", "2").build());
		OutboxContexts.runner(this.jdbcUrl)
			.withPropertyValues("retry-outbox.relay.direct-dispatch=false",
					"retry-outbox.destinations.busy.base-url=" + this.destination.server().url("/busy"),
					"retry-outbox.destinations.busy.flow.adaptive=false",
					"retry-outbox.destinations.busy.flow.max-concurrency=1",
					"retry-outbox.destinations.fast.base-url=" + this.destination.server().url("/fast"),
					"retry-outbox.retry.jitter=0", "retry-outbox.relay.poll-interval=100ms")
			.withConfiguration(AutoConfigurations.of(OutboxHealthContributorAutoConfiguration.class))
			.run((context) -> {
				List<UUID> busy = new ArrayList<>();
				OutboxContexts.transactions(context).executeWithoutResult((status) -> {
					for (int i = 0; i < 5; i++) {
						busy.add(context.getBean(Outbox.class).send(OutboxRequest.post("busy", "/x/" + i).build()));
					}
				});
				await().atMost(Duration.ofSeconds(10)).until(() -> arrivals("/busy/").size() == 1);
				long paused = arrivals("/busy/").get(0);
				// The pause begins when the relay reads the answer, just after its
				// arrival.
				await().atMost(Duration.ofSeconds(2)).untilAsserted(() -> {
					Health health = context.getBean(OutboxHealthIndicator.class).health(true);
					assertThat(health.getStatus()).isEqualTo(Status.UP);
					@SuppressWarnings("unchecked")
					Map<String, Map<String, String>> destinations = (Map<String, Map<String, String>>) health
						.getDetails()
						.get("destinations");
					assertThat(destinations).containsEntry("fast", Map.of("state", "OPEN"));
					assertThat(destinations.get("busy")).containsEntry("state", "PAUSED")
						.containsEntry("reason", "RETRY_AFTER")
						.containsEntry("detail", "HTTP 503 Retry-After 2s")
						.containsKey("until");
				});
				String told = this.destination.dispatcher().requests().get(0).getUrl().encodedPath();
				List<UUID> waiting = new ArrayList<>(busy);
				waiting.remove(Integer.parseInt(told.substring(told.lastIndexOf('/') + 1)));
				UUID fast = OutboxContexts.transactions(context)
					.execute((status) -> context.getBean(Outbox.class).send(OutboxRequest.post("fast", "/x").build()));
				await().atMost(Duration.ofSeconds(10))
					.untilAsserted(
							() -> assertThat(OutboxContexts.row(context, fast)).containsEntry("status", "DELIVERED"));
				assertThat(arrivals("/fast/").get(0) - paused).isLessThan(Duration.ofSeconds(2).toNanos());
				for (UUID id : waiting) {
					assertThat(OutboxContexts.row(context, id)).containsEntry("attempts", 0);
				}
				await().atMost(Duration.ofSeconds(15))
					.untilAsserted(() -> assertThat(busy).allSatisfy(
							(id) -> assertThat(OutboxContexts.row(context, id)).containsEntry("status", "DELIVERED")));
				List<Long> arrivals = arrivals("/busy/");
				assertThat(arrivals).hasSize(6);
				assertThat(arrivals.get(1) - paused).isGreaterThanOrEqualTo(Duration.ofSeconds(2).toNanos());
				for (UUID id : waiting) {
					assertThat(OutboxContexts.row(context, id)).containsEntry("attempts", 1);
				}
			});
	}

	@Test
	void sendsNoMoreThanMaxRateInAnySecondAndComesBackForTheNextTokenBeforeThePollInterval() {
		OutboxContexts.runner(this.jdbcUrl)
			.withPropertyValues(
					"retry-outbox.destinations.limited.base-url=" + this.destination.server().url("/limited"),
					"retry-outbox.destinations.limited.flow.max-rate=20",
					"retry-outbox.destinations.warm.base-url=" + this.destination.server().url("/warm"),
					// Only the wake-up when the next token is due brings the polls.
					"retry-outbox.relay.poll-interval=1m")
			.run((context) -> {
				// The rate holds when requests start; the first request of a client that
				// is not yet warm arrives tens of milliseconds late, with later ones.
				UUID warm = OutboxContexts.transactions(context)
					.execute((status) -> context.getBean(Outbox.class).send(OutboxRequest.post("warm", "/x").build()));
				await().atMost(Duration.ofSeconds(10))
					.untilAsserted(
							() -> assertThat(OutboxContexts.row(context, warm)).containsEntry("status", "DELIVERED"));
				OutboxContexts.transactions(context).executeWithoutResult((status) -> {
					for (int i = 0; i < 60; i++) {
						context.getBean(Outbox.class).send(OutboxRequest.post("limited", "/x/" + i).build());
					}
				});
				OutboxContexts.awaitAllDelivered(OutboxContexts.jdbc(context), 61);
				List<Long> arrivals = arrivals("/limited/").stream().sorted().toList();
				assertThat(arrivals).hasSize(60);
				for (int i = 0; i < arrivals.size(); i++) {
					long end = arrivals.get(i) + Duration.ofSeconds(1).toNanos();
					assertThat(arrivals.subList(i, arrivals.size()).stream().filter((arrival) -> arrival < end).count())
						.as("requests in the second after request %d", i)
						.isLessThanOrEqualTo(20);
				}
				// 2 at once, then 19 per 1.01 s: about 3 seconds, not a poll interval.
				assertThat(arrivals.get(59) - arrivals.get(0)).isLessThan(Duration.ofSeconds(5).toNanos());
			});
	}

	private List<Long> arrivals(String prefix) {
		List<Long> arrivals = new ArrayList<>();
		List<RecordedRequest> requests = this.destination.dispatcher().requests();
		List<Long> times = this.destination.dispatcher().arrivals();
		for (int i = 0; i < requests.size(); i++) {
			if (requests.get(i).getUrl().encodedPath().startsWith(prefix)) {
				arrivals.add(times.get(i));
			}
		}
		return arrivals;
	}

	private static long inFlight(AssertableApplicationContext context, String destination) {
		return OutboxContexts.jdbc(context)
			.sql("SELECT count(*) FROM retry_outbox_message WHERE status = 'IN_FLIGHT' AND destination = ?")
			.param(destination)
			.query(Long.class)
			.single();
	}

}
