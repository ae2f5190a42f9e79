package io.retryoutbox.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

/**
 * A real PostgreSQL for tests: the server named by {@code RETRY_OUTBOX_TEST_JDBC_URL}
 * when it is set, else one embedded server per JVM. Each call of
 * {@link #createDatabase()} makes a fresh database on it, so test classes never see each
 * other's rows.
 */
public final class TestDatabase {

	private static final Pattern URL = Pattern.compile("(jdbc:postgresql://[^/]+/)([^?]*)(.*)");

	private static final Set<String> CREATED = ConcurrentHashMap.newKeySet();

	private static volatile String adminUrl;

	private TestDatabase() {
	}

	/**
	 * Creates a new, empty database.
	 * @return its JDBC URL, with credentials
	 */
	public static String createDatabase() {
		String admin = adminUrl();
		String name = "retry_outbox_" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
		try (Connection connection = DriverManager.getConnection(admin);
				Statement statement = connection.createStatement()) {
			statement.execute("CREATE DATABASE " + name);
			CREATED.add(name);
		}
		catch (SQLException ex) {
			throw new IllegalStateException("Could not create test database on " + admin, ex);
		}
		Matcher matcher = URL.matcher(admin);
		if (!matcher.matches()) {
			throw new IllegalStateException("Unexpected JDBC URL " + admin);
		}
		return matcher.group(1) + name + matcher.group(3);
	}

	/**
	 * Whether the tests run on an external server rather than the embedded one.
	 * @return whether {@code RETRY_OUTBOX_TEST_JDBC_URL} is set
	 */
	public static boolean isExternal() {
		return externalUrl() != null;
	}

	private static String externalUrl() {
		String url = System.getenv("RETRY_OUTBOX_TEST_JDBC_URL");
		return (url != null && !url.isBlank()) ? url : null;
	}

	private static synchronized String adminUrl() {
		if (adminUrl == null) {
			String external = externalUrl();
			adminUrl = (external != null) ? external : startEmbedded();
			if (external != null) {
				Runtime.getRuntime().addShutdownHook(new Thread(() -> dropCreatedDatabases(external)));
			}
		}
		return adminUrl;
	}

	private static void dropCreatedDatabases(String admin) {
		try (Connection connection = DriverManager.getConnection(admin);
				Statement statement = connection.createStatement()) {
			for (String name : CREATED) {
				statement.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
			}
		}
		catch (SQLException ex) {
			// best effort: the databases are uniquely named and harmless if left behind
		}
	}

	private static String startEmbedded() {
		try {
			// A busy machine can take longer than the default 10s to start the server.
			EmbeddedPostgres postgres = EmbeddedPostgres.builder().setPGStartupWait(Duration.ofSeconds(60)).start();
			Runtime.getRuntime().addShutdownHook(new Thread(() -> {
				try {
					postgres.close();
				}
				catch (IOException ex) {
					// the JVM is exiting; the server's directory is temporary
				}
			}));
			return postgres.getJdbcUrl("postgres", "postgres");
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not start embedded PostgreSQL", ex);
		}
	}

}
