package io.retryoutbox.test;

import org.springframework.context.ApplicationContext;
import org.springframework.core.Ordered;
import org.springframework.test.context.TestContext;
import org.springframework.test.context.TestExecutionListener;

/**
 * Resets the context's {@link TestOutboxClock} before each test method, as Boot resets
 * its mocks: a context is cached and shared by test classes, and a clock one test moved
 * forward must not make the next test's messages look old.
 */
public final class ResetOutboxClockTestExecutionListener implements TestExecutionListener, Ordered {

	@Override
	public int getOrder() {
		return Ordered.LOWEST_PRECEDENCE - 100;
	}

	@Override
	public void beforeTestMethod(TestContext testContext) {
		if (testContext.hasApplicationContext()) {
			ApplicationContext context = testContext.getApplicationContext();
			context.getBeanProvider(TestOutboxClock.class).ifAvailable(TestOutboxClock::reset);
		}
	}

}
