package io.retryoutbox.sample.simulator;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link PaymentsSimulator}.
 */
class PaymentsSimulatorTests {

	private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-11-29T12:00:00.400Z"), ZoneOffset.UTC);

	@Test
	void replaysTheStoredAnswerOfAKeyAndCountsItAsADuplicate() {
		PaymentsSimulator simulator = simulator((faults) -> {
		});
		Answer first = simulator.receive("/charges", "key-1", "7");
		Answer second = simulator.receive("/charges", "key-1", "7");
		assertThat(first.status()).isEqualTo(201);
		assertThat(second).isEqualTo(first);
		SimulatorStats stats = simulator.stats();
		assertThat(stats.received()).isEqualTo(2);
		assertThat(stats.uniqueKeys()).isEqualTo(1);
		assertThat(stats.duplicates()).isEqualTo(1);
		assertThat(stats.orders().get("7")).containsExactly(new Receipt("/charges", "key-1", 201));
	}

	@Test
	void answersEveryRequestWithAKeyThatDrewABadRequestWith400() {
		PaymentsSimulator simulator = simulator((faults) -> faults.setBadRequest(1));
		assertThat(simulator.receive("/charges", "key-1", "7").status()).isEqualTo(400);
		assertThat(simulator.receive("/charges", "key-1", "7").status()).isEqualTo(400);
		assertThat(simulator.stats().faults()).containsEntry(Fault.BAD_REQUEST, 1L);
	}

	@Test
	void processesAHealedKeyOnItsNextRequestAndRecordsTheReceipt() {
		PaymentsSimulator simulator = simulator((faults) -> faults.setConflict(1));
		assertThat(simulator.receive("/charges", "key-1", "7").status()).isEqualTo(409);
		assertThat(simulator.heal("key-1")).isEqualTo(409);
		assertThat(simulator.receive("/charges", "key-1", "7").status()).isEqualTo(201);
		assertThat(simulator.receive("/charges", "key-1", "7").status()).isEqualTo(201);
		assertThat(simulator.stats().orders().get("7")).containsExactly(new Receipt("/charges", "key-1", 409),
				new Receipt("/charges", "key-1", 201));
		assertThat(simulator.stats().duplicates()).isEqualTo(1);
	}

	@Test
	void keepsTheStoredAnswerOfAHealedKeyThatWasAccepted() {
		PaymentsSimulator simulator = simulator((faults) -> {
		});
		Answer accepted = simulator.receive("/charges", "key-1", "7");
		assertThat(simulator.heal("key-1")).isNull();
		assertThat(simulator.receive("/charges", "key-1", "7")).isEqualTo(accepted);
	}

	@Test
	void answersAConflictWithItsErrorCode() {
		Answer answer = simulator((faults) -> faults.setConflict(1)).receive("/charges", "key-1", "7");
		assertThat(answer.status()).isEqualTo(409);
		assertThat(answer.body()).hasToString("{error={code=CONFLICT}}");
	}

	@Test
	void refusesWithRetryAfterOneSecondWhenUnavailable() {
		Answer answer = simulator((faults) -> faults.setUnavailable(1)).receive("/charges", "key-1", "7");
		assertThat(answer.status()).isEqualTo(503);
		assertThat(answer.headers()).containsEntry("Retry-After", "1");
	}

	@Test
	void refusesWithRetryAfterAsAnHttpDateWhenRateLimited() {
		Answer answer = simulator((faults) -> faults.setRateLimited(1)).receive("/charges", "key-1", "7");
		assertThat(answer.status()).isEqualTo(429);
		assertThat(answer.headers()).containsEntry("Retry-After", "Sun, 29 Nov 2026 12:00:02 GMT");
	}

	@Test
	void refusesWithResourceLockedWhenLocked() {
		Answer answer = simulator((faults) -> faults.setLocked(1)).receive("/charges", "key-1", "7");
		assertThat(answer.status()).isEqualTo(409);
		assertThat(answer.body()).hasToString("{error={code=RESOURCE_LOCKED}}");
	}

	@Test
	void processesASlowRequestAndAnswersItsRetryFromTheStore() {
		PaymentsSimulator simulator = simulator((faults) -> faults.setSlow(1));
		Answer first = simulator.receive("/charges", "key-1", "7");
		Answer retry = simulator.receive("/charges", "key-1", "7");
		assertThat(first.delivery()).isEqualTo(Answer.Delivery.SLOWLY);
		assertThat(retry.delivery()).isEqualTo(Answer.Delivery.AT_ONCE);
		assertThat(retry.status()).isEqualTo(201);
		assertThat(simulator.stats().duplicates()).isEqualTo(1);
		assertThat(simulator.stats().faults()).containsEntry(Fault.SLOW, 1L);
	}

	@Test
	void processesADroppedRequestAndAnswersItsRetryFromTheStore() {
		PaymentsSimulator simulator = simulator((faults) -> faults.setDropped(1));
		assertThat(simulator.receive("/charges", "key-1", "7").delivery()).isEqualTo(Answer.Delivery.DROPPED);
		assertThat(simulator.receive("/charges", "key-1", "7").delivery()).isEqualTo(Answer.Delivery.AT_ONCE);
		assertThat(simulator.stats().faults()).containsEntry(Fault.DROPPED, 1L);
	}

	@Test
	void countsARefundProcessedBeforeItsChargeAsOutOfOrder() {
		PaymentsSimulator simulator = simulator((faults) -> {
		});
		simulator.receive("/refunds", "key-2", "7");
		simulator.receive("/charges", "key-1", "7");
		simulator.receive("/charges", "key-3", "8");
		simulator.receive("/refunds", "key-4", "8");
		SimulatorStats stats = simulator.stats();
		assertThat(stats.outOfOrder()).isEqualTo(1);
		assertThat(stats.orders().get("7")).extracting(Receipt::path).containsExactly("/refunds", "/charges");
	}

	@Test
	void rejectsARequestWithoutIdempotencyKey() {
		assertThat(simulator((faults) -> {
		}).receive("/charges", null, "7").status()).isEqualTo(400);
	}

	@Test
	void decidesTheSameFaultsForTheSameSeedKeysAndOrderOfRequests() {
		assertThat(answers(7)).isEqualTo(answers(7)).isNotEqualTo(answers(8));
	}

	@Test
	void drawsFaultsAboutAsOftenAsConfigured() {
		PaymentsSimulator simulator = simulator((faults) -> {
			faults.setUnavailable(0.2);
			faults.setConflict(0.1);
		});
		for (int i = 0; i < 10_000; i++) {
			simulator.receive("/charges", "key-" + i, null);
		}
		assertThat(simulator.stats().faults().get(Fault.UNAVAILABLE)).isBetween(1_800L, 2_200L);
		assertThat(simulator.stats().faults().get(Fault.CONFLICT)).isBetween(700L, 900L);
	}

	@Test
	void rejectsSharesThatAddUpToMoreThanOne() {
		assertThatIllegalArgumentException().isThrownBy(() -> simulator((faults) -> {
			faults.setUnavailable(0.6);
			faults.setSlow(0.6);
		})).withMessageContaining("per-request");
	}

	private static List<Integer> answers(long seed) {
		PaymentsSimulator simulator = simulator(seed, (faults) -> {
			faults.setUnavailable(0.3);
			faults.setBadRequest(0.3);
		});
		List<Integer> statuses = new ArrayList<>();
		for (int i = 0; i < 50; i++) {
			statuses.add(simulator.receive("/charges", "key-" + (i % 20), null).status());
		}
		return statuses;
	}

	private static PaymentsSimulator simulator(Consumer<SimulatorProperties.Faults> faults) {
		return simulator(0, faults);
	}

	private static PaymentsSimulator simulator(long seed, Consumer<SimulatorProperties.Faults> faults) {
		SimulatorProperties.Faults shares = new SimulatorProperties.Faults();
		faults.accept(shares);
		return new PaymentsSimulator(new FaultDice(seed, shares), CLOCK);
	}

}
