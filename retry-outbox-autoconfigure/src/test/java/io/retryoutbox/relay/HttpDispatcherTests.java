package io.retryoutbox.relay;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.retryoutbox.DeliveryOutcome;
import io.retryoutbox.message.ClaimedMessage;
import io.retryoutbox.testsupport.DestinationServer;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;
import mockwebserver3.MockResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The dispatcher's outcome of an exchange, against a real HTTP server.
 */
class HttpDispatcherTests {

	@RegisterExtension
	final DestinationServer server = new DestinationServer();

	@Test
	void deliversWithoutMakingAnExceptionForAnExchangeThatHadItsResponse() throws IOException {
		assertMakesNoException(dispatcher(RelayExchange.direct(new ReactorClientHttpConnector())));
	}

	@Test
	void deliversThroughWebClientWithoutMakingAnExceptionForAnExchangeThatHadItsResponse() throws IOException {
		assertMakesNoException(dispatcher(RelayExchange.through(WebClient.create())));
	}

	private static void assertMakesNoException(HttpDispatcher dispatcher) throws IOException {
		deliver(dispatcher);
		List<RecordedEvent> made;
		try (Recording recording = new Recording()) {
			recording.enable("jdk.JavaExceptionThrow").withStackTrace();
			recording.start();
			for (int i = 0; i < 20; i++) {
				deliver(dispatcher);
			}
			recording.stop();
			Path file = Files.createTempFile("dispatcher", ".jfr");
			recording.dump(file);
			made = RecordingFile.readAllEvents(file);
			Files.delete(file);
		}
		// One for every delivered message, dropped unread, was 4% of the event loops' CPU
		// in the bench.
		assertThat(made).noneMatch(HttpDispatcherTests::madeByTheDispatcher);
	}

	@Test
	void failsAnExchangeThatOutlivesTheDestinationsTimeoutWithATimeoutThatSaysSo() {
		this.server.dispatcher()
			.enqueue(new MockResponse.Builder().code(200).headersDelay(3, TimeUnit.SECONDS).build());
		DeliveryOutcome outcome = dispatcher(Duration.ofMillis(300)).send(message()).block(Duration.ofSeconds(10));
		assertThat(outcome).isInstanceOfSatisfying(DeliveryOutcome.Failure.class,
				(failure) -> assertThat(failure.cause()).isInstanceOf(TimeoutException.class)
					.hasMessage("No complete answer within 300 ms, the destination's timeout"));
	}

	private static void deliver(HttpDispatcher dispatcher) {
		DeliveryOutcome outcome = dispatcher.send(message()).block(Duration.ofSeconds(10));
		assertThat(outcome).isInstanceOfSatisfying(DeliveryOutcome.Response.class,
				(response) -> assertThat(response.statusCode()).isEqualTo(200));
	}

	// The frame that called the exception's constructors.
	private static boolean madeByTheDispatcher(RecordedEvent event) {
		RecordedStackTrace stack = event.getStackTrace();
		return stack != null && stack.getFrames()
			.stream()
			.filter((frame) -> !frame.getMethod().getName().equals("<init>"))
			.findFirst()
			.filter((frame) -> frame.getMethod().getType().getName().startsWith(HttpDispatcher.class.getName()))
			.isPresent();
	}

	private HttpDispatcher dispatcher(RelayExchange exchange) {
		return dispatcher(exchange, Duration.ofSeconds(5));
	}

	private HttpDispatcher dispatcher(Duration timeout) {
		return dispatcher(RelayExchange.direct(new ReactorClientHttpConnector()), timeout);
	}

	private HttpDispatcher dispatcher(RelayExchange exchange, Duration timeout) {
		RelayDestination destination = new RelayDestination(this.server.server().url("/").uri(), timeout, Map.of(),
				OnDead.SKIP, RelayDestination.Flow.DEFAULTS);
		return new HttpDispatcher(exchange, Map.of("payments", destination), "Idempotency-Key", 1024);
	}

	private static ClaimedMessage message() {
		UUID id = UUID.randomUUID();
		return new ClaimedMessage(id, "payments", "POST", "/charges", Map.of(), "{}".getBytes(StandardCharsets.UTF_8),
				"application/json", null, id.toString(), 1, Instant.now(), Map.of());
	}

}
