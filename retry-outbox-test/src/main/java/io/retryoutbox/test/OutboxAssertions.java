package io.retryoutbox.test;

import io.retryoutbox.message.OutboxReadModel;

/**
 * Entry point of the AssertJ assertions on the outbox: what was enqueued, and what became
 * of it.
 *
 * <pre class="code">
 * assertThatOutbox(outbox).hasPending("payments", 1)
 * 	.message(messageId)
 * 	.hasMethod("POST")
 * 	.hasPath("/charges")
 * 	.hasJsonBody("""
 * 		{"orderId": 1, "amount": 42.50, "currency": "EUR"}
 * 		""");
 * </pre>
 */
public final class OutboxAssertions {

	private OutboxAssertions() {
	}

	/**
	 * Creates an assertion on the outbox, read through its read model (a bean of the
	 * application).
	 * @param outbox the outbox's read model
	 * @return the assertion
	 */
	public static OutboxAssert assertThatOutbox(OutboxReadModel outbox) {
		return new OutboxAssert(outbox);
	}

}
