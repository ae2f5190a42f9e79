package io.retryoutbox.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/**
 * An embedded PostgreSQL server of a test's own, which the test can stop and start again
 * on the same port and data directory, as a database server that restarts. Unlike
 * {@link TestDatabase}, never shared: stopping it must not break other tests.
 */
public final class RestartablePostgres implements AutoCloseable {

	private final Path dataDirectory;

	private final int port;

	private @Nullable EmbeddedPostgres postgres;

	private RestartablePostgres(Path dataDirectory, int port) {
		this.dataDirectory = dataDirectory;
		this.port = port;
		this.postgres = startPostgres();
	}

	/**
	 * Starts a server on a free port, trying another if the port was taken while the
	 * server initialized (initdb takes seconds on a busy machine).
	 * @param dataDirectory where it keeps its data, e.g. a {@code @TempDir}
	 * @return the running server
	 */
	public static RestartablePostgres start(Path dataDirectory) {
		for (int attempt = 1;; attempt++) {
			try {
				return new RestartablePostgres(dataDirectory, freePort());
			}
			catch (UncheckedIOException ex) {
				if (attempt == 3) {
					throw ex;
				}
			}
		}
	}

	/**
	 * A free port below Linux's ephemeral range (32768 and up). A port from
	 * {@code ServerSocket(0)} is taken from that range, where a client connection can
	 * take it as its local port while initdb runs; one connecting to the port then
	 * connects to itself and waits for an answer forever.
	 */
	private static int freePort() {
		IOException last = null;
		for (int attempt = 0; attempt < 100; attempt++) {
			int port = ThreadLocalRandom.current().nextInt(20000, 32000);
			try (ServerSocket socket = new ServerSocket(port)) {
				return socket.getLocalPort();
			}
			catch (IOException ex) {
				last = ex;
			}
		}
		throw new UncheckedIOException("Could not find a free port for PostgreSQL", last);
	}

	/**
	 * The JDBC URL of the server's {@code postgres} database, with credentials; the same
	 * across restarts.
	 * @return the URL
	 */
	public String jdbcUrl() {
		return "jdbc:postgresql://localhost:" + this.port + "/postgres?user=postgres";
	}

	/**
	 * Stops the server, closing every connection, until {@link #startAgain()}.
	 */
	public void stop() {
		EmbeddedPostgres running = this.postgres;
		Assert.state(running != null, "The server is stopped already");
		try {
			running.close();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not stop PostgreSQL", ex);
		}
		this.postgres = null;
	}

	/**
	 * Starts the stopped server again, with the data it had.
	 */
	public void startAgain() {
		Assert.state(this.postgres == null, "The server is running already");
		this.postgres = startPostgres();
	}

	private EmbeddedPostgres startPostgres() {
		try {
			return EmbeddedPostgres.builder()
				.setPort(this.port)
				.setDataDirectory(this.dataDirectory)
				.setCleanDataDirectory(false)
				.setRegisterShutdownHook(false)
				// A busy machine can take longer than the default 10s to start the
				// server.
				.setPGStartupWait(Duration.ofSeconds(60))
				.start();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not start PostgreSQL on port " + this.port, ex);
		}
	}

	@Override
	public void close() {
		if (this.postgres != null) {
			stop();
		}
	}

}
