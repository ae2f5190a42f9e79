package io.retryoutbox.sample;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.retryoutbox.sample.order.PaymentRequest;
import io.retryoutbox.sample.simulator.Receipt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

/**
 * Runs the sample application as the quickstart does, in a process of its own on its own
 * embedded database, and follows an order through a restart.
 */
class QuickstartCommandTests {

	private static final Duration DELIVERY_TIMEOUT = Duration.ofSeconds(60);

	@TempDir
	private Path temp;

	@Test
	void deliversAChargeThatWasPendingWhenTheApplicationStopped() throws InterruptedException {
		int port = freePort();
		List<String> arguments = List.of("--sample.embedded-database.data-directory=" + this.temp.resolve("db"),
				"--sample.embedded-database.port=0",
				// Per-key faults would make the charge dead; the others only delay it.
				"--simulator.faults.bad-request=0", "--simulator.faults.conflict=0");
		PaymentRequest charge;
		try (SampleProcess app = SampleProcess.start(port, this.temp.resolve("first-run.log"),
				with(arguments, "--retry-outbox.relay.enabled=false"))) {
			app.awaitHealthy();
			charge = app.client().placeOrder(new BigDecimal("12.50"), "EUR");
			app.explainFailureOf(() -> assertThat(chargeStatus(app, charge)).isEqualTo("PENDING"));
		}
		try (SampleProcess app = SampleProcess.start(port, this.temp.resolve("second-run.log"), arguments)) {
			app.awaitHealthy();
			app.explainFailureOf(() -> {
				await().atMost(DELIVERY_TIMEOUT)
					.pollInterval(Duration.ofMillis(250))
					.until(() -> chargeStatus(app, charge), "DELIVERED"::equals);
				assertThat(app.client().stats().orders().get(String.valueOf(charge.orderId())))
					.extracting(Receipt::path, Receipt::key)
					.containsExactly(tuple("/charges", charge.messageId().toString()));
			});
		}
	}

	private static String chargeStatus(SampleProcess app, PaymentRequest charge) {
		return app.client().order(charge.orderId()).path("charge").path("status").asString();
	}

	private static List<String> with(List<String> arguments, String argument) {
		List<String> all = new ArrayList<>(arguments);
		all.add(argument);
		return all;
	}

	private static int freePort() {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
