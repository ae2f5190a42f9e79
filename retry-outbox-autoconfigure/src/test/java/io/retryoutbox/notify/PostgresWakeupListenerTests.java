package io.retryoutbox.notify;

import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.zaxxer.hikari.HikariDataSource;
import io.retryoutbox.testsupport.FreezingProxy;
import io.retryoutbox.testsupport.TestDatabase;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The listening connection is checked when it has been silent, so one that went half-open
 * is replaced instead of losing every wake-up from other instances.
 */
class PostgresWakeupListenerTests {

	private static final Pattern HOST_PORT = Pattern.compile("jdbc:postgresql://([^:/]+):(\\d+)(/.*)");

	@Test
	void passesOnAnotherInstancesNotificationsButNotThoseOfItsOwnInstancesNotifier() {
		String url = TestDatabase.createDatabase();
		JdbcClient direct = JdbcClient.create(new DriverManagerDataSource(url));
		AtomicInteger wakeUps = new AtomicInteger();
		PostgresWakeupListener listener = new PostgresWakeupListener(new DriverManagerDataSource(url), "instances",
				wakeUps::incrementAndGet);
		listener.setIgnoredPayload("this-instance");
		listener.start();
		try {
			await().atMost(Duration.ofSeconds(10)).until(listener::isListening);
			// The wake-up every new listening connection makes.
			await().atMost(Duration.ofSeconds(10)).until(() -> wakeUps.get() == 1);
			direct.sql("SELECT pg_notify('instances', 'this-instance')").query().listOfRows();
			await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(2)).until(() -> wakeUps.get() == 1);
			direct.sql("SELECT pg_notify('instances', 'another-instance')").query().listOfRows();
			await().atMost(Duration.ofSeconds(10)).until(() -> wakeUps.get() == 2);
		}
		finally {
			listener.stop();
		}
	}

	@Test
	void givesItsPooledConnectionBackNeitherListeningNorCountedAsAListeningRelay() throws Exception {
		String url = TestDatabase.createDatabase();
		try (HikariDataSource pool = new HikariDataSource()) {
			pool.setJdbcUrl(url);
			pool.setMaximumPoolSize(1);
			PostgresWakeupListener listener = new PostgresWakeupListener(pool, "pooled", () -> {
			});
			listener.start();
			int pid;
			try {
				await().atMost(Duration.ofSeconds(10)).until(listener::isListening);
				pid = listener.getBackendPid();
				try (Connection observer = DriverManager.getConnection(url)) {
					assertThat(ListenerPresence.othersListen(observer, "pooled", 0)).isTrue();
				}
			}
			finally {
				listener.stop();
			}
			JdbcClient pooled = JdbcClient.create(pool);
			assertThat(pooled.sql("SELECT pg_backend_pid()").query(Integer.class).single()).isEqualTo(pid);
			assertThat(pooled.sql("SELECT count(*) FROM pg_listening_channels()").query(Long.class).single()).isZero();
			assertThat(pooled.sql("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = ?")
				.param(pid)
				.query(Long.class)
				.single()).isZero();
		}
	}

	@Test
	void replacesAListeningConnectionThatWentHalfOpen() throws Exception {
		String url = TestDatabase.createDatabase();
		Matcher matcher = HOST_PORT.matcher(url);
		assertThat(matcher.matches()).as(url).isTrue();
		JdbcClient direct = JdbcClient.create(new DriverManagerDataSource(url));
		AtomicInteger wakeUps = new AtomicInteger();
		try (FreezingProxy proxy = new FreezingProxy(matcher.group(1), Integer.parseInt(matcher.group(2)))) {
			String proxied = "jdbc:postgresql://127.0.0.1:" + proxy.port() + matcher.group(3);
			PostgresWakeupListener listener = new PostgresWakeupListener(new DriverManagerDataSource(proxied),
					"half_open", wakeUps::incrementAndGet, Duration.ofSeconds(1), Duration.ofSeconds(1));
			listener.start();
			try {
				await().atMost(Duration.ofSeconds(10)).until(listener::isListening);
				int before = wakeUps.get();
				direct.sql("SELECT pg_notify('half_open', '')").query().listOfRows();
				await().atMost(Duration.ofSeconds(10)).until(() -> wakeUps.get() > before);
				proxy.freezeOpenConnections();
				await().atMost(Duration.ofSeconds(20)).until(() -> proxy.accepted() >= 2 && listener.isListening());
				int afterReconnect = wakeUps.get();
				direct.sql("SELECT pg_notify('half_open', '')").query().listOfRows();
				await().atMost(Duration.ofSeconds(10)).until(() -> wakeUps.get() > afterReconnect);
			}
			finally {
				listener.stop();
			}
		}
	}

}
