-- The trace context of the enqueuing request (W3C traceparent and tracestate), restored when
-- the message is sent so that its delivery joins the trace that caused it.
ALTER TABLE retry_outbox_message ADD COLUMN trace_parent text, ADD COLUMN trace_state text;

-- Retention deletes DELIVERED rows by age in small chunks; this keeps each chunk O(chunk).
CREATE INDEX retry_outbox_message_delivered_idx ON retry_outbox_message (delivered_at) WHERE status = 'DELIVERED';

-- One row per attempt (outcome DELIVERED, RETRY or DEAD) and per operator replay (REPLAYED),
-- written in the same statement as the message's new state.
CREATE TABLE retry_outbox_attempt (
	id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	message_id uuid NOT NULL REFERENCES retry_outbox_message (id) ON DELETE CASCADE,
	attempt integer NOT NULL,
	started_at timestamptz NOT NULL,
	duration_ms bigint,
	outcome text NOT NULL
		CONSTRAINT retry_outbox_attempt_outcome_check CHECK (outcome IN ('DELIVERED', 'RETRY', 'DEAD', 'REPLAYED')),
	status_code integer,
	error_code text,
	error text,
	response_snippet text,
	delay_ms bigint,
	delay_reason text,
	actor text
);

CREATE INDEX retry_outbox_attempt_message_idx ON retry_outbox_attempt (message_id, id);
