package io.retryoutbox.relay;

import java.net.URI;
import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A stored path always lands under the destination's base URL, on its host.
 */
class RelayDestinationTests {

	private static RelayDestination destination(String baseUrl) {
		return new RelayDestination(URI.create(baseUrl), Duration.ofSeconds(1), Map.of(), OnDead.SKIP,
				RelayDestination.Flow.DEFAULTS);
	}

	@ParameterizedTest
	@CsvSource({ "http://localhost:8080, @evil.example/x, http://localhost:8080/@evil.example/x",
			"http://localhost:8080/, @evil.example/x, http://localhost:8080/@evil.example/x",
			"http://localhost:8080/api, @evil.example/x, http://localhost:8080/api/@evil.example/x",
			"http://localhost:8080/api/, /orders, http://localhost:8080/api/orders",
			"http://localhost:8080/api, orders?page=2&size=10, http://localhost:8080/api/orders?page=2&size=10",
			"http://localhost:8080/api, /a%20b/c, http://localhost:8080/api/a%20b/c",
			"http://localhost:8080/api, //evil.example/x, http://localhost:8080/api//evil.example/x",
			"http://localhost:8080/api?tenant=1, /orders?page=2, http://localhost:8080/api/orders?tenant=1&page=2" })
	void resolvesAStoredPathUnderTheBaseUrlOnItsHost(String baseUrl, String path, String expected) {
		URI uri = destination(baseUrl).resolve(path);
		assertThat(uri.getHost()).isEqualTo("localhost");
		assertThat(uri).hasToString(expected);
	}

}
