package io.retryoutbox.relay;

/**
 * Thrown when a signing secret is refused, naming its index in the list of secrets and
 * what is wrong with it, but never its value, so that the auto-configuration can report
 * the full property name without printing the secret.
 */
public class InvalidSigningSecretException extends IllegalArgumentException {

	private final int index;

	private final String reason;

	/**
	 * Creates an exception for a refused secret.
	 * @param index the index of the secret in the list
	 * @param reason what is wrong with it, e.g. {@code must start with 'whsec_'}
	 */
	public InvalidSigningSecretException(int index, String reason) {
		super("Signing secret [" + index + "] " + reason);
		this.index = index;
		this.reason = reason;
	}

	/**
	 * Returns the index of the refused secret in the list of secrets.
	 * @return the index
	 */
	public int getIndex() {
		return this.index;
	}

	/**
	 * Returns what is wrong with the secret, e.g. {@code must start with 'whsec_'}.
	 * @return the reason
	 */
	public String getReason() {
		return this.reason;
	}

}
