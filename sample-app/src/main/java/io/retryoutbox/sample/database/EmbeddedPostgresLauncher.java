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
		// The context stops the server; a JVM shutdown hook of its own could stop it while the
		// relay still releases its messages.
		EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder()
			.setPort(properties.getPort())
			.setRegisterShutdownHook(false)
			.setPGStartupWait(Duration.ofSeconds(60));
		if (!StringUtils.hasText(properties.getDataDirectory())) {
			return builder.start();
		}
		Path dataDirectory = Path.of(properties.getDataDirectory()).toAbsolutePath();
		stopOrphanedServer(dataDirectory);
		logger.info("Starting embedded PostgreSQL on port " + properties.getPort() + " with data in " + dataDirectory);
		return builder.setDataDirectory(dataDirectory).setCleanDataDirectory(false).start();
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
		logger.warn("Stopping PostgreSQL server " + postmaster.get().pid() + " left running on " + dataDirectory
				+ " by a previous run");
		postmaster.get().destroy();
		try {
			postmaster.get().onExit().get(ORPHAN_STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IOException("Interrupted while stopping the orphaned PostgreSQL server", ex);
		}
		catch (ExecutionException | TimeoutException ex) {
			throw new IOException("Could not stop PostgreSQL server " + postmaster.get().pid() + " running on "
					+ dataDirectory + "; stop it and start again", ex);
		}
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
