package io.retryoutbox.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.test.context.PropertyMapping;

/**
 * Annotation for a test class that drives the outbox itself: the relay does not run in
 * the background, and the context has a {@link TestOutboxClock} (unless the test defines
 * another {@code OutboxClock}) and an {@link OutboxDrainer}. With {@code @SpringBootTest}
 * it adds them to the application's outbox; in a slice test ({@code @JdbcTest},
 * {@code @DataJdbcTest}) it brings the outbox too.
 *
 * @see OutboxAssertions
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ImportAutoConfiguration
@PropertyMapping("retry-outbox.relay")
public @interface AutoConfigureRetryOutbox {

	/**
	 * Whether the relay also runs in the background. Off by default, so that nothing is
	 * sent but what the test drains, whatever the timing; {@link OutboxDrainer#drain()}
	 * refuses to run beside a background relay.
	 * @return whether the relay starts with the application
	 */
	boolean autoStartup() default false;

}
