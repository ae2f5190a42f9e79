package io.retryoutbox.metrics;

import io.micrometer.common.docs.KeyName;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.docs.ObservationDocumentation;

/**
 * The observations of retry-outbox. With Micrometer metrics each one is also a timer of
 * the same name; with tracing, the enqueue is a producer span whose context is stored
 * with the message, and each attempt a consumer span that continues it, parent of the
 * HTTP client span.
 */
public enum OutboxObservationDocumentation implements ObservationDocumentation {

	/**
	 * The recording of a request in the outbox table.
	 */
	ENQUEUE {

		@Override
		public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
			return DefaultOutboxEnqueueObservationConvention.class;
		}

		@Override
		public KeyName[] getLowCardinalityKeyNames() {
			return new KeyName[] { LowCardinalityKeys.DESTINATION };
		}

		@Override
		public KeyName[] getHighCardinalityKeyNames() {
			return new KeyName[] { HighCardinalityKeys.MESSAGE_ID };
		}

	},

	/**
	 * One delivery attempt of a message: sending it and deciding its fate.
	 */
	ATTEMPT {

		@Override
		public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
			return DefaultOutboxAttemptObservationConvention.class;
		}

		@Override
		public KeyName[] getLowCardinalityKeyNames() {
			return LowCardinalityKeys.values();
		}

		@Override
		public KeyName[] getHighCardinalityKeyNames() {
			return HighCardinalityKeys.values();
		}

	};

	/**
	 * Tags of the timers.
	 */
	public enum LowCardinalityKeys implements KeyName {

		/**
		 * The destination name.
		 */
		DESTINATION {

			@Override
			public String asString() {
				return "destination";
			}

		},

		/**
		 * What the attempt led to: {@code DELIVERED}, {@code RETRY} or {@code DEAD}.
		 */
		OUTCOME {

			@Override
			public String asString() {
				return "outcome";
			}

		},

		/**
		 * The class of the response status ({@code 2xx} ... {@code 5xx}), or {@code NONE}
		 * when no response was received.
		 */
		STATUS_CLASS {

			@Override
			public String asString() {
				return "status.class";
			}

		}

	}

	/**
	 * Span attributes only.
	 */
	public enum HighCardinalityKeys implements KeyName {

		/**
		 * The message id, also its idempotency key unless the request set its own.
		 */
		MESSAGE_ID {

			@Override
			public String asString() {
				return "retry-outbox.message.id";
			}

		},

		/**
		 * The number of the attempt, starting at 1.
		 */
		ATTEMPT {

			@Override
			public String asString() {
				return "retry-outbox.attempt";
			}

		}

	}

}
