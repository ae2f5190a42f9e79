package io.retryoutbox;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import io.retryoutbox.autoconfigure.RetryOutboxProperties;
import io.retryoutbox.relay.OutboxRelay;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.TestDatabase;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The relay's warm-up, the first time it starts: requests to a server of its own, seen by
 * no destination, no code of the application and no message row.
 */
@ExtendWith(OutputCaptureExtension.class)
class RelayWarmUpIntegrationTests {

	private static final String WARMED_UP = "Outbox relay warmed up with 300 requests to a local server of its own";

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private final String jdbcUrl = TestDatabase.createDatabase();

	private ApplicationContextRunner runner() {
		return OutboxContexts.runner(this.jdbcUrl)
			.withPropertyValues("retry-outbox.destinations.api.base-url=" + this.destination.server().url("/"),
					"retry-outbox.relay.auto-startup=false", "retry-outbox.relay.warm-up.enabled=true",
					"retry-outbox.relay.warm-up.requests=300");
	}

	@Test
	void warmsUpWithoutSendingToADestinationChangingAMessageOrCallingTheApplicationsPolicyOrFilters(
			CapturedOutput output) {
		AtomicInteger decisions = new AtomicInteger();
		AtomicInteger filtered = new AtomicInteger();
		runner().withPropertyValues("retry-outbox.relay.start-delay=1h")
			.withBean(RetryPolicy.class, () -> (attempt, outcome) -> {
				decisions.incrementAndGet();
				return new RetryDecision.Delivered();
			})
			.withBean(RelayWebClientCustomizer.class,
					() -> (builder) -> builder.filter(ExchangeFilterFunction.ofRequestProcessor((request) -> {
						filtered.incrementAndGet();
						return reactor.core.publisher.Mono.just(request);
					})))
			.run((context) -> {
				send(context, "k", "/1");
				send(context, "k", "/2");
				send(context, null, "/3");
				List<String> before = messages(context);
				context.getBean(OutboxRelay.class).start();
				assertThat(output).contains(WARMED_UP);
				assertThat(messages(context)).isEqualTo(before);
				assertThat(OutboxContexts.jdbc(context)
					.sql("SELECT count(*) FROM retry_outbox_attempt")
					.query(Long.class)
					.single()).isZero();
				assertThat(this.destination.server().getRequestCount()).isZero();
				assertThat(decisions).hasValue(0);
				assertThat(filtered).hasValue(0);
			});
	}

	@Test
	void rehearsesItsRoundsThroughARelayOfItsOwnOnTemporaryCopiesOfTheTablesAndLeavesNothingBehind(
			CapturedOutput output) {
		runner().withPropertyValues("retry-outbox.relay.start-delay=1h").run((context) -> {
			// The rehearsal's keys are named so too; they are another table's.
			send(context, "rehearsal-0", "/1");
			send(context, "rehearsal-0", "/2");
			List<String> before = messages(context);
			Set<Thread> pollThreads = pollThreads();
			context.getBean(OutboxRelay.class).start();
			assertThat(output).contains(WARMED_UP)
				.contains(
						" ms, 100 of them rehearsing its rounds and 150 its enqueues on temporary copies of the outbox tables");
			assertThat(messages(context)).isEqualTo(before);
			JdbcClient jdbc = OutboxContexts.jdbc(context);
			assertThat(jdbc.sql("SELECT count(*) FROM retry_outbox_attempt").query(Long.class).single()).isZero();
			assertThat(jdbc.sql("SELECT count(*) FROM pg_class WHERE relname LIKE 'retry_outbox_rehearsal%'")
				.query(Long.class)
				.single()).isZero();
			assertThat(jdbc.sql("""
					SELECT count(*) FROM pg_stat_activity
					WHERE datname = current_database() AND state LIKE 'idle in transaction%'""")
				.query(Long.class)
				.single()).as("transactions left open").isZero();
			// The rehearsal's relay stopped: only the relay's own poll thread is new.
			await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
				Set<Thread> started = pollThreads();
				started.removeAll(pollThreads);
				assertThat(started).hasSize(1);
			});
			assertThat(this.destination.server().getRequestCount()).isZero();
		});
	}

	@Test
	void deliversWhatWasEnqueuedBeforeTheWarmUpInKeyOrder(CapturedOutput output) {
		runner().run((context) -> {
			send(context, "k", "/1");
			send(context, null, "/2");
			send(context, "k", "/3");
			send(context, "k", "/4");
			send(context, "rehearsal-0", "/5");
			context.getBean(OutboxRelay.class).start();
			OutboxContexts.awaitAllDelivered(OutboxContexts.jdbc(context), 5);
			assertThat(output).contains(WARMED_UP);
			assertThat(this.destination.dispatcher().paths()).hasSize(5)
				.containsSubsequence("/1", "/3", "/4")
				.contains("/2", "/5");
		});
	}

	@Test
	void warmsUpOnlyTheFirstTimeItStarts(CapturedOutput output) {
		runner().run((context) -> {
			OutboxRelay relay = context.getBean(OutboxRelay.class);
			relay.start();
			relay.stop();
			relay.start();
			UUID id = send(context, null, "/after-restart");
			await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> assertThat(OutboxContexts.row(context, id)).containsEntry("status", "DELIVERED"));
			assertThat(output.getOut().split(WARMED_UP, -1)).hasSize(2);
		});
	}

	@Test
	void sendsTenThousandRequestsForAtMostTenSecondsByDefault() {
		RetryOutboxProperties.WarmUp defaults = new RetryOutboxProperties().getRelay().getWarmUp();
		assertThat(defaults.isEnabled()).isTrue();
		OutboxContexts.runner(this.jdbcUrl)
			.withPropertyValues("retry-outbox.destinations.api.base-url=" + this.destination.server().url("/"),
					"retry-outbox.relay.auto-startup=false", "retry-outbox.relay.warm-up.enabled=true")
			.run((context) -> {
				OutboxRelay.WarmUp warmUp = context.getBean(OutboxRelay.class).getWarmUp();
				assertThat(warmUp.requests()).isEqualTo(10000);
				assertThat(warmUp.timeout()).isEqualTo(Duration.ofSeconds(10));
				assertThat(warmUp.exchange()).isNotNull();
			});
	}

	@Test
	void doesNotWarmUpWhenDisabled(CapturedOutput output) {
		runner().withPropertyValues("retry-outbox.relay.warm-up.enabled=false").run((context) -> {
			OutboxRelay relay = context.getBean(OutboxRelay.class);
			assertThat(relay.getWarmUp()).isSameAs(OutboxRelay.WarmUp.NONE);
			relay.start();
			UUID id = send(context, null, "/at-once");
			await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> assertThat(OutboxContexts.row(context, id)).containsEntry("status", "DELIVERED"));
			assertThat(output).doesNotContain("Outbox relay warmed up");
		});
	}

	@Test
	void refusesANegativeNumberOfRequestsOrATimeoutThatIsNotPositive() {
		runner().withPropertyValues("retry-outbox.relay.warm-up.requests=-1")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessage("warm-up.requests must not be negative, was -1"));
		runner().withPropertyValues("retry-outbox.relay.warm-up.timeout=0s")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessage("warm-up.timeout must be positive, was PT0S"));
	}

	private static UUID send(ApplicationContext context, @Nullable String key, String path) {
		return OutboxContexts.transactions(context)
			.execute((status) -> context.getBean(Outbox.class)
				.send(OutboxRequest.post("api", path).orderingKey(key).build()));
	}

	private static Set<Thread> pollThreads() {
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((thread) -> thread.getName().startsWith("retry-outbox-relay-"))
			.collect(Collectors.toCollection(HashSet::new));
	}

	private static List<String> messages(ApplicationContext context) {
		return OutboxContexts.jdbc(context)
			.sql("SELECT to_jsonb(m)::text FROM retry_outbox_message m ORDER BY seq")
			.query(String.class)
			.list();
	}

}
