package io.retryoutbox;

import org.springframework.web.reactive.function.client.WebClient;

/**
 * Callback that customizes the {@link WebClient.Builder} the relay sends messages with,
 * and only that one: for example an {@code ExchangeFilterFunction} that adds a
 * short-lived credential to every attempt, so that it is never stored in the outbox
 * table. Applied in order, after Boot's {@code WebClientCustomizer}s and the relay's
 * connector, to a builder of the relay's own.
 * <p>
 * Filters and Boot's observation are applied to every attempt either way; a default
 * header, cookie or default request, or a connector, exchange function, observation
 * registry or convention set here, has the relay send through the whole of WebClient's
 * request pipeline, which costs more CPU an attempt than its connector and filters alone.
 * <p>
 * Do not add retries here: the relay is the one layer that retries, and a filter that
 * retries by itself would send unrecorded attempts.
 */
@FunctionalInterface
public interface RelayWebClientCustomizer {

	/**
	 * Customizes the relay's builder.
	 * @param builder the builder, already a copy of the application's
	 */
	void customize(WebClient.Builder builder);

}
