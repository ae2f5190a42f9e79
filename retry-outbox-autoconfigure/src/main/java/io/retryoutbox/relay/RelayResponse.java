package io.retryoutbox.relay;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.Connection;
import reactor.netty.http.client.HttpClientResponse;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.NettyDataBufferFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.support.Netty4HeadersAdapter;
import org.springframework.web.reactive.function.client.ClientResponse;

/**
 * An answer as the relay reads it: its status, its headers, and its body, which the
 * reader consumes or releases.
 */
interface RelayResponse {

	/**
	 * The status code.
	 * @return the code
	 */
	int status();

	/**
	 * The headers, read-only.
	 * @return the headers
	 */
	HttpHeaders headers();

	/**
	 * The body as it arrives; each buffer is the reader's to release.
	 * @return the body
	 */
	Flux<DataBuffer> body();

	/**
	 * Reads and releases the body.
	 * @return completes once the body has been read
	 */
	Mono<Void> releaseBody();

	/**
	 * An answer through Spring's exchange.
	 * @param response the response
	 * @return the answer
	 */
	static RelayResponse of(ClientResponse response) {
		return new RelayResponse() {

			@Override
			public int status() {
				return response.statusCode().value();
			}

			@Override
			public HttpHeaders headers() {
				return HttpHeaders.readOnlyHttpHeaders(response.headers().asHttpHeaders());
			}

			@Override
			public Flux<DataBuffer> body() {
				return response.bodyToFlux(DataBuffer.class);
			}

			@Override
			public Mono<Void> releaseBody() {
				return response.releaseBody();
			}

		};
	}

	/**
	 * An answer straight from Reactor Netty, its body read as Spring's connector reads
	 * it.
	 * @param response the response
	 * @param connection the connection it arrived on
	 * @return the answer
	 */
	static RelayResponse of(HttpClientResponse response, Connection connection) {
		return new RelayResponse() {

			@Override
			public int status() {
				return response.status().code();
			}

			@Override
			public HttpHeaders headers() {
				return HttpHeaders
					.readOnlyHttpHeaders(new HttpHeaders(new Netty4HeadersAdapter(response.responseHeaders())));
			}

			@Override
			public Flux<DataBuffer> body() {
				NettyDataBufferFactory buffers = new NettyDataBufferFactory(connection.outbound().alloc());
				return connection.inbound().receive().map((buffer) -> buffers.wrap(buffer.retain()));
			}

			@Override
			public Mono<Void> releaseBody() {
				// Reactor Netty releases each buffer once it has been passed on.
				return connection.inbound().receive().then();
			}

		};
	}

}
