package io.retryoutbox.autoconfigure;

import java.util.Collection;
import java.util.UUID;

import io.retryoutbox.jdbc.JdbcOutboxComponents;
import io.retryoutbox.message.ClaimedMessage;
import io.retryoutbox.notify.PostgresNotifier;
import io.retryoutbox.relay.OutboxRelay;
import org.jspecify.annotations.Nullable;

/**
 * Wakes this instance's relay directly and other instances' relays through the notifier,
 * once a transaction that enqueued commits. Without a relay here, a wake-up is wanted
 * only while the notifier would notify another instance or look whether one listens.
 */
final class RelayWakeUps implements JdbcOutboxComponents.RelayWakeUp {

	private final @Nullable OutboxRelay localRelay;

	private final @Nullable PostgresNotifier otherRelays;

	RelayWakeUps(@Nullable OutboxRelay localRelay, @Nullable PostgresNotifier otherRelays) {
		this.localRelay = localRelay;
		this.otherRelays = otherRelays;
	}

	@Override
	public boolean isWanted() {
		return this.localRelay != null || (this.otherRelays != null && this.otherRelays.isWanted());
	}

	@Override
	public void arrived(Collection<String> keys) {
		if (this.localRelay != null) {
			this.localRelay.arrived(keys);
		}
	}

	@Override
	public boolean hasRun(String key) {
		return this.localRelay != null && this.localRelay.hasRun(key);
	}

	@Override
	public boolean follow(ClaimedMessage message, UUID behind, int ahead) {
		return this.localRelay != null && this.localRelay.follow(message, behind, ahead);
	}

	@Override
	public void wakeUp() {
		if (this.localRelay != null) {
			this.localRelay.wakeUp();
		}
		if (this.otherRelays != null) {
			this.otherRelays.requestNotify();
		}
	}

}
