package io.retryoutbox.sample;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.net.ServerSocket;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.retryoutbox.sample.order.PaymentRequest;
import io.retryoutbox.sample.simulator.Receipt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

/**
 * Runs the sample application as the README's quickstart does: the default ({@code demo})
 * profile, an embedded database, in a process of its own, from the jar that
 * {@code ./mvnw -B verify} packages (Failsafe runs this test after the package phase). It
 * follows an order through a restart, and checks the README's {@code curl} lines on the
 * actuator endpoint.
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
				assertThat(app.client().outbox("").at("/statuses/DELIVERED").asLong()).isEqualTo(1);
				// The demo profile, active by default, allows the README's replay line.
				HttpResponse<String> replay = app.client()
					.post("/actuator/outbox/replay", Map.of("destination", "payments", "limit", 1));
				assertThat(replay.statusCode()).as(replay.body()).isEqualTo(200);
				assertThat(replay.body()).isEqualTo("{\"action\":\"replay\",\"count\":0,\"complete\":true}");
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
