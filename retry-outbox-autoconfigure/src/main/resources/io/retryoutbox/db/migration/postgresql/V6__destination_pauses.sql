-- One row per pause of a destination, shared by every relay instance: a 429 or 503 with Retry-After, or
-- an open circuit, seen by one instance pauses the destination on all of them until paused_until, after
-- which one probe goes; a probe that gets through, or an operator's resume, ends it (ended_at). The open
-- row is the destination's current pause; ended rows are kept while a message may still count them, so
-- that the time its destination was paused is not spent from a message's delivery deadline.
CREATE TABLE retry_outbox_pause (
	destination text NOT NULL,
	started_at timestamptz NOT NULL,
	ended_at timestamptz,
	paused_until timestamptz NOT NULL,
	reason text NOT NULL CONSTRAINT retry_outbox_pause_reason_check CHECK (reason IN ('RETRY_AFTER', 'CIRCUIT')),
	detail text NOT NULL,
	paused_by text NOT NULL,
	updated_at timestamptz NOT NULL,
	PRIMARY KEY (destination, started_at)
);

-- At most one open pause per destination: the upsert that opens or extends it conflicts on this index.
CREATE UNIQUE INDEX retry_outbox_pause_open_idx ON retry_outbox_pause (destination) WHERE ended_at IS NULL;
