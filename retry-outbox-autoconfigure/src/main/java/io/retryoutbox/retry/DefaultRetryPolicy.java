package io.retryoutbox.retry;

import java.time.Clock;
import java.util.Map;
import java.util.random.RandomGenerator;

import io.retryoutbox.DeliveryAttempt;
import io.retryoutbox.DeliveryOutcome;
import io.retryoutbox.RetryDecision;
import io.retryoutbox.RetryPolicy;
import tools.jackson.databind.json.JsonMapper;

/** Placeholder until the real policy lands. */
public final class DefaultRetryPolicy implements RetryPolicy {

	private final Clock clock;

	public DefaultRetryPolicy(RetrySettings defaults, Map<String, RetrySettings> perDestination, JsonMapper jsonMapper,
			Clock clock, RandomGenerator random) {
		this.clock = clock;
	}

	@Override
	public RetryDecision decide(DeliveryAttempt attempt, DeliveryOutcome outcome) {
		if (outcome instanceof DeliveryOutcome.Response r && r.statusCode() / 100 == 2) {
			return new RetryDecision.Delivered();
		}
		if (outcome instanceof DeliveryOutcome.Response r && r.statusCode() == 400) {
			return new RetryDecision.Dead(RetryDecision.DeadReason.TERMINAL_STATUS, "HTTP 400", null);
		}
		return new RetryDecision.Retry(this.clock.instant().plusMillis(200), RetryDecision.DelayReason.BACKOFF, null);
	}

}
