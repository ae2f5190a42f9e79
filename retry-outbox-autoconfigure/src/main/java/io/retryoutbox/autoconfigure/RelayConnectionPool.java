package io.retryoutbox.autoconfigure;

import java.time.Duration;

import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.beans.factory.DisposableBean;

/**
 * The relay's own HTTP connection pool, sized to its concurrency and closed with the
 * application context.
 */
final class RelayConnectionPool implements DisposableBean {

	private final ConnectionProvider provider;

	RelayConnectionPool(int maxConnections) {
		this.provider = ConnectionProvider.builder("retry-outbox-relay")
			.maxConnections(maxConnections)
			.pendingAcquireMaxCount(-1)
			.maxIdleTime(Duration.ofSeconds(30))
			.build();
	}

	HttpClient httpClient() {
		return HttpClient.create(this.provider);
	}

	@Override
	public void destroy() {
		this.provider.dispose();
	}

}
