package io.retryoutbox;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

import io.retryoutbox.message.Claim;
import io.retryoutbox.message.Outcome;
import io.retryoutbox.relay.OutboxRelay;
import io.retryoutbox.relay.OutboxStore;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code retry-outbox.relay.run-linger}: a run of an ordering key that delivered all its
 * messages keeps its key for a while before a round writes its outcomes, so that the
 * key's next message from this instance goes on the same run rather than waiting for a
 * round to release the key and claim it. The relays here start a round as soon as an
 * answer or an enqueue wakes them, and poll on their own only every two hours.
 */
class RunLingerIntegrationTests {

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	private final String jdbcUrl = TestDatabase.createDatabase();

	private ApplicationContextRunner runner() {
		return OutboxContexts.runner(this.jdbcUrl)
			.withPropertyValues("retry-outbox.relay.poll-interval=2h", "retry-outbox.relay.min-round-interval=0",
					"retry-outbox.relay.auto-startup=false", "retry-outbox.relay.notify=false",
					"retry-outbox.destinations.api.base-url=" + this.destination.server().url("/"))
			.withBean(Rounds.class);
	}

	private static UUID send(ApplicationContext context, String path) {
		return OutboxContexts.send(context, OutboxRequest.post("api", path).orderingKey("order-1").build());
	}

	@Test
	void aMessageEnqueuedWhileTheRunBeforeItLingersGoesOnThatRunRatherThanOnAClaim() throws Exception {
		runner().withPropertyValues("retry-outbox.relay.run-linger=1h").run((context) -> {
			Rounds rounds = context.getBean(Rounds.class);
			UUID first = send(context, "/first");
			OutboxRelay relay = context.getBean(OutboxRelay.class);
			relay.start();
			assertThat(this.destination.nextPath()).isEqualTo("/first");
			// The round that the run's end brings: without the linger, it takes the run
			// and lets the key go.
			await().atMost(Duration.ofSeconds(20)).until(() -> rounds.after(first) >= 1);
			UUID second = send(context, "/second");
			assertThat(this.destination.nextPath()).isEqualTo("/second");
			relay.stop();
			assertThat(rounds.claimed()).contains(first).doesNotContain(second);
			for (UUID id : List.of(first, second)) {
				assertThat(OutboxContexts.row(context, id)).containsEntry("status", "DELIVERED")
					.containsEntry("attempts", 1)
					.containsEntry("lease_owner", null);
			}
		});
	}

	@Test
	void aRunThatLingersHasItsOutcomesWrittenOnceTheLingerIsOverWithNothingElseToWakeTheRelay() throws Exception {
		runner().withPropertyValues("retry-outbox.relay.run-linger=200ms").run((context) -> {
			UUID message = send(context, "/only");
			context.getBean(OutboxRelay.class).start();
			assertThat(this.destination.nextPath()).isEqualTo("/only");
			await().atMost(Duration.ofSeconds(20))
				.untilAsserted(
						() -> assertThat(OutboxContexts.row(context, message)).containsEntry("status", "DELIVERED"));
		});
	}

	@Test
	void aRunWhoseLingerEndsWhileTheRoundThatKeptItRunsHasItsOutcomesWrittenAfterThatRound() throws Exception {
		// Rounds of 100 ms, as on a busy database: the run is kept by the round that its
		// end brings (5 ms later) and its linger is over before that round ends.
		runner().withPropertyValues("retry-outbox.relay.run-linger=50ms")
			.withBean(SlowRounds.class, () -> new SlowRounds(Duration.ofMillis(100)))
			.run((context) -> {
				UUID message = send(context, "/only");
				context.getBean(OutboxRelay.class).start();
				assertThat(this.destination.nextPath()).isEqualTo("/only");
				await().atMost(Duration.ofSeconds(20))
					.untilAsserted(() -> assertThat(OutboxContexts.row(context, message)).containsEntry("status",
							"DELIVERED"));
			});
	}

	@Test
	void anUnkeyedMessageHasItsOutcomeWrittenAtTheNextRoundWithoutLingering() throws Exception {
		runner().withPropertyValues("retry-outbox.relay.run-linger=1h").run((context) -> {
			UUID message = OutboxContexts.send(context, OutboxRequest.post("api", "/plain").build());
			context.getBean(OutboxRelay.class).start();
			assertThat(this.destination.nextPath()).isEqualTo("/plain");
			await().atMost(Duration.ofSeconds(20))
				.untilAsserted(
						() -> assertThat(OutboxContexts.row(context, message)).containsEntry("status", "DELIVERED"));
		});
	}

	/**
	 * Records what each of the relay's rounds claimed, around the store the
	 * auto-configuration made.
	 */
	static final class Rounds implements BeanPostProcessor {

		private final List<List<UUID>> rounds = new CopyOnWriteArrayList<>();

		@Override
		public Object postProcessAfterInitialization(Object bean, String beanName) {
			return (bean instanceof OutboxStore store) ? new Recording(store, this::record) : bean;
		}

		private void record(List<Claim> claimed) {
			this.rounds.add(claimed.stream().map(Claim::id).toList());
		}

		List<UUID> claimed() {
			return this.rounds.stream().flatMap(List::stream).toList();
		}

		/**
		 * The number of rounds after the one that claimed {@code id}, none if no round
		 * did.
		 */
		int after(UUID id) {
			for (int i = 0; i < this.rounds.size(); i++) {
				if (this.rounds.get(i).contains(id)) {
					return this.rounds.size() - i - 1;
				}
			}
			return 0;
		}

	}

	/**
	 * Makes each of the relay's rounds take at least the given time, after the store's
	 * own work.
	 */
	static final class SlowRounds implements BeanPostProcessor {

		private final Duration duration;

		SlowRounds(Duration duration) {
			this.duration = duration;
		}

		@Override
		public Object postProcessAfterInitialization(Object bean, String beanName) {
			return (bean instanceof OutboxStore store) ? new Recording(store, (claimed) -> pause()) : bean;
		}

		private void pause() {
			LockSupport.parkNanos(this.duration.toNanos());
		}

	}

	private record Recording(OutboxStore store, Consumer<List<Claim>> rounds) implements OutboxStore {

		@Override
		public List<Claim> claim(String owner, Map<String, Integer> limits, int runSize, Duration lease) {
			List<Claim> claimed = this.store.claim(owner, limits, runSize, lease);
			this.rounds.accept(claimed);
			return claimed;
		}

		@Override
		public List<Claim> runsBehind(List<? extends Claim> heads, int runSize) {
			return this.store.runsBehind(heads, runSize);
		}

		@Override
		public Round round(String owner, List<Outcome> outcomes, List<UUID> unsent, boolean releaseKeys,
				Map<String, Integer> limits, int runSize, boolean claimOnlyIfPromoted, Duration lease) {
			Round round = this.store.round(owner, outcomes, unsent, releaseKeys, limits, runSize, claimOnlyIfPromoted,
					lease);
			this.rounds.accept(round.claimed());
			return round;
		}

		@Override
		public int complete(String owner, List<Outcome> outcomes, List<UUID> unsent) {
			return this.store.complete(owner, outcomes, unsent);
		}

		@Override
		public int releaseKeys() {
			return this.store.releaseKeys();
		}

		@Override
		public int recoverExpiredLeases() {
			return this.store.recoverExpiredLeases();
		}

		@Override
		public int extendLeases(String owner, List<UUID> ids, Duration lease) {
			return this.store.extendLeases(owner, ids, lease);
		}

		@Override
		public int release(String owner, List<UUID> ids) {
			return this.store.release(owner, ids);
		}

		@Override
		public void rehearse(String destination, int keys, int perKey, Consumer<Rehearsal> rounds) {
			this.store.rehearse(destination, keys, perKey, rounds);
		}

	}

}
