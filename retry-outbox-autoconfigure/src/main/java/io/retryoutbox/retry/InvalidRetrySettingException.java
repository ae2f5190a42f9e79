package io.retryoutbox.retry;

/**
 * Thrown when a value of {@link RetrySettings} is refused, naming the setting as its
 * configuration property ends ({@code max-delay}) so that the auto-configuration can
 * report the full property name.
 */
public class InvalidRetrySettingException extends IllegalArgumentException {

	private final String setting;

	private final Object value;

	private final String reason;

	/**
	 * Creates an exception for a refused value.
	 * @param setting the name of the setting, in kebab case
	 * @param value the refused value
	 * @param requirement what the value must be, e.g. {@code at least 1}
	 */
	public InvalidRetrySettingException(String setting, Object value, String requirement) {
		super("Retry setting '" + setting + "' must be " + requirement + ", was " + value);
		this.setting = setting;
		this.value = value;
		this.reason = "must be " + requirement;
	}

	/**
	 * Returns the name of the setting, in kebab case, e.g. {@code max-delay}.
	 * @return the name of the setting
	 */
	public String getSetting() {
		return this.setting;
	}

	/**
	 * Returns the refused value.
	 * @return the value
	 */
	public Object getValue() {
		return this.value;
	}

	/**
	 * Returns why the value was refused, e.g. {@code must be at least 1}.
	 * @return the reason
	 */
	public String getReason() {
		return this.reason;
	}

}
