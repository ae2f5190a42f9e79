package io.retryoutbox.notify;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import javax.sql.DataSource;

import io.retryoutbox.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

import org.springframework.jdbc.datasource.DriverManagerDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A notifier sends only while a relay of another instance listens: a single instance's
 * relay is woken directly, and each notification would only cost the database.
 */
class PostgresNotifierTests {

	private static final String CHANNEL = "presence";

	@Test
	void notifiesOnlyWhileARelayOfAnotherInstanceListens() throws SQLException {
		String url = TestDatabase.createDatabase();
		DataSource dataSource = new DriverManagerDataSource(url);
		PostgresNotifier notifier = new PostgresNotifier(dataSource, CHANNEL, Duration.ZERO, Duration.ZERO);
		PostgresWakeupListener own = new PostgresWakeupListener(dataSource, CHANNEL, () -> {
		});
		own.setIgnoredPayload(notifier.getPayload());
		notifier.setOwnListener(own::getBackendPid);
		PostgresWakeupListener other = new PostgresWakeupListener(dataSource, CHANNEL, () -> {
		});
		// Listens without being a relay: it sees every notification and counts as none.
		try (Connection observer = DriverManager.getConnection(url);
				Connection direct = DriverManager.getConnection(url)) {
			execute(observer, "LISTEN " + CHANNEL);
			notifier.start();
			own.start();
			try {
				await().atMost(Duration.ofSeconds(10)).until(own::isListening);
				requestAndAwaitHandled(notifier);
				other.start();
				await().atMost(Duration.ofSeconds(10)).until(other::isListening);
				requestAndAwaitHandled(notifier);
				other.stop();
				await().atMost(Duration.ofSeconds(10))
					.until(() -> !ListenerPresence.othersListen(direct, CHANNEL, own.getBackendPid()));
				requestAndAwaitHandled(notifier);
				// Notifications arrive in commit order: whatever the notifier sent comes
				// before this one.
				execute(direct, "SELECT pg_notify('" + CHANNEL + "', 'marker')");
				assertThat(awaitPayloadsUntil(observer, "marker")).containsExactly(notifier.getPayload(), "marker");
			}
			finally {
				other.stop();
				own.stop();
				notifier.stop();
			}
		}
	}

	@Test
	void trustsItsLastLookupOfListeningRelaysUntilTheNextIsDue() throws SQLException {
		String url = TestDatabase.createDatabase();
		DataSource dataSource = new DriverManagerDataSource(url);
		PostgresNotifier notifier = new PostgresNotifier(dataSource, CHANNEL, Duration.ZERO, Duration.ofHours(1));
		PostgresWakeupListener other = new PostgresWakeupListener(dataSource, CHANNEL, () -> {
		});
		try (Connection observer = DriverManager.getConnection(url);
				Connection direct = DriverManager.getConnection(url)) {
			execute(observer, "LISTEN " + CHANNEL);
			notifier.start();
			try {
				// The first request looks up who listens: no relay yet.
				requestAndAwaitHandled(notifier);
				other.start();
				await().atMost(Duration.ofSeconds(10)).until(other::isListening);
				requestAndAwaitHandled(notifier);
				execute(direct, "SELECT pg_notify('" + CHANNEL + "', 'marker')");
				assertThat(awaitPayloadsUntil(observer, "marker")).containsExactly("marker");
			}
			finally {
				other.stop();
				notifier.stop();
			}
		}
	}

	private static void requestAndAwaitHandled(PostgresNotifier notifier) {
		long before = notifier.handled();
		notifier.requestNotify();
		await().atMost(Duration.ofSeconds(10)).until(() -> notifier.handled() > before);
	}

	private static List<String> awaitPayloadsUntil(Connection connection, String last) {
		List<String> payloads = new ArrayList<>();
		await().atMost(Duration.ofSeconds(10)).until(() -> {
			PGNotification[] received = connection.unwrap(PGConnection.class).getNotifications(100);
			if (received != null) {
				Stream.of(received).map(PGNotification::getParameter).forEach(payloads::add);
			}
			return payloads.contains(last);
		});
		return payloads;
	}

	private static void execute(Connection connection, String sql) throws SQLException {
		try (Statement statement = connection.createStatement()) {
			statement.execute(sql);
		}
	}

}
