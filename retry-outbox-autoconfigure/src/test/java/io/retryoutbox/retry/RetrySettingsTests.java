package io.retryoutbox.retry;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.RecordComponent;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * Tests for {@link RetrySettings}.
 */
class RetrySettingsTests {

	private static final Duration HUNDRED_YEARS = Duration.ofDays(36500);

	@ParameterizedTest(name = "{0} = {1}")
	@MethodSource("refusedValues")
	void refusesAValueOutsideItsBoundsNamingTheSetting(String setting, Object value, String requirement) {
		assertThatExceptionOfType(InvalidRetrySettingException.class).isThrownBy(() -> with(setting, value))
			.withMessage("Retry setting '%s' must be %s, was %s", setting, requirement, value)
			.satisfies((ex) -> {
				assertThat(ex.getSetting()).isEqualTo(setting);
				assertThat(ex.getValue()).isEqualTo(value);
				assertThat(ex.getReason()).isEqualTo("must be " + requirement);
			});
	}

	static Stream<Arguments> refusedValues() {
		String durationBounds = "between 0s and 36500d";
		return Stream.of(arguments("delay", Duration.ofSeconds(-1), durationBounds),
				arguments("delay", HUNDRED_YEARS.plusSeconds(1), durationBounds),
				arguments("multiplier", 0.5, "between 1.0 and 100.0"),
				arguments("multiplier", 100.5, "between 1.0 and 100.0"),
				arguments("multiplier", 1e300, "between 1.0 and 100.0"),
				arguments("multiplier", Double.POSITIVE_INFINITY, "between 1.0 and 100.0"),
				arguments("multiplier", Double.NaN, "between 1.0 and 100.0"),
				arguments("max-delay", Duration.ofSeconds(-1), durationBounds),
				arguments("max-delay", Duration.ofSeconds(Long.MAX_VALUE), durationBounds),
				arguments("retry-after-max", Duration.ofDays(1_000_000_000_000L), durationBounds),
				arguments("jitter", -0.1, "between 0.0 and 10.0"), arguments("jitter", 10.5, "between 0.0 and 10.0"),
				arguments("jitter", 1e300, "between 0.0 and 10.0"),
				arguments("jitter", Double.POSITIVE_INFINITY, "between 0.0 and 10.0"),
				arguments("jitter", Double.NaN, "between 0.0 and 10.0"), arguments("max-attempts", 0, "at least 1"),
				arguments("timeout", Duration.ZERO, "longer than 0s and at most 36500d"),
				arguments("timeout", HUNDRED_YEARS.plusSeconds(1), "longer than 0s and at most 36500d"),
				arguments("error-code-pointers", List.of("/code", "error.code"), "JSON pointers such as /error/code"));
	}

	@Test
	void acceptsTheBoundsThemselves() {
		assertThat(with("multiplier", 100.0).multiplier()).isEqualTo(100.0);
		assertThat(with("jitter", 10.0).jitter()).isEqualTo(10.0);
		assertThat(with("max-delay", HUNDRED_YEARS).maxDelay()).isEqualTo(HUNDRED_YEARS);
		assertThat(with("timeout", HUNDRED_YEARS).timeout()).isEqualTo(HUNDRED_YEARS);
		assertThat(with("delay", Duration.ZERO).delay()).isZero();
	}

	/**
	 * The defaults with one setting, named as its property, replaced.
	 */
	static RetrySettings with(String setting, Object value) {
		RecordComponent[] components = RetrySettings.class.getRecordComponents();
		Class<?>[] types = new Class<?>[components.length];
		Object[] arguments = new Object[components.length];
		boolean found = false;
		try {
			for (int i = 0; i < components.length; i++) {
				types[i] = components[i].getType();
				boolean replaced = kebabCase(components[i].getName()).equals(setting);
				arguments[i] = replaced ? value : components[i].getAccessor().invoke(RetrySettings.DEFAULTS);
				found |= replaced;
			}
			assertThat(found).as("a retry setting named %s", setting).isTrue();
			Constructor<RetrySettings> constructor = RetrySettings.class.getDeclaredConstructor(types);
			return constructor.newInstance(arguments);
		}
		catch (InvocationTargetException ex) {
			throw (ex.getCause() instanceof RuntimeException runtime) ? runtime : new IllegalStateException(ex);
		}
		catch (ReflectiveOperationException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static String kebabCase(String camelCase) {
		return camelCase.replaceAll("([A-Z])", "-$1").toLowerCase(Locale.ROOT);
	}

}
