package io.retryoutbox;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.retryoutbox.autoconfigure.RetryOutboxProperties;
import io.retryoutbox.jdbc.JdbcOutboxComponents;
import io.retryoutbox.relay.OutboxRelay;
import io.retryoutbox.relay.OutboxStore;
import io.retryoutbox.testsupport.CountedStore;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.TestDatabase;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpStatus;
import org.springframework.web.reactive.function.client.ClientResponse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code retry-outbox.relay.min-round-interval}: the rounds that wake-ups bring start at
 * most once per interval, however many wake-ups come, on a real PostgreSQL.
 */
class RoundIntervalIntegrationTests {

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private final String jdbcUrl = TestDatabase.createDatabase();

	@Test
	void startsAtMostOneRoundPerIntervalWhileWakeUpsKeepComingAcrossThePollIntervalsOwnPolls() {
		// Thirteen of the poll interval's own polls come in the four seconds.
		assertAtMostOneRoundPerIntervalWhileWokenUp(Duration.ofSeconds(4), 200, 300,
				"retry-outbox.relay.poll-interval=300ms", "retry-outbox.relay.min-round-interval=200ms");
	}

	@Test
	void startsTheRoundsThatWakeUpsBringAtMostEveryTwentyMillisecondsByDefault() {
		assertThat(new RetryOutboxProperties().getRelay().getMinRoundInterval()).isEqualTo(Duration.ofMillis(20));
		// The test contexts poll every 100 ms; a second is the default.
		assertAtMostOneRoundPerIntervalWhileWokenUp(Duration.ofSeconds(2), 20, 1000,
				"retry-outbox.relay.poll-interval=1s");
	}

	// Wake-ups as an enqueue's commit makes them, without pause, for the given time.
	private void assertAtMostOneRoundPerIntervalWhileWokenUp(Duration wakingUp, long intervalMillis,
			long pollIntervalMillis, String... properties) {
		OutboxContexts.runner(this.jdbcUrl)
			.withUserConfiguration(CountingStore.class)
			.withPropertyValues(properties)
			.withPropertyValues("retry-outbox.relay.notify=false")
			.run((context) -> {
				OutboxRelay relay = context.getBean(OutboxRelay.class);
				await().atMost(Duration.ofSeconds(10)).until(() -> relay.getState() == OutboxRelay.State.RUNNING);
				AtomicInteger rounds = context.getBean(CountingStore.class).rounds;
				int before = rounds.get();
				long started = System.nanoTime();
				while (System.nanoTime() - started < wakingUp.toNanos()) {
					relay.wakeUp();
					Thread.onSpinWait();
				}
				int counted = rounds.get() - before;
				long elapsedMillis = Duration.ofNanos(System.nanoTime() - started).toMillis();
				// One round per interval that a wake-up brings, one per poll interval
				// of the relay's own, and the one under way at the start.
				long most = elapsedMillis / intervalMillis + elapsedMillis / pollIntervalMillis + 2;
				assertThat(counted).isPositive().isLessThanOrEqualTo((int) most);
			});
	}

	@Test
	void claimsTheNextBatchOfABacklogAtOnceInsteadOfAfterTheRoundInterval() throws InterruptedException {
		OutboxContexts.runner(this.jdbcUrl)
			.withPropertyValues("retry-outbox.relay.poll-interval=2h", "retry-outbox.relay.min-round-interval=1h",
					"retry-outbox.relay.batch-size=10", "retry-outbox.relay.auto-startup=false",
					"retry-outbox.relay.notify=false",
					"retry-outbox.destinations.api.base-url=" + this.destination.server().url("/"))
			.run((context) -> {
				OutboxContexts.transactions(context).executeWithoutResult((status) -> {
					for (int i = 0; i < 35; i++) {
						context.getBean(Outbox.class).send(OutboxRequest.post("api", "/backlog/" + i).build());
					}
				});
				context.getBean(OutboxRelay.class).start();
				// The start's poll claims the first ten; each whole batch brings the next
				// claim at once, not an hour later.
				for (int i = 0; i < 35; i++) {
					assertThat(this.destination.server().takeRequest(20, TimeUnit.SECONDS)).isNotNull();
				}
			});
	}

	@Test
	void aRestartedRelayIsWokenAgainThoughAPollWasStillScheduledWhenItStopped() throws InterruptedException {
		OutboxContexts.runner(this.jdbcUrl)
			.withPropertyValues("retry-outbox.relay.poll-interval=2h", "retry-outbox.relay.min-round-interval=1s",
					"retry-outbox.relay.notify=false",
					"retry-outbox.destinations.api.base-url=" + this.destination.server().url("/"))
			.run((context) -> {
				OutboxRelay relay = context.getBean(OutboxRelay.class);
				await().atMost(Duration.ofSeconds(10)).until(() -> relay.getState() == OutboxRelay.State.RUNNING);
				// Its wake-up schedules a poll a second after the start's, which the stop
				// drops.
				send(context, "/before-stop");
				relay.stop();
				relay.start();
				assertThat(this.destination.server().takeRequest(20, TimeUnit.SECONDS).getTarget())
					.isEqualTo("/before-stop");
				// Only this message's wake-up can bring the next poll: the poll
				// interval's
				// is two hours away.
				send(context, "/after-restart");
				assertThat(this.destination.server().takeRequest(20, TimeUnit.SECONDS)).isNotNull()
					.extracting(RecordedRequest::getTarget)
					.isEqualTo("/after-restart");
			});
	}

	private static void send(ApplicationContext context, String path) {
		OutboxContexts.transactions(context)
			.executeWithoutResult(
					(status) -> context.getBean(Outbox.class).send(OutboxRequest.post("api", path).build()));
	}

	@Test
	void claimsAgainForADestinationWhoseFlowLimitCutItsClaimOnceHalfItsPermitsAreFree() throws InterruptedException {
		limitedToFourAnHourApart().run((context) -> {
			OutboxContexts.transactions(context).executeWithoutResult((status) -> {
				for (int i = 0; i < 35; i++) {
					context.getBean(Outbox.class).send(OutboxRequest.post("api", "/limited/" + i).build());
				}
			});
			context.getBean(OutboxRelay.class).start();
			// The start's poll claims four, all the limit lets it; their answers free
			// the
			// permits, which bring the next claim at once, not an hour later.
			for (int i = 0; i < 35; i++) {
				assertThat(this.destination.server().takeRequest(20, TimeUnit.SECONDS)).isNotNull();
			}
		});
	}

	@Test
	void claimsAgainForADestinationWhoseFlowLimitCutItsClaimWhenEveryAnswerCameBeforeItsRoundEnded()
			throws InterruptedException {
		AtomicReference<OutboxRelay> relay = new AtomicReference<>();
		AtomicInteger requests = new AtomicInteger();
		// The start's round claims four, all the limit lets it. Its fourth request is
		// answered on the round's own thread once the first three have been, so that
		// every answer comes before the round ends.
		RelayWebClientCustomizer answersTheFourthAfterTheOthers = (builder) -> builder.filter((request, next) -> {
			if (requests.incrementAndGet() != 4) {
				return next.exchange(request);
			}
			await().atMost(Duration.ofSeconds(10)).until(() -> relay.get().getInFlight("api") == 1);
			return Mono.just(ClientResponse.create(HttpStatus.OK).build());
		});
		limitedToFourAnHourApart().withBean(RelayWebClientCustomizer.class, () -> answersTheFourthAfterTheOthers)
			.run((context) -> {
				OutboxContexts.transactions(context).executeWithoutResult((status) -> {
					for (int i = 0; i < 12; i++) {
						context.getBean(Outbox.class).send(OutboxRequest.post("api", "/answered/" + i).build());
					}
				});
				relay.set(context.getBean(OutboxRelay.class));
				relay.get().start();
				// Eleven reach the server; the next claim comes at once, not an hour
				// later.
				for (int i = 0; i < 11; i++) {
					assertThat(this.destination.server().takeRequest(20, TimeUnit.SECONDS)).as("request %d", i)
						.isNotNull();
				}
			});
	}

	// A relay started by hand whose rounds are an hour apart unless an answer or a
	// whole batch brings one, and a destination that takes four requests at a time.
	private ApplicationContextRunner limitedToFourAnHourApart() {
		return OutboxContexts.runner(this.jdbcUrl)
			.withPropertyValues("retry-outbox.relay.poll-interval=2h", "retry-outbox.relay.min-round-interval=1h",
					"retry-outbox.relay.auto-startup=false", "retry-outbox.relay.notify=false",
					"retry-outbox.destinations.api.base-url=" + this.destination.server().url("/"),
					"retry-outbox.destinations.api.flow.adaptive=false",
					"retry-outbox.destinations.api.flow.max-concurrency=4");
	}

	@Configuration(proxyBeanMethods = false)
	static class CountingStore {

		final AtomicInteger rounds = new AtomicInteger();

		@Bean
		OutboxStore countingOutboxStore(JdbcOutboxComponents jdbc) {
			return CountedStore.counting(jdbc.store(), "round", this.rounds);
		}

	}

}
