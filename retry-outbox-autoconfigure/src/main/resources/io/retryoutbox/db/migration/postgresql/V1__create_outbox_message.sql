CREATE TABLE retry_outbox_message (
	id uuid PRIMARY KEY,
	seq bigint GENERATED ALWAYS AS IDENTITY,
	destination text NOT NULL,
	method text NOT NULL,
	path text NOT NULL,
	headers jsonb NOT NULL DEFAULT '{}',
	body bytea,
	content_type text,
	ordering_key text,
	idempotency_key text NOT NULL,
	status text NOT NULL DEFAULT 'PENDING'
		CONSTRAINT retry_outbox_message_status_check CHECK (status IN ('PENDING', 'IN_FLIGHT', 'DELIVERED', 'DEAD')),
	attempts integer NOT NULL DEFAULT 0,
	next_attempt_at timestamptz NOT NULL DEFAULT now(),
	created_at timestamptz NOT NULL DEFAULT now(),
	last_attempt_at timestamptz,
	last_status_code integer,
	last_error_code text,
	last_error text,
	dead_reason text,
	lease_owner text,
	lease_until timestamptz,
	delivered_at timestamptz
);

-- The claim query reads only due PENDING rows, so it costs O(batch) however large the table grows.
CREATE INDEX retry_outbox_message_due_idx ON retry_outbox_message (next_attempt_at) WHERE status = 'PENDING';

CREATE INDEX retry_outbox_message_lease_idx ON retry_outbox_message (lease_until) WHERE status = 'IN_FLIGHT';

CREATE INDEX retry_outbox_message_dead_idx ON retry_outbox_message (created_at) WHERE status = 'DEAD';
