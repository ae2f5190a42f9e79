package io.retryoutbox.sample;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;

/**
 * The sample application running in a JVM of its own from its packaged jar:
 * {@code java -jar retry-outbox-sample-app-<version>.jar}.
 */
final class SampleProcess implements AutoCloseable {

	private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(120);

	private static final Duration SHUTDOWN_TIMEOUT = Duration.ofSeconds(60);

	private static final int OUTPUT_TAIL_LINES = 150;

	private final Process process;

	private final Path log;

	private final SampleClient client;

	private SampleProcess(Process process, Path log, int port) {
		this.process = process;
		this.log = log;
		this.client = new SampleClient(port);
	}

	/**
	 * Starts the application.
	 * @param port the HTTP port
	 * @param log the file that receives the application's output
	 * @param arguments further command line arguments
	 * @return the running application
	 */
	static SampleProcess start(int port, Path log, List<String> arguments) {
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		// Faster startup is worth more here than peak performance.
		command.add("-XX:TieredStopAtLevel=1");
		command.add("-jar");
		command.add(jar().toString());
		command.add("--server.port=" + port);
		command.addAll(arguments);
		try {
			Process process = new ProcessBuilder(command).redirectErrorStream(true)
				.redirectOutput(log.toFile())
				.start();
			return new SampleProcess(process, log, port);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not start " + command, ex);
		}
	}

	private static Path jar() {
		String jar = System.getProperty("sample.jar");
		if (jar == null || !Files.isRegularFile(Path.of(jar))) {
			throw new IllegalStateException("System property sample.jar must name the packaged sample application, "
					+ "was " + jar + "; run this test with 'verify', after 'package'");
		}
		return Path.of(jar);
	}

	SampleClient client() {
		return this.client;
	}

	/**
	 * Waits until the application reports itself healthy.
	 */
	void awaitHealthy() {
		explainFailureOf(() -> await().atMost(STARTUP_TIMEOUT)
			.pollInterval(Duration.ofMillis(500))
			.ignoreExceptions()
			.failFast("the application exited", () -> !this.process.isAlive())
			.until(this.client::isHealthy));
	}

	/**
	 * Runs checks against the application, adding the end of its output to a failure.
	 * @param checks the checks
	 */
	void explainFailureOf(Runnable checks) {
		try {
			checks.run();
		}
		catch (AssertionError | RuntimeException ex) {
			throw new AssertionError(ex.getMessage() + "\n--- end of the application's output ---\n" + outputTail(),
					ex);
		}
	}

	private String outputTail() {
		try {
			List<String> lines = Files.readAllLines(this.log);
			return String.join("\n", lines.subList(Math.max(0, lines.size() - OUTPUT_TAIL_LINES), lines.size()));
		}
		catch (IOException ex) {
			return "(unreadable: " + ex + ")";
		}
	}

	/**
	 * Stops the application as Ctrl-C would, so that it stops its database too.
	 */
	@Override
	public void close() throws InterruptedException {
		this.process.destroy();
		if (!this.process.waitFor(SHUTDOWN_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
			this.process.destroyForcibly().waitFor();
			throw new IllegalStateException("The application did not stop within " + SHUTDOWN_TIMEOUT);
		}
	}

}
