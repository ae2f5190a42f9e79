package io.retryoutbox.sample.database;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.util.StringUtils;

/**
 * Starts the embedded server on a kept or a temporary data directory.
 */
final class EmbeddedPostgresLauncher {

	private static final Log logger = LogFactory.getLog(EmbeddedPostgresLauncher.class);

	private static final Duration ORPHAN_STOP_TIMEOUT = Duration.ofSeconds(30);

	private EmbeddedPostgresLauncher() {
	}

	static EmbeddedPostgres start(EmbeddedDatabaseProperties properties) throws IOException {
		// The context stops the server; a JVM shutdown hook of its own could stop it
		// while the relay still releases its messages.
		EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder()
			.setPort(properties.getPort())
			.setRegisterShutdownHook(false)
			.setPGStartupWait(Duration.ofSeconds(60));
		if (!StringUtils.hasText(properties.getDataDirectory())) {
			EmbeddedPostgres postgres = builder.start();
			logger.info("Embedded PostgreSQL on port " + postgres.getPort() + " with a temporary data directory");
			return postgres;
		}
		Path dataDirectory = Path.of(properties.getDataDirectory()).toAbsolutePath();
		stopOrphanedServer(dataDirectory);
		EmbeddedPostgres postgres = builder.setDataDirectory(dataDirectory).setCleanDataDirectory(false).start();
		logger.info("Embedded PostgreSQL on port " + postgres.getPort() + " keeps its data in " + dataDirectory);
		return postgres;
	}

	/**
	 * Stops a server that a killed previous run left running on the directory; it would
	 * otherwise hold the directory and the port.
	 */
	private static void stopOrphanedServer(Path dataDirectory) throws IOException {
		Path pidFile = dataDirectory.resolve("postmaster.pid");
		if (!Files.isRegularFile(pidFile)) {
			return;
		}
		Optional<ProcessHandle> postmaster = readPid(pidFile).flatMap(ProcessHandle::of)
			.filter(ProcessHandle::isAlive)
			.filter((process) -> process.info().command().map((command) -> command.contains("postgres")).orElse(false));
		if (postmaster.isEmpty()) {
			return;
		}
		long pid = postmaster.get().pid();
		logger.warn("Stopping PostgreSQL server " + pid + " left running on " + dataDirectory + " by a previous run");
		try {
			stop(postmaster.get());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IOException("Interrupted while stopping PostgreSQL server " + pid, ex);
		}
		catch (ExecutionException | TimeoutException ex) {
			throw new IOException(
					"Could not stop PostgreSQL server " + pid + " running on " + dataDirectory + "; stop it and retry",
					ex);
		}
	}

	/**
	 * Stops the server in fast mode (SIGINT), which also disconnects its clients, or else
	 * with SIGTERM where there is no {@code kill} command. Its {@code pg_ctl} would
	 * refuse to run as root, as the sample does on some machines.
	 */
	private static void stop(ProcessHandle postmaster)
			throws IOException, InterruptedException, ExecutionException, TimeoutException {
		try {
			new ProcessBuilder("kill", "-INT", String.valueOf(postmaster.pid())).redirectErrorStream(true)
				.redirectOutput(ProcessBuilder.Redirect.DISCARD)
				.start()
				.waitFor();
		}
		catch (IOException ex) {
			postmaster.destroy();
		}
		postmaster.onExit().get(ORPHAN_STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
	}

	private static Optional<Long> readPid(Path pidFile) throws IOException {
		List<String> lines = Files.readAllLines(pidFile);
		if (lines.isEmpty()) {
			return Optional.empty();
		}
		try {
			return Optional.of(Long.parseLong(lines.get(0).trim()));
		}
		catch (NumberFormatException ex) {
			return Optional.empty();
		}
	}

}
