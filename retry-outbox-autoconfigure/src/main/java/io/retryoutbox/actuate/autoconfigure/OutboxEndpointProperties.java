package io.retryoutbox.actuate.autoconfigure;

import java.util.HashSet;
import java.util.Set;

import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration properties of the {@code outbox} endpoint.
 */
@ConfigurationProperties("management.endpoint.outbox")
public class OutboxEndpointProperties {

	/**
	 * When to show the values of secret request headers (Authorization, Cookie, names
	 * with token, secret, password or key); masked otherwise.
	 */
	private Show showValues = Show.NEVER;

	/**
	 * Roles allowed to see secret header values when show-values is when-authorized; any
	 * authenticated user if empty.
	 */
	private Set<String> roles = new HashSet<>();

	public Show getShowValues() {
		return this.showValues;
	}

	public void setShowValues(Show showValues) {
		this.showValues = showValues;
	}

	public Set<String> getRoles() {
		return this.roles;
	}

	public void setRoles(Set<String> roles) {
		this.roles = roles;
	}

}
