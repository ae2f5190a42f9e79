package io.retryoutbox.relay;

import java.time.Duration;

import io.retryoutbox.Outbox;
import io.retryoutbox.OutboxRequest;
import io.retryoutbox.testsupport.DestinationServer;
import io.retryoutbox.testsupport.OutboxContexts;
import io.retryoutbox.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The relay keeps nothing of an attempt once it is over, so its memory does not grow with
 * the messages it sent.
 */
class OutboxRelayMemoryTests {

	@RegisterExtension
	final DestinationServer destination = new DestinationServer();

	@Test
	void keepsNoAttemptOnceItIsOver() {
		OutboxContexts.runner(TestDatabase.createDatabase())
			.withPropertyValues("retry-outbox.destinations.api.base-url=" + this.destination.server().url("/"))
			.run((context) -> {
				OutboxRelay relay = context.getBean(OutboxRelay.class);
				OutboxContexts.transactions(context).executeWithoutResult((status) -> {
					for (int i = 0; i < 50; i++) {
						context.getBean(Outbox.class).send(OutboxRequest.post("api", "/m/" + i).build());
					}
				});
				await().atMost(Duration.ofSeconds(20))
					.until(() -> this.destination.dispatcher().requests().size() >= 50);
				await().atMost(Duration.ofSeconds(10)).until(() -> relay.trackedAttempts() == 0);
				assertThat(this.destination.dispatcher().requests()).hasSize(50);
			});
	}

}
