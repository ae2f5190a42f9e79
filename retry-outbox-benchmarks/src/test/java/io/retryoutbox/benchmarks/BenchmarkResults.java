package io.retryoutbox.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

/**
 * Percentiles of measured samples, and the figures printed and appended to
 * {@code target/benchmark-results.txt}.
 */
final class BenchmarkResults {

	private BenchmarkResults() {
	}

	static double percentile(double[] values, int percentile) {
		double[] sorted = values.clone();
		Arrays.sort(sorted);
		int index = (int) Math.ceil(percentile / 100.0 * sorted.length) - 1;
		return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
	}

	static void report(String name, double[] millis) {
		write(String.format("%s: p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms (n=%d)", name,
				percentile(millis, 50), percentile(millis, 90), percentile(millis, 99), percentile(millis, 100),
				millis.length));
	}

	static void write(String line) {
		System.out.println("BENCHMARK " + line);
		try {
			Path results = Path.of("target", "benchmark-results.txt");
			Files.createDirectories(results.getParent());
			Files.writeString(results, line + System.lineSeparator(), StandardOpenOption.CREATE,
					StandardOpenOption.APPEND);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
